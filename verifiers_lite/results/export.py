"""Export a run: Arrow-safe records, Hugging Face datasets, Parquet, and save/load round-trips.

Messages (tool calls, nested ``info``) vary in shape from row to row, which Arrow's type
inference rejects (ArrowInvalid); those columns travel as JSON strings instead, so they come
back as plain JSON whatever a rollout put in them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from numbers import Number
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifiers_lite.records import Row
from verifiers_lite.results import row_index
from verifiers_lite.results.disk_rows import DiskRows
from verifiers_lite.results.flat_rows import flatten_row
from verifiers_lite.results.store import METADATA_FILE, RESULTS_FILE, read_rows, write_json_atomic

if TYPE_CHECKING:
    import datasets

    from verifiers_lite.results.run_data import RunData

JSON_COLUMNS = ("prompt", "completion", "info")  # always JSON strings, even when all rows agree
PARQUET_METADATA_KEY = b"verifiers_lite"


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def arrow_records(rows: list[Row]) -> list[dict[str, Any]]:
    """Flat rows with one Arrow type per column: nested or mixed-type values become JSON text."""
    flat = [flatten_row(r) for r in rows]
    columns: dict[str, None] = {}
    for r in flat:
        columns.update(dict.fromkeys(r))
    for col in columns:
        values = [r.get(col) for r in flat]
        kinds = {_kind(v) for v in values if v is not None}
        if col in JSON_COLUMNS or "nested" in kinds or len(kinds) > 1:
            for r in flat:
                v = r.get(col)
                r[col] = None if v is None and col not in JSON_COLUMNS else _dumps(v)
        else:
            for r in flat:
                r.setdefault(col, None)
    return flat


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, Number):
        return "number"
    if isinstance(value, str):
        return "str"
    return "nested"


def to_hf_dataset(outputs: RunData) -> datasets.Dataset:
    """A ``datasets.Dataset`` with one row per rollout; run metadata in ``info.description``."""
    import datasets

    ds = datasets.Dataset.from_list(arrow_records(list(outputs.rows)))
    ds.info.description = _dumps(outputs.metadata)
    return ds


def to_parquet(outputs: RunData, path: str | os.PathLike[str]) -> Path:
    """Write the rows as Parquet (messages as JSON text); run metadata in the schema metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(arrow_records(list(outputs.rows)))
    meta = dict(table.schema.metadata or {})
    meta[PARQUET_METADATA_KEY] = _dumps(outputs.metadata).encode()
    table = table.replace_schema_metadata(meta)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path


def save_results(outputs: RunData, path: str | os.PathLike[str]) -> Path:
    """Write ``results.jsonl`` + ``metadata.json`` (the layout ``results_path`` runs use) and
    the row index; rows are written one at a time (rows on disk are streamed, not loaded)."""
    directory = Path(path)
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f".{RESULTS_FILE}.tmp"
    index = row_index.IndexWriter(directory, fresh=True)
    with open(tmp, "wb") as f:
        for row in outputs.rows:
            line = (_dumps(row) + "\n").encode("utf-8")
            index.append([row], f.tell(), [line])
            f.write(line)
    row_index.remove(directory)
    os.replace(tmp, directory / RESULTS_FILE)
    index.commit()
    write_json_atomic(directory / METADATA_FILE, outputs.metadata)
    return directory


def read_run(path: str | os.PathLike[str]) -> tuple[Sequence[Row], dict[str, Any]]:
    """The rows and metadata of a saved run: a directory from ``save()`` or ``results_path``
    (rows stay on disk, read on demand through the row index; rows with ids that are not integers
    are read into memory), or a Parquet file."""
    p = Path(path)
    if p.is_file() and p.suffix == ".parquet":
        return _read_parquet(p)
    if not (p / RESULTS_FILE).exists():
        raise FileNotFoundError(f"no {RESULTS_FILE} in {p} (expected a directory written by save() or results_path)")
    meta_file = p / METADATA_FILE
    metadata = json.loads(meta_file.read_text(encoding="utf-8")) if meta_file.exists() else {}
    on_disk = DiskRows.open(p / RESULTS_FILE)
    return (on_disk if on_disk is not None else read_rows(p / RESULTS_FILE)), metadata


def _read_parquet(path: Path) -> tuple[list[Row], dict[str, Any]]:
    """Rows from Parquet come back flat (one column per metric), with messages decoded."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    raw = (table.schema.metadata or {}).get(PARQUET_METADATA_KEY)
    rows = table.to_pylist()
    for r in rows:
        for col in JSON_COLUMNS:
            if isinstance(r.get(col), str):
                r[col] = json.loads(r[col])
    return rows, json.loads(raw) if raw else {}
