"""The executor's path to a rollout server: one Environment rollout sent, its State back
(unscored, not cleaned up), batched with the rest of the event-loop turn where the server can."""

from __future__ import annotations

import uuid
from typing import Any, cast

from verifiers_lite.core.records import ErrorCategory, ErrorRecord, RolloutInput, State
from verifiers_lite.server.protocol import core_category

from .batching import ItemReply
from .connection import RolloutConnection, SingleRoute, request_body, validated
from .polling import TERMINAL


async def run_state(
    conn: RolloutConnection,
    input: RolloutInput,
    *,
    chat_completions_url: str,
    llm_api_key: str | None,
    model: str,
    sampling_args: dict[str, Any] | None,
) -> State:
    """Run one Environment rollout on ``conn``'s server; its State, unscored and not cleaned
    up. A failed rollout keeps its own ``error``; one that ended without a state comes back as
    a state built from ``input`` whose error says why."""
    body = request_body(
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
    data = await _run_together(conn, body) if conn.batch.available is not False else None
    if data is None:
        data = await conn.run_raw(body, streamed=True)
    sample = data.get("sample")
    status = str(data.get("status"))
    state: State
    if isinstance(sample, dict):
        state = cast(State, sample)  # the server's own serialised state: no second validation
        state.setdefault("timing", {})
    else:
        result = validated(data)
        status = result.status.value
        state = failure_state(input, model, None)
    if status != "success" and not state.get("error"):
        state["error"] = _row_error(status, data.get("err_category"), data.get("err_message"))
        state["stop_reason"] = "error"
    return state


async def _run_together(conn: RolloutConnection, body: dict[str, Any]) -> dict[str, Any] | None:
    """One rollout through the batched routes: admitted with whatever else this client sends
    in the same event-loop turn, its result read off that admission's response as it ends
    (over a transport that streams lines), else long-polled together with the others. None:
    the server has no batched routes (nothing was admitted)."""
    try:
        accepted, sent_at, reply = await conn.admit(
            body, body["rollout_id"], batched=True, streamed=True
        )
    except SingleRoute:
        return None
    lease_deadline = sent_at + accepted.polling_lease_timeout_sec
    line = reply.result_line if isinstance(reply, ItemReply) else None
    if line is not None:
        waited_from = conn.clock.now()
        data = await line
        if data is not None:
            lease_deadline = waited_from + accepted.polling_lease_timeout_sec  # renewed since
            if data["status"] in TERMINAL:
                return data
    return await conn.poll_together(accepted, lease_deadline)


def _row_error(status: str, err_category: Any, err_message: Any) -> ErrorRecord:
    # The wire's category stays in the message; the row gets the core category it stands for.
    category: ErrorCategory
    if status == "cancelled":
        category = "cancelled"
    else:
        # The table names only core categories.
        category = cast(
            ErrorCategory,
            core_category(
                None if err_category is None else str(err_category),
                None if err_message is None else str(err_message),
            ),
        )
    reason = f"{err_category}: {err_message}" if err_category else str(err_message or status)
    return {"category": category, "message": reason}


def failure_state(input: RolloutInput, model: str, error: ErrorRecord | None) -> State:
    """The State of a rollout that produced none on the server: ``input`` laid out, unscored,
    with ``error`` (None: the caller fills it in)."""
    from verifiers_lite.core.state import new_state

    state = new_state(input, model=model, sampling_args=None, tool_defs=None)
    state["error"], state["stop_reason"] = error, "error" if error else None
    return state
