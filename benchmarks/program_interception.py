"""Interception overhead per model call: a program calling through ``vf.ProgramEnv``'s endpoint
vs the same program calling the model server directly (loopback only).

The model is the fake server (``fake-echo``, no latency). The program
(``_program_caller.py``) makes N calls on one keep-alive connection and times each. Direct: K
copies run against the fake server as plain subprocesses. Intercepted: the same K copies run as
the rollouts of one ``ProgramEnv`` run whose client is a ``vf.ChatClient`` to that server, so
each call goes program -> endpoint -> client -> server. The two alternate in ``--rounds``
rounds, so a load that drifts meanwhile weighs on both alike. Printed: p50/p99 per call of each
and the difference (p50 added, p99 added), at K = 1 and K = 64 programs at once, beside the
load average (latencies on a busy 2-core machine move with it), and the driver's CPU per
intercepted call. Goal: <= 2 ms p50 added on 2 cores.

Run: ``python benchmarks/program_interception.py [--calls 200] [--rounds 4] [--concurrency 1 64]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import verifiers_lite as vf  # noqa: E402
from verifiers_lite.testing.fake_server import FakeServerProcess  # noqa: E402

CALLER = str(Path(__file__).resolve().parent / "_program_caller.py")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def direct(server: FakeServerProcess, k: int, calls: int, tmp: Path) -> list[float]:
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k"}
    outs = [tmp / f"direct-{k}-{i}.json" for i in range(k)]
    procs = [
        subprocess.Popen(
            [sys.executable, CALLER, str(calls), str(o)], env=env, stdout=subprocess.DEVNULL
        )
        for o in outs
    ]
    for p in procs:
        if p.wait() != 0:
            raise SystemExit("a direct caller failed")
    return [x for o in outs for x in json.loads(o.read_text())]


def intercepted(server: FakeServerProcess, k: int, calls: int, tmp: Path) -> list[float]:
    rows = [
        {"question": str(tmp / f"via-{k}-{i}.json"), "answer": "", "example_id": i}
        for i in range(k)
    ]
    env = vf.ProgramEnv(
        [sys.executable, CALLER, str(calls), "{question}"], dataset=rows, max_concurrent=k
    )
    out = env.evaluate_sync(
        vf.ChatClient(server.base_url), "fake-echo", progress=False, max_concurrent=k
    )
    errors = [r["error"] for r in out.rows if r["error"]]
    if errors:
        raise SystemExit(f"intercepted rollouts failed: {errors[:2]}")
    return [x for r in rows for x in json.loads(Path(r["question"]).read_text())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per program, all rounds")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 64])
    args = parser.parse_args()
    per_round = max(1, args.calls // args.rounds)
    with FakeServerProcess() as server, tempfile.TemporaryDirectory() as tmp:
        head = f"{'programs':>8} {'direct p50':>11} {'p99':>7} {'via endpoint p50':>17} {'p99':>7}"
        print(f"{head} {'added p50':>10} {'added p99':>10}  load  driver CPU/call")
        for k in args.concurrency:
            d: list[float] = []
            v: list[float] = []
            cpu = 0.0
            for _ in range(args.rounds):
                d += direct(server, k, per_round, Path(tmp))
                c0 = time.process_time()
                v += intercepted(server, k, per_round, Path(tmp))
                cpu += time.process_time() - c0
            dp50, dp99, vp50, vp99 = _pct(d, 0.5), _pct(d, 0.99), _pct(v, 0.5), _pct(v, 0.99)
            print(
                f"{k:>8} {dp50:>9.2f}ms {dp99:>5.2f}ms {vp50:>15.2f}ms {vp99:>5.2f}ms "
                f"{vp50 - dp50:>8.2f}ms {vp99 - dp99:>8.2f}ms  {os.getloadavg()[0]:.2f}  "
                f"{cpu / len(v) * 1000:.2f} ms (program starts included)"
            )
            added = statistics.mean(v) - statistics.mean(d)
            print(
                f"{'':>8} ({len(d)} direct, {len(v)} intercepted calls; mean added {added:.2f} ms)"
            )


if __name__ == "__main__":
    main()
