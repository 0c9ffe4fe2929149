"""generate(): run a whole dataset — the plan of units (grouped or independent, resumed ones
skipped), bounded concurrency, the executor running them; what each unit returns is appended to
the run's ledger (:mod:`verifiers_lite.ledger`), which keeps the books."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal, cast

from verifiers_lite._util.scopes import run_scope
from verifiers_lite.clients.adaptive import check_max_concurrent
from verifiers_lite.clients.cache import CacheMeter
from verifiers_lite.clients.resolve import as_model_clients, attach_cache
from verifiers_lite.core.content import text_only
from verifiers_lite.core.limits import Limits, RolloutBudget, run_budget
from verifiers_lite.core.model_client import ModelClientLike, text_only_model
from verifiers_lite.core.not_given import given
from verifiers_lite.core.pricing import ModelPrice
from verifiers_lite.core.progress import CallbackSet, FunctionCallbacks, default_progress
from verifiers_lite.core.records import RolloutInput, Row
from verifiers_lite.core.seeding import seeded_input
from verifiers_lite.executors.base import Executor, RunContext, WorkUnit
from verifiers_lite.executors.local import LocalExecutor
from verifiers_lite.ledger.opening import RunFacts
from verifiers_lite.ledger.run_ledger import RunLedger
from verifiers_lite.results.fingerprint import input_hash
from verifiers_lite.run.budget import BudgetGate, RunBudget
from verifiers_lite.run.input_plan import InputPlan
from verifiers_lite.run.run_config import RunConfig
from verifiers_lite.run.until import UntilGate

if TYPE_CHECKING:
    from verifiers_lite.core.runnable import RunnableEnvironment
    from verifiers_lite.ledger.resume import SavedRows
    from verifiers_lite.results.outputs import GenerateOutputs


def iter_units(
    plan: InputPlan,
    is_done: Callable[[Any, int], bool],
    independent: bool,
    run_seed: int | None = None,
) -> Iterator[WorkUnit]:
    """Units to run, made as they are taken (a million rollouts are not planned up front, and a
    group's inputs are read only when it is scheduled); finished rollouts are skipped. Grouped
    mode reruns a group whole; independent mode runs only the missing rollouts. With
    ``run_seed`` each input gets its rollout's seed."""
    for eid in plan:
        missing = [i for i in range(plan[eid]) if not is_done(eid, i)]
        if not missing:
            continue
        group = plan.group(eid)
        group_hash = input_hash(group[0])
        indices = missing if independent else list(range(len(group)))
        inputs = [
            group[i] if run_seed is None else seeded_input(group[i], run_seed, i) for i in indices
        ]
        if independent:
            yield from (
                WorkUnit(eid, [inp], [i], group_hash)
                for inp, i in zip(inputs, indices, strict=True)
            )
        else:
            yield WorkUnit(eid, inputs, indices, group_hash)


def _callbacks(
    progress: Any, callbacks: Any, on_start: Any, on_progress: Any, on_log: Any
) -> CallbackSet:
    cbs: list[Any] = []
    if progress is True:
        cbs.append(default_progress())
    elif progress not in (False, None):
        cbs.append(progress)  # a display object supplied by the caller
    if callbacks:
        cbs.extend(callbacks if isinstance(callbacks, (list, tuple)) else [callbacks])
    if on_start or on_progress or on_log:
        cbs.append(FunctionCallbacks(on_start, on_progress, on_log))
    return CallbackSet(cbs)


async def generate(
    env: RunnableEnvironment,
    inputs: Any,
    client: ModelClientLike,
    model: str,
    config: RunConfig | None = None,
) -> GenerateOutputs:
    """Run ``inputs`` against ``model`` with the options of ``config`` (see :class:`RunConfig`).

    Grouped by default: all rollouts of one example_id go to one ``run_group`` on one endpoint
    (group advantages, prefix-cache reuse). ``max_concurrent`` bounds model requests in flight
    across the run. With ``results_path`` each finished group is appended crash-safely and a
    rerun resumes, running only what is missing. A failed rollout is a row with ``error``;
    nothing raises out of here but bad arguments and interruption. ``executor`` chooses where
    units run (default :class:`LocalExecutor`; :class:`RayExecutor` spreads them over Ray actors).

    Resume reuses a saved row only for the same run (see :mod:`verifiers_lite.results.fingerprint`:
    a different environment, arguments, model, sampling, scoring, rubric, library version or
    input is refused with the differing fields named). Errored rollouts are rerun (the whole
    group in grouped mode) unless ``rerun_errors=False``; each row counts its ``attempts``.
    ``score_rollouts=False`` (default: the environment's) leaves every row unscored: no reward
    function runs. ``seed`` (default 0) gives each rollout its own sampling seed derived from
    it, the example and the rollout index (sent as the request's ``seed``, kept on the row): the
    same call draws the same samples, and a group's rollouts draw different ones; ``None`` sends
    no seed; a ``seed`` in the sampling args is one fixed seed for every request instead.
    ``cache=True`` (or a file path) answers model calls from the response cache
    when it has them (see :mod:`verifiers_lite.clients.cache`); hits and misses are in
    ``metadata["cache"]``.
    """
    run = _Run(env, inputs, client, model, config or RunConfig())
    await run.ledger.check_model()
    run.open()
    # What the run's rollouts start for the whole run (shared tool servers) stops when it ends.
    async with run_scope():
        await run.start()
        status, interrupted = "running", False
        try:
            with run_budget(RolloutBudget(run.config.limits, run.ledger.price)):
                await run.run_units()
            status = "completed_with_errors" if run.ledger.stats.errors else "completed"
        except BaseException as exc:
            status = "interrupted"
            interrupted = isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError))
            raise
        finally:
            await run.finish(status, interrupted)
    return run.outputs()


class _Run:
    """One call of :func:`generate`: its plan of units, the executor running them, its ledger."""

    def __init__(
        self,
        env: RunnableEnvironment,
        inputs: Any,
        client: ModelClientLike,
        model: str,
        config: RunConfig,
    ) -> None:
        self.env, self.model, self.config = env, model, config
        self.limit, self.score = _check_run(env, model, config)
        # Every input validated before the first request (its content too, for a model that reads
        # text only); positions only.
        self.plan = InputPlan(env, inputs, _content_check(client))
        if self.score:  # a reward function taking a field no row has fails now, not as "" per row
            env.rubric.check_reward_funcs(self.plan.fields)
        sampling = {**env.sampling_args, **(config.sampling_args or {})}
        self.run_seed = None if "seed" in sampling else config.seed
        self.executor = config.executor or LocalExecutor()
        self.client, cache_meter = _with_cache(client, config.cache, self.executor)
        self.per_example = config.rollouts_per_example or self.plan.max_group() or 1
        facts = RunFacts(
            model=model,
            sampling_args=sampling,
            rollouts_per_example=self.per_example,
            num_examples=len(self.plan),
            num_rollouts=self.plan.num_rollouts,
            independent_scoring=config.independent_scoring,
            score_rollouts=self.score,
            max_concurrent=self.limit,
            seed=self.run_seed,
            limits=_run_limits(env, config),
            results_path=str(config.results_path) if config.results_path else None,
            task_facts=env.task_metadata(self.plan.inputs()),
        )
        events = _callbacks(
            config.progress, config.callbacks, config.on_start, config.on_progress, config.on_log
        )
        self.ledger = RunLedger(
            env,
            facts,
            client,
            prices=config.prices,
            fsync=config.fsync,
            cache_meter=cache_meter,
            events=events,
        )
        # With ``until``: no new example once the mean reward is known as precisely as asked.
        self.gate = UntilGate(config.until, list(self.plan), self.plan) if config.until else None
        if self.gate is not None:
            self.ledger.observers.append(self.gate.add)
        # With a budget: no new unit once it would take the run past one.
        self.budget = _budget_gate(config, model, self.ledger.price)
        if self.budget is not None:
            self.ledger.observers.append(self.budget.add)

    def input_hash_of(self, eid: Any) -> str:
        return input_hash(self.plan.first_input(eid))

    def open(self) -> None:
        """The ledger's run directory, resumed where earlier sessions left it."""
        self.saved = self.ledger.open(
            self.plan,
            self.input_hash_of,
            self.config.independent_scoring,
            self.config.rerun_errors,
            self.config.allow_client_change,
        )
        if self.budget is not None:  # the wall clock counts the run's earlier sessions
            earlier = self.ledger.metadata["sessions"][:-1]
            self.budget.earlier_wall_s = sum(float(x.get("duration_s") or 0.0) for x in earlier)

    async def start(self) -> None:
        """Start the executor and the live display."""
        independent = self.config.independent_scoring
        ctx = RunContext(
            self.env,
            self.client,
            self.model,
            self.config.sampling_args,
            self.limit,
            independent,
            self.ledger.events.on_log,
            self.score,
        )
        slots = await self.executor.start(ctx, 1 if independent else self.per_example)
        self.n_workers = min(_count_units(self.plan, self.saved, independent), slots)
        self.units = iter_units(self.plan, self.saved.is_done, independent, self.run_seed)
        if self.gate is not None:
            self.units = self.gate.units(self.units)
        if self.budget is not None:
            self.budget.started_at = self.budget.clock()
            self.units = self.budget.units(self.units)
        # max_concurrent="auto": the displays show the endpoints' adaptive limit as it moves
        self.ledger.stats.limit_source = getattr(self.executor, "in_flight_limit", None)
        self.ledger.start_live()

    async def run_units(self) -> None:
        """Every missing unit, on as many workers as the executor has slots; one failing cancels all."""
        if not self.n_workers:
            return
        tasks = [asyncio.ensure_future(self._worker()) for _ in range(self.n_workers)]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    async def _worker(self) -> None:
        while True:
            if self.budget is not None:
                await self.budget.ready()  # the first unit alone, when a budget needs its cost
            unit = next(self.units, None)  # one shared iterator: each unit taken by one worker
            if unit is None:
                return
            try:
                out = await self.executor.run(unit)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a framework-level failure still must not take the run down
                out = _failed_rows(self.env, unit, self.model, self.config.sampling_args, exc)
            await self.ledger.append(out, unit.input_hash or self.input_hash_of(unit.example_id))

    async def finish(self, status: str, interrupted: bool) -> None:
        """However the run ended: the ledger's books closed, the executor freed."""
        summaries = [self.executor.summary()]
        if self.gate is not None:
            summaries.append({"until": self.gate.record()})
        if self.budget is not None:
            record = self.budget.record()
            summaries.append({"budget": record})
            if record["stopped"]:
                self.ledger.events.on_log(f"stopped: {record['stopped']}")
        await self.ledger.finish(status, interrupted, summaries, self.plan)
        await self.executor.close()
        self.ledger.events.on_end(self.ledger.stats)

    def outputs(self) -> GenerateOutputs:
        return self.ledger.outputs(self.plan.example_ids)


def _check_run(
    env: RunnableEnvironment, model: str, config: RunConfig
) -> tuple[int | Literal["auto"] | None, bool]:
    """Refuse what cannot run before any request; the run's request bound and scoring mode."""
    if not isinstance(model, str) or not model:
        raise ValueError(f"model must be a non-empty string, got {model!r}")
    limit = given(config.max_concurrent, env.max_concurrent)  # None: no bound
    check_max_concurrent(limit)
    score = env.score_rollouts if config.score_rollouts is None else bool(config.score_rollouts)
    if score:
        env.rubric.check_reward_funcs()  # a misspelled parameter fails now, not on every row
    if config.independent_scoring and score and env.requires_group_rollouts:
        raise ValueError(
            f"independent_scoring=True cannot be used with {env.env_id}'s rubric: its group reward "
            f"functions {env.rubric.group_func_names} need whole groups; drop independent_scoring "
            "(or pass score_rollouts=False)"
        )
    # an executor that does not declare in_process is taken to run rollouts elsewhere
    elsewhere = config.executor is not None and not getattr(config.executor, "in_process", False)
    if config.limits is not None and config.limits.any and elsewhere:
        raise ValueError(
            "limits= for a run needs the in-process executor: rollouts run elsewhere do not see "
            "it; give the environment its limits (vf.SingleTurnEnv(..., limits=vf.Limits(...)))"
        )
    return limit, score


def _run_limits(env: RunnableEnvironment, config: RunConfig) -> dict[str, Any] | None:
    """The limits the run's rollouts get (the run's over the environment's), as recorded."""
    env_limits = getattr(env, "rollout_limits", None)
    limits = config.limits.over(env_limits) if config.limits is not None else env_limits
    return limits.to_dict() if isinstance(limits, Limits) and limits.any else None


def _content_check(client: ModelClientLike) -> Callable[[RolloutInput, str], None] | None:
    """What refuses a prompt the run's model cannot read (an image for a model that reads text
    only), naming the row and the part; None when every endpoint takes any content."""
    model = next((n for n in map(text_only_model, as_model_clients(client)) if n is not None), None)
    if model is None:
        return None

    def check(inp: RolloutInput, where: str) -> None:
        text_only(inp["prompt"], where, model)

    return check


def _with_cache(
    client: ModelClientLike, cache: Any, executor: Executor
) -> tuple[Any, CacheMeter | None]:
    """The client answering through the response cache (in-process runs only), and its meter."""
    # An executor written before the capability was declared is taken as out-of-process.
    if not getattr(executor, "in_process", False):
        if cache not in (None, False):
            raise ValueError(
                f"cache= works with the in-process executor only (the cache is a file of this "
                f"process), not {type(executor).__name__}"
            )
        return client, None
    return attach_cache(client, cache)


def _budget_gate(config: RunConfig, model: str, price: ModelPrice | None) -> BudgetGate | None:
    """The run's budget gate (None without a budget); a cost budget needs a price."""
    budget = RunBudget(config.max_cost_usd, config.max_tokens_total, config.max_wall_s)
    if not budget:
        return None
    if budget.max_cost_usd is not None and price is None:
        raise ValueError(
            f"max_cost_usd needs a price for {model!r}, which is unpriced: give "
            f"prices={{{model!r}: vf.ModelPrice(input=..., output=...)}}"
        )
    return BudgetGate(budget)


def _count_units(plan: InputPlan, saved: SavedRows, independent: bool) -> int:
    if independent:
        return plan.num_rollouts - saved.num_kept
    return sum(1 for eid in plan if saved.keep.get(eid, 0).bit_count() < plan[eid])


def _failed_rows(
    env: RunnableEnvironment,
    unit: WorkUnit,
    model: str,
    sampling_args: dict[str, Any] | None,
    exc: Exception,
) -> list[Row]:
    from verifiers_lite.core.errors import categorize
    from verifiers_lite.core.state import new_state, state_to_row

    rows: list[Row] = []
    for inp, idx in zip(unit.inputs, unit.indices, strict=True):
        error = categorize(exc)
        try:
            state = new_state(
                inp, model=model, sampling_args=sampling_args, tool_defs=None, rollout_index=idx
            )
            state["error"], state["stop_reason"], state["reward"], state["advantage"] = (
                error,
                "error",
                None,
                None,
            )
            rows.append(state_to_row(state))
        except Exception:  # recording a failure must never fail the run: keep the bare facts
            rows.append(
                cast(
                    Row,
                    {
                        "example_id": inp.get("example_id"),
                        "rollout_index": idx,
                        "prompt": inp.get("prompt"),
                        "completion": [],
                        "reward": None,
                        "advantage": None,
                        "metrics": {},
                        "stop_reason": "error",
                        "error": error,
                    },
                )
            )
    return rows
