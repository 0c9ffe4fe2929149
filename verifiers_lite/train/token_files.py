"""Token rows as plain files: Parquet (pyarrow) or JSONL, one row per rollout.

Columns: ``example_id``, ``rollout_index``, ``trajectory_id``, ``task``, ``reward``,
``advantage``, ``stop_reason``, ``turns``, ``prompt_ids``, ``completion_ids``,
``completion_mask``, ``completion_logprobs``: what a trainer needs, without the messages.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from verifiers_lite._util.extras import require
from verifiers_lite.core.records import Row

from .formats import RowSource, reward_of, trainable_rows

__all__ = ["TOKEN_ROW_COLUMNS", "read_token_rows", "write_token_rows"]

TOKEN_ROW_COLUMNS: tuple[str, ...] = (
    "example_id",
    "rollout_index",
    "trajectory_id",
    "task",
    "reward",
    "advantage",
    "stop_reason",
    "turns",
    "prompt_ids",
    "completion_ids",
    "completion_mask",
    "completion_logprobs",
)


def _record(row: Row) -> dict[str, Any]:
    comp = list(row["completion_ids"])
    lps, advantage = row.get("completion_logprobs"), row.get("advantage")
    return {
        "example_id": row.get("example_id"),
        "rollout_index": row.get("rollout_index"),
        "trajectory_id": row.get("trajectory_id"),
        "task": row.get("task"),
        "reward": reward_of(row),
        "advantage": None if advantage is None else float(advantage),
        "stop_reason": row.get("stop_reason"),
        "turns": row.get("turns"),
        "prompt_ids": list(row["prompt_ids"]),
        "completion_ids": comp,
        "completion_mask": list(row.get("completion_mask") or [1] * len(comp)),
        "completion_logprobs": [float(x) for x in lps] if lps is not None else [0.0] * len(comp),
    }


def write_token_rows(rows: RowSource, path: str | os.PathLike[str]) -> Path:
    """Write the trainable rows of ``rows`` (scored, error-free, with token ids) to ``path``:
    Parquet when it ends in ``.parquet``, JSONL when it ends in ``.jsonl``."""
    p = Path(path)
    if p.suffix not in (".parquet", ".jsonl"):
        raise ValueError(f"{p}: the file name must end in .parquet or .jsonl")
    records = [_record(r) for r in trainable_rows(rows)]
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.suffix == ".jsonl":
        with open(p, "w", encoding="utf-8") as f:
            for rec in records:
                f.write(json.dumps(rec) + "\n")
        return p
    pa = require("pyarrow", "write_token_rows (Parquet)", "train")
    pq = require("pyarrow.parquet", "write_token_rows (Parquet)", "train", package="pyarrow")
    schema = pa.schema(
        [
            ("example_id", pa.int64()),
            ("rollout_index", pa.int64()),
            ("trajectory_id", pa.string()),
            ("task", pa.string()),
            ("reward", pa.float64()),
            ("advantage", pa.float64()),
            ("stop_reason", pa.string()),
            ("turns", pa.int64()),
            ("prompt_ids", pa.list_(pa.int32())),
            ("completion_ids", pa.list_(pa.int32())),
            ("completion_mask", pa.list_(pa.int8())),
            ("completion_logprobs", pa.list_(pa.float32())),
        ]
    )
    pq.write_table(pa.Table.from_pylist(records, schema=schema), p)
    return p


def read_token_rows(path: str | os.PathLike[str]) -> list[Row]:
    """The rows :func:`write_token_rows` wrote, as dicts."""
    p = Path(path)
    if p.suffix == ".jsonl":
        with open(p, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    pq = require("pyarrow.parquet", "read_token_rows (Parquet)", "train", package="pyarrow")
    return list(pq.read_table(p).to_pylist())
