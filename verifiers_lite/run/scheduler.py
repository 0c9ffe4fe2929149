"""generate(): run a whole dataset — grouping, bounded concurrency, live progress, resume, saving."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

from verifiers_lite._util.interrupt import interrupt_note, record_note
from verifiers_lite._util.scopes import run_scope
from verifiers_lite.clients.cache import CacheMeter
from verifiers_lite.clients.resolve import as_model_clients, attach_cache
from verifiers_lite.core.content import text_only
from verifiers_lite.core.errors import ResumeMismatchError
from verifiers_lite.core.limits import RolloutBudget, run_budget
from verifiers_lite.core.model_client import ModelClientLike, text_only_model
from verifiers_lite.core.not_given import given
from verifiers_lite.core.pricing import declared_price, price_record, resolve_price, usage_cost
from verifiers_lite.core.progress import (
    TICK_SECONDS,
    CallbackSet,
    FunctionCallbacks,
    RunStats,
    default_progress,
    reset_rollout_listener,
    rollout_listener,
    set_rollout_listener,
)
from verifiers_lite.core.records import RolloutInput, Row
from verifiers_lite.core.seeding import seeded_input
from verifiers_lite.core.summary import RunSummary
from verifiers_lite.executors.base import Executor, RunContext, WorkUnit
from verifiers_lite.executors.local import LocalExecutor
from verifiers_lite.results.disk_rows import DiskRows
from verifiers_lite.results.fingerprint import (
    FINGERPRINT_KEY,
    INPUT_HASH_KEY,
    fingerprint_diff,
    input_hash,
    only_rubric_changed,
    run_fingerprint,
)
from verifiers_lite.results.manifest import (
    add_served_models,
    add_system_fingerprints,
    client_change,
    client_endpoints,
    endpoint_entries,
    refuse_unserved,
    run_manifest,
)
from verifiers_lite.results.outputs import GenerateOutputs
from verifiers_lite.results.resume import SavedRows, rewrite_saved, scan_saved
from verifiers_lite.results.run_metadata import FORMAT_VERSION, RunMetadata, add_summary
from verifiers_lite.results.sessions import (
    begin_session,
    current_session,
    earlier_sessions,
    end_session,
)
from verifiers_lite.results.store import ResultsStore, iter_rows
from verifiers_lite.run.input_plan import InputPlan
from verifiers_lite.run.rescore_advice import rescore_advice
from verifiers_lite.run.run_config import RunConfig
from verifiers_lite.run.until import UntilGate

if TYPE_CHECKING:
    from verifiers_lite.core.runnable import RunnableEnvironment


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
    await run.check_model()
    run.resume_saved()
    # What the run's rollouts start for the whole run (shared tool servers) stops when it ends.
    async with run_scope():
        await run.start()
        status, interrupted = "running", False
        try:
            with run_budget(RolloutBudget(run.config.limits, run.price)):
                await run.run_units()
            status = "completed_with_errors" if run.stats.errors else "completed"
        except BaseException as exc:
            status = "interrupted"
            interrupted = isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError))
            raise
        finally:
            await run.finish(status, interrupted)
    return run.outputs()


class _Run:
    """One call of :func:`generate`: its inputs by group, where its rows go, its live figures."""

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
        self.run_seed = (
            None if "seed" in {**env.sampling_args, **(config.sampling_args or {})} else config.seed
        )
        self.executor = config.executor or LocalExecutor()
        self.client, self.cache_meter = _with_cache(client, config.cache, self.executor)
        self.events = _callbacks(
            config.progress, config.callbacks, config.on_start, config.on_progress, config.on_log
        )
        self.per_example = config.rollouts_per_example or self.plan.max_group() or 1
        self.metadata = _run_metadata(
            env, model, config, self.plan, self.per_example, self.limit, self.score, self.run_seed
        )
        self.price, source = resolve_price(model, config.prices, declared_price(client))
        self.metadata["pricing"] = price_record(model, self.price, source)
        self.client_endpoints = client_endpoints(
            client
        )  # known before any request: a resume checks it
        manifest = {
            **run_manifest(env, self.metadata["library_version"]),
            "endpoints": self.client_endpoints,
        }
        begin_session(self.metadata, [], time.time(), manifest)
        self.store = (
            ResultsStore(config.results_path, fsync=config.fsync) if config.results_path else None
        )
        # The run's one summary, fed as groups finish: the live displays and metadata.json read it.
        self.stats = RunStats(self.plan.num_rollouts, RunSummary(env.pass_criterion))
        # With ``until``: no new example once the mean reward is known as precisely as asked.
        self.gate = UntilGate(config.until, list(self.plan), self.plan) if config.until else None
        self.rows: list[Row] | None = (
            None if self.store is not None else []
        )  # in memory without a store
        self.saved = SavedRows(config.rerun_errors)  # nothing saved yet
        self.builds: dict[
            str, None
        ] = {}  # the system_fingerprints the server returned, first seen first
        self.served: dict[str, None] = {}  # models that answered other than the one asked
        self.prior_attempts: dict[tuple[Any, int], int] = {}
        self.crashed_endpoints: set[str] = set()
        self.session = 0  # this session's index in metadata["sessions"] (set again on resume)

    async def check_model(self) -> None:
        """Refuse a model name an endpoint does not serve, before any chat request: each
        endpoint's ``/models``, asked once (and kept for the session's manifest)."""
        self.endpoint_list = await endpoint_entries(self.client, self.model)
        refuse_unserved(self.endpoint_list, self.model)

    def input_hash_of(self, eid: Any) -> str:
        return input_hash(self.plan.first_input(eid))

    def resume_saved(self) -> None:
        """Keep what earlier sessions of this run saved; refuse a directory that holds another run."""
        store = self.store
        if store is not None and store.open(self.metadata, self._check_saved):
            self.saved, self.prior_attempts = _resume(
                store,
                self.plan,
                self.input_hash_of,
                self.config.independent_scoring,
                self.config.rerun_errors,
                self._count_kept,
            )
        self.session, _ = current_session(self.metadata)

    def _check_saved(self, saved: RunMetadata) -> None:
        """The saved metadata, before anything on disk changes: refuse another run's directory,
        or this run resumed by another model client unless the caller allows it; carry the
        saved sessions over to this one."""
        assert self.store is not None
        _check_same_run(saved, self.metadata, self.store.path, self.env)
        earlier = earlier_sessions(saved, self.store.results_file)
        change = client_change(earlier, self.client_endpoints)
        if change is not None and not self.config.allow_client_change:
            raise ResumeMismatchError(_client_change_refusal(self.store.path, change))
        _, current = current_session(self.metadata)
        begin_session(self.metadata, earlier, current["start_time"], current["manifest"])

    def _count_kept(self, row: Row) -> None:
        if self.gate is not None:
            self.gate.add([row])
        self.stats.add([row], resumed=True)

    async def start(self) -> None:
        """Start the executor and the live display; fetch the endpoints' entries beside the run."""
        independent = self.config.independent_scoring
        ctx = RunContext(
            self.env,
            self.client,
            self.model,
            self.config.sampling_args,
            self.limit,
            independent,
            self.events.on_log,
            self.score,
        )
        slots = await self.executor.start(ctx, 1 if independent else self.per_example)
        self.n_workers = min(_count_units(self.plan, self.saved, independent), slots)
        self.units = iter_units(self.plan, self.saved.is_done, independent, self.run_seed)
        if self.gate is not None:
            self.units = self.gate.units(self.units)
        if self.cache_meter is not None:
            self.stats.cache_hits = 0
        self.events.on_start(self.stats)
        # Each rollout reports its start and end (counts move within a group), and a clock tick
        # keeps elapsed/ETA/rate moving while nothing finishes.
        self.listening = set_rollout_listener(rollout_listener(self.stats, self.events.on_update))
        self.ticker = asyncio.ensure_future(_tick(self.stats, self.events))

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
        for unit in self.units:  # one shared iterator: each unit is taken by one worker
            try:
                out = await self.executor.run(unit)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a framework-level failure still must not take the run down
                out = _failed_rows(self.env, unit, self.model, self.config.sampling_args, exc)
            await self._record(unit, out)

    async def _record(self, unit: WorkUnit, out: list[Row]) -> None:
        """A finished unit's rows: saved (or kept in memory), counted, reported."""
        group_hash = unit.input_hash or self.input_hash_of(unit.example_id)
        for r in out:
            r[INPUT_HASH_KEY] = group_hash
            r["attempts"] = (
                self.prior_attempts.get((r.get("example_id"), r.get("rollout_index", 0)), 0) + 1
            )
            r["session"] = self.session
            r["cost_usd"] = usage_cost(r.get("usage") or {}, self.price)
        if self.store is not None:
            await self.store.append_group_async(out)
        else:
            assert self.rows is not None
            self.rows.extend(out)
        if self.gate is not None:
            self.gate.add(out)
        add_system_fingerprints(self.builds, out)
        add_served_models(self.served, out)
        self.stats.add(out)
        if self.cache_meter is not None:
            self.stats.cache_hits, self.stats.cache_misses = self.cache_meter.counts()
        self.events.on_progress(self.stats, out)
        _report_crashes(out, self.crashed_endpoints, self.events.on_log)

    async def finish(self, status: str, interrupted: bool) -> None:
        """However the run ended: stop the live display, write the metadata, free the executor."""
        await self._stop_live_updates()
        if self.rows is not None:
            self.rows.sort(key=lambda r: (_sort_key(r["example_id"]), r.get("rollout_index", 0)))
        await self._complete_metadata(status, interrupted)
        if self.store is not None:
            self.store.write_metadata(self.metadata)
            self.store.close()
        if interrupted:
            _note_interrupt(self.stats, self.store, self.plan)
        await self.executor.close()
        self.events.on_end(self.stats)

    async def _stop_live_updates(self) -> None:
        self.ticker.cancel()
        await asyncio.gather(self.ticker, return_exceptions=True)
        reset_rollout_listener(self.listening)
        self.stats.in_flight = 0
        self.events.on_update(
            self.stats
        )  # the last live update shows nothing in flight (updates are throttled)

    async def _complete_metadata(self, status: str, interrupted: bool) -> None:
        metadata = self.metadata
        if self.cache_meter is not None:
            metadata["cache"] = self.cache_meter.summary()
        _, session = current_session(metadata)
        session["manifest"]["endpoints"] = self.endpoint_list
        session["manifest"]["system_fingerprints"] = list(
            self.builds
        )  # of the rows this session made
        session["manifest"]["served_models"] = list(self.served)
        served = {
            m: None
            for s in metadata.get("sessions") or []
            for m in (s.get("manifest") or {}).get("served_models") or []
        }
        if served:
            metadata["served_models"] = list(served)
        end_session(metadata, time.time(), rollouts=self.stats.done - self.stats.resumed)
        metadata["status"] = status
        add_summary(metadata, self.executor.summary())
        add_summary(metadata, self.stats.summary.summary())
        if self.gate is not None:
            metadata["until"] = self.gate.record()

    def outputs(self) -> GenerateOutputs:
        """The run's rows (in memory, or read from results.jsonl on demand) and metadata."""
        if self.store is None:
            assert self.rows is not None
            return GenerateOutputs(rows=self.rows, metadata=self.metadata)
        on_disk = DiskRows.open(
            self.store.results_file, example_ids=self.plan.example_ids, sort=True
        )
        assert on_disk is not None  # every row the store wrote has integer ids
        return GenerateOutputs(rows=on_disk, metadata=self.metadata)


def _check_run(env: RunnableEnvironment, model: str, config: RunConfig) -> tuple[int | None, bool]:
    """Refuse what cannot run before any request; the run's request bound and scoring mode."""
    if not isinstance(model, str) or not model:
        raise ValueError(f"model must be a non-empty string, got {model!r}")
    limit = given(config.max_concurrent, env.max_concurrent)  # None: no bound
    if limit is not None and limit < 1:
        raise ValueError(f"max_concurrent must be >= 1, got {limit}")
    score = env.score_rollouts if config.score_rollouts is None else bool(config.score_rollouts)
    if score:
        env.rubric.check_reward_funcs()  # a misspelled parameter fails now, not on every row
    if config.independent_scoring and score and env.requires_group_rollouts:
        raise ValueError(
            f"independent_scoring=True cannot be used with {env.env_id}'s rubric: its group reward "
            f"functions {env.rubric.group_func_names} need whole groups; drop independent_scoring "
            "(or pass score_rollouts=False)"
        )
    return limit, score


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


def _run_metadata(
    env: RunnableEnvironment,
    model: str,
    config: RunConfig,
    plan: InputPlan,
    per_example: int,
    limit: int | None,
    score: bool,
    run_seed: int | None,
) -> RunMetadata:
    """metadata.json as the run starts: what ran, with what, and the fingerprint a resume checks."""
    sampling = {**env.sampling_args, **(config.sampling_args or {})}
    metadata = RunMetadata(
        format_version=FORMAT_VERSION,
        env_id=env.env_id,
        env_args=env.env_args,
        model=model,
        rollouts_per_example=per_example,
        num_examples=len(plan),
        num_rollouts=plan.num_rollouts,
        sampling_args=sampling,
        independent_scoring=config.independent_scoring,
        score_rollouts=score,
        pass_criterion=env.pass_criterion.to_dict(),
        prompt_template=env.prompt_template,
    )
    if (task_facts := env.task_metadata(plan.inputs())) is not None:
        metadata["tasks"] = task_facts
    metadata["max_concurrent"], metadata["seed"] = limit, run_seed
    if config.results_path:
        metadata["results_path"] = str(config.results_path)
    metadata["library_version"] = _version()
    metadata[FINGERPRINT_KEY] = run_fingerprint(
        env,
        model,
        sampling,
        per_example,
        config.independent_scoring,
        score,
        metadata["library_version"],
    )
    if run_seed is not None:  # the seed decides the samples: a resume must use the same one
        metadata[FINGERPRINT_KEY]["seed"] = run_seed
    return metadata


def _resume(
    store: ResultsStore,
    sizes: Mapping[Any, int],
    input_hash_of: Callable[[Any], str],
    independent: bool,
    rerun_errors: bool,
    on_kept: Callable[[Row], None],
) -> tuple[SavedRows, dict[tuple[Any, int], int]]:
    """Keep the saved rows still wanted (refusing rows made from other inputs) and rewrite the
    file with them; returns what is kept and the attempts so far of what runs again."""
    found = scan_saved(store, sizes, input_hash_of, independent, rerun_errors)
    if found.changed:
        raise ResumeMismatchError(
            f"results_path {str(store.path)!r} holds rows made from other inputs for "
            f"{len(found.changed)} of {len(sizes)} examples (first: example_id {found.changed[0]!r}: its prompt, "
            f"answer, info or task differ). {_FRESH_RUN_HINT}"
        )
    return found, rewrite_saved(store, sizes, found, on_kept)


def _count_units(plan: InputPlan, saved: SavedRows, independent: bool) -> int:
    if independent:
        return plan.num_rollouts - saved.num_kept
    return sum(1 for eid in plan if saved.keep.get(eid, 0).bit_count() < plan[eid])


def _note_interrupt(stats: RunStats, store: ResultsStore | None, sizes: Mapping[Any, int]) -> None:
    """Leave the one-line note the sync bridge shows: what is saved, how to resume. Saved rows
    are counted on disk: a group written as the interrupt arrived is saved though not counted."""
    saved = stats.done
    if store is not None:
        seen: dict[Any, int] = {}  # example_id -> a bit per saved rollout index
        for r in iter_rows(store.results_file):
            eid, idx = r.get("example_id"), r.get("rollout_index", 0)
            if eid in sizes and isinstance(idx, int) and idx >= 0:
                seen[eid] = seen.get(eid, 0) | 1 << idx
        saved = sum(bits.bit_count() for bits in seen.values())
    record_note(
        interrupt_note(saved, stats.total, saved - stats.resumed, store.path if store else None)
    )


async def _tick(stats: RunStats, events: CallbackSet) -> None:
    while True:
        await asyncio.sleep(TICK_SECONDS)
        events.on_update(stats)


_FRESH_RUN_HINT = (
    "To start a fresh run, pass another results_path (or delete this one); "
    "to resume it, call again with the saved arguments (metadata.json)."
)


def _client_change_refusal(path: Any, change: str) -> str:
    return (
        f"results_path {str(path)!r} was made by another model client: {change}. Rows this call runs "
        "would come from another model than the saved ones. To go on with this client anyway, pass "
        "allow_client_change=True (vf-lite eval: --allow-client-change): each row then records the session "
        "that made it (row['session'], an index into metadata['sessions']). Or start a fresh run: pass "
        "another results_path."
    )


def _check_same_run(
    saved: RunMetadata, metadata: RunMetadata, path: Any, env: RunnableEnvironment
) -> None:
    """Refuse to resume a results directory that holds another run, naming what differs."""
    diff = fingerprint_diff(saved.get(FINGERPRINT_KEY), metadata[FINGERPRINT_KEY])
    if diff:
        hint = rescore_advice(path, env) if only_rubric_changed(diff) else _FRESH_RUN_HINT
        raise ResumeMismatchError(
            f"results_path {str(path)!r} holds a different run:\n  "
            + "\n  ".join(diff)
            + f"\n{hint}"
        )


def _report_crashes(rows: list[Row], reported: set[str], on_log: Any) -> None:
    """Say once per endpoint, as it happens, that its model server died and how to fix it."""
    for r in rows:
        err = r.get("error")
        if not err or err.get("category") != "model_crashed":
            continue
        endpoint = str(r.get("endpoint") or "")
        if endpoint not in reported:
            reported.add(endpoint)
            on_log(err.get("message", "").splitlines()[0])


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


def _sort_key(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, (int, float)) else (1, str(value))


def _version() -> str:
    from verifiers_lite.version import __version__

    return __version__
