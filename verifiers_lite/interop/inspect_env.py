"""InspectTaskEnv: an inspect_ai ``Task`` run as an environment.

Each sample is an example (its id the example id when an integer, else its position in the
dataset; its target the answer, its metadata the info); each rollout builds inspect's
``TaskState`` and runs the task's solver chain with a ``generate`` whose model calls are this
environment's own (``get_model_response``: the run's client, usage, timing, turns). Each scorer
is a reward function that runs inspect's scorer on the final ``TaskState``; the first is the
reward (weight 1), the others metrics (weight 0), and the row keeps every ``Score`` as inspect
gave it (value, answer, explanation, metadata) in ``env_state["inspect"]``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from verifiers_lite.core.dataset import RolloutInput
from verifiers_lite.core.model_client import ChatResponse, ModelClient
from verifiers_lite.core.state import State
from verifiers_lite.envs.environment import Environment
from verifiers_lite.interop.inspect_extra import inspect_module
from verifiers_lite.interop.inspect_messages import from_inspect_messages
from verifiers_lite.interop.inspect_model import client_model
from verifiers_lite.interop.inspect_samples import INSPECT_KEY, sample_info, target_text
from verifiers_lite.interop.inspect_scores import score_float
from verifiers_lite.rubrics.rubric import Rubric

_LIVE = "_inspect_live"  # the State's key for what is not JSON (the TaskState, the judge model)


def example_ids(samples: list[Any]) -> list[int]:
    """Each sample's example id: its own id when every id is an integer, else its position."""
    ids = [s.id for s in samples]
    if all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        return [int(i) for i in ids]
    return list(range(len(samples)))


def _rows(task: Any, samples: list[Any]) -> list[dict[str, Any]]:
    return [
        {
            "prompt": from_inspect_messages(s.input),
            "answer": target_text(s.target),
            "info": sample_info(s.metadata),
            "task": task.name,
            "example_id": eid,
        }
        for s, eid in zip(samples, example_ids(samples), strict=True)
    ]


class InspectTaskEnv(Environment):
    """An inspect ``Task`` run by this library (see the module docstring)."""

    def __init__(self, task: Any) -> None:
        samples = list(task.dataset)
        for position, sample in enumerate(samples, 1):
            if sample.id is None:  # inspect numbers samples without an id from 1, by position
                sample.id = position
        self.task = task
        self.epochs = int(task.epochs or 1)
        self._samples = dict(zip(example_ids(samples), samples, strict=True))
        scorers = list(task.scorer)
        funcs = [self._reward_func(i, s) for i, s in enumerate(scorers)]
        super().__init__(
            dataset=_rows(task, samples),
            rubric=Rubric(funcs=funcs, weights=[1.0] + [0.0] * (len(funcs) - 1)),
            env_id=f"inspect:{task.name}",
            sampling_args=task.config.model_dump(exclude_none=True) if task.config else None,
        )

    @property
    def max_model_turns(self) -> int:
        """Solvers decide how many model turns a rollout takes (tool loops, critiques)."""
        return 1_000

    def _reward_func(self, index: int, scorer: Any) -> Callable[..., Any]:
        registry = inspect_module("inspect_ai._util.registry")
        name = str(registry.registry_unqualified_name(scorer))

        async def score(state: State) -> float:
            live = state[_LIVE]  # type: ignore[literal-required]
            judge = live["judge"]  # a grader defaults to the model evaluated, as in inspect
            inspect_module("inspect_ai.model._model").init_active_model(judge, judge.config)
            result = await scorer(live["task_state"], live["task_state"].target)
            kept = state.setdefault(INSPECT_KEY, {}).setdefault("scores", {})  # type: ignore[misc]
            kept[name] = result.model_dump(mode="json", exclude_none=True)
            return score_float(result.value)

        score.__name__ = name
        return score

    async def rollout(
        self,
        input: RolloutInput,
        client: ModelClient,
        model: str,
        sampling_args: dict[str, Any] | None = None,
    ) -> State:
        state = self.init_state(input, model, sampling_args)
        sample = self._samples[int(input["example_id"])]

        async def chat(messages: list[dict[str, Any]], tools: Any) -> ChatResponse:
            state["tool_defs"] = tools
            response = await self.get_model_response(client, model, messages, state, sampling_args)
            state["turns"] = state.get("turns", 0) + 1
            return response

        async def judge(messages: list[dict[str, Any]], tools: Any) -> ChatResponse:
            return await client.chat(model, messages, sampling_args, tools)

        state[_LIVE] = {"judge": client_model(model, judge)}  # type: ignore[literal-required]
        task_state = await self._run_solvers(sample, model, chat, state)
        messages = from_inspect_messages(task_state.messages)
        first = next((i for i, m in enumerate(messages) if m["role"] == "assistant"), len(messages))
        state["prompt"], state["completion"] = messages[:first], messages[first:]
        stop = task_state.output.stop_reason if task_state.output else "stop"
        state["stop_reason"] = "length" if stop in ("max_tokens", "model_length") else "stop"
        state[INSPECT_KEY] = {"id": sample.id}  # type: ignore[literal-required]
        return state

    async def _run_solvers(self, sample: Any, model: str, chat: Any, state: State) -> Any:
        m = inspect_module("inspect_ai.model")
        solver = inspect_module("inspect_ai.solver")
        scorer = inspect_module("inspect_ai.scorer")
        inspect_model = client_model(model, chat)
        inspect_module("inspect_ai.model._model").init_active_model(
            inspect_model, inspect_model.config
        )
        task_state = solver.TaskState(
            model=m.ModelName(f"verifiers_lite/{model}"),
            sample_id=sample.id,
            epoch=1,
            input=sample.input,
            messages=_input_messages(sample.input),
            target=scorer.Target(sample.target),
            choices=sample.choices,
            metadata=dict(sample.metadata or {}),
        )
        state[_LIVE]["task_state"] = task_state  # type: ignore[literal-required]
        return await self.task.solver(task_state, _generate(inspect_model))


def _input_messages(sample_input: Any) -> list[Any]:
    m = inspect_module("inspect_ai.model")
    if isinstance(sample_input, str):
        return [m.ChatMessageUser(content=sample_input, source="input")]
    return list(sample_input)


def _generate(model: Any) -> Any:
    """Inspect's ``Generate`` over ``model``: one turn, or tool calls resolved in a loop."""
    m = inspect_module("inspect_ai.model")

    async def generate(state: Any, tool_calls: str = "loop", **kwargs: Any) -> Any:
        config = m.GenerateConfig(**kwargs)
        if tool_calls == "loop":
            messages, output = await model.generate_loop(state.messages, state.tools, config)
            state.messages.extend(messages)
        else:
            output = await model.generate(state.messages, state.tools, state.tool_choice, config)
            state.messages.append(output.message)
            if tool_calls == "single" and output.message.tool_calls:
                results = await m.execute_tools(state.messages, state.tools)
                state.messages.extend(results.messages)
        state.output = output
        return state

    return generate
