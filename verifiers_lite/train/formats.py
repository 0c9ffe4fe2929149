"""Results rows in the shapes other RL trainers take: verl, SkyRL, prime-rl.

Field names follow each project's own source:

- verl: ``AgentLoopOutput`` (verl/experimental/agent_loop/agent_loop.py): ``prompt_ids``,
  ``response_ids`` (model and tool tokens), ``response_mask`` (1 model token, 0 tool token),
  ``response_logprobs``, ``reward_score``, ``num_turns`` (chat turns: user, assistant, tool),
  ``metrics``, ``extra_fields``.
- SkyRL: ``GeneratorOutput`` (skyrl-train/skyrl_train/generators/base.py), one dict of per-row
  lists: ``prompt_token_ids``, ``response_ids``, ``rewards``, ``loss_masks``, ``stop_reasons``,
  ``rollout_metrics``, ``rollout_logprobs``, ``trajectory_ids``.
- prime-rl: the orchestrator's training sample (src/prime_rl/transport/types.py):
  ``prompt_ids``, ``prompt_mask``, ``completion_ids``, ``completion_mask``,
  ``completion_logprobs``, ``advantage``.

Only rows with token ids and a reward are exported (an errored or unscored rollout has nothing
to train on); a row without token ids raises, naming it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from verifiers_lite.core.records import Row
from verifiers_lite.results.run_data import RunData

__all__ = ["to_prime_rl", "to_skyrl", "to_verl", "trainable_rows"]

_CHAT_ROLES = ("user", "assistant", "tool")


RowSource = Iterable[Row] | RunData
"""Rows, or a run's results (a ``GenerateOutputs``: its ``rows``)."""


def trainable_rows(rows: RowSource) -> list[Row]:
    """The scored, error-free rows of ``rows`` (a list or a ``GenerateOutputs``), each with
    token ids; ValueError naming the first row that has none."""
    source = rows.rows if isinstance(rows, RunData) else rows
    kept = [r for r in source if r.get("reward") is not None and not r.get("error")]
    for i, r in enumerate(kept):
        if r.get("completion_ids") is None or r.get("prompt_ids") is None:
            raise ValueError(
                f"row {i} (example {r.get('example_id')}, rollout {r.get('rollout_index')}) has no token "
                "ids: run with a token-level client (verifiers_lite.rollout.TokenClient)"
            )
    return kept


def reward_of(row: Row) -> float:
    """The reward of a row :func:`trainable_rows` kept (each has one)."""
    reward = row.get("reward")
    if reward is None:
        raise ValueError(
            f"row of example {row.get('example_id')} has no reward: it is not trainable"
        )
    return float(reward)


def _tokens(row: Row) -> tuple[list[int], list[int], list[int], list[float]]:
    comp = list(row["completion_ids"])
    mask = list(row.get("completion_mask") or [1] * len(comp))
    lps = row.get("completion_logprobs")
    logprobs = [float(x) for x in lps] if lps is not None else [0.0] * len(comp)
    return list(row["prompt_ids"]), comp, mask, logprobs


def _num_turns(row: Row) -> int:
    msgs = [*(row.get("prompt") or []), *(row.get("completion") or [])]
    return sum(1 for m in msgs if isinstance(m, dict) and m.get("role") in _CHAT_ROLES)


def to_verl(rows: RowSource) -> list[dict[str, Any]]:
    """One verl ``AgentLoopOutput`` dict per trainable row."""
    out = []
    for row in trainable_rows(rows):
        prompt, comp, mask, lps = _tokens(row)
        timing = row.get("timing") or {}
        out.append(
            {
                "prompt_ids": prompt,
                "response_ids": comp,
                "response_mask": mask,
                "response_logprobs": lps,
                "reward_score": reward_of(row),
                "num_turns": _num_turns(row),
                # verl's AgentLoopMetrics: seconds spent generating (tool time is not measured here).
                "metrics": {"generate_sequences": float(timing.get("generation_ms", 0.0)) / 1000.0},
                "extra_fields": _ids(row),
            }
        )
    return out


def to_skyrl(rows: RowSource) -> dict[str, Any]:
    """One SkyRL ``GeneratorOutput`` dict (per-row lists) for the trainable rows.
    ``trajectory_ids`` are ``{"instance_id", "repetition_id"}`` (SkyRL's ``TrajectoryID``)."""
    kept = trainable_rows(rows)
    toks = [_tokens(r) for r in kept]
    rewards = [reward_of(r) for r in kept]
    return {
        "prompt_token_ids": [t[0] for t in toks],
        "response_ids": [t[1] for t in toks],
        "rewards": rewards,
        "loss_masks": [t[2] for t in toks],
        "stop_reasons": [str(r.get("stop_reason")) for r in kept],
        "rollout_metrics": {"generate/avg_reward": sum(rewards) / len(rewards)}
        if rewards
        else None,
        "rollout_logprobs": [t[3] for t in toks],
        "trajectory_ids": [
            {
                "instance_id": str(r.get("example_id")),
                "repetition_id": int(r.get("rollout_index") or 0),
            }
            for r in kept
        ],
    }


def to_prime_rl(rows: RowSource) -> list[dict[str, Any]]:
    """One prime-rl training sample dict per trainable row (prompt tokens never in the loss)."""
    out = []
    for row in trainable_rows(rows):
        prompt, comp, mask, lps = _tokens(row)
        out.append(
            {
                "prompt_ids": prompt,
                "prompt_mask": [0] * len(prompt),
                "completion_ids": comp,
                "completion_mask": mask,
                "completion_logprobs": lps,
                "advantage": _float(row.get("advantage")),
                "reward": reward_of(row),
            }
        )
    return out


def _ids(row: Row) -> dict[str, Any]:
    return {k: row.get(k) for k in ("example_id", "rollout_index", "trajectory_id", "stop_reason")}


def _float(x: Any) -> float | None:
    return None if x is None else float(x)
