"""Rollout server throughput and result latency (reproducible; loopback only).

1. rollouts/s of ``env.generate`` in-process vs the same call forwarded through a rollout
   server (``vf-lite serve`` in a subprocess, LocalBackend) on the same fake model; target
   ratio >= 0.8.
   Also printed: CPU ms per rollout of the driver and of the server process, which is what
   bounds the ratio on a small machine (every process competes for the same cores).
2. p50/p99 result latency with N concurrent long polls: N rollouts in flight at once against a
   fake model with fixed latency L; latency = (admission -> result received) - L.

Run: ``python benchmarks/server.py [--rollouts 1000] [--latency-ms 20] [--polls 1000]``.

Last measured (2 shared cores, defaults; ratios vary ~0.8-0.9 run to run with machine load):
in-process 1350/s, server 1217/s, ratio 0.90 (0.84 on two reruns); CPU ms per rollout:
in-process 0.36, driver 0.40 + server 0.68; 1000 concurrent long polls p50 772 ms, p99 829 ms.
Before the aiohttp client transport and the server's hot routes: ratio 0.30, driver 1.68 +
server 0.99 ms, p50 2255 ms, p99 4186 ms.
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
from verifiers_lite.registry import load_environment  # noqa: E402
from verifiers_lite.server import RolloutClient  # noqa: E402
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


async def throughput(fake: FakeServerProcess, n: int, concurrency: int) -> dict[str, float]:
    env = load_environment("arithmetic", num_examples=n)
    inputs = env.get_eval_inputs(n, 1, False, 0)
    client = ChatClient(fake.base_url)
    kw: dict[str, Any] = dict(max_concurrent=concurrency, progress=False, independent_scoring=True)
    await env.generate(inputs[:32], client, MODEL, **kw)  # warm-up
    c0, t = cpu_sec(), time.perf_counter()
    local = await env.generate(inputs, client, MODEL, **kw)
    local_s = time.perf_counter() - t
    local_cpu = cpu_sec() - c0
    proc, url = start_rollout_server(concurrency, n, concurrency)
    try:
        remote_env = load_environment("arithmetic", num_examples=n)
        async with RolloutClient(url) as rc:
            remote_env.env_client = rc
            await remote_env.generate(inputs[:32], client, MODEL, **kw)
            c0, s0, t = cpu_sec(), cpu_sec(proc.pid), time.perf_counter()
            remote = await remote_env.generate(inputs, client, MODEL, **kw)
            remote_s = time.perf_counter() - t
            remote_cpu, server_cpu = cpu_sec() - c0, cpu_sec(proc.pid) - s0
    finally:
        stop(proc)
        await client.aclose()
    assert len(local.rows if hasattr(local, "rows") else local) == len(remote.rows if hasattr(remote, "rows") else remote)
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
    a = p.parse_args()
    with FakeServerProcess(latency_ms=a.latency_ms) as fake:
        tp = await throughput(fake, a.rollouts, a.concurrency)
        print(f"throughput ({a.rollouts} rollouts, {a.concurrency} concurrent, model {a.latency_ms} ms): "
              f"in-process {tp['in_process_rps']:.0f}/s, server {tp['server_rps']:.0f}/s, "
              f"ratio {tp['ratio']:.2f} (target >= 0.8)")
        print(f"CPU ms per rollout: in-process {tp['local_cpu_ms']:.2f}; through the server: driver "
              f"{tp['driver_cpu_ms']:.2f} + server process {tp['server_cpu_ms']:.2f}")
        lp = await poll_latency(fake, a.polls, a.poll_latency_ms)
        print(f"result latency with {lp['polls']} concurrent long polls: "
              f"p50 {lp['p50_ms']:.0f} ms, p99 {lp['p99_ms']:.0f} ms (beyond the model's {a.poll_latency_ms:.0f} ms)")


if __name__ == "__main__":
    asyncio.run(main())
