"""A fault-injecting proxy in front of the model server: runs complete, errors are categorised,
retries are bounded, nothing hangs past the configured timeouts."""

from __future__ import annotations

import asyncio
import re

import pytest

import verifiers_lite as vf
from tests.helpers.envs import make_env
from verifiers_lite.testing.fault_proxy import FaultProxy

N_EXAMPLES, R = 40, 2
TIMEOUT, ATTEMPTS = 0.5, 3


@pytest.mark.parametrize("rate", [0.3, 1.0])
def test_runs_complete_through_a_faulty_endpoint(fake_server, rate):
    async def main():
        proxy = await FaultProxy(fake_server.port, rate=rate, stall_s=30.0, seed=7).start()
        client = vf.ChatClient(
            proxy.base_url,
            timeout=TIMEOUT,
            retry=vf.RetryPolicy(max_attempts=ATTEMPTS, base_delay=0.02, max_delay=0.1),
        )
        try:
            out = await make_env(N_EXAMPLES).evaluate(
                client, "fake-arith", rollouts_per_example=R, max_concurrent=16, progress=False
            )
        finally:
            await client.aclose()
            await proxy.close()
        return out, proxy

    out, proxy = asyncio.run(main())
    n = N_EXAMPLES * R
    assert len(out) == n
    # Only the chat requests: a run also asks once for /v1/models (its reproducibility manifest).
    requests = proxy.paths["/v1/chat/completions"]
    assert requests <= n * ATTEMPTS  # retries are bounded
    # The client's own timeout ended every stall (the proxy would hold each for 30 s).
    assert proxy.counts["stall"] > 0 and proxy.stalls_cut == proxy.counts["stall"]
    errors = [r["error"] for r in out.rows if r["error"]]
    assert {e["category"] for e in errors} <= {
        "model_http_error",
        "model_rate_limited",
        "model_timeout",
        "model_connection",
    }
    if rate == 1.0:
        # Every rollout used all its attempts, except where an HTTP 500 came back twice alike: a
        # deterministic answer, so its third attempt is not made and its message says why.
        attempts = [int(re.search(r"after (\d+) attempts", e["message"]).group(1)) for e in errors]
        assert len(errors) == n and requests == sum(attempts)  # the proxy saw each attempt told
        assert all(
            a == ATTEMPTS or "the same answer twice" in e["message"]
            for a, e in zip(attempts, errors, strict=True)
        )
        assert set(proxy.counts) == {"500", "502", "429", "reset", "stall"}
    else:
        assert proxy.counts["pass"] > 0 and len(errors) < n * 0.2  # retries absorb most faults
        assert all(r["reward"] in (0.0, 1.0) for r in out.rows if not r["error"])
        assert all(
            r["reward"] is None for r in out.rows if r["error"]
        )  # errored rollouts are not scored
