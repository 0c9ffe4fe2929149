"""Sampling parameters, the ``Sampler`` protocol and one sample's result."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "FinishReason",
    "SampleResult",
    "Sampler",
    "SamplingParams",
    "params_list",
    "sample_isolated",
]

FinishReason = Literal["stop", "length"]


@dataclass(frozen=True, slots=True)
class SamplingParams:
    """How to sample one completion.

    ``logprobs``: ``None`` returns no logprobs; ``k >= 0`` asks the backend for the top-``k``
    alternatives, but results always carry the logprob of the *sampled* token, whatever ``k``.
    ``seed`` makes sampling reproducible per request, so a prompt's result does not depend on
    which other prompts share its batch. ``stop`` strings end a sample after the token that
    completes them (that token is kept: ids are never cut). ``stop_token_ids`` are added to the
    template's end-of-turn ids.
    """

    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    max_tokens: int = 256
    stop: tuple[str, ...] = ()
    stop_token_ids: tuple[int, ...] = ()
    logprobs: int | None = None
    seed: int | None = None
    repetition_penalty: float = 1.0
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Accept lists for convenience but store tuples so params stay hashable-ish and immutable.
        if isinstance(self.stop, str):
            object.__setattr__(self, "stop", (self.stop,))
        object.__setattr__(self, "stop", tuple(self.stop or ()))
        object.__setattr__(self, "stop_token_ids", tuple(self.stop_token_ids or ()))
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")

    def replace(self, **changes: Any) -> SamplingParams:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def to_sampling_args(self) -> dict[str, Any]:
        """The OpenAI-style ``sampling_args`` these params mean (a chat-completions request's
        keyword arguments; ``top_k``, ``repetition_penalty`` and ``stop_token_ids``, which
        OpenAI-compatible servers such as vLLM take, only when set); :meth:`with_sampling_args`
        reads them back."""
        out: dict[str, Any] = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
        }
        if self.top_k > 0:
            out["top_k"] = self.top_k
        if self.repetition_penalty != 1.0:
            out["repetition_penalty"] = self.repetition_penalty
        if self.stop:
            out["stop"] = list(self.stop)
        if self.stop_token_ids:
            out["stop_token_ids"] = list(self.stop_token_ids)
        if self.seed is not None:
            out["seed"] = self.seed
        if self.logprobs is not None:
            out["logprobs"] = True
            if self.logprobs > 0:
                out["top_logprobs"] = self.logprobs
        out.update(self.extra)
        return out

    def with_sampling_args(self, args: Mapping[str, Any] | None) -> SamplingParams:
        """These params overridden by OpenAI-style ``sampling_args`` (an environment's, a run's):
        ``max_completion_tokens`` is read as ``max_tokens``; keys with no field here are ignored."""
        if not args:
            return self
        changes: dict[str, Any] = {}
        for key in ("temperature", "top_p", "top_k", "seed", "repetition_penalty"):
            if args.get(key) is not None:
                changes[key] = args[key]
        max_tokens = args.get("max_completion_tokens") or args.get("max_tokens")
        if max_tokens:
            changes["max_tokens"] = int(max_tokens)
        if args.get("stop"):
            changes["stop"] = (
                (args["stop"],) if isinstance(args["stop"], str) else tuple(args["stop"])
            )
        if args.get("stop_token_ids"):
            changes["stop_token_ids"] = tuple(int(t) for t in args["stop_token_ids"])
        if "logprobs" in args:
            changes["logprobs"] = int(args.get("top_logprobs") or 0) if args["logprobs"] else None
        return self.replace(**changes)


@dataclass(slots=True)
class SampleResult:
    """One sampled completion: token ids exactly as sampled, why it ended, their logprobs.

    ``logprobs[i]`` is the model's log-probability of ``token_ids[i]`` given everything before
    it; ``top_logprobs[i]`` maps the ``k`` most likely ids at that step to theirs (when asked).
    """

    token_ids: list[int]
    finish_reason: FinishReason
    logprobs: list[float] | None = None
    text: str | None = None
    top_logprobs: list[dict[int, float]] | None = None


@runtime_checkable
class Sampler(Protocol):
    """Samples a batch of token prompts in one call.

    ``params`` is one :class:`SamplingParams` for all prompts or one per prompt (a rollout
    shrinks ``max_tokens`` per trajectory to its remaining token budget). Returns one
    :class:`SampleResult` per prompt, in order. A sampler may expose ``max_context_tokens``
    (its context window): rollouts then refuse prompts that do not fit it, per trajectory.
    """

    def sample(
        self, prompts: Sequence[Sequence[int]], params: SamplingParams | Sequence[SamplingParams]
    ) -> list[SampleResult]: ...


def params_list(params: SamplingParams | Sequence[SamplingParams], n: int) -> list[SamplingParams]:
    """Normalise ``params`` to one entry per prompt."""
    if isinstance(params, SamplingParams):
        return [params] * n
    params = list(params)
    if len(params) != n:
        raise ValueError(f"got {len(params)} SamplingParams for {n} prompts")
    return params


def sample_isolated(
    sampler: Sampler, prompts: Sequence[Sequence[int]], params: Sequence[SamplingParams]
) -> list[SampleResult | Exception]:
    """``sampler.sample`` on a batch, where one prompt's failure fails only that prompt.

    The batch is sampled in one call; if that call raises (or returns a wrong count), each
    prompt is sampled again on its own, so the failing ones are found and the others still get
    their result. Seeded requests give the same result either way.
    """
    if not prompts:
        return []
    try:
        results = sampler.sample(prompts, params)
        if len(results) == len(prompts):
            return list(results)
        error: Exception = RuntimeError(
            f"sampler returned {len(results)} results for {len(prompts)} prompts"
        )
    except Exception as e:  # isolated below, prompt by prompt
        error = e
    if len(prompts) == 1:
        return [error]
    out: list[SampleResult | Exception] = []
    for prompt, p in zip(prompts, params, strict=True):
        try:
            (res,) = sampler.sample([prompt], [p])
            out.append(res)
        except Exception as e:  # this prompt only
            out.append(e)
    return out
