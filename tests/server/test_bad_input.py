"""Bad-input sweep (hypothesis) over a real uvicorn process: always a clear 4xx, never a 5xx."""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.server.helpers import ServerProc, start_server
from verifiers_lite.server.protocol import LEASE_HEADER, RolloutRequest

SWEEP = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VALID: dict[str, Any] = {
    "initial_messages": [{"role": "user", "content": "6*7?"}],
    "chat_completions_url": "http://127.0.0.1:9/v1",
    "label": "42",
}

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
not_a_str = json_values.filter(lambda v: not isinstance(v, str))
bad_ids = not_a_str | st.sampled_from(
    ["", ".", "..", "a/b", "a\\b", "a?b", "a#b", "a%2Fb", " a", "a ", "a\nb", "\x00", "x" * 257]
)
bad_timeouts = st.sampled_from(
    [math.nan, math.inf, -math.inf, 0, -1, -1e-9, "soon", [], {}, "1e999"]
)
# Values a bool field refuses even in pydantic's lax mode.
bad_bools = st.sampled_from(["maybe", 2, -1, 3.5, [], {}, "tru"])

# One invalid change to an otherwise valid admission body.
bad_rollout_changes = st.one_of(
    st.sampled_from(["initial_messages", "chat_completions_url", "rollout_id"]).map(
        lambda k: ("drop", k)
    ),
    bad_ids.map(lambda v: ("set", "rollout_id", v)),
    (not_a_str | st.just("")).map(lambda v: ("set", "chat_completions_url", v)),
    json_values.filter(lambda v: not isinstance(v, list)).map(
        lambda v: ("set", "initial_messages", v)
    ),
    st.lists(json_scalars, min_size=1, max_size=3).map(lambda v: ("set", "initial_messages", v)),
    bad_timeouts.map(lambda v: ("set", "agent_timeout_sec", v)),
    bad_timeouts.map(lambda v: ("set", "grader_timeout_sec", v)),
    st.sampled_from(["", "  ", "\t"]).map(lambda v: ("set", "llm_api_key", v)),
    (not_a_str.filter(lambda v: v is not None and not isinstance(v, dict))).map(
        lambda v: ("set", "metadata", v)
    ),
    bad_bools.map(lambda v: ("set", "grade", v)),
    st.text(min_size=1, max_size=10)
    .filter(lambda k: k not in RolloutRequest.model_fields)
    .map(lambda k: ("set", k, 1)),
)


@pytest.fixture(scope="module")
def http(server: ServerProc) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10) as client:
        yield client


def check_4xx(resp: httpx.Response) -> None:
    assert 400 <= resp.status_code < 500, (resp.status_code, resp.text[:300])
    assert "Traceback" not in resp.text and 'File "' not in resp.text
    assert "detail" in resp.json()  # a clear, machine-readable reason


def post_raw(
    http: httpx.Client, path: str, payload: Any, content_type: str = "application/json"
) -> httpx.Response:
    # json.dumps writes NaN/Infinity (which httpx's json= refuses) as a sloppy client would.
    return http.post(path, content=json.dumps(payload), headers={"content-type": content_type})


@SWEEP
@given(change=bad_rollout_changes)
def test_malformed_rollout_bodies_are_4xx(http: httpx.Client, change: tuple[Any, ...]) -> None:
    body = {**VALID, "rollout_id": uuid.uuid4().hex}
    if change[0] == "drop":
        body.pop(change[1])
    else:
        body[change[1]] = change[2]
    check_4xx(post_raw(http, "/rollout", body))


raw_bodies = st.one_of(
    st.binary(max_size=64).filter(lambda b: not b.strip().startswith(b"{")),
    st.sampled_from(
        [
            b"",
            b"{",
            b"{}",
            b"null",
            b"[]",
            b"42",
            b'"x"',
            b"{'a': 1}",
            b"\xff\xfe",
            b'{"rollout_id": 1e99999}',
            b'{"grade": ' + b"9" * 5000 + b"}",
        ]
    ),
    json_values.filter(lambda v: not isinstance(v, dict)).map(lambda v: json.dumps(v).encode()),
)
content_types = st.sampled_from(
    [
        "application/json",
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data",
        "",
    ]
)


@SWEEP
@given(
    raw=raw_bodies,
    ctype=content_types,
    path=st.sampled_from(["/rollout", "/rollout/cancel", "/rollouts", "/rollouts/results"]),
)
def test_non_json_and_wrong_content_types_are_4xx(
    http: httpx.Client, raw: bytes, ctype: str, path: str
) -> None:
    check_4xx(http.post(path, content=raw, headers={"content-type": ctype} if ctype else {}))


@SWEEP
@given(
    body=st.sampled_from([{"ids": None}, {"prefix": ""}, {"all": False}, {}]).flatmap(
        lambda base: st.one_of(
            st.just(base),
            not_a_str.filter(lambda v: not isinstance(v, list) and v is not None).map(
                lambda v: {"ids": v}
            ),
            st.lists(not_a_str.filter(lambda v: v is not None), min_size=1, max_size=3).map(
                lambda v: {"ids": v}
            ),
            bad_bools.map(lambda v: {"all": v}),
            st.just({"ids": ["a"], "prefix": "a"}),
            st.just({"prefix": "a", "all": True}),
            st.text(min_size=1, max_size=8)
            .filter(lambda k: k not in ("ids", "prefix", "all"))
            .map(lambda k: {"ids": ["a"], k: 1}),
        )
    )
)
def test_malformed_cancel_bodies_are_4xx(http: httpx.Client, body: dict[str, Any]) -> None:
    check_4xx(post_raw(http, "/rollout/cancel", body))


@SWEEP
@given(
    rollout_id=st.text(max_size=40),
    # Printable ASCII without edge spaces: the HTTP client itself refuses other header values.
    lease=st.none()
    | st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40).map(str.strip),
    params=st.dictionaries(
        st.sampled_from(["seen", "wait", "x"]), st.text(max_size=12), max_size=2
    ),
)
def test_odd_result_polls_are_4xx(
    http: httpx.Client, rollout_id: str, lease: str | None, params: dict[str, str]
) -> None:
    headers = {} if lease is None else {LEASE_HEADER: lease}
    resp = http.get(f"/rollout/{quote(rollout_id, safe='')}/result", headers=headers, params=params)
    check_4xx(resp)


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("path", ["/rollout", "/rollout/cancel", "/rollouts", "/rollouts/results"])
@pytest.mark.parametrize("depth", [65, 3000, 200_000])
def test_over_deep_bodies_are_400_on_every_route(
    http: httpx.Client, server: ServerProc, path: str, depth: int
) -> None:
    # 65 levels parse but are refused; thousands made Python's parser raise RecursionError.
    field = {"/rollout": "initial_messages", "/rollout/cancel": "ids", "/rollouts": "rollouts"}.get(
        path, "leases"
    )
    resp = http.post(
        path,
        content=f'{{"{field}": {_nested(depth)}}}',
        headers={"content-type": "application/json"},
    )
    assert resp.status_code == 400, resp.text[:300]
    assert "retry-after" not in resp.headers  # the client's fault: nothing to retry
    assert "deeper than 64 levels" in resp.json()["detail"]
    assert "Traceback" not in server.log() and "RecursionError" not in server.log()


def test_sixty_four_levels_are_still_accepted(http: httpx.Client) -> None:
    info: Any = "leaf"
    for _ in range(61):  # body -> metadata -> info -> 61 more dicts: 64 levels in all
        info = {"k": info}
    body = {**VALID, "rollout_id": uuid.uuid4().hex, "metadata": {"info": info}, "grade": False}
    assert http.post("/rollout", json=body).status_code == 202


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProc]:
    srv = start_server(tmp_path_factory.mktemp("small"), max_body_bytes=1024, wait=1)
    yield srv
    srv.stop()


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/rollout"),
        ("POST", "/rollout/cancel"),
        ("GET", "/rollout/x/result"),
        ("GET", "/health"),
        ("POST", "/no/such/route"),
        ("POST", "/rollouts"),
        ("POST", "/rollouts/results"),
    ],
)
@pytest.mark.parametrize("chunked", [False, True])
def test_bodies_over_the_limit_are_413_on_every_route(
    small: ServerProc, method: str, path: str, chunked: bool
) -> None:
    payload = json.dumps({"rollout_id": "x" * 2000}).encode()
    content: Any = iter([payload[:700], payload[700:]]) if chunked else payload
    with httpx.Client(base_url=small.url, timeout=10) as client:
        resp = client.request(
            method, path, content=content, headers={"content-type": "application/json"}
        )
    assert resp.status_code == 413, resp.text[:300]
    assert "limit of 1024 bytes" in resp.json()["detail"]


def test_bodies_within_the_limit_pass(small: ServerProc) -> None:
    body = {**VALID, "rollout_id": "fits", "grade": False}
    assert len(json.dumps(body)) < 1024
    with httpx.Client(base_url=small.url, timeout=10) as client:
        assert client.post("/rollout", json=body).status_code == 202
        chunks = iter([json.dumps({"ids": ["fits"]}).encode()])  # chunked, small
        assert client.post("/rollout/cancel", content=chunks).status_code == 200


def test_default_body_limit_is_16_mib() -> None:
    import inspect

    from verifiers_lite.cli.serve import build_parser
    from verifiers_lite.server import create_rollout_server

    default = inspect.signature(create_rollout_server).parameters["max_body_bytes"].default
    assert default == 16 * 1024 * 1024
    assert build_parser().parse_args(["arithmetic"]).max_body_bytes == default


def _admit_both_ways(
    http: httpx.Client, raw: bytes, content_type: str, *, chunked_first: bool = False
) -> list[httpx.Response]:
    """The same admission body sent with a Content-Length (served ahead of the middleware stack)
    and chunked (served by the full stack), in that order unless ``chunked_first``."""
    headers = {"content-type": content_type} if content_type else {}
    sends = [raw, iter([raw[: len(raw) // 2], raw[len(raw) // 2 :]])]
    return [
        http.post("/rollout", content=c, headers=headers)
        for c in (sends[::-1] if chunked_first else sends)
    ]


@pytest.mark.parametrize(
    ("case", "status", "first_loc"),
    [
        ("bad id", 422, ["body", "rollout_id"]),
        ("missing messages", 422, ["body", "initial_messages"]),
        ("extra field", 422, ["body", "surprise"]),
        ("empty body", 422, ["body"]),
        ("not JSON", 422, ["body", 1]),
        ("text/plain", 422, ["body"]),
    ],
)
def test_refused_admissions_answer_alike_on_both_paths(
    http: httpx.Client, case: str, status: int, first_loc: list[Any]
) -> None:
    body: dict[str, Any] = {**VALID, "rollout_id": uuid.uuid4().hex}
    content_type, raw = "application/json", b""
    if case == "bad id":
        body["rollout_id"] = "a/b"
    elif case == "missing messages":
        del body["initial_messages"]
    elif case == "extra field":
        body["surprise"] = 1
    elif case == "not JSON":
        raw = b"{,}"
    elif case == "text/plain":
        content_type = "text/plain"
    if case not in ("empty body", "not JSON"):
        raw = json.dumps(body).encode()
    answers = _admit_both_ways(http, raw, content_type)
    assert [a.status_code for a in answers] == [status, status], [a.text for a in answers]
    assert answers[0].json() == answers[1].json()
    assert answers[0].json()["detail"][0]["loc"] == first_loc
    assert "retry-after" not in answers[0].headers


def test_accepted_and_duplicate_admissions_answer_alike_on_both_paths(http: httpx.Client) -> None:
    ids = [uuid.uuid4().hex, uuid.uuid4().hex]
    accepted = [
        resp
        for rid, chunked_first in zip(ids, (False, True), strict=True)
        for resp in _admit_both_ways(
            http,
            json.dumps({**VALID, "rollout_id": rid, "grade": False}).encode(),
            "application/json",
            chunked_first=chunked_first,
        )
    ]
    # Each id: the first request admits it (by one path, then the other), the second is its duplicate.
    assert [r.status_code for r in accepted] == [202, 409, 202, 409], [r.text for r in accepted]
    first, second = accepted[0].json(), accepted[2].json()
    assert (
        set(first)
        == set(second)
        == {
            "rollout_id",
            "status",
            "polling_lease_token",
            "result_wait_timeout_sec",
            "polling_lease_timeout_sec",
        }
    )
    assert [first["rollout_id"], second["rollout_id"]] == ids
    assert first["status"] == second["status"] == "queued"
    assert first["polling_lease_token"] != second["polling_lease_token"]
    assert accepted[1].json() == {"detail": f"rollout_id {ids[0]!r} is live or still retained"}
    assert (
        accepted[0].headers["content-type"]
        == accepted[2].headers["content-type"]
        == "application/json"
    )
