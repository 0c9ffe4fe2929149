"""Rollout server throughput and result latency (reproducible; loopback only).

1. rollouts/s of ``env.generate`` in-process vs the same call run through the remote executor
   (``executor=vf.RemoteExecutor(url)``: a ``vf-lite serve`` subprocess, LocalBackend, runs the
   rollouts and returns unscored states; the driver scores them) on the same fake model;
   target ratio >= 0.85. ``--grouped`` runs groups of 4 (default: independent rollouts).
   Also printed: CPU ms per rollout of the driver and of the server process, which is what
   bounds the ratio on a small machine (every process competes for the same cores).
2. p50/p99 result latency with N concurrent long polls: N rollouts in flight at once against a
   fake model with fixed latency L; latency = (admission -> result received) - L.

Run: ``python benchmarks/server.py [--rollouts 1000] [--latency-ms 20] [--polls 1000] [--grouped] [--skip-polls]``.

Last measured through the remote executor, on 2 cores shared with other work (load average
7.8-8.9 over 2 CPUs, so every process fights for CPU and the ratio is bounded by total CPU):
independent 1000 rollouts: in-process 301/s, remote 102/s, ratio 0.34; groups of 4: 390/s vs
121/s, ratio 0.31. CPU ms per rollout: in-process 1.00, driver 1.45 + server 1.88. The previous
forwarding path measured back to back under the same load: ratio 0.21-0.29, driver 1.0-1.4 +
server 2.0-2.6 ms. On the same 2 cores without the load it measured 0.84-0.90 (CPU ms:
in-process 0.36, driver 0.40 + server 0.68); 1000 concurrent long polls p50 772 ms, p99 829 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from verifiers_lite.clients import ChatClient  # noqa: E402
from verifiers_lite.executors.remote import RemoteExecutor  # noqa: E402
from verifiers_lite.registry import load_environment  # noqa: E402
from verifiers_lite.remote import RolloutClient  # noqa: E402
from verifiers_lite.testing.fake_server import FakeServerProcess, free_port  # noqa: E402

MODEL = "fake-arith"


def start_rollout_server(max_concurrent: int, num_examples: int, max_queued: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "verifiers_lite.server.cli", "arithmetic", "--port", str(port),
         "--max-concurrent", str(max_concurrent), "--max-queued", str(max_queued),
         "--env-args", f'{{"num_examples": {num_examples}}}'],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("rollout server did not start")


def cpu_sec(pid: int | None = None) -> float:
    """User + system CPU seconds of this process, or of ``pid`` (Linux /proc)."""
    if pid is None:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    proc.wait(60)


async def throughput(fake: FakeServerProcess, n: int, concurrency: int, grouped: bool) -> dict[str, float]:
    per = 4 if grouped else 1
    env = load_environment("arithmetic", num_examples=n // per)
    inputs = env.get_eval_inputs(n // per, per, False, 0)
    client = ChatClient(fake.base_url)
    kw: dict[str, Any] = dict(max_concurrent=concurrency, progress=False, independent_scoring=not grouped,
                              sampling_args={"temperature": 0})  # deterministic: both runs do the same work
    await env.generate(inputs[:32], client, MODEL, **kw)  # warm-up
    c0, t = cpu_sec(), time.perf_counter()
    local = await env.generate(inputs, client, MODEL, **kw)
    local_s = time.perf_counter() - t
    local_cpu = cpu_sec() - c0
    proc, url = start_rollout_server(concurrency, n, concurrency)
    try:
        remote_env = load_environment("arithmetic", num_examples=n // per)
        async with RolloutClient(url) as rc:
            kw["executor"] = RemoteExecutor(rc)
            await remote_env.generate(inputs[:32], client, MODEL, **kw)
            c0, s0, t = cpu_sec(), cpu_sec(proc.pid), time.perf_counter()
            remote = await remote_env.generate(inputs, client, MODEL, **kw)
            remote_s = time.perf_counter() - t
            remote_cpu, server_cpu = cpu_sec() - c0, cpu_sec(proc.pid) - s0
    finally:
        stop(proc)
        await client.aclose()
    assert len(local.rows) == len(remote.rows) == len(inputs)
    assert [r["reward"] for r in local.rows] == [r["reward"] for r in remote.rows]  # same work both ways
    return {
        "in_process_rps": n / local_s, "server_rps": n / remote_s, "ratio": local_s / remote_s,
        "local_cpu_ms": 1000 * local_cpu / n, "driver_cpu_ms": 1000 * remote_cpu / n,
        "server_cpu_ms": 1000 * server_cpu / n,
    }


async def poll_latency(fake: FakeServerProcess, n: int, latency_ms: float) -> dict[str, float]:
    fake.configure(latency_ms=latency_ms)
    proc, url = start_rollout_server(n, 10, 0)
    lat: list[float] = []
    try:
        async with RolloutClient(url) as rc:
            async def one(i: int) -> None:
                handle = await rc.run_rollout_async(
                    initial_messages=[{"role": "user", "content": f"What is {i % 10} + 1?"}],
                    chat_completions_url=fake.base_url, rollout_id=uuid.uuid4().hex,
                    label=str(i % 10 + 1), metadata={"model": MODEL}, grade=True,
                )
                t = time.perf_counter()
                result = await handle
                assert result.status == "success", result
                lat.append((time.perf_counter() - t) * 1000 - latency_ms)

            await asyncio.gather(*(one(i) for i in range(n)))
    finally:
        stop(proc)
        fake.configure(latency_ms=0)
    lat.sort()
    return {"polls": n, "p50_ms": statistics.median(lat), "p99_ms": lat[int(0.99 * (len(lat) - 1))]}


async def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rollouts", type=int, default=1000)
    p.add_argument("--concurrency", type=int, default=32)
    p.add_argument("--latency-ms", type=float, default=20.0, help="fake model latency (throughput run)")
    p.add_argument("--polls", type=int, default=1000)
    p.add_argument("--poll-latency-ms", type=float, default=3000.0)
    p.add_argument("--grouped", action="store_true", help="groups of 4 rollouts (default: independent)")
    p.add_argument("--skip-polls", action="store_true", help="throughput only")
    a = p.parse_args()
    with FakeServerProcess(latency_ms=a.latency_ms) as fake:
        tp = await throughput(fake, a.rollouts, a.concurrency, a.grouped)
        print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
        print(f"throughput ({a.rollouts} rollouts, {'groups of 4' if a.grouped else 'independent'}, "
              f"{a.concurrency} concurrent, model {a.latency_ms} ms): in-process {tp['in_process_rps']:.0f}/s, "
              f"remote executor {tp['server_rps']:.0f}/s, ratio {tp['ratio']:.2f} (target >= 0.85)")
        print(f"CPU ms per rollout: in-process {tp['local_cpu_ms']:.2f}; through the server: driver "
              f"{tp['driver_cpu_ms']:.2f} + server process {tp['server_cpu_ms']:.2f}")
        if a.skip_polls:
            return
        lp = await poll_latency(fake, a.polls, a.poll_latency_ms)
        print(f"result latency with {lp['polls']} concurrent long polls: "
              f"p50 {lp['p50_ms']:.0f} ms, p99 {lp['p99_ms']:.0f} ms (beyond the model's {a.poll_latency_ms:.0f} ms)")


if __name__ == "__main__":
    asyncio.run(main())
