"""``RolloutClient``: submit rollouts to a rollout server and poll their results."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from typing import Any, cast

from verifiers_lite._util.extras import missing_server_dependency
from verifiers_lite.core.records import RolloutInput, State
from verifiers_lite.server.protocol import RolloutAccepted, RolloutResultResponse

from .connection import RolloutConnection, SingleRoute, request_body, validated
from .errors import RolloutProtocolError
from .handle import RolloutHandle
from .polling import detail
from .state_runs import run_state
from .statuses import (
    CANCEL_TIMEOUT_SEC,
    WAIT_IDLE_RETRY_STATUSES,
    Clock,
    SystemClock,
)
from .transport import AiohttpTransport, HttpxTransport, Transport

try:
    import httpx
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise missing_server_dependency(exc) from exc


def _finite_positive(name: str, value: float | None) -> None:
    if value is not None and (not math.isfinite(value) or value <= 0):
        raise ValueError(f"{name} must be finite and positive, got {value!r}")


class RolloutClient:
    """Client of a rollout server (``create_rollout_server``).

    ``admission_timeout_sec`` bounds the whole admission (requests and 429 waits), not the
    rollout. ``api_key`` authenticates to the rollout server (``llm_api_key`` of a request is
    for the model endpoint). Redirects are never followed, so the key never leaves ``url``.
    ``clock`` lets tests replace time and sleeping. ``transport``: an HTTP transport of your own
    (any object with :class:`Transport`'s methods and its declared ``streams_lines``), used
    instead of ``http_client`` or the default one, and closed with this client.
    """

    def __init__(
        self,
        url: str,
        http_client: httpx.AsyncClient | None = None,
        admission_timeout_sec: float | None = None,
        api_key: str | None = None,
        *,
        clock: Clock | None = None,
        request_grace_sec: float = 10.0,
        transport: Transport | None = None,
    ) -> None:
        if api_key is not None and (not isinstance(api_key, str) or not api_key.strip()):
            raise ValueError("api_key must be a non-empty string (or None)")
        _finite_positive("admission_timeout_sec", admission_timeout_sec)
        if transport is not None and http_client is not None:
            raise ValueError("pass http_client or transport, not both")
        self.url = url.rstrip("/")
        self.admission_timeout_sec = admission_timeout_sec
        self.clock: Clock = clock or SystemClock()
        # A user's httpx client is used as is; otherwise the lean aiohttp transport.
        chosen: Transport = transport or (
            HttpxTransport(http_client) if http_client is not None else AiohttpTransport()
        )
        auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._conn = RolloutConnection(
            self.url, chosen, auth, self.clock, admission_timeout_sec, request_grace_sec
        )

    async def __aenter__(self) -> RolloutClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP client if this RolloutClient created it."""
        await self._conn.aclose()

    # -- one rollout -------------------------------------------------------------------------

    async def run_rollout_async(
        self,
        initial_messages: list[dict[str, Any]],
        chat_completions_url: str,
        rollout_id: str,
        llm_api_key: str | None = None,
        label: str | None = None,
        grade: bool = True,
        metadata: dict[str, Any] | None = None,
        agent_timeout_sec: float | None = None,
        grader_timeout_sec: float | None = None,
        extra_fields: dict[str, Any] | None = None,
    ) -> RolloutHandle:
        """Submit one rollout; return a polling :class:`RolloutHandle` once admitted.

        The handle observes every stage (queued, running, grading) with one long poll each.
        ``extra_fields`` is free-form data for the rollout (``info["extra_fields"]`` on a
        ``vf-lite serve`` server).
        """
        body = request_body(
            initial_messages,
            chat_completions_url,
            rollout_id,
            llm_api_key,
            label,
            grade,
            metadata,
            agent_timeout_sec,
            grader_timeout_sec,
            extra_fields,
        )
        accepted, sent_at, _ = await self._conn.admit(body, rollout_id)
        lease_deadline = sent_at + accepted.polling_lease_timeout_sec
        return RolloutHandle(accepted, lambda h: self._poll(h, lease_deadline))

    async def run_rollout(self, *args: Any, **kwargs: Any) -> RolloutResultResponse:
        """Submit one rollout and wait for its terminal :class:`RolloutResultResponse`.

        Nobody can wait for intermediate stages here, so it polls with ``wait=terminal``: one
        result request per rollout (plus one per ``result_wait_timeout_sec`` it runs).
        """
        return validated(await self._conn.run_raw(request_body(*args, **kwargs)))

    async def _poll(self, handle: RolloutHandle, lease_deadline: float) -> RolloutResultResponse:
        def observe(data: dict[str, Any]) -> None:
            handle._observe(validated(data))

        data = await self._conn.poll_raw(handle.accepted, lease_deadline, False, observe)
        return handle.latest_result or validated(data)

    # -- many rollouts at once (the batched routes) ------------------------------------------

    async def admit_many(
        self, requests: Sequence[Mapping[str, Any]]
    ) -> list[RolloutAccepted | Exception]:
        """Submit many rollouts together: one ``POST /rollouts`` (split past 10,000 rollouts or
        a MiB of bodies). Each item is answered in order: its :class:`RolloutAccepted`, or the
        exception submitting it alone would have raised (a 429 is retried as for one, within
        ``admission_timeout_sec``). A server without the batched routes gets one ``POST
        /rollout`` each. Request bodies are those of ``POST /rollout``."""
        bodies = [dict(r) for r in requests]
        missing = [i for i, b in enumerate(bodies) if not isinstance(b.get("rollout_id"), str)]
        if missing:
            raise ValueError(f"admit_many: request {missing[0]} has no string 'rollout_id'")
        answers = await asyncio.gather(
            *(self._admit_one(b) for b in bodies), return_exceptions=True
        )
        return [a if isinstance(a, RolloutAccepted) else cast(Exception, a) for a in answers]

    async def _admit_one(self, body: dict[str, Any]) -> RolloutAccepted:
        if self._conn.batch.available is not False:
            try:
                return (await self._conn.admit(body, body["rollout_id"], batched=True))[0]
            except SingleRoute:
                pass
        return (await self._conn.admit(body, body["rollout_id"]))[0]

    async def wait_many(
        self, accepted: Sequence[RolloutAccepted]
    ) -> list[RolloutResultResponse | Exception]:
        """The terminal result of each admitted rollout, in order (or the exception polling it
        alone would have raised). Pending rollouts are long-polled together (``POST
        /rollouts/results``, with the single poll's retry schedules); call it soon after
        admission, since each lease is taken to start now."""
        now = self.clock.now()

        async def one(a: RolloutAccepted) -> RolloutResultResponse:
            return validated(await self._conn.poll_together(a, now + a.polling_lease_timeout_sec))

        answers = await asyncio.gather(*(one(a) for a in accepted), return_exceptions=True)
        return [a if isinstance(a, RolloutResultResponse) else cast(Exception, a) for a in answers]

    # -- cancel, health, idle ----------------------------------------------------------------

    async def cancel_rollout(self, rollout_id: str) -> str:
        """Ask the server to cancel one rollout (bounded to 5 s); returns its disposition."""
        try:
            async with asyncio.timeout(CANCEL_TIMEOUT_SEC):
                resp = await self._conn.send(
                    "POST",
                    "/rollout/cancel",
                    json={"ids": [rollout_id]},
                    timeout=CANCEL_TIMEOUT_SEC,
                )
        except httpx.TimeoutException as exc:
            raise TimeoutError(f"cancel of {rollout_id!r} timed out") from exc
        if resp.status_code != 200:
            raise RolloutProtocolError(
                f"cancel of {rollout_id!r}: HTTP {resp.status_code}: {detail(resp)}",
                status_code=resp.status_code,
            )
        return str(resp.json()["dispositions"].get(rollout_id, "not_found"))

    async def health(self) -> dict[str, Any]:
        """The server's ``GET /health`` payload."""
        resp = await self._conn.send("GET", "/health", timeout=10.0)
        if resp.status_code != 200:
            raise RolloutProtocolError(
                f"health: HTTP {resp.status_code}: {detail(resp)}", status_code=resp.status_code
            )
        return dict(resp.json())

    async def wait_idle(
        self, timeout_sec: float = 120, poll_interval_sec: float = 1, process_id: str | None = None
    ) -> dict[str, Any]:
        """Poll ``/health`` until no rollout is active; does not stop new admissions."""
        _finite_positive("timeout_sec", timeout_sec)
        _finite_positive("poll_interval_sec", poll_interval_sec)
        clock = self.clock
        deadline = clock.now() + timeout_sec
        expected = process_id
        while True:
            payload: dict[str, Any] | None = None
            try:
                resp = await self._conn.send(
                    "GET", "/health", timeout=max(0.05, min(10.0, deadline - clock.now()))
                )
                if resp.status_code == 200:
                    payload = dict(resp.json())
                elif resp.status_code not in WAIT_IDLE_RETRY_STATUSES:
                    raise RolloutProtocolError(
                        f"health: HTTP {resp.status_code}", status_code=resp.status_code
                    )
            except httpx.TransportError:
                payload = None
            if payload is not None:
                lifecycle = payload.get("lifecycle")
                if not isinstance(lifecycle, dict) or "active_rollouts" not in lifecycle:
                    raise RolloutProtocolError(
                        "server reports no lifecycle metadata", status_code=200
                    )
                pid = payload.get("process_id")
                if expected is not None and pid != expected:
                    raise RolloutProtocolError(
                        f"server process changed ({expected} -> {pid}): it restarted",
                        status_code=200,
                    )
                expected = pid
                if lifecycle["active_rollouts"] == 0:
                    return payload
            remaining = deadline - clock.now()
            if remaining <= 0:
                raise TimeoutError(f"server not idle after {timeout_sec}s")
            await clock.sleep(min(poll_interval_sec, remaining))

    # -- environment link (the executor's path: remote/state_runs.py) -------------------------

    async def run_state(
        self,
        input: RolloutInput,
        *,
        chat_completions_url: str,
        llm_api_key: str | None,
        model: str,
        sampling_args: dict[str, Any] | None,
    ) -> State:
        """Run one Environment rollout on the server; return its State, unscored and not
        cleaned up: the caller scores it with the environment's rubric, then runs its cleanup.

        Rollouts this client is asked for in the same event-loop turn are admitted in one ``POST
        /rollouts``; over a transport that streams lines (the default) each state comes back on
        that response as its rollout ends, and what a stream does not bring is long-polled
        together (``POST /rollouts/results``). Against a server without those routes, one ``POST
        /rollout`` each, the state again on the admission response (polled if it does not come).
        Every column of ``input`` travels with it. A failed rollout keeps its own ``error``;
        one that ended without a state (cancelled, lease expired, refused) comes back as a
        state built from ``input`` whose error says why.
        """
        return await run_state(
            self._conn,
            input,
            chat_completions_url=chat_completions_url,
            llm_api_key=llm_api_key,
            model=model,
            sampling_args=sampling_args,
        )
