"""Environment: the three-layer core (rollout -> run_rollout/run_group -> generate/evaluate)."""

from __future__ import annotations

import asyncio
import contextvars
import random
import time
import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Unpack, cast, final

from verifiers_lite._util.scopes import rollout_scope
from verifiers_lite.clients.adaptive import check_max_concurrent
from verifiers_lite.clients.cache import enter_rollout, leave_rollout
from verifiers_lite.clients.model_turn import model_turn
from verifiers_lite.clients.resolve import as_model_client
from verifiers_lite.clients.retry import ROLLOUT_RETRY
from verifiers_lite.clients.slots import slot_wait
from verifiers_lite.core.dataset import (
    DatasetLike,
    LazyDataset,
    RepeatedInputs,
    RolloutInput,
    check_prompt_column,
    complete_input,
    input_in_form,
)
from verifiers_lite.core.errors import ModelAPIError, RolloutTimeoutError, categorize, cleanup_error
from verifiers_lite.core.limits import (
    LimitReached,
    Limits,
    clip_max_tokens,
    limit_after_call,
    limit_before_call,
    rollout_budget,
)
from verifiers_lite.core.messages import Messages, normalize_messages
from verifiers_lite.core.model_client import ChatResponse, ModelClient, ModelClientLike
from verifiers_lite.core.not_given import NOT_GIVEN, NotGiven, given
from verifiers_lite.core.pass_criterion import PassCriterion
from verifiers_lite.core.pricing import usage_cost
from verifiers_lite.core.progress import track_rollout
from verifiers_lite.core.reasoning import (
    ReasoningHistory,
    assistant_message,
    check_reasoning_history,
    history_for_request,
)
from verifiers_lite.core.records import CallRequest, CallTiming, DatasetRow, Row
from verifiers_lite.core.state import (
    State,
    elapsed_ms,
    new_state,
    record_response,
    state_to_row,
)
from verifiers_lite.parsers.parser import Parser
from verifiers_lite.rubrics.rubric import Rubric
from verifiers_lite.run.run_config import EvaluationOptions, RunConfig, RunOptions, run_config

if TYPE_CHECKING:
    from verifiers_lite.results.outputs import GenerateOutputs

_FINAL_METHODS = (
    "run_rollout",
    "run_group",
    "rollout_state",
    "finish_group",
    "generate",
    "evaluate",
    "generate_sync",
    "evaluate_sync",
)

# The states init_state() laid out during the current rollout attempt, so a rollout that fails
# half-way is recorded with what it did (trajectory, usage, timing), not as an empty row.
_ATTEMPT_STATES: contextvars.ContextVar[list[State] | None] = contextvars.ContextVar(
    "verifiers_lite_attempt_states", default=None
)


class Environment(ABC):
    """An LLM task: a dataset, how one rollout runs (:meth:`rollout`), and how it is scored.

    Subclasses write only :meth:`rollout` (``MultiTurnEnv`` subclasses only ``env_response`` and
    ``is_completed``). Scoring, retries, scheduling, resume and saving are the framework's and
    cannot be overridden.

    ``env_id`` names the environment in run metadata, tables, plots, ``vf.compare``, the viewer
    and the results directory; default: the class's ``env_id`` attribute if it sets one, else
    the class name (``WordChain`` for ``class WordChain(vf.MultiTurnEnv)``).
    ``vf.load_environment(id)`` names it by its id.

    Args:
        dataset: the examples: a list of dicts, a ``datasets.Dataset``, a pandas DataFrame, or a
            function returning one (read when first needed); each row needs ``prompt`` or
            ``question``, and may have ``answer``, ``info``, ``task`` and other columns.
        eval_dataset: examples for evaluation, when not the same as ``dataset``.
        system_prompt: a system message put before each question.
        few_shot: worked examples (messages) put between the system prompt and each question.
        parser: reads the answer out of a completion (default: the rubric's, else ``Parser()``).
        rubric: scores each rollout (default: a rubric with no reward function).
        sampling_args: sampling parameters sent with every model call (``temperature``,
            ``max_tokens``, ...); a run's own take precedence.
        max_concurrent: model requests in flight at most, or ``"auto"`` (each endpoint's own
            adaptive limit); a run's ``max_concurrent`` wins.
        max_retries: reruns of a rollout that failed with a retryable error.
        rollout_timeout: seconds a rollout may take before it is an error row.
        tool_defs: OpenAI tool schemas offered with every model call.
        env_args: the arguments it was built with, kept in the run's metadata.
        score_rollouts: False leaves rows unscored (the rubric does not run).
        env_id: its name in results (see above).
        reasoning_history: which past reasoning goes back to the model: ``"keep"``,
            ``"since_last_user"`` or ``"strip"``.
        limits: per-rollout limits (tokens, cost, time); a rollout that reaches one ends,
            naming it as its stop reason.
    """

    env_id: str | None = None
    source_module: str | None = None  #: the module that built it (set by ``load_environment``)
    loaded_as: str | None = None  # the id vf.load_environment built it under (None: built by hand)

    def __init__(
        self,
        dataset: DatasetLike = None,
        eval_dataset: DatasetLike = None,
        *,
        system_prompt: str | None = None,
        few_shot: Messages | None = None,
        parser: Parser | None = None,
        rubric: Rubric | None = None,
        sampling_args: dict[str, Any] | None = None,
        max_concurrent: int | Literal["auto"] | None = 128,
        max_retries: int = 0,
        rollout_timeout: float | None = None,
        tool_defs: list[dict[str, Any]] | None = None,
        env_args: dict[str, Any] | None = None,
        score_rollouts: bool = True,
        env_id: str | None = None,
        reasoning_history: ReasoningHistory = "keep",
        limits: Limits | None = None,
    ) -> None:
        if limits is not None and not isinstance(limits, Limits):
            raise TypeError(f"limits must be a vf.Limits, got {type(limits).__name__}")
        check_max_concurrent(max_concurrent)
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if rollout_timeout is not None and not rollout_timeout > 0:
            raise ValueError(
                f"rollout_timeout must be a positive number of seconds, got {rollout_timeout}"
            )
        check_prompt_column(dataset, "dataset")
        check_prompt_column(eval_dataset, "eval_dataset")
        self._dataset = LazyDataset(dataset, "dataset")
        self._eval_dataset = LazyDataset(eval_dataset, "eval_dataset")
        self.system_prompt = system_prompt
        self.few_shot = normalize_messages(few_shot, "few_shot") if few_shot else None
        self.parser = parser or (rubric.parser if rubric is not None else Parser())
        self.rubric = rubric or Rubric(parser=self.parser)
        self.sampling_args = dict(sampling_args or {})
        self.max_concurrent = max_concurrent
        self.max_retries = max_retries
        self.rollout_timeout = rollout_timeout
        self.tool_defs = tool_defs
        self.env_args = dict(env_args or {})
        self.score_rollouts = score_rollouts  # False: generate/evaluate return unscored rows
        self.reasoning_history = check_reasoning_history(reasoning_history)
        self.rollout_limits = limits  # a run's limits override them field by field
        if env_id is not None:
            if not isinstance(env_id, str) or not env_id.strip():
                raise ValueError(f"env_id must be a non-empty string, got {env_id!r}")
            self.env_id = env_id
        elif self.env_id is None:
            self.env_id = type(self).__name__

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in _FINAL_METHODS:
            if name in cls.__dict__:
                raise TypeError(
                    f"{cls.__name__} overrides Environment.{name}, which is final: scoring and "
                    "scheduling belong to the framework. Override rollout() (or env_response/"
                    "is_completed in a MultiTurnEnv) instead."
                )

    @property
    def prompt_template(self) -> dict[str, Any]:
        """The system prompt and few-shot turns each question is asked with (saved in the run's
        metadata; runs are labelled by them when they differ)."""
        return {"system_prompt": self.system_prompt, "few_shot": self.few_shot}

    @property
    def requires_group_rollouts(self) -> bool:
        """True when the rubric scores whole groups: the scheduler must run rollouts grouped."""
        return self.rubric.requires_group_rollouts

    @property
    def max_model_turns(self) -> int | None:
        """The most model turns one rollout takes (None: the environment sets no budget)."""
        return None

    # -- data ---------------------------------------------------------------------------------

    def get_dataset(self) -> list[RolloutInput]:
        """The formatted training dataset (built on first use)."""
        return self._dataset.inputs(self.system_prompt, self.few_shot)

    def get_eval_dataset(self) -> list[RolloutInput]:
        """The formatted eval dataset, falling back to the training dataset."""
        if self._eval_dataset:
            return self._eval_dataset.inputs(self.system_prompt, self.few_shot)
        if self._dataset:
            return self.get_dataset()
        raise ValueError(f"{self.env_id}: no eval_dataset and no dataset to evaluate on")

    def eval_rows(self) -> Sequence[RolloutInput]:
        """The formatted eval dataset (falling back to the training dataset) read on demand:
        each row is formatted when it is read, so a run holds only what it is running."""
        if self._eval_dataset:
            return self._eval_dataset.rows(self.system_prompt, self.few_shot)
        if self._dataset:
            return self._dataset.rows(self.system_prompt, self.few_shot)
        raise ValueError(f"{self.env_id}: no eval_dataset and no dataset to evaluate on")

    def get_eval_inputs(
        self,
        num_examples: int = -1,
        rollouts_per_example: int = 1,
        shuffle: bool = False,
        seed: int = 0,
    ) -> Sequence[RolloutInput]:
        """Pick examples (optionally shuffled by ``seed``) and repeat each ``rollouts_per_example``
        times: a sequence that formats each input when it is read."""
        if rollouts_per_example < 1:
            raise ValueError(f"rollouts_per_example must be >= 1, got {rollouts_per_example}")
        examples = self.eval_rows()
        order = list(range(len(examples)))
        if shuffle:
            random.Random(seed).shuffle(order)
        if num_examples is not None and num_examples >= 0:
            if num_examples > len(order):
                warnings.warn(
                    f"num_examples={num_examples}, but {self.env_id}'s eval dataset has "
                    f"{len(order)} rows: running {len(order)}",
                    UserWarning,
                    stacklevel=3,
                )
            order = order[:num_examples]
        return RepeatedInputs(examples, order, rollouts_per_example)

    def prepare_input(self, row: DatasetRow, index: int) -> RolloutInput:
        """A caller's input row ``index`` as a rollout input: the row itself when it is already
        in form (a formatted dataset row), else a completed copy (a prompt built from
        ``question`` with this environment's system prompt and few-shot turns). A bad row is a
        ValueError naming the row and the field."""
        if input_in_form(row, index):
            return cast(RolloutInput, row)
        return complete_input(dict(row), index, self.system_prompt, self.few_shot)

    def task_metadata(self, inputs: Iterable[RolloutInput]) -> dict[str, Any] | None:
        """Per-task facts for the run's metadata: none for a single environment."""
        return None

    # -- layer 1 -------------------------------------------------------------------------------

    def init_state(
        self,
        rollout_input: RolloutInput,
        model: str,
        sampling_args: dict[str, Any] | None = None,
        rollout_index: int = 0,
    ) -> State:
        """Lay out the workbench of one rollout: deep copy, parsed info, validated prompt,
        resolved tools, empty trajectory, timing, unique trajectory_id. Makes no decisions."""
        state = new_state(
            rollout_input,
            model=model,
            sampling_args=sampling_args,
            tool_defs=self.tool_defs,
            rollout_index=rollout_index,
        )
        attempt = _ATTEMPT_STATES.get()
        if attempt is not None:
            attempt.append(state)
        return state

    @property
    def group_members(self) -> Mapping[str, Environment]:
        """An environment group's environments by task; none for one environment."""
        return {}

    @property
    def pass_criterion(self) -> PassCriterion:
        """When a rollout counts as solved for pass@k (the rubric's; default reward >= 1)."""
        return self.rubric.pass_criterion

    @abstractmethod
    async def rollout(
        self,
        input: RolloutInput,
        client: ModelClient,
        model: str,
        sampling_args: dict[str, Any] | None = None,
    ) -> State:
        """Run one trajectory and return its State (start from ``self.init_state(...)``)."""

    async def get_model_response(
        self,
        client: ModelClient,
        model: str,
        messages: Messages,
        state: State,
        sampling_args: dict[str, Any] | None = None,
    ) -> ChatResponse:
        """One model turn for ``messages``, accounted on ``state`` (usage, tokens, timing). The
        messages go with the reasoning :attr:`reasoning_history` keeps; the reply comes back
        with its reasoning under ``reasoning_content`` (inline reasoning too, when the parser
        finds it: :meth:`Parser.split_reasoning`)."""
        messages = history_for_request(messages, check_reasoning_history(self.reasoning_history))
        args = {**self.sampling_args, **(state.get("sampling_args") or {}), **(sampling_args or {})}
        if state.get("seed") is not None:  # the rollout's own seed, derived from the run's
            args.setdefault("seed", state["seed"])
        limits, price = rollout_budget(self.rollout_limits)
        room = limit_before_call(state, limits, price)  # raises LimitReached: no call
        if room is not None:
            clip_max_tokens(args, room)
        request: CallRequest = {"messages": list(messages), "sampling_args": dict(args)}
        timing: CallTiming = {"start_ms": elapsed_ms(state)}
        t0 = time.perf_counter()
        with slot_wait() as waited:
            try:
                # The rollout's own turn: the prompt's assistant messages (few-shot) are not turns of it.
                with model_turn(len(state.get("trajectory") or ()), self.max_model_turns):
                    response = await client.chat(
                        model, messages, args or None, state.get("tool_defs")
                    )
            except TimeoutError as exc:
                if isinstance(exc, RolloutTimeoutError):
                    raise
                # Only a timeout of the model call itself is a model error (env-code ones are env_error).
                raise ModelAPIError(
                    f"model call timed out ({type(exc).__name__}: {str(exc) or 'no message'})",
                    category="model_timeout",
                    retryable=True,
                ) from exc
            finally:  # the wait for a request slot is not the model's time
                timing["queue_ms"] = round(waited[0] * 1000, 3)
                timing["latency_ms"] = round((time.perf_counter() - t0 - waited[0]) * 1000, 3)
                totals = state["timing"]
                totals["queue_ms"] = totals.get("queue_ms", 0.0) + timing["queue_ms"]
                totals["generation_ms"] += timing["latency_ms"]
        response.message = assistant_message(response.message, self.parser.split_reasoning)
        record_response(state, response, request, timing)
        if price is not None:
            state["cost_usd"] = usage_cost(state["usage"], price)
        limit_after_call(cast(dict[str, Any], state), limits, price)
        return response

    # -- layer 2 (final) -----------------------------------------------------------------------

    async def _rollout_with_retries(
        self,
        rollout_input: RolloutInput,
        client: ModelClient,
        model: str,
        sampling_args: dict[str, Any] | None,
        rollout_index: int,
    ) -> State:
        retries = ROLLOUT_RETRY.retries(limit=self.max_retries)
        t0 = time.perf_counter()
        while True:
            started: list[State] = []
            token = _ATTEMPT_STATES.set(started)
            slot = enter_rollout(rollout_index)  # the response cache keys answers per rollout index
            try:
                # What the attempt starts for itself (a per-rollout tool server) stops with it.
                async with rollout_scope():
                    state = await self._rollout_bounded(rollout_input, client, model, sampling_args)
                if not isinstance(state, dict):
                    raise TypeError(
                        f"{type(self).__name__}.rollout returned {type(state).__name__}, not a State dict"
                    )
                state["rollout_index"] = rollout_index
                return _timed(state, t0)
            except asyncio.CancelledError:
                raise
            except LimitReached as reached:  # a per-rollout limit: an end, not a failure
                state = (
                    started[0]
                    if started
                    else self.init_state(rollout_input, model, sampling_args, rollout_index)
                )
                state["rollout_index"], state["stop_reason"] = rollout_index, reached.reason
                return _timed(state, t0)
            except Exception as exc:
                retryable = not isinstance(exc, ModelAPIError) or exc.retryable
                delay = retries.next_delay() if retryable else None
                if delay is None:
                    # Keep what the failed attempt did (partial completion, usage, timing, turns).
                    state = (
                        started[0]
                        if started
                        else self.init_state(rollout_input, model, sampling_args, rollout_index)
                    )
                    state["rollout_index"] = rollout_index
                    state["error"] = categorize(exc)
                    state["stop_reason"] = "error"
                    state["retries"] = retries.done
                    return _timed(state, t0)
                await asyncio.sleep(delay)
            finally:
                leave_rollout(slot)
                _ATTEMPT_STATES.reset(token)

    async def _rollout_bounded(
        self,
        rollout_input: RolloutInput,
        client: ModelClient,
        model: str,
        sampling_args: dict[str, Any] | None,
    ) -> State:
        if self.rollout_timeout is None:
            return await self.rollout(rollout_input, client, model, sampling_args)
        try:
            return await asyncio.wait_for(
                self.rollout(rollout_input, client, model, sampling_args), self.rollout_timeout
            )
        except TimeoutError as exc:
            raise RolloutTimeoutError(
                f"rollout did not finish within rollout_timeout={self.rollout_timeout:g}s"
            ) from exc

    async def _finish(self, states: list[State], score: bool, started: float) -> list[Row]:
        # Scoring first, then cleanup exactly once per rollout, then the row.
        t1 = time.perf_counter()
        for s in states:  # after its own rollout, each waited for the group's others
            own = s["timing"].get("rollout_ms") or 0.0
            s["timing"]["group_wait_ms"] = max(0.0, (t1 - started) * 1000 - own)
        if score:
            await self.rubric.score_group(states)
            for s in states:
                s["timing"]["scoring_ms"] = (time.perf_counter() - t1) * 1000
        for s in states:
            await self._cleanup(s)
            s["timing"]["total_ms"] = (time.perf_counter() - started) * 1000
        return [state_to_row(s) for s in states]

    async def _cleanup(self, state: State) -> None:
        """Run the rubric's cleanup; a failure is recorded on this rollout's row only, which
        keeps its completion, reward and metrics."""
        try:
            await self.rubric.cleanup(state)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            state["error"] = state.get("error") or cleanup_error(type(self.rubric).__name__, exc)

    @final
    async def run_rollout(
        self,
        input: RolloutInput,
        client: ModelClientLike,
        model: str,
        sampling_args: dict[str, Any] | None = None,
        *,
        score: bool = True,
        rollout_index: int = 0,
    ) -> Row:
        """One rollout, scored alone: rollout -> rubric -> cleanup -> output row. Never raises
        for a failed rollout: the row carries ``error``."""
        return (
            await self._run_states([input], client, model, sampling_args, score, rollout_index)
        )[0]

    @final
    async def run_group(
        self,
        inputs: list[RolloutInput],
        client: ModelClientLike,
        model: str,
        sampling_args: dict[str, Any] | None = None,
        *,
        score: bool = True,
    ) -> list[Row]:
        """The rollouts of one example, scored together (group advantages)."""
        return (
            await self._run_states(inputs, client, model, sampling_args, score, 0) if inputs else []
        )

    async def _run_states(
        self,
        inputs: list[RolloutInput],
        client: ModelClientLike,
        model: str,
        sampling_args: dict[str, Any] | None,
        score: bool,
        first_index: int,
    ) -> list[Row]:
        t0 = time.perf_counter()
        model_client = as_model_client(client)
        states = list(
            await asyncio.gather(
                *(
                    track_rollout(
                        self._rollout_with_retries(
                            inp, model_client, model, sampling_args, first_index + i
                        ),
                        (inp.get("example_id"), first_index + i),
                    )
                    for i, inp in enumerate(inputs)
                )
            )
        )
        return await self._finish(states, score, t0)

    @final
    async def rollout_state(
        self,
        input: RolloutInput,
        client: ModelClientLike,
        model: str,
        sampling_args: dict[str, Any] | None = None,
        *,
        rollout_index: int = 0,
    ) -> State:
        """One rollout's State, unscored and not cleaned up (retries and ``rollout_timeout``
        apply): what runs where the model calls are made when scoring happens elsewhere.
        Hand the states to :meth:`finish_group` to score them and run the rubric's cleanup."""
        return await self._rollout_with_retries(
            input, as_model_client(client), model, sampling_args, rollout_index
        )

    @final
    async def finish_group(
        self,
        states: list[State],
        *,
        score: bool = True,
        started: float | None = None,
    ) -> list[Row]:
        """Score states made by :meth:`rollout_state` as one group, run the rubric's cleanup once
        on each, and return their output rows. ``started`` (``time.perf_counter()``) is when the
        group began, for ``timing.total_ms``."""
        return await self._finish(
            states, score, time.perf_counter() if started is None else started
        )

    # -- layer 3 (final) -----------------------------------------------------------------------

    @final
    async def generate(
        self,
        inputs: Any,
        client: ModelClientLike,
        model: str,
        *,
        config: RunConfig | None = None,
        **options: Unpack[RunOptions],
    ) -> GenerateOutputs:
        """Run every input (grouped by example_id unless ``independent_scoring``). The options
        are the fields of :class:`~verifiers_lite.run.run_config.RunConfig`: pass them as keywords,
        or a ``config`` (keywords given beside it override its fields)."""
        from verifiers_lite.run.scheduler import generate

        return await generate(self, inputs, client, model, run_config("generate", config, options))

    @final
    async def evaluate(
        self,
        client: ModelClientLike,
        model: str,
        num_examples: int = -1,
        rollouts_per_example: int | NotGiven = NOT_GIVEN,
        shuffle: bool = False,
        seed: int | None | NotGiven = NOT_GIVEN,
        *,
        config: RunConfig | None = None,
        **options: Unpack[EvaluationOptions],
    ) -> GenerateOutputs:
        """Evaluate on eval_dataset (falling back to dataset): pick, repeat, generate. ``seed``
        shuffles (with ``shuffle=True``, or ``until``) and is the run seed: each rollout samples
        with a seed derived from it (``None``: no seed is sent; shuffling then uses 0). Left out,
        ``rollouts_per_example`` and ``seed`` are ``config``'s (else 1 and 0). Options as for
        :meth:`generate`."""
        run = _evaluation_config("evaluate", config, options, rollouts_per_example, seed)
        # With ``until`` the examples are a random draw: shuffled, by the run's seed.
        inputs = self.get_eval_inputs(
            num_examples,
            run.rollouts_per_example or 1,
            shuffle or run.until is not None,
            run.seed or 0,
        )
        return await self.generate(inputs, client, model, config=run)

    @final
    def generate_sync(
        self,
        inputs: Any,
        client: ModelClientLike,
        model: str,
        *,
        config: RunConfig | None = None,
        **options: Unpack[RunOptions],
    ) -> GenerateOutputs:
        """:meth:`generate` from synchronous code: scripts, Jupyter cells, uvloop programs."""
        from verifiers_lite._util.sync import run_sync

        run = run_config("generate_sync", config, options)
        return run_sync(self.generate(inputs, client, model, config=run))

    @final
    def evaluate_sync(
        self,
        client: ModelClientLike,
        model: str,
        num_examples: int = -1,
        rollouts_per_example: int | NotGiven = NOT_GIVEN,
        shuffle: bool = False,
        seed: int | None | NotGiven = NOT_GIVEN,
        *,
        config: RunConfig | None = None,
        **options: Unpack[EvaluationOptions],
    ) -> GenerateOutputs:
        """:meth:`evaluate` from synchronous code: scripts, Jupyter cells, uvloop programs.
        Same signature as :meth:`evaluate`."""
        from verifiers_lite._util.sync import run_sync

        run = _evaluation_config("evaluate_sync", config, options, rollouts_per_example, seed)
        return run_sync(
            self.evaluate(
                client, model, num_examples, rollouts_per_example, shuffle, seed, config=run
            )
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(env_id={self.env_id!r})"


def _evaluation_config(
    method: str,
    config: RunConfig | None,
    options: Mapping[str, Any],
    rollouts_per_example: int | NotGiven,
    seed: int | None | NotGiven,
) -> RunConfig:
    """An evaluation's run options: ``seed`` and ``rollouts_per_example`` when given, else the
    config's (``rollouts_per_example``: else 1)."""
    run = run_config(method, config, options)
    return run.replace(
        seed=given(seed, run.seed),
        rollouts_per_example=given(rollouts_per_example, run.rollouts_per_example or 1),
    )


def _timed(state: State, started: float) -> State:
    """Record the rollout's own wall time (its trajectory, retries included) as
    ``timing.rollout_ms``, and its parts: ``queue_ms`` (waiting for a request slot),
    ``generation_ms`` (in the model requests) and ``env_ms`` (the rest: the environment's own
    steps and tools, and any rollout retries); ``total_ms`` also counts waiting for its group
    (``group_wait_ms``), scoring and cleanup."""
    timing = state.get("timing")
    if not isinstance(timing, dict):
        timing = state["timing"] = {}
    timing["rollout_ms"] = rollout = (time.perf_counter() - started) * 1000
    timing.setdefault("queue_ms", 0.0)
    timing["env_ms"] = max(0.0, rollout - timing["queue_ms"] - timing.get("generation_ms", 0.0))
    return state
