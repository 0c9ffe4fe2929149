"""TRL's ``GRPOTrainer`` trained on a verifiers_lite environment's rollouts.

TRL's ``rollout_func`` hook (trl 1.16) receives the batch's prompts (each repeated
``num_generations`` times) and the trainer, and must return ``prompt_ids``, ``completion_ids``
and ``logprobs`` per completion; other keys go to the reward functions, except ``env_mask``
(1 = model token, 0 = environment token), which TRL multiplies into the loss mask.
:class:`EnvironmentRollouts` is that hook: it runs the environment (single-turn, multi-turn,
tools) through a token-level sampler, hands TRL the rows' ids, logprobs and masks verbatim, and
gives the rubric's reward back through :meth:`EnvironmentRollouts.reward`.
"""

from __future__ import annotations

import json
import logging
import time
from collections import defaultdict
from typing import Any

from verifiers_lite._util.extras import require
from verifiers_lite.core.records import Row
from verifiers_lite.rollout.mismatch import hf_scorer, logprob_report
from verifiers_lite.rollout.sampling import Sampler, SamplingParams
from verifiers_lite.rollout.template import Template
from verifiers_lite.rollout.token_client import TokenClient
from verifiers_lite.stats.error_bars import clustered_mean

from .shared_prompt import share_prompt_pass
from .validate import validate_training_rows

__all__ = ["EnvironmentRollouts", "grpo_trainer"]

logger = logging.getLogger(__name__)


def _prompt_key(messages: Any) -> str:
    # Role and text identify a prompt; a dataset library may add empty keys to messages.
    return json.dumps([(m.get("role"), m.get("content")) for m in messages], ensure_ascii=False)


class _StaleWeights:
    """Stands in for TRL's vLLM weight sync when the sampler's weights cannot be updated
    (llama.cpp, a fixed server): the rollouts are off-policy and only importance sampling
    corrects them."""

    def sync_weights(self) -> None:
        return None


class EnvironmentRollouts:
    """TRL ``rollout_func`` over ``env``: call it as TRL does, ``rollouts(prompts, trainer)``.

    ``sampler`` draws the completions (None: a :class:`TransformersSampler` over the model being
    trained, bound on the first call: on-policy); ``template`` renders the chats (the trained
    model's). Per call, ``last_rows`` keeps the environment's rows (in TRL's order) and
    ``step_stats`` gets one entry: the trainer step, the step's questions (``example_ids``, in
    TRL's order, each once), the mean reward and its 95% interval
    (``reward_ci95``, clustered by question), the seconds spent in the sampler,
    in the whole rollout and in the ratio check (``sampling_s``, ``rollout_s``, ``ratio_s``),
    and, every ``ratio_every`` steps (0: never), the importance-ratio statistics of the
    sampler's logprobs against the trainer's (``vf.rollout.logprob_report``), computed with the weights
    about to be updated: one more forward pass over the batch; with a PEFT adapter also
    ``kl_to_base``, the policy's KL to the base model (a second pass, adapter off), which
    gives a KL curve without a reference model in the loss (``beta=0``).
    """

    def __init__(
        self,
        env: Any,
        sampler: Sampler | None,
        template: Template,
        *,
        sampling_params: SamplingParams | None = None,
        ratio_every: int = 1,
        seed: int = 0,
        model_name: str = "policy",
    ) -> None:
        self.env = env
        self.sampler = sampler
        self.template = template
        self.sampling_params = sampling_params or SamplingParams(max_tokens=128, logprobs=0)
        _check_unbiased(self.sampling_params)
        if ratio_every < 0:
            raise ValueError(f"ratio_every must be >= 0 (0: never), got {ratio_every}")
        self.ratio_every = ratio_every
        self.seed = seed
        self.model_name = model_name
        self.last_rows: list[Row] = []
        self.step_stats: list[dict[str, Any]] = []
        self._examples = _index_examples(env.get_dataset())

    def dataset(self, num_examples: int = -1) -> Any:
        """The environment's dataset as a ``datasets.Dataset`` with TRL's ``prompt`` column."""
        datasets = require("datasets", "EnvironmentRollouts.dataset", "train")
        inputs = self.env.get_dataset()
        if num_examples >= 0:
            inputs = inputs[:num_examples]
        return datasets.Dataset.from_list(
            [
                {
                    "prompt": [
                        {"role": m["role"], "content": m.get("content") or ""}
                        for m in inp["prompt"]
                    ],
                    "example_id": inp.get("example_id"),
                }
                for inp in inputs
            ]
        )

    # -- TRL's hook -------------------------------------------------------------------------
    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        t0 = time.perf_counter()
        sampler = _TimedSampler(self._sampler(trainer))
        inputs = [self._example(p) for p in prompts]
        client = TokenClient(sampler, self.template, self.sampling_params)
        step = int(trainer.state.global_step)
        out = self.env.generate_sync(
            inputs,
            client,
            self.model_name,
            seed=self.seed * 1_000_003 + step,
            progress=False,
        )
        rows = _in_prompt_order(inputs, out.rows)
        trainable = [r for r in rows if _has_tokens(r)]
        validate_training_rows(trainable)
        self.last_rows = rows
        clocks = {"sampling_s": sampler.seconds, "rollout_s": time.perf_counter() - t0}
        self._record(step, rows, trainable, trainer, clocks)
        return self._to_trl(rows)

    @staticmethod
    def reward(
        prompts: Any = None, completions: Any = None, vf_reward: Any = None, **_: Any
    ) -> list[float | None]:
        """TRL reward function: the environment's rubric reward of each rollout (None for a
        rollout that failed: TRL leaves it out of its group's baseline)."""
        return list(vf_reward or [])

    # -- helpers ----------------------------------------------------------------------------
    def _sampler(self, trainer: Any) -> Sampler:
        if self.sampler is None:
            from verifiers_lite.rollout.samplers.transformers import TransformersSampler

            self.sampler = TransformersSampler(trainer.accelerator.unwrap_model(trainer.model))
        return self.sampler

    def _example(self, prompt: Any) -> dict[str, Any]:
        key = _prompt_key(prompt)
        if key not in self._examples:
            raise KeyError(f"prompt not in the environment's dataset: {key[:200]}")
        return self._examples[key]

    def _to_trl(self, rows: list[Row]) -> dict[str, Any]:
        prompt_ids, completion_ids, logprobs, env_mask, rewards = [], [], [], [], []
        for row in rows:
            if _has_tokens(row):
                prompt_ids.append(list(row["prompt_ids"]))
                completion_ids.append(list(row["completion_ids"]))
                logprobs.append([float(x) for x in row["completion_logprobs"]])
                env_mask.append(list(row["completion_mask"]))
                rewards.append(row.get("reward"))
            else:  # a failed rollout: one masked end-of-turn token, no reward, nothing learned
                prompt_ids.append(
                    self.template.encode_messages(row["prompt"], add_generation_prompt=True)
                )
                completion_ids.append([self.template.stop_token_ids[0]])
                logprobs.append([0.0])
                env_mask.append([0])
                rewards.append(None)
        return {
            "prompt_ids": prompt_ids,
            "completion_ids": completion_ids,
            "logprobs": logprobs,
            "env_mask": env_mask,
            "vf_reward": rewards,
        }

    def _record(
        self,
        step: int,
        rows: list[Row],
        trainable: list[Row],
        trainer: Any,
        clocks: dict[str, float],
    ) -> None:
        scored = [float(reward) for r in rows if (reward := r.get("reward")) is not None]
        entry: dict[str, Any] = {
            "step": step,
            "example_ids": list(dict.fromkeys(r.get("example_id") for r in rows)),
            "rollouts": len(rows),
            "errors": sum(1 for r in rows if r.get("error")),
            "reward_mean": sum(scored) / len(scored) if scored else None,
            "reward_ci95": _reward_ci95(rows),
            **clocks,
            "ratio_s": 0.0,
        }
        if self.ratio_every and (step + 1) % self.ratio_every == 0 and trainable:
            t0 = time.perf_counter()
            entry.update(_ratio_check(trainable, trainer.accelerator.unwrap_model(trainer.model)))
            entry["ratio_s"] = time.perf_counter() - t0
        self.step_stats.append(entry)


def _ratio_check(rows: list[Row], model: Any) -> dict[str, Any]:
    """The mismatch report of the sampler's logprobs against ``model``'s, and, for a PEFT
    adapter, ``kl_to_base``: KL(policy || base model) (k3 estimate on the sampled tokens, the
    base being the model with its adapter switched off)."""
    was_training = model.training
    model.eval()
    try:
        stats: dict[str, Any] = logprob_report(
            rows, _batch_scorer(model, rows), name="sampler vs trainer"
        ).stats()
        if hasattr(model, "disable_adapter"):
            with model.disable_adapter():
                base = _batch_scorer(model, rows)
            stats["kl_to_base"] = logprob_report(rows, base, name="policy vs base").stats()["kl_k3"]
        return stats
    finally:
        model.train(was_training)


def _batch_scorer(model: Any, rows: list[Row]) -> Any:
    """``hf_scorer``'s answers for the rows' sequences, from one batched float32 pass over all of
    them, each distinct prompt prefilled once (``TransformersSampler.score``: the sampler's own
    way); other sequences go to ``hf_scorer``."""
    from verifiers_lite.rollout.samplers.transformers import TransformersSampler

    prompts = [list(r["prompt_ids"]) for r in rows]
    completions = [list(r["completion_ids"]) for r in rows]
    scored = TransformersSampler(model, max_batch_size=max(1, len(rows))).score(
        prompts, completions
    )
    table = {
        (*p, *c): [0.0] * len(p) + lp for p, c, lp in zip(prompts, completions, scored, strict=True)
    }
    fallback = hf_scorer(model)
    return lambda x: table.get(tuple(x)) or fallback(x)


class _TimedSampler:
    """A sampler that adds up the seconds its ``sample`` calls take."""

    def __init__(self, sampler: Sampler) -> None:
        self.sampler = sampler
        self.seconds = 0.0

    def __getattr__(self, name: str) -> Any:  # max_context_tokens, eos ids, ...: the sampler's own
        return getattr(self.sampler, name)

    def sample(self, prompts: Any, params: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return self.sampler.sample(prompts, params)
        finally:
            self.seconds += time.perf_counter() - t0


def _reward_ci95(rows: list[Row]) -> list[float] | None:
    """The 95% interval of the step's mean reward, clustered by question (a group's rollouts
    share their prompt, so they are not independent); None when it cannot be computed."""
    scored = [
        (float(reward), r.get("example_id"))
        for r in rows
        if (reward := r.get("reward")) is not None
    ]
    est = clustered_mean([v for v, _ in scored], [eid for _, eid in scored])
    lo, hi = est.ci
    return None if lo != lo or hi != hi else [float(lo), float(hi)]


def _check_unbiased(p: SamplingParams) -> None:
    # Samplers report the raw model distribution's logprobs; TRL's loss and importance ratios
    # compare them with the trainer's at temperature 1. Any other sampling distribution would
    # bias both, silently.
    if p.temperature != 1.0 or p.top_p != 1.0 or p.top_k > 0 or p.logprobs is None:
        raise ValueError(
            "GRPO rollouts must sample at temperature 1.0 without top-p/top-k and with logprobs "
            f"(SamplingParams(logprobs=0)); got temperature={p.temperature}, top_p={p.top_p}, "
            f"top_k={p.top_k}, logprobs={p.logprobs}"
        )


def _index_examples(inputs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    index: dict[str, dict[str, Any]] = {}
    for inp in inputs:
        key = _prompt_key(inp["prompt"])
        if key in index and index[key].get("answer") != inp.get("answer"):
            raise ValueError(
                f"examples {index[key].get('example_id')} and {inp.get('example_id')} have the same prompt "
                "and different answers: TRL passes only prompts, so they cannot be told apart"
            )
        index.setdefault(key, inp)
    return index


def _has_tokens(row: Row) -> bool:
    return (
        not row.get("error")
        and bool(row.get("completion_ids"))
        and row.get("prompt_ids") is not None
    )


def _in_prompt_order(inputs: list[dict[str, Any]], rows: list[Row]) -> list[Row]:
    """Rows in the order of TRL's prompts: the k-th copy of an example gets its k-th rollout."""
    by_example: dict[Any, list[Row]] = defaultdict(list)
    for row in sorted(rows, key=lambda r: r.get("rollout_index") or 0):
        by_example[row.get("example_id")].append(row)
    taken: dict[Any, int] = defaultdict(int)
    ordered: list[Row] = []
    for inp in inputs:
        eid = inp.get("example_id")
        ordered.append(by_example[eid][taken[eid]])
        taken[eid] += 1
    return ordered


def grpo_trainer(
    env: Any,
    model: Any,
    args: Any = None,
    *,
    sampler: Sampler | None = None,
    template: Template | None = None,
    tokenizer: Any = None,
    sampling_params: SamplingParams | None = None,
    num_examples: int = -1,
    ratio_every: int = 1,
    share_prompt: bool = True,
    **trainer_kwargs: Any,
) -> Any:
    """A TRL ``GRPOTrainer`` training ``model`` (a checkpoint path or a transformers model) on
    ``env``'s dataset, rewarded by its rubric; the :class:`EnvironmentRollouts` is
    ``trainer.vf_rollouts``.

    Sampler: None trains on-policy with the trained weights (:class:`TransformersSampler`), or,
    with ``args.use_vllm`` in server mode, samples from TRL's vLLM server (TRL syncs its weights).
    Any other sampler (llama.cpp, a vLLM server TRL does not update), or a trainer in bf16/fp16
    (its logprobs differ from the sampler's by bf16 rounding), is off-policy: TRL's importance-sampling
    correction is switched on for it (one more forward pass a step; TRL logs the ratios). ``args``
    is a ``trl.GRPOConfig``;
    ``trainer_kwargs`` go to ``GRPOTrainer`` (``peft_config=peft.LoraConfig(...)`` trains a LoRA
    adapter, TRL's documented way; the sampler then samples through the adapter). ``ratio_every``:
    see :class:`EnvironmentRollouts`. ``share_prompt``: the trainer's logprob passes (forward and
    backward) run a group's prompt once, not once per completion (:func:`share_prompt_pass`: the
    same loss and gradient up to float rounding).
    """
    trl = require("trl", "grpo_trainer", "train")
    transformers = require("transformers", "grpo_trainer", "train")
    torch = require("torch", "grpo_trainer", "train")
    path = model if isinstance(model, str) else getattr(model, "name_or_path", None)
    if isinstance(model, str):
        model = transformers.AutoModelForCausalLM.from_pretrained(model, dtype=torch.float32)
    if tokenizer is None:
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(path))
    template = template or Template.from_pretrained(str(path))
    args = args or trl.GRPOConfig(output_dir="outputs/grpo")
    if args.temperature != 1.0:
        raise ValueError(
            f"GRPOConfig.temperature must be 1.0 (the sampler's logprobs are at 1.0), got {args.temperature}"
        )
    rollouts = EnvironmentRollouts(
        env,
        sampler,
        template,
        sampling_params=sampling_params,
        ratio_every=ratio_every,
        seed=args.seed,
    )
    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=[rollouts.reward],
        args=args,
        train_dataset=trainer_kwargs.pop("train_dataset", None) or rollouts.dataset(num_examples),
        processing_class=tokenizer,
        rollout_func=rollouts,
        **trainer_kwargs,
    )
    trainer.vf_rollouts = rollouts
    if share_prompt:
        share_prompt_pass(trainer)
    _connect_sampler(trainer, rollouts, sampler, args)
    return trainer


def _connect_sampler(trainer: Any, rollouts: EnvironmentRollouts, sampler: Any, args: Any) -> None:
    """TRL's vLLM server as the sampler in server mode; the importance-sampling correction for
    an off-policy sampler or a half-precision trainer."""
    if sampler is None and args.use_vllm and args.vllm_mode == "server":
        from verifiers_lite.rollout.samplers.vllm_server import VLLMServerSampler

        client = trainer.vllm_generation.vllm_client
        rollouts.sampler = VLLMServerSampler(f"{client.base_url}/v1", client.model)
    elif not args.use_vllm and (sampler is not None or args.bf16 or args.fp16):
        # A half-precision trainer's logprobs differ from its own sampler's (batch shapes, cache).
        _enable_importance_sampling(trainer)


def _enable_importance_sampling(trainer: Any) -> None:
    """Switch TRL's importance-sampling correction on for a sampler TRL does not drive.

    TRL 1.16 applies the correction (ratios of trainer to sampler logprobs, ``vllm_importance_
    sampling_mode``, clipped by ``vllm_importance_sampling_clip_*``, logged as
    ``sampling/importance_sampling_ratio/*``) only when it believes it samples with vLLM; its
    weight sync is replaced by a no-op since these weights cannot be updated.
    """
    if not trainer.args.vllm_importance_sampling_correction:
        logger.warning(
            "off-policy sampler with vllm_importance_sampling_correction=False: no correction"
        )
        return
    trainer.use_vllm = True
    trainer.vllm_importance_sampling_correction = True
    trainer.vllm_generation = _StaleWeights()
    trainer._last_loaded_step = -1
