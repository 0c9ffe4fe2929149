"""An inspect_ai log (``.eval`` or ``.json``) as a run: one row per sample and epoch, so the
DataFrame, the statistics clustered by sample id, ``compare_runs`` (paired by sample id), the
plots and the viewer read it like a run made here.

The reward is the ``reward`` score when the log has one (a run exported from here), else the
headline score (the first scorer's first metric's score) as a number; every score is also a
metric (``value_to_float``), and the row keeps the scores as inspect gave them (value, answer,
explanation) in ``env_state["inspect"]``.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any, cast

from verifiers_lite.core.records import ERROR_CATEGORIES, Row
from verifiers_lite.interop.inspect_extra import inspect_module
from verifiers_lite.interop.inspect_messages import from_inspect_messages
from verifiers_lite.interop.inspect_samples import (
    INSPECT_KEY,
    REWARD_SCORE,
    ROW_KEY,
    sample_info,
    target_text,
)
from verifiers_lite.interop.inspect_scores import inspect_scores_of, score_float
from verifiers_lite.results.outputs import GenerateOutputs
from verifiers_lite.results.run_metadata import RunMetadata

_STOP = {"max_tokens": "length", "model_length": "length"}


def _reward_score(log: Any) -> str | None:
    """The score the reward comes from: ``reward``, else the log's headline scorer's."""
    names = [s.name for s in (log.results.scores if log.results else [])]
    if REWARD_SCORE in names:
        return REWARD_SCORE
    headline = getattr(log.results, "headline", None) if log.results else None
    if headline is not None and getattr(headline, "score", None):
        return str(headline.score)
    return names[0] if names else None


def _prompt_length(sample: Any, messages: list[dict[str, Any]], own: dict[str, Any]) -> int:
    """How many of the transcript's messages are the prompt: as the exported row said, else
    those before the model's first turn."""
    if isinstance(own.get("prompt_messages"), int):
        return int(own["prompt_messages"])
    return next((i for i, m in enumerate(messages) if m["role"] == "assistant"), len(messages))


def _usage(sample: Any) -> dict[str, int]:
    totals = {"prompt_tokens": 0, "completion_tokens": 0}
    reasoning = 0
    for usage in (sample.model_usage or {}).values():
        totals["prompt_tokens"] += usage.input_tokens
        totals["completion_tokens"] += usage.output_tokens
        reasoning += usage.reasoning_tokens or 0
    if reasoning:
        totals["reasoning_tokens"] = reasoning
    return totals if sample.model_usage else {}


def _timing(sample: Any, own: dict[str, Any]) -> dict[str, float]:
    if own.get("timing"):
        return dict(own["timing"])
    timing: dict[str, float] = {}
    if sample.started_at:
        timing["start"] = datetime.fromisoformat(str(sample.started_at)).timestamp()
    if sample.total_time is not None:
        timing["total_ms"] = sample.total_time * 1000
    return timing


def _error(sample: Any, own: dict[str, Any]) -> dict[str, Any] | None:
    if sample.error is None:
        return None
    category = own.get("error_category")
    return {
        "category": category if category in ERROR_CATEGORIES else "env_error",
        "message": sample.error.message,
    }


def _inspect_fields(sample: Any) -> dict[str, Any]:
    """What the row keeps of the sample as inspect had it (for an export back to inspect)."""
    kept: dict[str, Any] = {
        "id": sample.id,
        "input": sample.input
        if isinstance(sample.input, str)
        else [m.model_dump(mode="json", exclude_none=True) for m in sample.input],
        "target": sample.target,
    }
    if sample.choices:
        kept["choices"] = list(sample.choices)
    if sample.scores:
        kept["scores"] = inspect_scores_of(sample)
    return kept


def example_id_map(log: Any) -> dict[Any, int]:
    """Each sample id's example id: itself when every id is an integer, else its position in
    the log's dataset (as :class:`~verifiers_lite.interop.inspect_env.InspectTaskEnv` numbers
    the samples of a task, so a log and a run of one dataset pair)."""
    listed = list(log.eval.dataset.sample_ids or [])
    ids = list(dict.fromkeys([*listed, *(s.id for s in log.samples or [])]))
    if all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        return {i: int(i) for i in ids}
    return {i: position for position, i in enumerate(ids)}


def sample_row(sample: Any, task: str, reward_score: str | None, example_id: int) -> Row:
    """One sample and epoch of an inspect log as a row."""
    own = dict((sample.metadata or {}).get(ROW_KEY) or {})
    messages = from_inspect_messages(sample.messages or sample.input)
    cut = _prompt_length(sample, messages, own)
    scores = sample.scores or {}
    metrics = {n: score_float(s.value) for n, s in scores.items() if n != REWARD_SCORE}
    reward = (
        score_float(scores[reward_score].value)
        if reward_score in scores and not sample.error
        else None
    )
    completion = messages[cut:]
    stop = own.get("stop_reason") or (
        "error" if sample.error else _STOP.get(sample.output.stop_reason, "stop")
    )
    env_state = dict(own.get("env_state") or {})
    if reward_score != REWARD_SCORE or example_id != sample.id:  # inspect's own, kept as they are
        env_state[INSPECT_KEY] = _inspect_fields(sample)
    row: dict[str, Any] = {
        "example_id": example_id,
        "rollout_index": sample.epoch - 1,
        "trajectory_id": sample.uuid or f"{sample.id}-{sample.epoch}",
        "task": own.get("task") or task,
        "prompt": messages[:cut],
        "completion": completion,
        "answer": target_text(sample.target),
        "info": sample_info(sample.metadata),
        "reward": reward,
        "metrics": metrics,
        "advantage": own.get("advantage"),
        "turns": sum(1 for m in completion if m["role"] == "assistant"),
        "stop_reason": stop,
        "error": _error(sample, own),
        "timing": _timing(sample, own),
        "usage": _usage(sample),
    }
    if env_state:
        row["env_state"] = env_state
    if "seed" in own:
        row["seed"] = own["seed"]
    return cast(Row, row)


def _advantages(rows: list[Row]) -> None:
    """Reward minus its example's mean, for rows that came without one (a native inspect log)."""
    groups: dict[Any, list[float]] = {}
    for r in rows:
        if r.get("reward") is not None:
            groups.setdefault(r.get("example_id"), []).append(float(r["reward"] or 0.0))
    for r in rows:
        if r.get("advantage") is None and r.get("reward") is not None:
            group = groups[r.get("example_id")]
            r["advantage"] = float(r["reward"] or 0.0) - sum(group) / len(group)


def _metadata(log: Any, rows: list[Row]) -> RunMetadata:
    spec = log.eval
    saved = dict((spec.metadata or {}).get(ROW_KEY) or {})
    if saved:
        return cast(RunMetadata, saved)
    config = spec.model_generate_config.model_dump(exclude_none=True)
    epochs = max((int(r.get("rollout_index") or 0) + 1 for r in rows), default=0)
    return cast(
        RunMetadata,
        {
            "env_id": spec.task,
            "env_args": dict(spec.task_args or {}),
            "model": spec.model,
            "sampling_args": config,
            "rollouts_per_example": epochs,
            "num_examples": len({r.get("example_id") for r in rows}),
            "num_rollouts": len(rows),
            "status": "completed" if log.status == "success" else str(log.status),
            "inspect_log": str(log.location or ""),
        },
    )


def load_inspect_log(path: str | os.PathLike[str]) -> GenerateOutputs:
    """Read an inspect_ai log (``.eval``/``.json``) as a run (rows in memory), in sample then
    epoch order. Needs the ``inspect`` extra."""
    log = inspect_module("inspect_ai.log").read_eval_log(str(path))
    if not log.samples:
        raise ValueError(
            f"{path}: the inspect log holds no samples (written with log_samples off?)"
        )
    reward_score = _reward_score(log)
    ids = example_id_map(log)
    rows = [sample_row(s, log.eval.task, reward_score, ids[s.id]) for s in log.samples]
    order = {sid: i for i, sid in enumerate(dict.fromkeys(r["example_id"] for r in rows))}
    rows.sort(key=lambda r: (order[r["example_id"]], r.get("rollout_index") or 0))
    _advantages(rows)
    return GenerateOutputs(rows=rows, metadata=_metadata(log, rows))
