"""Sandboxed executions per second: pooled vs fresh sandboxes, and the overhead over a bare subprocess.

Workload: N short programs (``print(sum(range(1000)))``), run one at a time (latency) and with
``--parallel`` in flight (throughput), through:

- bare: ``subprocess.run([python, "-I", "-c", code])``, no isolation at all (the floor);
- fresh: ``vf.Sandbox(reuse=False)``, a new sandbox (bubblewrap + interpreter start) per run;
- pooled: ``vf.Sandbox(pool_size=P)``, reused workers, a fresh forked process per run;
- pooled rlimits: the same pool under the rlimit-only fallback (no namespaces);

and the latency of a new session (a sandboxed interpreter, as ``PythonEnv`` opens per rollout).

    python benchmarks/sandbox.py              # N=200
    python benchmarks/sandbox.py --n 50
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import time
from collections.abc import Callable
from typing import Any

import verifiers_lite as vf
from verifiers_lite.sandbox.launch import _python

CODE = "print(sum(range(1000)))"
EXPECTED = "499500\n"


def _bare_once() -> None:
    prefix, exe = _python()
    out = subprocess.run(
        [os.path.join(prefix, exe), "-I", "-c", CODE], capture_output=True, text=True, check=True
    )
    assert out.stdout == EXPECTED


async def _bare_many(n: int, parallel: int) -> None:
    sem = asyncio.Semaphore(parallel)

    async def one() -> None:
        async with sem:
            await asyncio.to_thread(_bare_once)

    await asyncio.gather(*(one() for _ in range(n)))


async def _sandbox_many(box: vf.Sandbox, n: int, parallel: int) -> None:
    sem = asyncio.Semaphore(parallel)

    async def one() -> None:
        async with sem:
            r = await box.run(CODE)
            assert r.stdout == EXPECTED, r

    await asyncio.gather(*(one() for _ in range(n)))


def _latency(fn: Callable[[], Any], n: int) -> float:
    """Median seconds per call, one call at a time."""
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _throughput(coro_fn: Callable[[], Any], n: int) -> float:
    t0 = time.perf_counter()
    asyncio.run(coro_fn())
    return n / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=200, help="executions per throughput case")
    ap.add_argument(
        "--parallel", type=int, default=os.cpu_count() or 2, help="executions in flight"
    )
    args = ap.parse_args()
    n, par = args.n, args.parallel
    lat_n = max(10, n // 10)
    results: dict[str, dict[str, float]] = {}

    results["bare subprocess"] = {
        "latency_ms": 1000 * _latency(_bare_once, lat_n),
        "per_s": _throughput(lambda: _bare_many(n, par), n),
    }
    with vf.Sandbox(pool_size=par, reuse=False) as fresh:
        isolation = fresh.isolation
        results[f"fresh sandbox ({isolation})"] = {
            "latency_ms": 1000 * _latency(lambda: fresh.run_sync(CODE), lat_n),
            "per_s": _throughput(lambda: _sandbox_many(fresh, n, par), n),
        }
    for iso in ("auto", "rlimits"):
        with vf.Sandbox(pool_size=par, isolation=iso) as pooled:
            pooled.run_sync(CODE)  # start the workers once: the pool's steady state is measured
            asyncio.run(_sandbox_many(pooled, par, par))
            results[f"pooled sandbox ({pooled.isolation})"] = {
                "latency_ms": 1000 * _latency(lambda box=pooled: box.run_sync(CODE), lat_n),
                "per_s": _throughput(lambda box=pooled: _sandbox_many(box, n, par), n),
            }

    with vf.Sandbox(pool_size=par) as box:

        def new_session() -> None:
            session = box.session()
            assert session.run_sync(CODE).stdout == EXPECTED
            session.close()

        # PythonEnv opens one per rollout: the latency before its first tool result.
        session_ms = 1000 * _latency(new_session, lat_n)

    bare = results["bare subprocess"]
    print(
        f"{n} executions of {CODE!r}, {par} in flight, {os.cpu_count()} cores; latency = median "
        f"of {lat_n} one at a time"
    )
    print(f"{'case':34} {'exec/s':>8} {'latency ms':>11} {'vs bare (exec/s)':>17}")
    for name, r in results.items():
        print(
            f"{name:34} {r['per_s']:8.1f} {r['latency_ms']:11.1f} {r['per_s'] / bare['per_s']:16.2f}x"
        )
    print(f"new session (PythonEnv, per rollout): first result after {session_ms:.1f} ms")
    print(json.dumps({k: {m: round(v, 2) for m, v in r.items()} for k, r in results.items()}))


if __name__ == "__main__":
    main()
