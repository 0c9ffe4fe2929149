"""One run's ledger: its directory opened (fresh or resumed), its rows appended, its live
summary, its metadata finished.

A run opens one :class:`RunLedger`, which refuses a directory holding another run before
anything on disk changes and keeps what earlier sessions saved; each finished unit's rows are
:meth:`RunLedger.append`-ed — stamped (input hash, attempts, session, cost), written durably
(results.jsonl, its index, tracebacks.jsonl) or kept in memory, counted in the one
:class:`~verifiers_lite.core.summary.RunSummary` the displays read, and reported; and
:meth:`RunLedger.finish` writes ``metadata.json`` whatever the way the run ended.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from verifiers_lite._util.interrupt import interrupt_note, record_note
from verifiers_lite.clients.cache import CacheMeter
from verifiers_lite.core.errors import ResumeMismatchError
from verifiers_lite.core.model_client import ModelClientLike
from verifiers_lite.core.pricing import (
    ModelPrice,
    declared_price,
    price_record,
    resolve_price,
    usage_cost,
)
from verifiers_lite.core.progress import (
    TICK_SECONDS,
    CallbackSet,
    RunStats,
    reset_rollout_listener,
    rollout_listener,
    set_rollout_listener,
)
from verifiers_lite.core.records import Row
from verifiers_lite.core.summary import RunSummary
from verifiers_lite.ledger.manifest import (
    add_served_models,
    add_system_fingerprints,
    client_change,
    client_endpoints,
    endpoint_entries,
    refuse_unserved,
    run_manifest,
)
from verifiers_lite.ledger.opening import (
    RunFacts,
    check_same_run,
    client_change_refusal,
    keep_saved,
    run_metadata,
)
from verifiers_lite.ledger.resume import SavedRows
from verifiers_lite.results.disk_rows import DiskRows
from verifiers_lite.results.fingerprint import INPUT_HASH_KEY
from verifiers_lite.results.outputs import GenerateOutputs
from verifiers_lite.results.run_metadata import RunMetadata, add_summary
from verifiers_lite.results.sessions import (
    begin_session,
    current_session,
    earlier_sessions,
    end_session,
)
from verifiers_lite.results.store import ResultsStore, iter_rows

if TYPE_CHECKING:
    from verifiers_lite.core.runnable import RunnableEnvironment


class RunLedger:
    """The books of one call of ``generate``: where its rows go, what it counts, what it says."""

    def __init__(
        self,
        env: RunnableEnvironment,
        facts: RunFacts,
        client: ModelClientLike,
        *,
        prices: Any = None,
        fsync: bool = True,
        cache_meter: CacheMeter | None = None,
        events: CallbackSet | None = None,
    ) -> None:
        self.env, self.model = env, facts.model
        self.metadata = run_metadata(env, facts)
        self.price: ModelPrice | None
        self.price, source = resolve_price(facts.model, prices, declared_price(client))
        self.metadata["pricing"] = price_record(facts.model, self.price, source)
        # known before any request: a resume checks it
        self.client, self.client_endpoints = client, client_endpoints(client)
        manifest = {
            **run_manifest(env, self.metadata["library_version"]),
            "endpoints": self.client_endpoints,
        }
        begin_session(self.metadata, [], time.time(), manifest)
        path = facts.results_path
        self.store = ResultsStore(path, fsync=fsync) if path else None
        # The run's one summary, fed as groups finish: the live displays and metadata.json read it.
        self.stats = RunStats(facts.num_rollouts, RunSummary(env.pass_criterion))
        self.rows: list[Row] | None = None if self.store is not None else []  # no store: memory
        self.cache_meter, self.events = cache_meter, events or CallbackSet([])
        self.observers: list[Callable[[list[Row]], None]] = []  # told of every row counted
        self.saved = SavedRows(True)  # nothing saved yet
        self.builds: dict[str, None] = {}  # the system_fingerprints the server returned, in order
        self.served: dict[str, None] = {}  # models that answered other than the one asked
        self.prior_attempts: dict[tuple[Any, int], int] = {}
        self.crashed_endpoints: set[str] = set()
        self.endpoint_list: list[dict[str, Any]] = []
        self.session = 0  # this session's index in metadata["sessions"] (set again on resume)
        self._ticker: asyncio.Future[None] | None = None

    # -- opening -------------------------------------------------------------------------------

    async def check_model(self) -> None:
        """Refuse a model name an endpoint does not serve, before any chat request: each
        endpoint's ``/models``, asked once (and kept for the session's manifest)."""
        self.endpoint_list = await endpoint_entries(self.client, self.model)
        refuse_unserved(self.endpoint_list, self.model)

    def open(
        self,
        sizes: Mapping[Any, int],
        input_hash_of: Callable[[Any], str],
        independent: bool,
        rerun_errors: bool,
        allow_client_change: bool,
    ) -> SavedRows:
        """Open the run directory: keep what earlier sessions of this run saved (counted as
        resumed), refusing a directory that holds another run; returns what is kept."""
        self.saved = SavedRows(rerun_errors)
        store = self.store

        def check(saved: RunMetadata) -> None:
            assert store is not None
            self._check_saved(saved, store, allow_client_change)

        if store is not None and store.open(self.metadata, check):
            self.saved, self.prior_attempts = keep_saved(
                store, sizes, input_hash_of, independent, rerun_errors, self._count_kept
            )
        self.session, _ = current_session(self.metadata)
        return self.saved

    def _check_saved(
        self, saved: RunMetadata, store: ResultsStore, allow_client_change: bool
    ) -> None:
        """The saved metadata, before anything on disk changes: refuse another run's directory,
        or this run resumed by another model client unless the caller allows it; carry the
        saved sessions over to this one."""
        check_same_run(saved, self.metadata, store.path, self.env)
        earlier = earlier_sessions(saved, store.results_file)
        change = client_change(earlier, self.client_endpoints)
        if change is not None and not allow_client_change:
            raise ResumeMismatchError(client_change_refusal(store.path, change))
        _, current = current_session(self.metadata)
        begin_session(self.metadata, earlier, current["start_time"], current["manifest"])

    def _count_kept(self, row: Row) -> None:
        for observe in self.observers:
            observe([row])
        self.stats.add([row], resumed=True)

    # -- the live summary ----------------------------------------------------------------------

    def start_live(self) -> None:
        """Tell the displays the run starts; from now each rollout's start and end moves their
        counts, and a clock tick keeps elapsed/ETA/rate moving while nothing finishes."""
        if self.cache_meter is not None:
            self.stats.cache_hits = 0
        self.events.on_start(self.stats)
        self._listening = set_rollout_listener(rollout_listener(self.stats, self.events.on_update))
        self._ticker = asyncio.ensure_future(_tick(self.stats, self.events))

    async def _stop_live(self) -> None:
        if self._ticker is None:
            return
        self._ticker.cancel()
        await asyncio.gather(self._ticker, return_exceptions=True)
        reset_rollout_listener(self._listening)
        self.stats.in_flight = 0
        # the last live update shows nothing in flight (updates are throttled)
        self.events.on_update(self.stats)

    # -- appending -----------------------------------------------------------------------------

    async def append(self, rows: list[Row], input_hash: str) -> None:
        """A finished unit's rows: stamped, saved (or kept in memory), counted, reported."""
        session, price, prior = self.session, self.price, self.prior_attempts
        for r in rows:
            r[INPUT_HASH_KEY] = input_hash
            r["attempts"] = prior.get((r.get("example_id"), r.get("rollout_index", 0)), 0) + 1
            r["session"] = session
            r["cost_usd"] = usage_cost(r.get("usage") or {}, price)
        if self.store is not None:
            await self.store.append_group_async(rows)
        else:
            assert self.rows is not None
            self.rows.extend(rows)
        for observe in self.observers:
            observe(rows)
        add_system_fingerprints(self.builds, rows)
        add_served_models(self.served, rows)
        self.stats.add(rows)
        if self.cache_meter is not None:
            self.stats.cache_hits, self.stats.cache_misses = self.cache_meter.counts()
        self.events.on_progress(self.stats, rows)
        _report_crashes(rows, self.crashed_endpoints, self.events.on_log)

    # -- finishing -----------------------------------------------------------------------------

    async def finish(
        self,
        status: str,
        interrupted: bool,
        summaries: Iterable[Mapping[str, Any]] = (),
        sizes: Mapping[Any, int] | None = None,
    ) -> None:
        """However the run ended: stop the live display, write the metadata (``summaries``:
        the executor's and the run's other figures, merged in), leave the interrupt note."""
        await self._stop_live()
        if self.rows is not None:
            self.rows.sort(key=lambda r: (_sort_key(r["example_id"]), r.get("rollout_index", 0)))
        self._complete_metadata(status, summaries)
        if self.store is not None:
            self.store.write_metadata(self.metadata)
            self.store.close()
        if interrupted:
            _note_interrupt(self.stats, self.store, sizes or {})

    def _complete_metadata(self, status: str, summaries: Iterable[Mapping[str, Any]]) -> None:
        metadata = self.metadata
        if self.cache_meter is not None:
            metadata["cache"] = self.cache_meter.summary()
        _, session = current_session(metadata)
        session["manifest"]["endpoints"] = self.endpoint_list
        # of the rows this session made
        session["manifest"]["system_fingerprints"] = list(self.builds)
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
        for summary in summaries:
            add_summary(metadata, summary)
        add_summary(metadata, self.stats.summary.summary())

    def outputs(self, example_ids: Any) -> GenerateOutputs:
        """The run's rows (in memory, or read from results.jsonl on demand) and metadata."""
        if self.store is None:
            assert self.rows is not None
            return GenerateOutputs(rows=self.rows, metadata=self.metadata)
        on_disk = DiskRows.open(self.store.results_file, example_ids=example_ids, sort=True)
        assert on_disk is not None  # every row the store wrote has integer ids
        return GenerateOutputs(rows=on_disk, metadata=self.metadata)


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


def _sort_key(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, (int, float)) else (1, str(value))
