"""Dataset formatting: rows -> RolloutInputs with integer example_id and prompt messages."""

from __future__ import annotations

import contextlib
import json
from abc import abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar, cast, overload

import numpy as np

from verifiers_lite.core.messages import Messages, messages_in_form, normalize_messages
from verifiers_lite.core.records import DatasetRow, RolloutInput

DatasetLike = Any  # datasets.Dataset | list[dict] | Callable[[], Dataset | list[dict]]

INPUT_FIELDS = ("prompt", "question", "answer", "info", "task", "example_id")
"""Dataset columns with a meaning of their own; any other column is kept in ``info``."""


def fold_extra_columns(row: DatasetRow, info: dict[str, Any], where: str) -> dict[str, Any]:
    """``info`` plus the row's other columns (those not in :data:`INPUT_FIELDS`) under
    their names, so reward functions can read them as ``info[name]``. A column that ``info``
    already holds with another value is refused (ValueError naming it)."""
    extras = {k: v for k, v in row.items() if k not in INPUT_FIELDS}
    if not extras:
        return info
    for k, v in extras.items():
        if k in info and info[k] != v:
            raise ValueError(
                f"{where}: column {k!r} is also a key of 'info' with another value; rename one "
                "(other columns are kept in info under their names)"
            )
    return {**info, **extras}


def row_reader(source: DatasetLike, name: str = "dataset") -> Sequence[DatasetRow]:
    """A dataset source as a sequence of row dicts read on demand (calling a builder if given).

    A list (or any sequence) of dicts is used as it is; a ``datasets.Dataset`` or a
    ``pyarrow.Table`` is read in windows of :data:`WINDOW` rows as they are asked for (only the
    window is held as Python rows); any other iterable (a generator) is read into a list once.
    """
    if source is None:
        return []
    if callable(source) and not hasattr(source, "to_list"):
        source = source()
    if isinstance(source, dict):
        raise ValueError(f"{name}: expected a list of rows or a datasets.Dataset, got a dict")
    # datasets.Dataset, not imported here
    if hasattr(source, "to_list") and hasattr(source, "select"):
        return WindowedRows(len(source), lambda i, j: source.select(range(i, j)).to_list())
    if hasattr(source, "to_pylist") and hasattr(source, "num_rows"):  # pyarrow.Table
        return WindowedRows(source.num_rows, lambda i, j: source.slice(i, j - i).to_pylist())
    if isinstance(source, Sequence) and not isinstance(source, (str, bytes)):
        return _CheckedRows(source, name)
    if isinstance(source, Iterable) and not isinstance(source, (str, bytes)):
        return _CheckedRows(list(source), name)
    raise ValueError(
        f"{name}: expected a datasets.Dataset, a list of dicts or a builder, got {type(source).__name__}"
    )


def check_prompt_column(source: DatasetLike, name: str = "dataset") -> None:
    """Refuse, when the environment is built, a dataset with neither a ``prompt`` nor a
    ``question`` column (ValueError listing the columns it has). A builder is read on first use
    and checked then, row by row; a list is checked over all its rows' keys."""
    if source is None or (callable(source) and not hasattr(source, "to_list")):
        return
    columns = getattr(source, "column_names", None)  # datasets.Dataset, pyarrow.Table
    if columns is None:
        if not isinstance(source, Sequence) or isinstance(source, (str, bytes)):
            return
        columns = list(dict.fromkeys(k for row in source if isinstance(row, dict) for k in row))
        if not columns:  # no row with a column: each row's own error says what is wrong
            return
    if "prompt" not in columns and "question" not in columns:
        raise ValueError(
            f"{name} has no 'prompt' (messages) or 'question' (string) column; its columns: "
            f"{', '.join(map(str, columns)) or 'none'}"
        )


T = TypeVar("T")


class IndexedSequence(Sequence[T]):
    """A read-only sequence given by ``__len__`` and ``_at(i)`` for ``0 <= i < len``: negative
    indices, bounds and slices are handled here, once for every lazy sequence of rows."""

    @abstractmethod
    def _at(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> list[T]: ...
    def __getitem__(self, i: int | slice) -> T | list[T]:
        n = len(self)
        if isinstance(i, slice):
            return [self._at(j) for j in range(*i.indices(n))]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return self._at(i)


WINDOW = 1024
"""Rows of a columnar dataset converted to Python at once when it is read in order."""


class WindowedRows(IndexedSequence[DatasetRow]):
    """Rows of a columnar source, ``read(i, j)`` giving rows ``i..j-1``: read in order, a window
    of :data:`WINDOW` rows is converted at once; read out of order (shuffled), one row at a time."""

    def __init__(self, length: int, read: Callable[[int, int], list[DatasetRow]]) -> None:
        self._len, self._read = length, read
        self._start = 0
        self._window: list[DatasetRow] = []

    def __len__(self) -> int:
        return self._len

    def _at(self, i: int) -> DatasetRow:
        if not self._start <= i < self._start + len(self._window):
            in_order = i == self._start + len(self._window)
            self._start, self._window = (
                i,
                self._read(i, min(self._len, i + (WINDOW if in_order else 1))),
            )
        return self._window[i - self._start]


class _CheckedRows(IndexedSequence[DatasetRow]):
    """A caller's sequence of rows, each checked to be a dict when it is read (never copied)."""

    def __init__(self, rows: Sequence[Any], name: str) -> None:
        self._rows, self._name = rows, name

    def __len__(self) -> int:
        return len(self._rows)

    def _at(self, i: int) -> DatasetRow:
        row = self._rows[i]
        if not isinstance(row, dict):
            raise ValueError(f"{self._name}: row {i} must be a dict, got {type(row).__name__}")
        return row


def parse_info(info: Any, where: str) -> dict[str, Any]:
    """``info`` as a dict: JSON strings are parsed, None becomes {}."""
    if info is None or info == "":
        return {}
    if isinstance(info, str):
        try:
            info = json.loads(info)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"{where}: field 'info' is not valid JSON ({exc.msg} at char {exc.pos})"
            ) from exc
    if not isinstance(info, dict):
        raise ValueError(
            f"{where}: field 'info' must be a dict or a JSON object, got {type(info).__name__}"
        )
    return info


def input_in_form(row: DatasetRow, index: int) -> bool:
    """Whether ``row`` is already a rollout input (an environment's formatted dataset row:
    normalized prompt messages, integer example_id), to be used as it is without a copy."""
    prompt, eid = row.get("prompt"), row.get("example_id")
    if prompt is None or isinstance(eid, bool) or not isinstance(eid, int):
        return False
    return messages_in_form(prompt, f"inputs row {index}, field 'prompt'")


def complete_input(
    row: DatasetRow, index: int, system_prompt: str | None, few_shot: Messages | None
) -> RolloutInput:
    """A caller's row ``index`` (a copy the caller gave up) completed as a rollout input: a prompt
    built from ``question`` when it has none, messages normalized, example_id defaulting to the
    row's position. A row that cannot be one is a ValueError naming the row and the field."""
    if row.get("prompt") is None:
        if not isinstance(row.get("question"), str):
            raise ValueError(
                f"inputs row {index}: needs a 'prompt' (messages) or a 'question' (string) field"
            )
        row["prompt"] = build_prompt(row["question"], system_prompt, few_shot)
    row["prompt"] = normalize_messages(row["prompt"], f"inputs row {index}, field 'prompt'")
    eid = row.setdefault("example_id", index)
    if isinstance(eid, bool) or not isinstance(eid, int):
        raise ValueError(f"inputs row {index}: field 'example_id' must be an integer, got {eid!r}")
    return cast(RolloutInput, row)  # validated above


def build_prompt(question: str, system_prompt: str | None, few_shot: Messages | None) -> Messages:
    """system prompt + few-shot messages + the question as a user message."""
    prompt: Messages = []
    if system_prompt:
        prompt.append({"role": "system", "content": system_prompt})
    prompt.extend(dict(m) for m in few_shot or [])
    prompt.append({"role": "user", "content": question})
    return prompt


def format_row(
    row: DatasetRow,
    index: int,
    system_prompt: str | None,
    few_shot: Messages | None,
    name: str = "dataset",
) -> RolloutInput:
    """Dataset row ``index`` validated and formatted (a new dict; ``row`` is not changed);
    errors name the row index and the field. ``few_shot`` is normalized already."""
    where = f"{name} row {index}"
    if "prompt" in row and row["prompt"] is not None:
        prompt = normalize_messages(row["prompt"], f"{where}, field 'prompt'")
        if system_prompt and not any(m["role"] == "system" for m in prompt):
            prompt = [{"role": "system", "content": system_prompt}, *prompt]
    elif "question" in row:
        question = row["question"]
        if not isinstance(question, str):
            raise ValueError(
                f"{where}: field 'question' must be a string, got {type(question).__name__}"
            )
        prompt = build_prompt(question, system_prompt, few_shot)
    else:
        raise ValueError(f"{where}: needs a 'prompt' (messages) or a 'question' (string) field")
    example_id = row.get("example_id", index)
    if isinstance(example_id, bool) or not isinstance(example_id, int):
        raise ValueError(f"{where}: field 'example_id' must be an integer, got {example_id!r}")
    answer = row.get("answer", "")
    return {
        "prompt": prompt,
        "answer": "" if answer is None else str(answer) if not isinstance(answer, str) else answer,
        "info": fold_extra_columns(row, parse_info(row.get("info"), where), where),
        "task": str(row.get("task") or "default"),
        "example_id": example_id,
    }


def format_rows(
    rows: list[DatasetRow],
    *,
    system_prompt: str | None = None,
    few_shot: Messages | None = None,
    name: str = "dataset",
) -> list[RolloutInput]:
    """Validate and format rows; errors name the row index and the field."""
    return list(FormattedRows(rows, system_prompt, few_shot, name))


class FormattedRows(IndexedSequence[RolloutInput]):
    """Dataset rows formatted as rollout inputs when read: each read formats its row anew, so
    a dataset of any size costs its source plus an integer per row. Every row is validated once
    when this is made (errors name the row and the field; an example_id may appear once)."""

    def __init__(
        self,
        rows: Sequence[DatasetRow],
        system_prompt: str | None = None,
        few_shot: Messages | None = None,
        name: str = "dataset",
    ) -> None:
        self._rows, self._system_prompt, self._name = rows, system_prompt, name
        self._few_shot = None if few_shot is None else normalize_messages(few_shot, "few_shot")
        ids = np.fromiter(
            (self[i]["example_id"] for i in range(len(rows))), dtype=np.int64, count=len(rows)
        )
        unique, counts = np.unique(ids, return_counts=True)
        if len(unique) < len(ids):
            dup = int(unique[counts > 1][0])
            raise ValueError(f"{name}: example_id {dup} appears more than once")

    def __len__(self) -> int:
        return len(self._rows)

    def _at(self, i: int) -> RolloutInput:
        return format_row(self._rows[i], i, self._system_prompt, self._few_shot, self._name)


class RepeatedInputs(IndexedSequence[RolloutInput]):
    """The inputs of an evaluation: ``examples`` in ``order`` (positions into it), each repeated
    ``times`` in a row, read (and formatted) when asked for. The example read last is kept, so
    its ``times`` repeats are formatted once (the same input dict: a rollout copies its input)."""

    def __init__(self, examples: Sequence[RolloutInput], order: Sequence[int], times: int) -> None:
        self._examples, self._order, self._times = (
            examples,
            np.asarray(order, dtype=np.int64),
            times,
        )
        self._last: tuple[int, RolloutInput] | None = None

    def __len__(self) -> int:
        return len(self._order) * self._times

    def _at(self, i: int) -> RolloutInput:
        at = int(self._order[i // self._times])
        if self._last is None or self._last[0] != at:
            self._last = (at, self._examples[at])
        return self._last[1]


class LazyDataset:
    """Holds a dataset source and reads it on first use (builders are called lazily)."""

    def __init__(self, source: DatasetLike, name: str) -> None:
        self.source = source
        self.name = name
        self._rows: FormattedRows | None = None
        self._inputs: list[RolloutInput] | None = None

    def rows(self, system_prompt: str | None, few_shot: Messages | None) -> Sequence[RolloutInput]:
        """The formatted rows, read on demand (the list of :meth:`inputs` once that is made)."""
        if self._inputs is not None:
            return self._inputs
        if self._rows is None:
            self._rows = FormattedRows(
                row_reader(self.source, self.name), system_prompt, few_shot, self.name
            )
        return self._rows

    def inputs(self, system_prompt: str | None, few_shot: Messages | None) -> list[RolloutInput]:
        """Every formatted row, in a list made once."""
        if self._inputs is None:
            self._inputs = list(self.rows(system_prompt, few_shot))
            self._rows = None
        return self._inputs

    def __bool__(self) -> bool:
        return self.source is not None


Builder = Callable[[], Any]


class RowFields:
    """What a run's input rows supply, per task: the fields some row gives a value (a non-empty
    ``answer``, ``info``), and the columns found (with ``info``'s keys and the extra columns
    folded into it). Made while the run's inputs are checked, before any request, so a reward
    function taking a field no row has is refused then (see ``Rubric.check_reward_funcs``)."""

    def __init__(self) -> None:
        self.by_task: dict[str, set[str]] = {}

    def add(self, row: Mapping[str, Any]) -> None:
        """Count one input row (raw or formatted)."""
        found = self.by_task.setdefault(str(row.get("task") or "default"), set())
        for key, value in row.items():
            if key == "info":
                if isinstance(value, str) and value:
                    with contextlib.suppress(ValueError):  # a bad one is refused where it is read
                        value = parse_info(value, "inputs")
                if value:
                    found.add("info")
                    found.update(f"info.{k}" for k in value if isinstance(value, dict))
            elif key not in INPUT_FIELDS:  # an extra column: it joins info under its name
                found.update(("info", f"info.{key}"))
            elif value is not None and value != "" and key not in found:
                found.add(key)

    def for_task(self, task: str) -> RowFields | None:
        """The rows of ``task`` only; None when the run has none (nothing of it is scored)."""
        if task not in self.by_task:
            return None
        part = RowFields()
        part.by_task = {task: self.by_task[task]}
        return part

    def supplies(self, name: str) -> bool:
        """Whether some row gives ``name`` a value."""
        return any(name in found for found in self.by_task.values())

    @property
    def columns(self) -> list[str]:
        """The columns found, sorted (``info.key`` for what ``info`` holds)."""
        return sorted({c for found in self.by_task.values() for c in found})
