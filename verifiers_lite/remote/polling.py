"""The result long-poll loop of :class:`RolloutClient`, with its retry schedules and lease bound."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from verifiers_lite._util.extras import missing_server_dependency
from verifiers_lite.clients.retry import RESULT_POLL_GATEWAY, RESULT_POLL_NETWORK
from verifiers_lite.server.protocol import LEASE_HEADER, RolloutAccepted, RolloutStatus

from .errors import RolloutProtocolError
from .statuses import GATEWAY_STATUSES, Clock
from .transport import Reply

try:
    import httpx
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise missing_server_dependency(exc) from exc

# Failures of one result GET that are retried on the network schedule; connect, write and
# pool timeouts are not in this list and fail at once. Both transports raise httpx's classes.
NETWORK_ERRORS = (httpx.RemoteProtocolError, httpx.NetworkError, httpx.ReadTimeout)
FATAL_TIMEOUTS = (httpx.ConnectTimeout, httpx.WriteTimeout, httpx.PoolTimeout)
_STATUSES = frozenset(s.value for s in RolloutStatus)
TERMINAL = frozenset(s.value for s in RolloutStatus if s.terminal)

Send = Callable[..., Awaitable[Reply]]


def detail(resp: Reply) -> str:
    """The server's error detail (or body), shortened for an exception message."""
    try:
        return str(resp.json().get("detail", resp.text))[:500]
    except Exception:
        return resp.text[:500]


def checked_result(resp: Reply) -> dict[str, Any]:
    """A result answer's JSON, structurally checked (a full validation per poll is left to
    those who need it)."""
    try:
        data = resp.json()
    except ValueError as exc:
        raise RolloutProtocolError(f"invalid result response: {exc}", status_code=200) from exc
    if not isinstance(data, dict) or data.get("status") not in _STATUSES:
        raise RolloutProtocolError(f"invalid result response: {str(data)[:200]}", status_code=200)
    return data


async def poll_result(
    send: Send,
    clock: Clock,
    accepted: RolloutAccepted,
    lease_deadline: float,
    grace_sec: float,
    *,
    terminal_only: bool,
    observe: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Poll until the rollout is terminal; return the terminal result as a JSON dict.

    ``terminal_only`` asks the server to answer only at the end (``wait=terminal``), so a
    rollout costs one poll unless it outlives ``result_wait_timeout_sec``; otherwise every
    stage change is observed (``observe`` sees each answer).
    """
    rollout_id = accepted.rollout_id
    lease_sec = accepted.polling_lease_timeout_sec
    full_request = accepted.result_wait_timeout_sec + grace_sec
    path = f"/rollout/{rollout_id}/result"
    headers = {LEASE_HEADER: accepted.polling_lease_token}
    # The admission answer is the first observation: wait only for changes from it.
    seen: str = accepted.status.value
    while True:
        params = {"wait": "terminal"} if terminal_only else {"seen": seen}
        resp, sent_at = await _one_poll(
            send, clock, path, headers, params, full_request, rollout_id, lease_deadline
        )
        if resp.status_code != 200:
            raise RolloutProtocolError(
                f"result poll of {rollout_id!r}: HTTP {resp.status_code}: {detail(resp)}",
                status_code=resp.status_code,
            )
        data = checked_result(resp)
        lease_deadline = sent_at + lease_sec  # only a successful poll confirms the lease
        if observe is not None:
            observe(data)
        if data["status"] in TERMINAL:
            return data
        seen = data["status"]


async def _one_poll(
    send: Send,
    clock: Clock,
    path: str,
    headers: dict[str, str],
    params: dict[str, str],
    full_request: float,
    rollout_id: str,
    lease_deadline: float,
) -> tuple[Any, float]:
    """One answered poll and when it was sent: network errors and gateway statuses are retried
    on their schedules while a retry can still finish before the lease runs out."""
    network_retries, gateway_retries = (
        RESULT_POLL_NETWORK.retries(),
        RESULT_POLL_GATEWAY.retries(),
    )
    while True:
        sent_at = clock.now()
        try:
            resp = await send(
                "GET",
                path,
                headers=headers,
                timeout=full_request,
                shard_key=rollout_id,
                params=params,
            )
        except FATAL_TIMEOUTS:
            raise
        except NETWORK_ERRORS:
            # a retry only if it can finish before the lease runs out
            delay = network_retries.next_delay(
                now=clock.now(), deadline=lease_deadline, then=full_request
            )
            if delay is None:
                raise
            await clock.sleep(delay)
            continue
        if resp.status_code in GATEWAY_STATUSES:
            delay = gateway_retries.next_delay(
                now=clock.now(), deadline=lease_deadline, then=full_request
            )
            if delay is None:
                raise RolloutProtocolError(
                    f"result poll of {rollout_id!r} kept failing: "
                    f"HTTP {resp.status_code} after {gateway_retries.done} retries",
                    status_code=resp.status_code,
                )
            await clock.sleep(delay)
            continue
        return resp, sent_at
