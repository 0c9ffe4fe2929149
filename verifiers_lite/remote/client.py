"""``RolloutClient``: submit rollouts to a rollout server and poll their results."""

from __future__ import annotations

import asyncio
import math
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, cast

from verifiers_lite._util.extras import missing_server_dependency
from verifiers_lite.clients.retry import ADMISSION_RETRY_AFTER, parse_retry_after
from verifiers_lite.core.records import ErrorCategory, RolloutError, RolloutInput, State
from verifiers_lite.server.protocol import RolloutAccepted, RolloutResultResponse, core_category

from .batching import BatchRoutes, ItemReply
from .errors import RolloutAdmissionTimeoutError, RolloutProtocolError
from .handle import RolloutHandle
from .polling import NETWORK_ERRORS, TERMINAL, checked_result, detail, poll_result
from .statuses import (
    CANCEL_TIMEOUT_SEC,
    WAIT_IDLE_RETRY_STATUSES,
    Clock,
    SystemClock,
)
from .transport import AiohttpTransport, HttpxTransport, LineStream, Reply, Transport

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
        self.url = url.rstrip("/")
        self.admission_timeout_sec = admission_timeout_sec
        self.clock: Clock = clock or SystemClock()
        self._grace = request_grace_sec
        if transport is not None and http_client is not None:
            raise ValueError("pass http_client or transport, not both")
        # A user's httpx client is used as is; otherwise the lean aiohttp transport.
        self._transport: Transport = transport or (
            HttpxTransport(http_client) if http_client is not None else AiohttpTransport()
        )
        self._auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        lines = self._post_lines if self._transport.streams_lines else None
        self._batch = BatchRoutes(self._send, request_grace_sec, lines)

    async def __aenter__(self) -> RolloutClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP client if this RolloutClient created it."""
        await self._transport.aclose()

    def _send(
        self,
        method: str,
        path: str,
        *,
        timeout: float | None = None,
        connect: float | None = None,
        shard_key: str | None = None,
        headers: dict[str, str] | None = None,
        params: dict[str, str] | None = None,
        json: Any = None,
    ) -> Awaitable[Reply]:
        return self._transport.request(
            method, self.url + path, headers={**self._auth, **headers} if headers else self._auth,
            timeout=timeout, connect=connect, params=params, json_body=json, shard_key=shard_key,
        )

    def _post_lines(self, path: str, body: Any) -> Awaitable[Reply]:
        return self._transport.post_lines(self.url + path, headers=self._auth, json_body=body)

    # -- admission ---------------------------------------------------------------------------

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
        body = _request_body(
            initial_messages, chat_completions_url, rollout_id, llm_api_key, label, grade,
            metadata, agent_timeout_sec, grader_timeout_sec, extra_fields,
        )
        accepted, sent_at, _ = await self._admit(body, rollout_id)
        lease_deadline = sent_at + accepted.polling_lease_timeout_sec
        return RolloutHandle(accepted, lambda h: self._poll(h, lease_deadline))

    async def run_rollout(self, *args: Any, **kwargs: Any) -> RolloutResultResponse:
        """Submit one rollout and wait for its terminal :class:`RolloutResultResponse`.

        Nobody can wait for intermediate stages here, so it polls with ``wait=terminal``: one
        result request per rollout (plus one per ``result_wait_timeout_sec`` it runs).
        """
        return _validated(await self._run_raw(_request_body(*args, **kwargs)))

    async def _run_raw(self, body: dict[str, Any], *, streamed: bool = False) -> dict[str, Any]:
        # ``streamed`` (lean transport only): the result is asked for on the admission response
        # itself, one request per rollout; it polls as usual if the server does not stream or
        # the stream breaks.
        streams = streamed and self._transport.streams_lines
        accepted, sent_at, reply = await self._admit(body, body["rollout_id"], streamed=streams)
        lease_deadline = sent_at + accepted.polling_lease_timeout_sec
        if isinstance(reply, LineStream):
            try:
                waited_from = self.clock.now()
                data = await self._streamed_result(reply, accepted)
            finally:
                reply.close()
            if data is not None:
                lease_deadline = waited_from + accepted.polling_lease_timeout_sec  # renewed since
                if data["status"] in TERMINAL:
                    return data
        return await self._poll_raw(accepted, lease_deadline, True)

    async def _streamed_result(self, stream: LineStream, accepted: RolloutAccepted) -> dict[str, Any] | None:
        """The admission response's second line, or None if it did not come (poll instead)."""
        try:
            line = await stream.next_line(accepted.result_wait_timeout_sec + self._grace)
        except NETWORK_ERRORS:
            return None
        return checked_result(line) if line.content else None

    async def _admit(
        self, body: dict[str, Any], rollout_id: str, *, streamed: bool = False, batched: bool = False
    ) -> tuple[RolloutAccepted, float, Reply]:
        """Admit one rollout, retrying 429s within ``admission_timeout_sec``; returns the
        accepted answer, when it was sent, and the 202 reply. ``streamed``: the result asked for
        on the admission response (the reply is a :class:`LineStream` on the single route, an
        :class:`ItemReply` with a ``result_line`` on the batched one); ``batched``: with the
        rest of this turn's admissions."""
        clock = self.clock
        deadline = None if self.admission_timeout_sec is None else clock.now() + self.admission_timeout_sec
        retries = ADMISSION_RETRY_AFTER.retries()
        while True:
            sent_at = clock.now()
            remaining = None if deadline is None else deadline - sent_at
            try:
                resp = await self._post_admission(body, rollout_id, remaining, streamed, batched)
            except (TimeoutError, httpx.TimeoutException) as exc:
                if deadline is None:
                    raise
                raise RolloutAdmissionTimeoutError(
                    f"admission of {rollout_id!r} hit admission_timeout_sec during a request; "
                    "the server may have admitted it (it is not cancelled automatically)",
                    rollout_id=rollout_id,
                    may_have_been_admitted=True,
                ) from exc
            if resp.status_code == 202:
                try:
                    return _accepted(resp, rollout_id), sent_at, resp
                except BaseException:
                    if isinstance(resp, LineStream):
                        resp.close()
                    raise
            if resp.status_code != 429:
                raise RolloutProtocolError(
                    f"admission of {rollout_id!r} failed: HTTP {resp.status_code}: {detail(resp)}",
                    status_code=resp.status_code,
                )
            asked = parse_retry_after(resp.headers.get("Retry-After"), _body_hint(resp))
            wait = retries.next_delay(asked, now=clock.now(), deadline=deadline)
            if wait is None:
                raise RolloutAdmissionTimeoutError(
                    f"admission of {rollout_id!r} still refused (HTTP 429) at admission_timeout_sec",
                    rollout_id=rollout_id,
                    may_have_been_admitted=False,
                )
            await clock.sleep(wait)

    def _post_admission(
        self, body: dict[str, Any], rollout_id: str, remaining: float | None, streamed: bool, batched: bool
    ) -> Awaitable[Reply]:
        if batched:
            sent: Awaitable[Reply] = self._admitted_together(body, streamed)
        elif streamed:
            sent = self._transport.post_lines(
                self.url + "/rollout", headers=self._auth, json_body=body, timeout=remaining,
                shard_key=rollout_id,
            )
        else:
            sent = self._send("POST", "/rollout", json=body, timeout=remaining, shard_key=rollout_id)
        return sent if remaining is None else asyncio.wait_for(sent, remaining)

    async def _admitted_together(self, body: dict[str, Any], streamed: bool) -> Reply:
        reply = await self._batch.admit(body, stream_result=streamed)
        if reply is None:
            raise _SingleRoute
        return reply

    # -- many rollouts at once (the batched routes) ------------------------------------------

    async def admit_many(self, requests: Sequence[Mapping[str, Any]]) -> list[RolloutAccepted | Exception]:
        """Submit many rollouts together: one ``POST /rollouts`` (split past 10,000 rollouts or
        a MiB of bodies). Each item is answered in order: its :class:`RolloutAccepted`, or the
        exception submitting it alone would have raised (a 429 is retried as for one, within
        ``admission_timeout_sec``). A server without the batched routes gets one ``POST
        /rollout`` each. Request bodies are those of ``POST /rollout``."""
        bodies = [dict(r) for r in requests]
        missing = [i for i, b in enumerate(bodies) if not isinstance(b.get("rollout_id"), str)]
        if missing:
            raise ValueError(f"admit_many: request {missing[0]} has no string 'rollout_id'")
        answers = await asyncio.gather(*(self._admit_one(b) for b in bodies), return_exceptions=True)
        return [a if isinstance(a, RolloutAccepted) else cast(Exception, a) for a in answers]

    async def _admit_one(self, body: dict[str, Any]) -> RolloutAccepted:
        if self._batch.available is not False:
            try:
                return (await self._admit(body, body["rollout_id"], batched=True))[0]
            except _SingleRoute:
                pass
        return (await self._admit(body, body["rollout_id"]))[0]

    async def wait_many(self, accepted: Sequence[RolloutAccepted]) -> list[RolloutResultResponse | Exception]:
        """The terminal result of each admitted rollout, in order (or the exception polling it
        alone would have raised). Pending rollouts are long-polled together (``POST
        /rollouts/results``, with the single poll's retry schedules); call it soon after
        admission, since each lease is taken to start now."""
        now = self.clock.now()

        async def one(a: RolloutAccepted) -> RolloutResultResponse:
            return _validated(await self._poll_together(a, now + a.polling_lease_timeout_sec))

        answers = await asyncio.gather(*(one(a) for a in accepted), return_exceptions=True)
        return [a if isinstance(a, RolloutResultResponse) else cast(Exception, a) for a in answers]

    async def _run_together(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """One rollout through the batched routes: admitted with whatever else this client sends
        in the same event-loop turn, its result read off that admission's response as it ends
        (over the default transport), else long-polled together with the others. None: the
        server has no batched routes (nothing was admitted)."""
        try:
            accepted, sent_at, reply = await self._admit(body, body["rollout_id"], batched=True, streamed=True)
        except _SingleRoute:
            return None
        lease_deadline = sent_at + accepted.polling_lease_timeout_sec
        line = reply.result_line if isinstance(reply, ItemReply) else None
        if line is not None:
            waited_from = self.clock.now()
            data = await line
            if data is not None:
                lease_deadline = waited_from + accepted.polling_lease_timeout_sec  # renewed since
                if data["status"] in TERMINAL:
                    return data
        return await self._poll_together(accepted, lease_deadline)

    def _poll_together(self, accepted: RolloutAccepted, lease_deadline: float) -> Awaitable[dict[str, Any]]:
        batch = self._batch

        async def send(method: str, path: str, **kwargs: Any) -> Reply:
            if batch.available is not False:
                reply = await batch.poll(accepted)
                if reply is not None:
                    return reply
            return await self._send(method, path, **kwargs)  # no batched route: the single poll

        return poll_result(send, self.clock, accepted, lease_deadline, self._grace, terminal_only=True)

    # -- result polling (the loop itself lives in polling.py) ---------------------------------

    def _poll_raw(
        self,
        accepted: RolloutAccepted,
        lease_deadline: float,
        terminal_only: bool,
        observe: Callable[[dict[str, Any]], None] | None = None,
    ) -> Awaitable[dict[str, Any]]:
        return poll_result(
            self._send, self.clock, accepted, lease_deadline, self._grace,
            terminal_only=terminal_only, observe=observe,
        )

    async def _poll(self, handle: RolloutHandle, lease_deadline: float) -> RolloutResultResponse:
        def observe(data: dict[str, Any]) -> None:
            handle._observe(_validated(data))

        data = await self._poll_raw(handle.accepted, lease_deadline, False, observe)
        return handle.latest_result or _validated(data)

    # -- cancel, health, idle ----------------------------------------------------------------

    async def cancel_rollout(self, rollout_id: str) -> str:
        """Ask the server to cancel one rollout (bounded to 5 s); returns its disposition."""
        try:
            async with asyncio.timeout(CANCEL_TIMEOUT_SEC):
                resp = await self._send(
                    "POST", "/rollout/cancel", json={"ids": [rollout_id]}, timeout=CANCEL_TIMEOUT_SEC
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
        resp = await self._send("GET", "/health", timeout=10.0)
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
                resp = await self._send(
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
                    raise RolloutProtocolError("server reports no lifecycle metadata", status_code=200)
                pid = payload.get("process_id")
                if expected is not None and pid != expected:
                    raise RolloutProtocolError(
                        f"server process changed ({expected} -> {pid}): it restarted", status_code=200
                    )
                expected = pid
                if lifecycle["active_rollouts"] == 0:
                    return payload
            remaining = deadline - clock.now()
            if remaining <= 0:
                raise TimeoutError(f"server not idle after {timeout_sec}s")
            await clock.sleep(min(poll_interval_sec, remaining))

    # -- environment link --------------------------------------------------------------------

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
        /rollouts``; over the default transport each state comes back on that response as its
        rollout ends, and what a stream does not bring is long-polled together (``POST
        /rollouts/results``). Against a server without those routes, one ``POST /rollout`` each,
        the state again on the admission response (polled if it does not come). Every column of
        ``input`` travels with it. A failed rollout keeps its own ``error``;
        one that ended without a state (cancelled, lease expired, refused) comes back as a
        state built from ``input`` whose error says why.
        """
        body = _request_body(
            initial_messages=list(input["prompt"]),
            chat_completions_url=chat_completions_url,
            rollout_id=uuid.uuid4().hex,
            llm_api_key=llm_api_key,
            grade=False,
            metadata={
                "model": model,
                "sampling_args": sampling_args,
                "return_state": True,
                "input": {k: v for k, v in input.items() if k != "prompt"},
            },
        )
        data = await self._run_together(body) if self._batch.available is not False else None
        if data is None:
            data = await self._run_raw(body, streamed=True)
        sample = data.get("sample")
        status = str(data.get("status"))
        state: State
        if isinstance(sample, dict):
            state = cast(State, sample)  # the server's own serialised state: no second validation
            state.setdefault("timing", {})
        else:
            result = _validated(data)
            status = result.status.value
            state = failure_state(input, model, None)
        if status != "success" and not state.get("error"):
            state["error"] = _row_error(status, data.get("err_category"), data.get("err_message"))
            state["stop_reason"] = "error"
        return state


class _SingleRoute(Exception):
    """The batched route cannot take this rollout (absent, or over the body limit)."""


def _body_hint(resp: Reply) -> Any:
    # The server's exact hint (Retry-After itself carries whole seconds only).
    try:
        data = resp.json()
    except ValueError:
        return None
    return data.get("retry_after_sec") if isinstance(data, dict) else None


def _accepted(resp: Reply, rollout_id: str) -> RolloutAccepted:
    try:
        accepted = RolloutAccepted.model_validate(resp.json())
    except Exception as exc:
        raise RolloutProtocolError(f"invalid admission response: {exc}", status_code=202) from exc
    if accepted.rollout_id != rollout_id:
        # Polling that id would follow (and renew the lease of) someone else's rollout.
        raise RolloutProtocolError(
            f"admission of {rollout_id!r} answered for {accepted.rollout_id!r}", status_code=202
        )
    return accepted


def _validated(data: dict[str, Any]) -> RolloutResultResponse:
    try:
        return RolloutResultResponse.model_validate(data)
    except Exception as exc:
        raise RolloutProtocolError(f"invalid result response: {exc}", status_code=200) from exc


def _request_body(
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
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "initial_messages": initial_messages,
        "rollout_id": rollout_id,
        "chat_completions_url": chat_completions_url,
        "grade": grade,
    }
    optional = {
        "llm_api_key": llm_api_key,
        "label": label,
        "metadata": metadata,
        "agent_timeout_sec": agent_timeout_sec,
        "grader_timeout_sec": grader_timeout_sec,
        "extra_fields": extra_fields,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    return body


def _row_error(status: str, err_category: Any, err_message: Any) -> RolloutError:
    # The wire's category stays in the message; the row gets the core category it stands for.
    category: ErrorCategory
    if status == "cancelled":
        category = "cancelled"
    else:
        # The table names only core categories.
        category = cast(ErrorCategory, core_category(None if err_category is None else str(err_category),
                                                     None if err_message is None else str(err_message)))
    reason = f"{err_category}: {err_message}" if err_category else str(err_message or status)
    return {"category": category, "message": reason}


def failure_state(input: RolloutInput, model: str, error: RolloutError | None) -> State:
    """The State of a rollout that produced none on the server: ``input`` laid out, unscored,
    with ``error`` (None: the caller fills it in)."""
    from verifiers_lite.core.state import new_state

    state = new_state(input, model=model, sampling_args=None, tool_defs=None)
    state["error"], state["stop_reason"] = error, "error" if error else None
    return state
