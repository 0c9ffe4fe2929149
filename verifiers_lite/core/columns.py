"""A row's columns, declared once: where each comes from, its type, and what the viewer does
with it.

:data:`COLUMNS` is the one list. From it come the keys :func:`~verifiers_lite.core.state.state_to_row`
writes (and their order in ``results.jsonl``), the flat columns of a DataFrame or Parquet file
(:func:`flat_values`), the columns of an empty run's DataFrame, and the viewer's indexed,
sortable, filterable and shown fields (served to the page by its API). A new column is one
entry here (plus its typed field on :class:`~verifiers_lite.core.records.Row` when it is a new
row key).

Order: the entries follow the row's keys as a run writes them; a DataFrame takes the scalar
columns in that order, then the ones holding a mapping (``info``, the metrics, timing, usage).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, get_args

from verifiers_lite.core.messages import last_assistant_text
from verifiers_lite.core.reasoning import completion_reasoning
from verifiers_lite.core.records import TIMING_KEYS, TIMING_PARTS, TOKEN_KEYS, USAGE_KEYS

Kind = Literal["int", "float", "str", "bool", "messages", "json"]
"""A column's values: numbers, text, a flag, chat messages, or any JSON (a mapping, a list)."""

Written = Literal["always", "if_present", "by_run", "derived"]
"""Who puts a column's row key on the row.

- ``always``: :func:`state_to_row` writes the State's value (None when it has none);
- ``if_present``: :func:`state_to_row` copies it when the State has it;
- ``by_run``: the run adds it after the row is made (attempts, session, where it ran);
- ``derived``: no row key of its own: computed from other keys (``derive``).
"""

Filter = Literal["range", "choice", "exact"]
"""How the viewer filters on a column: a numeric range (``min_NAME``/``max_NAME``), one of the
values seen (a menu), or one exact value."""

KINDS: tuple[Kind, ...] = get_args(Kind)


@dataclass(frozen=True)
class Column:
    """One column of a run's rows. ``key`` is the row key it comes from (default: its name),
    ``part`` a key inside that key's mapping (``timing.queue_ms``); ``derive`` computes it from
    the row instead (a derived column's ``key`` names the row key it reads). ``flat`` puts it
    in DataFrames; ``optional`` only when the row has it. ``sort``/``filter`` index it in the
    viewer; ``label`` shows it in the viewer's table (its header)."""

    name: str
    kind: Kind
    doc: str
    written: Written = "always"
    key: str | None = None
    part: str | None = None
    derive: Callable[[Mapping[str, Any]], Any] | None = None
    flat: bool = True
    optional: bool = False
    last: bool = False  # a mapping or from one: after the scalar columns in a DataFrame
    expand: bool = False  # a mapping whose entries are columns of their own (the metrics)
    sort: bool = False
    filter: Filter | None = None
    label: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(
                f"column {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}"
            )
        if self.written == "derived" and self.derive is None:
            raise ValueError(f"column {self.name!r}: a derived column needs derive=")

    @property
    def row_key(self) -> str | None:
        """The top-level row key it comes from (None for a derived column)."""
        return None if self.written == "derived" else (self.key or self.name)

    @property
    def source(self) -> str | None:
        """The row key its value is read from (a derived column's ``key``; None: unknown)."""
        return self.key if self.written == "derived" else (self.key or self.name)

    @property
    def indexed(self) -> bool:
        """The viewer keeps its values per row (to sort or filter without reading rows)."""
        return self.sort or self.filter is not None

    def value(self, row: Mapping[str, Any]) -> Any:
        """This column's value in ``row`` (None when absent)."""
        if self.derive is not None:
            return self.derive(row)
        value = row.get(self.key or self.name)  # a derived column has its derive
        if self.part is None:
            return value
        return value.get(self.part) if isinstance(value, dict) else None

    def describe(self) -> dict[str, Any]:
        """What the viewer's page needs to know of it (JSON)."""
        return {
            "name": self.name,
            "kind": self.kind,
            "doc": self.doc,
            "sort": self.sort,
            "filter": self.filter,
            "expand": self.expand,
            "label": self.label,
        }


def error_category(row: Mapping[str, Any]) -> str | None:
    """A failed row's category; ``unknown`` for an error without one (a hand-written file)."""
    err = row.get("error")
    if isinstance(err, dict):
        return err.get("category") or "unknown"
    return "unknown" if err else None


def _error_message(row: Mapping[str, Any]) -> Any:
    err = row.get("error")
    return err.get("message") if isinstance(err, dict) else err


def _completion_text(row: Mapping[str, Any]) -> str | None:
    completion = row.get("completion")
    return last_assistant_text(completion) if isinstance(completion, list) else None


def _reasoning_text(row: Mapping[str, Any]) -> str | None:
    return completion_reasoning(row.get("completion"))


def count_tool_calls(messages: Any) -> int:
    """Tool calls the assistant turns of ``messages`` made."""
    if not isinstance(messages, list):
        return 0
    return sum(len(m.get("tool_calls") or []) for m in messages if isinstance(m, dict))


def _tool_calls(row: Mapping[str, Any]) -> int:
    return count_tool_calls(row.get("completion"))


_TIMING_DOCS = {
    **dict(TIMING_PARTS),
    "rollout_ms": "the rollout's own time (its model calls and environment turns)",
    "total_ms": "until its group was scored",
}


def _timing(key: str) -> Column:
    return Column(
        key,
        "float",
        f"{_TIMING_DOCS.get(key, key)} (ms)",
        key="timing",
        part=key,
        last=True,
        sort=True,
        filter="range" if key in ("rollout_ms", "total_ms") else None,
        label="ms" if key == "rollout_ms" else "",
    )


def _usage(key: str) -> Column:
    return Column(
        key,
        "int",
        f"{key.replace('_', ' ')} (see Usage)",
        key="usage",
        part=key,
        last=True,
        sort=True,
        label="tokens" if key == "completion_tokens" else "",
    )


COLUMNS: tuple[Column, ...] = (
    Column(
        "example_id",
        "json",
        "the dataset row it came from",
        sort=True,
        filter="exact",
        label="example",
    ),
    Column("rollout_index", "int", "which of its example's rollouts", sort=True, label="#"),
    Column("trajectory_id", "str", "unique id of this rollout"),
    Column("task", "str", "the task (environment of a group) it belongs to"),
    Column("prompt", "messages", "the messages the model saw first", label="prompt"),
    Column("completion", "messages", "what was said after the prompt", label="completion"),
    Column(
        "completion_text",
        "str",
        "the final assistant message's text",
        written="derived",
        key="completion",
        derive=_completion_text,
    ),
    Column(
        "reasoning_text",
        "str",
        "the reasoning of its assistant turns (None: none reasoned)",
        written="derived",
        key="completion",
        derive=_reasoning_text,
    ),
    Column("answer", "str", "the reference answer", label="answer"),
    Column("info", "json", "per-example data (the dataset's extra columns)", last=True),
    Column(
        "reward",
        "float",
        "the rubric's score (None: unscored or errored)",
        sort=True,
        filter="range",
        label="reward",
    ),
    Column(
        "metrics",
        "float",
        "each reward function's value",
        last=True,
        expand=True,
        label="metrics",  # the table shows a run's first metrics here, a column each
    ),
    Column("advantage", "float", "reward minus its group's mean (None: unscored)"),
    Column("turns", "int", "model calls made", sort=True, label="turns"),
    Column("stop_reason", "str", "why it ended", filter="choice", label="stop"),
    Column(
        "tool_calls",
        "int",
        "tool calls the model made",
        written="derived",
        key="completion",
        derive=_tool_calls,
        flat=False,
        label="tools",
    ),
    Column("error", "str", "why it failed: the message", derive=_error_message),
    Column(
        "error_category",
        "str",
        "why it failed: the category",
        written="derived",
        key="error",
        derive=error_category,
        filter="choice",
        label="error",
    ),
    Column("attempts", "int", "how often it was run (a resume reruns failed ones)", "by_run"),
    *(_timing(k) for k in TIMING_KEYS),
    *(_usage(k) for k in USAGE_KEYS),
    Column(
        "cost_usd",
        "float",
        "what its model calls cost in US dollars (None: unpriced)",
        sort=True,
        filter="range",
        label="USD",
    ),
    *(
        Column(k, "json", "token ids (see TokenFields)", "if_present", flat=False)
        for k in TOKEN_KEYS
    ),
    Column(
        "judge_response",
        "str",
        "a judge rubric's raw answer",
        "if_present",
        key="judge",
        part="response",
        optional=True,
    ),
    Column(
        "judge_score",
        "float",
        "a judge rubric's parsed score",
        "if_present",
        key="judge",
        part="score",
        optional=True,
    ),
    Column("seed", "int", "its sampling seed, when seeded", "if_present", optional=True),
    Column(
        "system_fingerprints", "json", "the server builds that answered", "if_present", flat=False
    ),
    Column(
        "served_models",
        "json",
        "the ids of the models that answered, when one is not the model asked",
        "if_present",
        flat=False,
    ),
    Column(
        "explanations",
        "json",
        "why each reward function scored so (vf.Score), by function",
        "if_present",
        optional=True,
        last=True,
    ),
    Column("endpoint", "str", "the model endpoint that served it", "by_run", optional=True),
    Column("worker", "str", "the executor worker that ran it", "by_run", optional=True),
    Column("session", "int", "the session (run or resume) that made it", "by_run", optional=True),
)
"""Every column of a run's rows, in the row's key order."""


@dataclass(frozen=True)
class ColumnSet:
    """Views of a list of columns, computed once (the row hot path reads them per rollout)."""

    columns: tuple[Column, ...]

    def __iter__(self) -> Iterator[Column]:
        return iter(self.columns)

    def _keys(self, written: Written) -> tuple[str, ...]:
        keys = (c.row_key for c in self.columns if c.written == written)
        return tuple(dict.fromkeys(k for k in keys if k is not None))

    @cached_property
    def row_keys(self) -> tuple[str, ...]:
        """Keys of every output row, in the order a run writes them."""
        return self._keys("always")

    @cached_property
    def optional_row_keys(self) -> tuple[str, ...]:
        """Row keys copied from the State when it has them."""
        return self._keys("if_present")

    @cached_property
    def written_keys(self) -> frozenset[str]:
        """Every row key :func:`state_to_row` writes from the State."""
        return frozenset((*self.row_keys, *self.optional_row_keys))

    @cached_property
    def flat(self) -> tuple[Column, ...]:
        """DataFrame columns in their order: scalar ones first, then those from mappings."""
        flat = [c for c in self.columns if c.flat]
        return tuple([c for c in flat if not c.last] + [c for c in flat if c.last])

    @cached_property
    def frame_columns(self) -> tuple[str, ...]:
        """The columns of an empty run's DataFrame (no optional or per-metric ones)."""
        return tuple(c.name for c in self.flat if not c.optional and not c.expand)

    @cached_property
    def indexed(self) -> tuple[Column, ...]:
        """Columns the viewer keeps per row (numbers and menus), without reading rows."""
        return tuple(c for c in self.columns if c.indexed)

    @cached_property
    def sortable(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns if c.sort)

    @cached_property
    def shown(self) -> tuple[Column, ...]:
        """Columns of the viewer's rollouts table."""
        return tuple(c for c in self.columns if c.label)

    def by_name(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)


def flat_values(row: Mapping[str, Any], columns: ColumnSet | None = None) -> dict[str, Any]:
    """A row as flat DataFrame columns: each flat column's value, an optional one only when the
    row has its key, the metrics a column each (``metric_NAME`` when NAME is taken)."""
    out: dict[str, Any] = {}
    for c in (columns or current()).flat:
        if c.expand:
            for name, value in (row.get(c.name) or {}).items():
                out[name if name not in out else f"metric_{name}"] = value
        elif not c.optional or c.row_key in row:
            out[c.name] = c.value(row)
    return out


_current = ColumnSet(COLUMNS)

ROW_KEYS: tuple[str, ...] = _current.row_keys
"""Keys of every output row, in the order a run writes them (nested ones are expanded in a
DataFrame)."""


def current() -> ColumnSet:
    """The columns in use (:data:`COLUMNS`)."""
    return _current


def use(columns: Sequence[Column]) -> ColumnSet:
    """Make ``columns`` the columns in use (tests, a column added at run time); returns the
    set it replaced, for putting back."""
    global _current
    names = [c.name for c in columns]
    if len(set(names)) != len(names):
        raise ValueError(f"column names must be distinct: {names}")
    before, _current = _current, ColumnSet(tuple(columns))
    return before
