"""Where a GRPO step's time goes: sampling, scoring, TRL's forward/backward, optimizer, logging.

:class:`StepProfiler` is a ``transformers.TrainerCallback`` (its hooks mark the step's begin,
the optimizer step and the end) joined with the rollout hook's own clocks
(:class:`~verifiers_lite.train.grpo.EnvironmentRollouts` times the sampler, the environment and
its ratio check). Attach it with :meth:`StepProfiler.attach`; ``profiler.steps`` holds one
:class:`StepTimes` per optimizer step, ``profiler.table()`` prints them.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["StepProfiler", "StepTimes"]

PHASES = (
    "sampling",
    "scoring",
    "ratio_check",
    "trl_prepare",
    "forward_backward",
    "optimizer",
    "logging",
)


@dataclass
class StepTimes:
    """Seconds one optimizer step spent in each phase; ``total`` is the step's wall time.

    ``sampling``: the sampler's own calls; ``scoring``: the rest of the environment's rollouts
    (rubric, templates, bookkeeping); ``ratio_check``: re-scoring the rollouts for the importance
    ratios; ``trl_prepare``: TRL's work on the batch outside the rollout hook (reference and old
    logprobs, advantages); ``forward_backward``: the loss's forward and backward passes and the
    gradient clipping; ``optimizer``: the optimizer's update, the schedule and zeroing the
    gradients; ``logging``: from the step's end
    to the next step's begin (metrics, callbacks).
    """

    step: int
    sampling: float = 0.0
    scoring: float = 0.0
    ratio_check: float = 0.0
    trl_prepare: float = 0.0
    forward_backward: float = 0.0
    optimizer: float = 0.0
    logging: float = 0.0
    total: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


class StepProfiler:
    """Per-step phase times of a ``GRPOTrainer`` made by ``vf.train.grpo_trainer``."""

    def __init__(self, rollouts: Any) -> None:
        self._rollouts = rollouts  # its step_stats carry the rollout hook's clocks
        self.steps: list[StepTimes] = []
        self._marks: dict[str, float] = {}
        self._prepare_s = 0.0

    @classmethod
    def attach(cls, trainer: Any) -> StepProfiler:
        """A profiler registered on ``trainer`` (a ``vf.train.grpo_trainer`` result)."""
        if not hasattr(trainer, "vf_rollouts"):
            raise TypeError(
                "StepProfiler.attach needs a trainer made by vf.train.grpo_trainer (no vf_rollouts)"
            )
        profiler = cls(trainer.vf_rollouts)
        original = trainer._generate_and_score_completions

        def timed(inputs: Any) -> Any:  # TRL's batch preparation, the rollout hook included
            t0 = time.perf_counter()
            try:
                return original(inputs)
            finally:
                profiler._prepare_s += time.perf_counter() - t0

        trainer._generate_and_score_completions = timed
        trainer.add_callback(_callback(profiler))
        return profiler

    # -- the callback's marks ---------------------------------------------------------------
    def _mark(self, name: str) -> None:
        self._marks[name] = time.perf_counter()

    def _begin(self) -> None:
        now = time.perf_counter()
        if self.steps and "end" in self._marks:
            self.steps[-1].logging = now - self._marks["end"]
            self.steps[-1].total += self.steps[-1].logging
        self._marks = {"begin": now}
        self._prepare_s = 0.0

    def _end(self, step: int) -> None:
        self._mark("end")
        m = self._marks
        pre = m.get("pre_optimizer", m["end"])
        stats = self._rollouts.step_stats[-1] if self._rollouts.step_stats else {}
        rollout_s = float(stats.get("rollout_s", 0.0))
        times = StepTimes(
            step=step,
            sampling=float(stats.get("sampling_s", 0.0)),
            scoring=rollout_s - float(stats.get("sampling_s", 0.0)),
            ratio_check=float(stats.get("ratio_s", 0.0)),
            trl_prepare=self._prepare_s - rollout_s - float(stats.get("ratio_s", 0.0)),
            forward_backward=pre - m["begin"] - self._prepare_s,
            optimizer=m["end"] - pre,
            total=m["end"] - m["begin"],
        )
        self.steps.append(times)

    def finish(self) -> None:
        """Close the last step's logging phase (called at the end of training)."""
        self._begin()
        self._marks = {}

    # -- reading ----------------------------------------------------------------------------
    def mean(self, skip_first: bool = True) -> dict[str, float]:
        """Mean seconds per phase over the steps (the first, which warms caches, left out when
        there are others)."""
        steps = self.steps[1:] if skip_first and len(self.steps) > 1 else self.steps
        if not steps:
            return {}
        return {k: sum(getattr(s, k) for s in steps) / len(steps) for k in (*PHASES, "total")}

    def table(self) -> str:
        """The mean breakdown as text: seconds and share of the step per phase."""
        mean = self.mean()
        if not mean:
            return "no steps profiled"
        total = mean["total"] or 1.0
        lines = [f"{k:17s} {mean[k]:7.2f} s {100 * mean[k] / total:5.1f}%" for k in PHASES]
        return "\n".join([*lines, f"{'step':17s} {mean['total']:7.2f} s"])


def _callback(profiler: StepProfiler) -> Any:
    """A ``TrainerCallback`` forwarding the trainer's hooks to ``profiler`` (made here so that
    importing this module needs no transformers)."""
    from transformers import TrainerCallback

    class _Hooks(TrainerCallback):  # type: ignore[misc]
        def on_step_begin(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            profiler._begin()

        def on_pre_optimizer_step(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            profiler._mark("pre_optimizer")

        def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            profiler._end(int(state.global_step))

        def on_train_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            profiler.finish()

    return _Hooks()
