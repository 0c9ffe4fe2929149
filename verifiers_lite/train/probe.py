"""A validation probe during training: a fixed set of questions never trained on, scored with the
current weights every few steps, and an early stop when that score stops improving.

:class:`PlateauStop` is the rule (pure, no torch): a probe's reward is an improvement when it
beats the best one so far by more than ``min_delta``; training stops once ``patience`` probes in
a row brought none, and not before ``min_probes`` probes. :class:`ValidationProbe` runs the probe
as a ``transformers.TrainerCallback`` (made on first use: importing this module needs no
transformers): every ``every`` optimizer steps it samples the probe environment's questions with
the model being trained (``TransformersSampler``, on-policy, temperature 1), keeps
``history`` (step, mean reward, its 95% interval, seconds) and sets ``should_training_stop`` when
the rule says so. Only the probe's questions decide the stop; the held-out set is never looked at.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from verifiers_lite.rollout.sampling import SamplingParams
from verifiers_lite.rollout.template import Template
from verifiers_lite.rollout.token_client import TokenClient
from verifiers_lite.stats.error_bars import clustered_mean

__all__ = ["PlateauStop", "ValidationProbe"]


@dataclass
class PlateauStop:
    """Stop when ``patience`` probes in a row did not beat the best probe by more than
    ``min_delta`` (and at least ``min_probes`` probes were taken); ``patience=0`` never stops."""

    #: probes in a row without a new best that stop training (0: never stop)
    patience: int = 4
    #: how much a probe must beat the best so far by to count as one
    min_delta: float = 0.0
    #: probes taken before the rule may stop training
    min_probes: int = 1
    #: every probe's reward, in order (kept by :meth:`update`)
    values: list[float] = field(default_factory=list)
    #: the best reward so far
    best: float = float("-inf")
    #: probes since the best one
    since_best: int = 0

    def __post_init__(self) -> None:
        if self.patience < 0 or self.min_probes < 1:
            raise ValueError(
                f"patience must be >= 0 and min_probes >= 1, got {self.patience}, {self.min_probes}"
            )

    def update(self, value: float) -> bool:
        """Record one probe's reward; True when training should stop now."""
        self.values.append(value)
        if value > self.best + self.min_delta:
            self.best, self.since_best = value, 0
        else:
            self.since_best += 1
        return bool(
            self.patience
            and len(self.values) >= self.min_probes
            and self.since_best >= self.patience
        )


class ValidationProbe:
    """Score ``env``'s questions with the trained model every ``every`` steps (and before the
    first, step 0); stop training by ``rule``. ``history`` holds one dict per probe: ``step``,
    ``reward`` (mean over all rollouts), ``reward_ci95`` (clustered by question), ``seconds``;
    ``stopped_at`` is the step the rule stopped training at (None: it did not).

    Args:
        env: the probe's environment; all its questions are scored each time (keep it small and
            disjoint from the training questions).
        template: the trained model's chat template.
        every: optimizer steps between probes.
        rollouts_per_example: rollouts per question each probe.
        rule: the early-stop rule (default ``PlateauStop()``).
        max_tokens: completion budget of the probe's rollouts.
        seed: the rollouts' seed, the same at every probe: only the weights change.
        max_batch_size: the sampler's batch size.
    """

    def __init__(
        self,
        env: Any,
        template: Template,
        *,
        every: int = 10,
        rollouts_per_example: int = 2,
        rule: PlateauStop | None = None,
        max_tokens: int = 16,
        seed: int = 0,
        max_batch_size: int = 64,
    ) -> None:
        if every < 1 or rollouts_per_example < 1:
            raise ValueError(
                f"every and rollouts_per_example must be >= 1, got {every}, {rollouts_per_example}"
            )
        self.env = env
        self.template = template
        self.every = every
        self.rollouts_per_example = rollouts_per_example
        self.rule = rule or PlateauStop()
        self.params = SamplingParams(max_tokens=max_tokens, logprobs=0)
        self.seed = seed
        self.max_batch_size = max_batch_size
        self.history: list[dict[str, Any]] = []
        self.stopped_at: int | None = None

    def probe(self, model: Any, step: int) -> bool:
        """Score the questions with ``model`` now, record it; True when the rule says stop."""
        from verifiers_lite.rollout.samplers.transformers import TransformersSampler

        t0 = time.perf_counter()
        sampler = TransformersSampler(model, max_batch_size=self.max_batch_size)
        out = self.env.generate_sync(
            self.env.get_eval_inputs(rollouts_per_example=self.rollouts_per_example),
            TokenClient(sampler, self.template, self.params),
            "probe",
            seed=self.seed,  # the same draws each time: the weights are what changes
            progress=False,
        )
        scored = [
            (float(reward), r.get("example_id"))
            for r in out.rows
            if (reward := r.get("reward")) is not None
        ]
        est = clustered_mean([v for v, _ in scored], [e for _, e in scored])
        reward = float(est.mean)
        self.history.append(
            {
                "step": step,
                "reward": reward,
                "reward_ci95": [float(x) for x in est.ci],
                "seconds": time.perf_counter() - t0,
            }
        )
        stop = self.rule.update(reward)
        if stop:
            self.stopped_at = step
        return stop

    def callback(self) -> Any:
        """The ``transformers.TrainerCallback`` that runs the probe (add it to the trainer)."""
        from transformers import TrainerCallback

        probe = self

        class _Probe(TrainerCallback):  # type: ignore[misc]
            def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
                if not probe.history:
                    probe.probe(kw["model"], int(state.global_step))

            def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
                step = int(state.global_step)
                if step % probe.every == 0 and probe.probe(kw["model"], step):
                    control.should_training_stop = True

        return _Probe()
