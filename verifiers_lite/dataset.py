"""Dataset formatting: rows -> RolloutInputs with integer example_id and prompt messages."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, cast

from verifiers_lite.messages import Messages, normalize_messages
from verifiers_lite.records import DatasetRow, RolloutInput

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


def resolve_rows(source: DatasetLike, name: str = "dataset") -> list[DatasetRow]:
    """Materialise a dataset source into a list of row dicts (calling a builder if given)."""
    if source is None:
        return []
    if callable(source) and not hasattr(source, "to_list"):
        source = source()
    if hasattr(source, "to_list"):  # datasets.Dataset, without importing datasets here
        return list(source.to_list())
    if isinstance(source, dict):
        raise ValueError(f"{name}: expected a list of rows or a datasets.Dataset, got a dict")
    if isinstance(source, Iterable) and not isinstance(source, (str, bytes)):
        rows = list(source)
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                raise ValueError(f"{name}: row {i} must be a dict, got {type(row).__name__}")
        return rows
    raise ValueError(f"{name}: expected a datasets.Dataset, a list of dicts or a builder, got {type(source).__name__}")


def parse_info(info: Any, where: str) -> dict[str, Any]:
    """``info`` as a dict: JSON strings are parsed, None becomes {}."""
    if info is None or info == "":
        return {}
    if isinstance(info, str):
        try:
            info = json.loads(info)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: field 'info' is not valid JSON ({exc.msg} at char {exc.pos})") from exc
    if not isinstance(info, dict):
        raise ValueError(f"{where}: field 'info' must be a dict or a JSON object, got {type(info).__name__}")
    return info


def input_in_form(row: DatasetRow, index: int) -> bool:
    """Whether ``row`` is already a rollout input (an environment's formatted dataset row:
    normalized prompt messages, integer example_id), to be used as it is without a copy."""
    prompt, eid = row.get("prompt"), row.get("example_id")
    if prompt is None or isinstance(eid, bool) or not isinstance(eid, int):
        return False
    return type(prompt) is list and normalize_messages(prompt, f"inputs row {index}, field 'prompt'") == prompt


def complete_input(
    row: DatasetRow, index: int, system_prompt: str | None, few_shot: Messages | None
) -> RolloutInput:
    """A caller's row ``index`` (a copy the caller gave up) completed as a rollout input: a prompt
    built from ``question`` when it has none, messages normalized, example_id defaulting to the
    row's position. A row that cannot be one is a ValueError naming the row and the field."""
    if row.get("prompt") is None:
        if not isinstance(row.get("question"), str):
            raise ValueError(f"inputs row {index}: needs a 'prompt' (messages) or a 'question' (string) field")
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


def format_rows(
    rows: list[DatasetRow],
    *,
    system_prompt: str | None = None,
    few_shot: Messages | None = None,
    name: str = "dataset",
) -> list[RolloutInput]:
    """Validate and format rows; errors name the row index and the field."""
    if few_shot is not None:
        few_shot = normalize_messages(few_shot, "few_shot")
    inputs: list[RolloutInput] = []
    for i, row in enumerate(rows):
        where = f"{name} row {i}"
        if "prompt" in row and row["prompt"] is not None:
            prompt = normalize_messages(row["prompt"], f"{where}, field 'prompt'")
            if system_prompt and not any(m["role"] == "system" for m in prompt):
                prompt = [{"role": "system", "content": system_prompt}, *prompt]
        elif "question" in row:
            question = row["question"]
            if not isinstance(question, str):
                raise ValueError(f"{where}: field 'question' must be a string, got {type(question).__name__}")
            prompt = build_prompt(question, system_prompt, few_shot)
        else:
            raise ValueError(f"{where}: needs a 'prompt' (messages) or a 'question' (string) field")
        example_id = row.get("example_id", i)
        if isinstance(example_id, bool) or not isinstance(example_id, int):
            raise ValueError(f"{where}: field 'example_id' must be an integer, got {example_id!r}")
        answer = row.get("answer", "")
        inputs.append({
            "prompt": prompt,
            "answer": "" if answer is None else str(answer) if not isinstance(answer, str) else answer,
            "info": fold_extra_columns(row, parse_info(row.get("info"), where), where),
            "task": str(row.get("task") or "default"),
            "example_id": example_id,
        })
    ids = [r["example_id"] for r in inputs]
    if len(set(ids)) != len(ids):
        dup = next(x for x in ids if ids.count(x) > 1)
        raise ValueError(f"{name}: example_id {dup} appears more than once")
    return inputs


class LazyDataset:
    """Holds a dataset source and formats it on first use (builders are called lazily)."""

    def __init__(self, source: DatasetLike, name: str) -> None:
        self.source = source
        self.name = name
        self._inputs: list[RolloutInput] | None = None

    def inputs(self, system_prompt: str | None, few_shot: Messages | None) -> list[RolloutInput]:
        if self._inputs is None:
            self._inputs = format_rows(
                resolve_rows(self.source, self.name),
                system_prompt=system_prompt, few_shot=few_shot, name=self.name,
            )
        return self._inputs

    def __bool__(self) -> bool:
        return self.source is not None


Builder = Callable[[], Any]
