"""Export a run: Arrow-safe records, Hugging Face datasets, Parquet, and save/load round-trips.

Messages (tool calls, nested ``info``) vary in shape from row to row, which Arrow's type
inference rejects (ArrowInvalid); those columns travel as JSON strings instead, so they come
back as plain JSON whatever a rollout put in them.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from numbers import Integral, Number
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifiers_lite.core.records import Row
from verifiers_lite.results import row_index
from verifiers_lite.results.disk_rows import DiskRows
from verifiers_lite.results.flat_rows import flatten_row
from verifiers_lite.results.run_metadata import RunMetadata, as_run_metadata, read_run_metadata
from verifiers_lite.results.store import METADATA_FILE, RESULTS_FILE, read_rows, write_json_atomic

if TYPE_CHECKING:
    import datasets
    import pyarrow as pa

    from verifiers_lite.results.run_data import RunData

JSON_COLUMNS = ("prompt", "completion", "info")  # always JSON strings, even when all rows agree
PARQUET_METADATA_KEY = b"verifiers_lite"


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


BATCH = 10_000
"""Rows converted to Arrow at once when a run is exported."""


def _column_kinds(rows: Iterable[Row]) -> dict[str, set[str]]:
    """Each flat column (first-seen order) and the kinds of value it holds: one pass, one row
    at a time."""
    kinds: dict[str, set[str]] = {}
    for row in rows:
        for col, v in flatten_row(row).items():
            seen = kinds.setdefault(col, set())
            if v is not None:
                seen.add(_kind(v))
    return kinds


def arrow_schema(rows: Iterable[Row]) -> tuple[pa.Schema, frozenset[str]]:
    """One Arrow type per flat column, and the columns sent as JSON text: messages, nested
    values and mixed-type columns. Integers beside floats are floats; a column that is always
    empty is null."""
    import pyarrow as pa

    fields, json_cols = [], set()
    for col, kinds in _column_kinds(rows).items():
        numbers = bool(kinds) and kinds <= {"int", "float"}
        if col in JSON_COLUMNS or "nested" in kinds or (len(kinds) > 1 and not numbers):
            json_cols.add(col)
            fields.append(pa.field(col, pa.string()))
        elif numbers:
            fields.append(pa.field(col, pa.float64() if "float" in kinds else pa.int64()))
        else:
            kind = next(iter(kinds), "")
            fields.append(
                pa.field(col, {"bool": pa.bool_(), "str": pa.string()}.get(kind, pa.null()))
            )
    return pa.schema(fields), frozenset(json_cols)


def arrow_batches(
    rows: Iterable[Row],
    schema: pa.Schema,
    json_cols: frozenset[str],
) -> Iterator[pa.RecordBatch]:
    """``rows`` as record batches of :data:`BATCH` rows, typed as :func:`arrow_schema` says:
    only one batch's rows are held at a time."""
    import pyarrow as pa

    batch: list[dict[str, Any]] = []
    for row in rows:
        flat = flatten_row(row)
        for col in json_cols:
            v = flat.get(col)
            flat[col] = None if v is None and col not in JSON_COLUMNS else _dumps(v)
        batch.append(flat)
        if len(batch) == BATCH:
            yield pa.RecordBatch.from_pylist(batch, schema=schema)
            batch = []
    if batch:
        yield pa.RecordBatch.from_pylist(batch, schema=schema)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, Integral):
        return "int"
    if isinstance(value, Number):
        return "float"
    if isinstance(value, str):
        return "str"
    return "nested"


def _write_arrow(outputs: RunData, open_writer: Callable[[pa.Schema], Any]) -> None:
    """Stream ``outputs`` into the writer ``open_writer(schema)`` returns: the rows are read twice
    (their columns' types, then the values), a batch at a time."""
    schema, json_cols = arrow_schema(outputs.rows)
    with open_writer(schema) as writer:
        for batch in arrow_batches(outputs.rows, schema, json_cols):
            writer.write_batch(batch)


def to_hf_dataset(outputs: RunData) -> datasets.Dataset:
    """A ``datasets.Dataset`` with one row per rollout; run metadata in ``info.description``.
    The rows are streamed into an Arrow file in the system's temporary directory, which the
    dataset maps (as ``datasets.load_dataset`` maps its cache): its rows are not held in memory."""
    import datasets
    import pyarrow as pa

    path = Path(tempfile.mkdtemp(prefix="vf-lite-dataset-")) / "rows.arrow"
    with pa.OSFile(str(path), "wb") as sink:
        _write_arrow(outputs, lambda schema: pa.ipc.new_stream(sink, schema))
    ds = datasets.Dataset.from_file(str(path))
    ds.info.description = _dumps(outputs.metadata)
    return ds


def to_parquet(outputs: RunData, path: str | os.PathLike[str]) -> Path:
    """Write the rows as Parquet (messages as JSON text), streamed a batch at a time; run
    metadata in the schema metadata."""
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {PARQUET_METADATA_KEY: _dumps(outputs.metadata).encode()}
    _write_arrow(outputs, lambda schema: pq.ParquetWriter(path, schema.with_metadata(meta)))
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


def read_run(path: str | os.PathLike[str]) -> tuple[Sequence[Row], RunMetadata]:
    """The rows and metadata of a saved run: a directory from ``save()`` or ``results_path``
    (rows stay on disk, read on demand through the row index; rows with ids that are not integers
    are read into memory), in example order, then rollout, as the run's outputs were; or a
    Parquet file."""
    p = Path(path)
    if p.is_file() and p.suffix == ".parquet":
        return _read_parquet(p)
    if not (p / RESULTS_FILE).exists():
        raise FileNotFoundError(
            f"no {RESULTS_FILE} in {p} (expected a directory written by save() or results_path)"
        )
    metadata = read_run_metadata(p) if (p / METADATA_FILE).exists() else RunMetadata()
    on_disk = DiskRows.open(p / RESULTS_FILE, sort=True)  # example order, as a run's outputs are
    if on_disk is not None:
        return on_disk, metadata
    rows = read_rows(p / RESULTS_FILE)
    rows.sort(key=lambda r: (_order_key(r.get("example_id")), r.get("rollout_index") or 0))
    return rows, metadata


def _order_key(value: Any) -> tuple[int, Any]:
    return (
        (0, value)
        if isinstance(value, (int, float)) and not isinstance(value, bool)
        else (1, str(value))
    )


def _read_parquet(path: Path) -> tuple[list[Row], RunMetadata]:
    """Rows from Parquet come back flat (one column per metric), with messages decoded."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    raw = (table.schema.metadata or {}).get(PARQUET_METADATA_KEY)
    rows = table.to_pylist()
    for r in rows:
        for col in JSON_COLUMNS:
            if isinstance(r.get(col), str):
                r[col] = json.loads(r[col])
    return rows, as_run_metadata(json.loads(raw), f"{path} (its schema's metadata)") if raw else {}
