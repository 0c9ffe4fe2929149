"""``RolloutConnection``: one rollout server reached over one transport: requests, admission
(429s retried within a deadline), result polling. Both :class:`RolloutClient`'s API and the
executor's path (:mod:`verifiers_lite.remote.state_runs`) speak to a server through it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from verifiers_lite._util.errors import VerifiersError
from verifiers_lite._util.extras import missing_server_dependency
from verifiers_lite.clients.retry import ADMISSION_RETRY_AFTER, parse_retry_after
from verifiers_lite.server.protocol import RolloutAccepted, RolloutResultResponse

from .batching import BatchRoutes
from .errors import RolloutAdmissionTimeoutError, RolloutProtocolError
from .polling import NETWORK_ERRORS, TERMINAL, checked_result, detail, poll_result
from .statuses import Clock
from .transport import LineStream, Reply, Transport

try:
    import httpx
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise missing_server_dependency(exc) from exc


class SingleRoute(VerifiersError):
    """The batched route cannot take this rollout (absent, or over the body limit)."""


class RolloutConnection:
    """One server at ``url``: ``auth`` headers on every request, ``admission_timeout_sec``
    bounding each admission, ``grace`` added to every long poll's wait."""

    def __init__(
        self,
        url: str,
        transport: Transport,
        auth: dict[str, str],
        clock: Clock,
        admission_timeout_sec: float | None,
        grace: float,
    ) -> None:
        self.url, self.transport, self.auth, self.clock = url, transport, auth, clock
        self.admission_timeout_sec, self.grace = admission_timeout_sec, grace
        # The transport declares whether results can come on the admission responses.
        lines = self.post_lines if transport.streams_lines else None
        self.batch = BatchRoutes(self.send, grace, lines)

    def send(
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
        return self.transport.request(
            method,
            self.url + path,
            headers={**self.auth, **headers} if headers else self.auth,
            timeout=timeout,
            connect=connect,
            params=params,
            json_body=json,
            shard_key=shard_key,
        )

    def post_lines(self, path: str, body: Any) -> Awaitable[Reply]:
        return self.transport.post_lines(self.url + path, headers=self.auth, json_body=body)

    # -- admission ---------------------------------------------------------------------------

    async def admit(
        self,
        body: dict[str, Any],
        rollout_id: str,
        *,
        streamed: bool = False,
        batched: bool = False,
    ) -> tuple[RolloutAccepted, float, Reply]:
        """Admit one rollout, retrying 429s within ``admission_timeout_sec``; returns the
        accepted answer, when it was sent, and the 202 reply. ``streamed``: the result asked for
        on the admission response (the reply is a :class:`LineStream` on the single route, an
        :class:`ItemReply` with a ``result_line`` on the batched one); ``batched``: with the
        rest of this turn's admissions."""
        clock = self.clock
        deadline = (
            None if self.admission_timeout_sec is None else clock.now() + self.admission_timeout_sec
        )
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
        self,
        body: dict[str, Any],
        rollout_id: str,
        remaining: float | None,
        streamed: bool,
        batched: bool,
    ) -> Awaitable[Reply]:
        if batched:
            sent: Awaitable[Reply] = self._admitted_together(body, streamed)
        elif streamed:
            sent = self.transport.post_lines(
                self.url + "/rollout",
                headers=self.auth,
                json_body=body,
                timeout=remaining,
                shard_key=rollout_id,
            )
        else:
            sent = self.send("POST", "/rollout", json=body, timeout=remaining, shard_key=rollout_id)
        return sent if remaining is None else asyncio.wait_for(sent, remaining)

    async def _admitted_together(self, body: dict[str, Any], streamed: bool) -> Reply:
        reply = await self.batch.admit(body, stream_result=streamed)
        if reply is None:
            raise SingleRoute
        return reply

    # -- results -----------------------------------------------------------------------------

    async def run_raw(self, body: dict[str, Any], *, streamed: bool = False) -> dict[str, Any]:
        """Admit one rollout and wait for its terminal result's JSON. ``streamed`` (a transport
        that streams lines only): the result is asked for on the admission response itself, one
        request per rollout; it polls as usual if the server does not stream or the stream breaks."""
        streams = streamed and self.transport.streams_lines
        accepted, sent_at, reply = await self.admit(body, body["rollout_id"], streamed=streams)
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
        return await self.poll_raw(accepted, lease_deadline, True)

    async def _streamed_result(
        self, stream: LineStream, accepted: RolloutAccepted
    ) -> dict[str, Any] | None:
        """The admission response's second line, or None if it did not come (poll instead)."""
        try:
            line = await stream.next_line(accepted.result_wait_timeout_sec + self.grace)
        except NETWORK_ERRORS:
            return None
        return checked_result(line) if line.content else None

    def poll_raw(
        self,
        accepted: RolloutAccepted,
        lease_deadline: float,
        terminal_only: bool,
        observe: Callable[[dict[str, Any]], None] | None = None,
    ) -> Awaitable[dict[str, Any]]:
        """The rollout's result polled (the loop itself lives in polling.py)."""
        return poll_result(
            self.send,
            self.clock,
            accepted,
            lease_deadline,
            self.grace,
            terminal_only=terminal_only,
            observe=observe,
        )

    def poll_together(
        self, accepted: RolloutAccepted, lease_deadline: float
    ) -> Awaitable[dict[str, Any]]:
        """The rollout's terminal result, long-polled with the others this client polls."""
        batch = self.batch

        async def send(method: str, path: str, **kwargs: Any) -> Reply:
            if batch.available is not False:
                reply = await batch.poll(accepted)
                if reply is not None:
                    return reply
            return await self.send(method, path, **kwargs)  # no batched route: the single poll

        return poll_result(
            send, self.clock, accepted, lease_deadline, self.grace, terminal_only=True
        )

    async def aclose(self) -> None:
        await self.transport.aclose()


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


def validated(data: dict[str, Any]) -> RolloutResultResponse:
    """A result's JSON as the wire type, or a :class:`RolloutProtocolError` saying why not."""
    try:
        return RolloutResultResponse.model_validate(data)
    except Exception as exc:
        raise RolloutProtocolError(f"invalid result response: {exc}", status_code=200) from exc


def request_body(
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
    """A ``POST /rollout`` body; the fields left None are left out."""
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
