"""Classic Environment: the constructor classic environments call, and their dataset formatting.

It is a verifiers_lite :class:`~verifiers_lite.envs.environment.Environment`, so a classic
environment runs through the same scheduler (resume, saving, statistics, viewer, executors).
Classic keywords are taken as verifiers 0.3.1 took them: ``message_type`` (kept; prompts are
chat messages either way, as in 0.3.1), ``max_workers`` and ``map_kwargs`` (accepted, unused:
there is no thread pool or ``Dataset.map`` here), ``env_args``, ``max_seq_len``,
``pass_threshold`` (a rollout passes when its reward reaches it), ``few_shot``,
``system_prompt``, ``sampling_args`` (sent with every request: ``stop``, ``max_tokens``...),
``tool_defs`` (``{"name", "description", "parameters"}``), and any other keyword set as an
attribute. Datasets are formatted as 0.3.1 formatted them (see :func:`format_classic_row`).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import logging
import random
from collections.abc import Sequence
from typing import Any, cast

from verifiers_lite.classic.decorators import discover_decorated
from verifiers_lite.classic.messages import upgrade
from verifiers_lite.classic.mode import LENIENT_HINT, Deviations, lenient, refusal
from verifiers_lite.classic.parsers import Parser
from verifiers_lite.classic.rubric import Rubric, RubricGroup
from verifiers_lite.classic.utils import maybe_await, maybe_call_with_named_args
from verifiers_lite.core.dataset import build_prompt, parse_info, row_reader
from verifiers_lite.core.messages import Messages, normalize_messages
from verifiers_lite.core.pass_criterion import PassCriterion
from verifiers_lite.core.records import DatasetRow, RolloutInput
from verifiers_lite.core.state import State, copy_json
from verifiers_lite.envs.environment import Environment as NativeEnvironment

# Keys verifiers_lite adds to a rollout input (its task name, the rollout's seed): not dataset columns.
_NATIVE_INPUT_KEYS = frozenset({"task", "seed", "input_hash"})


def format_classic_row(
    row: DatasetRow,
    index: int,
    system_prompt: str | None,
    few_shot: Messages | None,
    deviations: Deviations | None = None,
) -> RolloutInput:
    """One dataset row as a classic rollout input: every column kept (reward functions take them
    by name), ``example_id`` the row's position unless an integer one is given (another is kept
    as ``src_id``), a ``prompt`` built from ``question`` (system prompt, few-shot turns, the
    question) unless the row has one, a system prompt put before a given prompt that has none.
    What 0.3.1 refuses (a string prompt beside ``system_prompt``, a plain string ``task``) is
    refused, or run and noted on ``deviations`` in lenient mode."""
    row = dict(row)
    _check_row(row, system_prompt, deviations)
    row.pop("env_id", None)
    if "example_id" in row and (
        isinstance(row["example_id"], bool) or not isinstance(row["example_id"], int)
    ):
        row["src_id"] = row.pop("example_id")
    row.setdefault("example_id", index)
    where = f"dataset row {index}"
    if row.get("prompt") is None:
        if not isinstance(row.get("question"), str):
            raise ValueError(
                f"{where}: needs a 'prompt' (messages) or a 'question' (string) column"
            )
        prompt = build_prompt(row["question"], system_prompt, few_shot)
    else:
        prompt = normalize_messages(row["prompt"], f"{where}, field 'prompt'")
        if system_prompt is not None and (not prompt or prompt[0].get("role") != "system"):
            prompt = [{"role": "system", "content": system_prompt}, *prompt]
    row["prompt"] = prompt
    row["info"] = parse_info(row.get("info"), where)
    task = row.get("task")
    row["task"] = task if isinstance(task, str) and task else "default"
    return row  # type: ignore[return-value]  # laid out above


def _check_row(row: DatasetRow, system_prompt: str | None, deviations: Deviations | None) -> None:
    if system_prompt is not None and isinstance(row.get("prompt"), str):
        if deviations is None:
            raise refusal(
                AssertionError(
                    "prompt must be a list of messages when system_prompt is provided, got <class 'str'>"
                ),
                "verifiers_lite could run it as a system message and a user message. "
                + LENIENT_HINT,
            )
        deviations.note("string prompts with system_prompt (sent as a system and a user message)")
    task = row.get("task")
    if isinstance(task, str) and not _json_object(task):
        if deviations is None:
            raise refusal(
                ValueError(
                    "Serialized task payloads must be JSON objects. Plain string task routes are no "
                    "longer supported; use info['env_id'] for routing."
                ),
                "verifiers_lite could run the string as the rollout's task name. " + LENIENT_HINT,
            )
        deviations.note("string task columns (each the rollout's task name)")


def _json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def check_dataset(source: Any, deviations: Deviations | None) -> None:
    """0.3.1 takes a ``datasets.Dataset`` (or a builder of one): anything else is refused with
    0.3.1's error, or run and noted on ``deviations`` in lenient mode."""
    if source is None or hasattr(source, "column_names"):
        return
    if deviations is None:
        raise refusal(
            AttributeError(f"'{type(source).__name__}' object has no attribute 'column_names'"),
            "verifiers_lite could run it as datasets.Dataset.from_list(rows). " + LENIENT_HINT,
        )
    deviations.note(f"a {type(source).__name__} dataset (0.3.1 takes a datasets.Dataset)")


def _tool_schema(tool: Any) -> dict[str, Any]:
    """A classic tool definition (``{"name", "description", "parameters"}``) as an OpenAI tool."""
    tool = dict(tool)
    if tool.get("type") == "function" and isinstance(tool.get("function"), dict):
        return tool
    return {
        "type": "function",
        "function": {k: v for k, v in tool.items() if k != "strict" or v is not None},
    }


def _sampling(sampling_args: dict[str, Any] | None) -> dict[str, Any]:
    args = {k: v for k, v in (sampling_args or {}).items() if k != "n" or v != 1}
    if not args.get("extra_body"):
        args.pop("extra_body", None)
    return args


class Environment(NativeEnvironment):
    """``vf.Environment``: the classic base class (see the module)."""

    def __init__(
        self,
        dataset: Any = None,
        eval_dataset: Any = None,
        system_prompt: str | None = None,
        few_shot: Messages | None = None,
        parser: Any = None,
        rubric: Any = None,
        sampling_args: dict[str, Any] | None = None,
        message_type: str = "chat",
        tool_defs: list[Any] | None = None,
        oai_tools: list[Any] | None = None,
        max_workers: int = 512,
        env_id: str | None = None,
        env_args: dict[str, Any] | None = None,
        map_kwargs: dict[str, Any] | None = None,
        max_seq_len: int | None = None,
        score_rollouts: bool = True,
        pass_threshold: float = 0.5,
        max_concurrent: int = 128,
        **kwargs: Any,
    ) -> None:
        if dataset is None and eval_dataset is None:
            raise ValueError("Either dataset or eval_dataset must be provided")
        self.logger = logging.getLogger(f"verifiers.envs.{type(self).__name__}")
        tools = tool_defs if tool_defs is not None else oai_tools
        super().__init__(
            system_prompt=system_prompt,
            few_shot=few_shot,
            parser=parser or Parser(),
            rubric=rubric or Rubric(),
            sampling_args=_sampling(sampling_args),
            max_concurrent=max_concurrent,
            tool_defs=[_tool_schema(t) for t in tools] if tools else None,
            env_args=env_args,
            score_rollouts=score_rollouts,
            env_id=env_id or None,
        )
        self.message_type = message_type
        self.max_workers = max_workers
        self.map_kwargs = dict(map_kwargs or {})
        self.max_seq_len = max_seq_len
        self.pass_threshold = pass_threshold
        self._set_pass_threshold()
        self.dataset, self.eval_dataset = dataset, eval_dataset
        self.deviations = Deviations(type(self).__name__) if lenient() else None
        for source in (dataset, eval_dataset):
            if not callable(source) or hasattr(source, "column_names"):
                check_dataset(source, self.deviations)  # 0.3.1 builds a raw dataset at once
        self._classic_rows: dict[str, list[RolloutInput] | None] = {
            "dataset": None,
            "eval_dataset": None,
        }
        for key, value in kwargs.items():
            setattr(self, key, value)
        self._stop_conditions = discover_decorated(self, "stop")
        self._cleanup_handlers = discover_decorated(self, "cleanup")
        self._teardown_handlers = discover_decorated(self, "teardown")
        if self._teardown_handlers or getattr(self.rubric, "_teardown_handlers", None):
            atexit.register(self._teardown_at_exit)  # classic: teardown when the process ends

    # -- data ---------------------------------------------------------------------------------

    def _formatted(self, which: str) -> list[RolloutInput] | None:
        source = self.dataset if which == "dataset" else self.eval_dataset
        if source is None:
            return None
        rows = self._classic_rows.get(which)
        if rows is None:
            if callable(source) and not hasattr(source, "column_names"):
                source = source()  # a builder, called when its rows are first needed
                check_dataset(source, self.deviations)
            rows = [
                format_classic_row(r, i, self.system_prompt, self.few_shot, self.deviations)
                for i, r in enumerate(row_reader(source, which))
            ]
            self._classic_rows[which] = rows
        return rows

    @staticmethod
    def _pick(rows: list[RolloutInput], n: int, seed: int | None) -> list[RolloutInput]:
        if seed is not None:
            rows = list(rows)
            random.Random(seed).shuffle(rows)
        return rows[:n] if n > 0 else rows

    def get_dataset(self, n: int = -1, seed: int | None = None) -> list[RolloutInput]:
        """The formatted training dataset (``n`` rows, shuffled by ``seed`` when given)."""
        rows = self._formatted("dataset")
        if rows is None:
            raise ValueError("dataset is not set")
        return self._pick(rows, n, seed)

    def get_eval_dataset(self, n: int = -1, seed: int | None = None) -> list[RolloutInput]:
        """The formatted eval dataset, falling back to the training dataset."""
        rows = self._formatted("eval_dataset")
        return self.get_dataset(n, seed) if rows is None else self._pick(rows, n, seed)

    def eval_rows(self) -> Sequence[RolloutInput]:
        return self.get_eval_dataset()

    # -- rubrics and state --------------------------------------------------------------------

    def add_rubric(self, rubric: Any) -> None:
        """Score with ``rubric`` too: rewards and metrics add up (a :class:`RubricGroup`)."""
        if isinstance(self.rubric, RubricGroup):
            self.rubric.rubrics.append(rubric)
        else:
            self.rubric = RubricGroup(rubrics=[cast(Rubric, self.rubric), rubric])
        self._set_pass_threshold()

    def _set_pass_threshold(self) -> None:
        """A rollout passes (for pass@k) when its reward reaches ``pass_threshold`` (default 0.5)."""
        self.rubric.pass_criterion = PassCriterion.coerce(float(self.pass_threshold))

    def init_state(
        self,
        rollout_input: RolloutInput,
        model: str,
        sampling_args: dict[str, Any] | None = None,
        rollout_index: int = 0,
    ) -> State:
        """verifiers_lite's State plus the classic fields: ``input`` (the dataset row), the row's
        own ``info``, ``is_completed``, ``is_truncated``, ``final_env_response``; messages as
        classic views."""
        state = super().init_state(rollout_input, model, sampling_args, rollout_index)
        fields = cast(dict[str, Any], state)  # classic keys beside the typed ones
        row = {k: copy_json(v) for k, v in rollout_input.items() if k not in _NATIVE_INPUT_KEYS}
        for key in row.keys() - {"prompt", "answer", "info", "example_id"}:
            fields.pop(key, None)  # the row's other columns live in state["input"]
        fields["input"] = row
        fields["info"] = copy_json(parse_info(rollout_input.get("info"), "rollout input"))
        fields.update(
            is_completed=False, is_truncated=False, stop_condition=None, final_env_response=None
        )
        upgrade(state["prompt"])
        return state

    async def run_stop_conditions(self, state: State, **kwargs: Any) -> bool:
        """Check the ``@vf.stop`` conditions in order; the first that fires ends the rollout and
        names ``state["stop_condition"]``."""
        fields = cast(dict[str, Any], state)
        for condition in self._stop_conditions:
            if await maybe_call_with_named_args(condition, state=state, env=self, **kwargs):
                fields["is_completed"] = True
                fields["stop_condition"] = condition.__name__
                return True
        return False

    async def run_cleanup_handlers(self, state: State) -> None:
        """The ``@vf.cleanup`` handlers (each rollout, before scoring)."""
        for handler in self._cleanup_handlers:
            await maybe_call_with_named_args(
                handler, state=state, env=self, task=None, resources=None
            )

    async def teardown(self) -> None:
        """The ``@vf.teardown`` handlers and the rubric's (run once, when a run ends)."""
        rubric_teardown = getattr(self.rubric, "teardown", None)
        if rubric_teardown is not None:
            await maybe_await(rubric_teardown)
        for handler in self._teardown_handlers:
            await maybe_await(handler)

    def _teardown_at_exit(self) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(self.teardown())

    def set_kwargs(self, **kwargs: Any) -> None:
        for key, value in kwargs.items():
            setattr(self, key, value)

    def set_max_seq_len(self, max_seq_len: int | None) -> None:
        self.max_seq_len = max_seq_len

    def set_score_rollouts(self, score_rollouts: bool) -> None:
        self.score_rollouts = score_rollouts
