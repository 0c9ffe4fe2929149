"""A run as an inspect_ai log (``.eval``), written through inspect_ai's own log API.

One sample per rollout (the example id as sample id, the rollout index + 1 as epoch), its
messages, usage, one score per reward function and ``reward`` (the total), an errored rollout as
a sample error; the run's model, sampling arguments, dataset and metadata (the manifests
included) on the log; results with inspect's own ``mean`` and ``stderr`` metrics (epochs reduced
by their mean first, as inspect does) beside this library's figures clustered by example.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from verifiers_lite.core.records import Row
from verifiers_lite.interop.inspect_extra import inspect_module
from verifiers_lite.interop.inspect_messages import to_inspect_messages
from verifiers_lite.interop.inspect_results import eval_results
from verifiers_lite.interop.inspect_samples import (
    INSPECT_KEY,
    ROW_KEY,
    epoch_of,
    row_extras,
)
from verifiers_lite.interop.inspect_scores import score_table
from verifiers_lite.results.compare import as_outputs
from verifiers_lite.results.outputs import GenerateOutputs

# This library's sampling arguments that inspect's GenerateConfig holds under the same meaning.
_GENERATE_KEYS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_tokens": "max_tokens",
    "max_completion_tokens": "max_tokens",
    "seed": "seed",
    "stop": "stop_seqs",
    "frequency_penalty": "frequency_penalty",
    "presence_penalty": "presence_penalty",
    "logprobs": "logprobs",
    "top_logprobs": "top_logprobs",
}


def _iso(epoch_s: float | None) -> str:
    when = datetime.fromtimestamp(epoch_s, UTC) if epoch_s else datetime.now(UTC)
    return when.isoformat()


def generate_config(sampling_args: Mapping[str, Any]) -> Any:
    """Inspect's ``GenerateConfig`` for the sampling arguments it has a field for."""
    m = inspect_module("inspect_ai.model")
    kept: dict[str, Any] = {}
    for key, value in sampling_args.items():
        if key in _GENERATE_KEYS and value is not None:
            kept[_GENERATE_KEYS[key]] = (
                [value] if key == "stop" and isinstance(value, str) else value
            )
    return m.GenerateConfig(**kept)


def _usage(row: Row, model: str) -> dict[str, Any]:
    usage = row.get("usage") or {}
    if not usage:
        return {}
    m = inspect_module("inspect_ai.model")
    prompt, completion = usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0
    return {
        model: m.ModelUsage(
            input_tokens=prompt,
            output_tokens=completion,
            total_tokens=prompt + completion,
            reasoning_tokens=usage.get("reasoning_tokens"),
        )
    }


def _output(row: Row, model: str, messages: list[Any]) -> Any:
    m = inspect_module("inspect_ai.model")
    last = next((msg for msg in reversed(messages) if msg.role == "assistant"), None)
    if last is None:
        return m.ModelOutput(model=model)
    stop = {"length": "max_tokens", "stop": "stop"}.get(str(row.get("stop_reason")), "unknown")
    if last.tool_calls and row.get("stop_reason") != "length":
        stop = "tool_calls"
    return m.ModelOutput.from_message(last, stop_reason=stop)


def row_sample(row: Row, model: str) -> Any:
    """One rollout as an inspect ``EvalSample``."""
    log = inspect_module("inspect_ai.log")
    extras = row_extras(row)
    kept = extras.get(INSPECT_KEY) or {}
    prompt = to_inspect_messages(row.get("prompt") or [])
    messages = prompt + to_inspect_messages(row.get("completion") or [])
    error = row.get("error")
    timing = row.get("timing") or {}
    total = timing.get("total_ms")
    return log.EvalSample(
        id=kept.get("id", row.get("example_id")),
        epoch=epoch_of(row),
        input=kept.get("input", prompt),
        target=kept.get("target", row.get("answer") or ""),
        choices=kept.get("choices"),
        messages=messages,
        output=_output(row, model, messages),
        scores=score_table(row),
        metadata={**(row.get("info") or {}), ROW_KEY: extras[ROW_KEY]},
        model_usage=_usage(row, model),
        started_at=_iso(timing["start"]) if timing.get("start") else None,
        total_time=total / 1000 if total is not None else None,
        uuid=row.get("trajectory_id"),
        error=log.EvalError(message=error["message"], traceback="", traceback_ansi="")
        if error
        else None,
    )


def eval_log(run: GenerateOutputs) -> Any:
    """The run as an inspect ``EvalLog`` (not written)."""
    log = inspect_module("inspect_ai.log")
    meta = run.metadata
    model = str(meta.get("model") or "unknown")
    samples = [row_sample(row, model) for row in run.rows]
    ids = list(dict.fromkeys(s.id for s in samples))
    name = str(meta.get("env_id") or "verifiers_lite")
    spec = log.EvalSpec(
        created=_iso(meta.get("start_time")),
        task=name,
        dataset=log.EvalDataset(name=name, samples=len(ids), sample_ids=ids),
        model=model,
        model_generate_config=generate_config(meta.get("sampling_args") or {}),
        task_args=dict(meta.get("env_args") or {}),
        config=log.EvalConfig(epochs=meta.get("rollouts_per_example")),
        metadata={ROW_KEY: dict(meta)},
        packages={"verifiers_lite": str(meta.get("library_version") or "")},
    )
    usage: dict[str, Any] = {}
    for s in samples:
        for key, u in s.model_usage.items():
            usage[key] = usage[key] + u if key in usage else u
    return log.EvalLog(
        status="cancelled" if meta.get("status") == "interrupted" else "success",
        eval=spec,
        results=eval_results(run.rows),
        stats=log.EvalStats(
            started_at=_iso(meta.get("start_time")),
            completed_at=_iso(meta.get("end_time")),
            model_usage=usage,
        ),
        samples=samples,
    )


def export_inspect(
    run: GenerateOutputs | str | os.PathLike[str], path: str | os.PathLike[str]
) -> Path:
    """Write ``run`` (a :class:`GenerateOutputs` or a run directory) as an inspect_ai log:
    ``path`` is the ``.eval`` file, or a directory (``inspect view --log-dir``) to write one
    into. Returns the file written. Needs the ``inspect`` extra."""
    outputs = as_outputs(run, "export_inspect()")
    log = inspect_module("inspect_ai.log")
    target = Path(path)
    if target.suffix != ".eval":
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H-%M-%S")
        task = str(outputs.metadata.get("env_id") or "verifiers_lite").replace("/", "_")
        target = target / f"{stamp}_{task}_verifiers-lite.eval"
    target.parent.mkdir(parents=True, exist_ok=True)
    log.write_eval_log(eval_log(outputs), str(target), format="eval")
    return target
