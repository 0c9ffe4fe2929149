"""Endpoint faults never escape generate: rows carry error categories; retries are bounded."""

from __future__ import annotations

import time

import verifiers_lite as vf
from tests.helpers.envs import make_env
from verifiers_lite.clients.retry import RetryPolicy

FAST_RETRY = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.02)


def client(server, **kw):
    return vf.ChatClient(server.base_url, retry=kw.pop("retry", FAST_RETRY), **kw)


def test_transient_500_and_dropped_connections_are_retried_to_success(fake_server):
    fake_server.configure(
        faults=[{"status": 500}, {"drop": True}, {"status": 502}, {"status": 503}]
    )
    patient = RetryPolicy(max_attempts=5, base_delay=0.01, max_delay=0.02)
    out = make_env(4).evaluate_sync(
        client(fake_server, retry=patient), "fake-arith", max_concurrent=1, progress=False
    )
    assert [r["error"] for r in out.rows] == [None] * 4
    assert fake_server.stats()["requests"] == 8  # 4 faults absorbed by retries


def test_429_retry_after_is_honoured(fake_server):
    fake_server.configure(faults=[{"status": 429, "retry_after": 0.4}])
    t0 = time.monotonic()
    out = make_env(1).evaluate_sync(client(fake_server), "fake-arith", progress=False)
    assert out.rows[0]["error"] is None
    assert time.monotonic() - t0 >= 0.4


def test_persistent_failures_become_categorised_error_rows(fake_server):
    fake_server.configure(
        faults=[{"status": 500}] * 3
        + [{"status": 429}] * 3
        + [{"status": 400, "message": "bad model args"}]
    )
    logs: list[str] = []
    out = make_env(4).evaluate_sync(
        client(fake_server), "fake-arith", max_concurrent=1, on_log=logs.append, progress=False
    )
    errors = [r["error"] for r in out.rows]
    assert errors[0]["category"] == "model_http_error" and "HTTP 500" in errors[0]["message"]
    assert errors[1]["category"] == "model_rate_limited"
    assert errors[2]["category"] == "model_http_error" and "bad model args" in errors[2]["message"]
    assert errors[3] is None
    assert fake_server.stats()["requests"] == 3 + 3 + 1 + 1  # 400 is not retried
    assert all(r["reward"] is None and r["stop_reason"] == "error" for r in out.rows[:3])
    assert out.summary["errors"] == {"model_http_error": 2, "model_rate_limited": 1}


def test_stalled_requests_time_out_and_are_categorised(fake_server):
    fake_server.configure(faults=[{"stall": 5}] * 2)
    out = make_env(1).evaluate_sync(
        client(fake_server, timeout=0.3, retry=RetryPolicy(max_attempts=2, base_delay=0.01)),
        "fake-arith",
        progress=False,
    )
    # Both attempts cut by the timeout: a reply after a 5 s stall would have been an answer.
    assert out.rows[0]["error"]["category"] == "model_timeout"
    assert fake_server.stats()["requests"] == 2


def test_unreachable_endpoint_is_a_connection_error_row():
    from verifiers_lite.testing.fake_server import free_port

    dead = vf.ChatClient(f"http://127.0.0.1:{free_port()}/v1", retry=FAST_RETRY)
    out = make_env(2).evaluate_sync(dead, "fake-arith", progress=False)
    assert {r["error"]["category"] for r in out.rows} == {"model_connection"}


def test_env_code_and_reward_function_errors_are_recorded_not_raised(fake_server):
    class Broken(vf.MultiTurnEnv):
        async def env_response(self, messages, state):
            raise RuntimeError("env exploded")

    def bad_reward(completion):
        raise ZeroDivisionError("oops")

    env = Broken(
        dataset=[{"question": "1 + 1", "answer": "2"}],
        rubric=vf.Rubric([bad_reward]),
        max_turns=3,
        max_retries=1,
    )
    out = env.evaluate_sync(client(fake_server), "fake-arith", progress=False)
    row = out.rows[0]
    assert row["error"]["category"] == "env_error" and "env exploded" in row["error"]["message"]
    assert row["reward"] is None  # errored rollouts are not scored
    assert fake_server.stats()["requests"] == 2  # the rollout was retried once (max_retries=1)

    ok_env = vf.SingleTurnEnv(
        dataset=[{"question": "1 + 1", "answer": "2"}], rubric=vf.Rubric([bad_reward])
    )
    row = ok_env.evaluate_sync(client(fake_server), "fake-arith", progress=False).rows[0]
    assert row["error"]["category"] == "rubric_error"
    assert "bad_reward" in row["error"]["message"] and "oops" in row["error"]["message"]
    assert row["metrics"]["bad_reward"] is None
