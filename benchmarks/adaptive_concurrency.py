"""Adaptive concurrency against fixed settings: ``max_concurrent="auto"`` on the fake server.

Two endpoints, each a fake server with ``latency_ms`` per request:

- ``slots``: a slot-limited model that serves ``--slots`` requests at once and queues the rest
  (more in flight only adds waiting);
- ``rate_limit``: a provider's concurrency limit: past ``--concurrent`` requests at once it
  answers 429 with ``Retry-After``;
- a request-rate limit: ``--requests-per-s`` (in windows of 0.1 s), said in ``x-ratelimit-*``
  headers on every answer, 429 past it.

For each, a run of ``--rollouts`` single-turn rollouts (``SingleTurnEnv``, ``fake-arith``) with
each fixed ``max_concurrent`` of ``--fixed`` and with ``"auto"``; reported: rollouts per second
(that did not fail: a fixed setting past a rate limit fails rollouts once their retries run out),
the 429s the server answered, and for ``"auto"`` its ratio to the best fixed setting, the limit
it settled at (median over the run's second half) and how many requests it took to first reach
the endpoint's capacity.

    python benchmarks/adaptive_concurrency.py                 # ~1 min on 2 cores
    python benchmarks/adaptive_concurrency.py --rollouts 2000 --latency-ms 50
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import verifiers_lite as vf
from verifiers_lite.executors.local import LocalExecutor
from verifiers_lite.testing.fake_server import FakeServerProcess


def _env(n: int) -> vf.SingleTurnEnv:
    rows = [{"question": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(n)]
    return vf.SingleTurnEnv(dataset=rows)


def measure(
    server: FakeServerProcess, cfg: dict[str, Any], max_concurrent: int | str, rollouts: int
) -> dict[str, Any]:
    """One run: its throughput, the server's 429s and (auto) the limit's trajectory."""
    server.reset()
    server.configure(**cfg)
    executor = LocalExecutor()
    env = _env(rollouts)
    client = vf.ChatClient(server.base_url)
    before = server.stats()["by_status"].get("429", 0)
    started = time.perf_counter()
    out = env.evaluate_sync(
        client,
        "fake-arith",
        num_examples=rollouts,
        max_concurrent=max_concurrent,
        executor=executor,
        progress=False,
    )
    elapsed = time.perf_counter() - started
    ok = sum(1 for r in out.rows if not r.get("error"))
    result: dict[str, Any] = {
        "setting": max_concurrent,
        "rollouts_per_s": ok / elapsed,  # rollouts that failed (429s past the retries) do not count
        "failed": len(out) - ok,
        "429s": server.stats()["by_status"].get("429", 0) - before,
    }
    assert executor.router is not None
    adaptive = executor.router.endpoints[0].adaptive
    if adaptive is not None:
        t0 = adaptive.history[0][0]
        late = [lim for t, lim in adaptive.history if t - t0 >= (adaptive.clock() - t0) / 2]
        result["settled_limit"] = statistics.median(late or [adaptive.current])
        result["peak_limit"] = adaptive.peak_limit
        result["trajectory"] = [lim for _, lim in adaptive.history][:40]
    return result


def scenario(
    name: str, cfg: dict[str, Any], capacity: int, args: argparse.Namespace
) -> dict[str, Any]:
    with FakeServerProcess(latency_ms=args.latency_ms) as server:
        measure(server, cfg, 4, 50)  # warm the client and server
        fixed = [measure(server, cfg, k, args.rollouts) for k in args.fixed]
        auto = measure(server, cfg, "auto", args.rollouts)
    best = max(fixed, key=lambda r: r["rollouts_per_s"])
    print(f"\n## {name} (capacity {capacity} at once, {args.latency_ms:g} ms per request)\n")
    print("| max_concurrent | rollouts/s | 429s | failed rollouts |")
    print("|---|---|---|---|")
    for r in [*fixed, auto]:
        print(f"| {r['setting']} | {r['rollouts_per_s']:.1f} | {r['429s']} | {r['failed']} |")
    ratio = auto["rollouts_per_s"] / best["rollouts_per_s"]
    print(
        f"\nauto / best fixed ({best['setting']}): {ratio:.3f}; auto settled at "
        f"{auto['settled_limit']:g} (peak {auto['peak_limit']}); limit trajectory "
        f"{auto['trajectory']}"
    )
    return {"name": name, "ratio": ratio, "auto": auto, "best": best}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=1200)
    parser.add_argument("--latency-ms", type=float, default=40.0)
    parser.add_argument("--slots", type=int, default=8)
    parser.add_argument("--concurrent", type=int, default=12)
    parser.add_argument("--retry-after", type=float, default=0.2)
    parser.add_argument("--requests-per-s", type=int, default=250)
    parser.add_argument("--fixed", type=int, nargs="+", default=[2, 4, 8, 12, 16, 32, 64])
    args = parser.parse_args()
    results = [
        scenario("slot-limited model", {"slots": args.slots}, args.slots, args),
        scenario(
            "rate limit (429 past a concurrency)",
            {"rate_limit": {"concurrent": args.concurrent, "retry_after": args.retry_after}},
            args.concurrent,
            args,
        ),
        scenario(
            "request-rate limit (x-ratelimit-* headers, 429 past them)",
            {"rate_limit": {"requests": args.requests_per_s // 10, "per_s": 0.1}},
            round(args.requests_per_s * args.latency_ms / 1000),
            args,
        ),
    ]
    print()
    for r in results:
        print(f"{r['name']}: auto at {100 * r['ratio']:.1f}% of the best fixed setting")


if __name__ == "__main__":
    main()
