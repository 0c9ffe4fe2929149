"""Rollout server: CPU per rollout, long-poll latency, and 10,000 rollouts in flight (loopback only).

1. Throughput: rollouts/s of ``env.generate`` in-process vs the same call through the remote
   executor (``executor=vf.executors.RemoteExecutor(url)``: a ``vf-lite serve`` subprocess, LocalBackend,
   runs the rollouts and returns unscored states; the driver scores them) on the same fake model;
   target ratio >= 0.85. ``--grouped`` runs groups of 4. Also printed: CPU ms per rollout of the
   driver and of the server process (targets <= 0.5 each), which bound the ratio on a small
   machine where every process competes for the same cores.
2. Long polls (``--polls 1000 10000``): N rollouts admitted at once against a stub model of fixed
   latency inside the server, each long-polled over its own connection by a lean HTTP client
   (``_http_load``, on uvloop: the load generator shares the cores, so it must cost them little):
   admission p50/p99 (POST sent -> 202 read), delivery p50/p99 (202 read -> result read, minus
   the model's time), CPU per rollout of the server and of the load client. Three runs per size:
   one POST and one GET per rollout, then the batched routes (one ``POST /rollouts``, polls by
   ``POST /rollouts/results``), then the executor's path: ``RolloutClient.run_state`` for each
   rollout at once (coalesced into batched admissions and polls), timed from the call to the
   state, minus the model's time.
3. Scale (``--scale 10000``): that many rollouts admitted against a 10-minute model (server RSS
   per in-flight rollout), each then long-polled by its own GET (RSS and fds per held poll); the
   polls stop, every lease expires, every task is cancelled, the server goes idle. Then that many
   in flight and long-polled when SIGTERM arrives: all answered within the 10 s drain budget,
   then the process exits.

Run: ``python benchmarks/server.py [--rollouts 1000] [--latency-ms 20] [--polls 1000 10000]
[--scale 10000] [--grouped] [--skip-throughput] [--skip-polls]`` (default: all of it, at 1,000
and 10,000, a few minutes). Every figure is printed beside the load average: CPU ms per rollout
holds on a busy machine, ratios and latencies do not. Figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from _http_load import LoadClient

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from verifiers_lite.clients import ChatClient  # noqa: E402
from verifiers_lite.core.registry import load_environment  # noqa: E402
from verifiers_lite.executors.remote import RemoteExecutor  # noqa: E402
from verifiers_lite.remote import RolloutClient  # noqa: E402
from verifiers_lite.server.protocol import LEASE_HEADER  # noqa: E402
from verifiers_lite.testing.fake_server import FakeServerProcess, free_port  # noqa: E402

MODEL = "fake-arith"


def start_rollout_server(
    max_concurrent: int, num_examples: int, max_queued: int
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "verifiers_lite.cli.serve",
            "arithmetic",
            "--port",
            str(port),
            "--max-concurrent",
            str(max_concurrent),
            "--max-queued",
            str(max_queued),
            "--env-args",
            f'{{"num_examples": {num_examples}}}',
        ],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return proc, wait_healthy(proc, f"http://127.0.0.1:{port}")


def wait_healthy(proc: subprocess.Popen[bytes], url: str) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return url
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


async def throughput(
    fake: FakeServerProcess, n: int, concurrency: int, grouped: bool
) -> dict[str, float]:
    per = 4 if grouped else 1
    env = load_environment("arithmetic", num_examples=n // per)
    inputs = env.get_eval_inputs(n // per, per, False, 0)
    client = ChatClient(fake.base_url)
    kw: dict[str, Any] = dict(
        max_concurrent=concurrency,
        progress=False,
        independent_scoring=not grouped,
        sampling_args={"temperature": 0},
    )  # deterministic: both runs do the same work
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
    assert [r["reward"] for r in local.rows] == [
        r["reward"] for r in remote.rows
    ]  # same work both ways
    return {
        "in_process_rps": n / local_s,
        "server_rps": n / remote_s,
        "ratio": local_s / remote_s,
        "local_cpu_ms": 1000 * local_cpu / n,
        "driver_cpu_ms": 1000 * remote_cpu / n,
        "server_cpu_ms": 1000 * server_cpu / n,
    }


class StubBackend:
    """A model of fixed latency inside the server: each rollout sleeps, then returns a tiny row.

    Used for the long-poll and scale measurements, so that what is measured is the server and
    its clients (admission, held polls, wake-ups, answers), not a model client's connection pool.
    """

    max_admitted: int | None = None
    retry_after_sec = 1.0

    def __init__(self, latency_sec: float) -> None:
        self.latency_sec = latency_sec
        self.running: dict[str, asyncio.Task[Any]] = {}

    async def execute(self, request: Any, ctx: Any) -> dict[str, Any]:
        ctx.set_status("running")
        task = asyncio.current_task()
        assert task is not None
        self.running[request.rollout_id] = task
        try:
            await asyncio.sleep(self.latency_sec)
        finally:
            self.running.pop(request.rollout_id, None)
        return {"completion": [{"role": "assistant", "content": "ok"}], "metrics": {}}

    async def cancel(self, rollout_id: str) -> None:
        task = self.running.get(rollout_id)
        if task is not None:
            task.cancel()

    def health(self) -> dict[str, Any]:
        return {"backend": "stub", "running": len(self.running)}

    async def shutdown(self) -> None:
        return None


def serve_stub(port: int, latency_sec: float, lease_sec: float) -> None:
    """The rollout server process of the long-poll and scale runs (``--serve-stub``)."""
    from verifiers_lite.server import create_rollout_server, run_rollout_server

    app = create_rollout_server(
        StubBackend(latency_sec),
        result_wait_timeout_sec=min(30.0, lease_sec / 2),
        polling_lease_timeout_sec=lease_sec,
    )
    run_rollout_server(app, port=port)


def start_stub_server(
    latency_ms: float, lease_sec: float = 120.0
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--serve-stub",
            str(port),
            "--poll-latency-ms",
            str(latency_ms),
            "--lease-sec",
            str(lease_sec),
        ],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stderr=subprocess.DEVNULL,
    )
    return proc, wait_healthy(proc, f"http://127.0.0.1:{port}")


def proc_status(pid: int) -> tuple[float, int]:
    """(RSS in MiB, open file descriptors) of a process (Linux /proc)."""
    rss = next(
        int(line.split()[1])
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if line.startswith("VmRSS:")
    )
    return rss / 1024, len(os.listdir(f"/proc/{pid}/fd"))


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1)))]


def _rollout_body(rollout_id: str) -> dict[str, Any]:
    return {
        "rollout_id": rollout_id,
        "initial_messages": [{"role": "user", "content": "q"}],
        "chat_completions_url": "http://127.0.0.1:9/v1",
        "grade": False,
    }


async def _admit(http: LoadClient, rollout_id: str) -> tuple[float, dict[str, Any]]:
    t = time.perf_counter()
    status, accepted = await http.request("POST", "/rollout", json=_rollout_body(rollout_id))
    assert status == 202, (status, accepted)
    return time.perf_counter() - t, accepted


async def _admit_batch(http: LoadClient, ids: list[str]) -> tuple[float, list[dict[str, Any]]]:
    """One ``POST /rollouts`` admitting every id."""
    t = time.perf_counter()
    status, data = await http.request(
        "POST", "/rollouts", json={"rollouts": [_rollout_body(i) for i in ids]}
    )
    assert status == 200, (status, data)
    results: list[dict[str, Any]] = data["results"]
    assert all(a["status_code"] == 202 for a in results), results[:3]
    return time.perf_counter() - t, results


async def _long_poll_many(http: LoadClient, accepted: list[dict[str, Any]]) -> dict[str, float]:
    """Long-poll every rollout with ``POST /rollouts/results`` until all are terminal; the
    time each result was read."""
    pending = {a["rollout_id"]: a["polling_lease_token"] for a in accepted}
    read_at: dict[str, float] = {}
    while pending:
        status, data = await http.request("POST", "/rollouts/results", json={"leases": pending})
        assert status == 200, (status, data)
        now = time.perf_counter()
        for item in data["results"]:
            if item["status"] in ("success", "failure", "cancelled"):
                assert item["status"] == "success", item
                read_at[item["rollout_id"]] = now
                del pending[item["rollout_id"]]
    return read_at


async def _long_poll(http: LoadClient, accepted: dict[str, Any]) -> dict[str, Any]:
    """Poll until terminal, ``wait=terminal``: one request per rollout unless it outlives the wait."""
    headers = {LEASE_HEADER: accepted["polling_lease_token"]}
    while True:
        status, data = await http.request(
            "GET", f"/rollout/{accepted['rollout_id']}/result?wait=terminal", headers=headers
        )
        assert status == 200, (status, data)
        if data["status"] in ("success", "failure", "cancelled"):
            return dict(data)


async def poll_latency(n: int, latency_ms: float, batch: bool) -> dict[str, float]:
    """n rollouts admitted at once, each long-polled, by the lean load client (one connection
    per rollout in flight, as n independent clients would have).

    Admission: POST sent -> 202 read (``batch``: all n in one ``POST /rollouts``, each
    rollout's admission time is that request's). Delivery: 202 read -> terminal result read,
    minus the model's time (batched: a rollout starts when admitted, before the batch's 202 is
    read, so this can be negative). Also CPU ms per rollout of the server and of the load client.
    """
    proc, url = start_stub_server(latency_ms)
    latency = latency_ms / 1000
    try:
        async with LoadClient(url) as http:
            await _long_poll(http, (await _admit(http, "warm-up"))[1])

            async def one(i: int) -> tuple[float, float]:
                admission, accepted = await _admit(http, f"p{i}")
                t = time.perf_counter()
                data = await _long_poll(http, accepted)
                assert data["status"] == "success", data
                return admission, time.perf_counter() - t - latency

            s0, c0 = cpu_sec(proc.pid), cpu_sec()
            if batch:
                admission, answers = await _admit_batch(http, [f"p{i}" for i in range(n)])
                t = time.perf_counter()
                read_at = await _long_poll_many(http, answers)
                results = [(admission, at - t - latency) for at in read_at.values()]
            else:
                results = await asyncio.gather(*(one(i) for i in range(n)))
            server_cpu, client_cpu = cpu_sec(proc.pid) - s0, cpu_sec() - c0
    finally:
        stop(proc)
    admission_ms = [1000 * a for a, _ in results]
    delivery_ms = [1000 * d for _, d in results]
    return {
        "polls": n,
        "admit_p50": _pct(admission_ms, 0.5),
        "admit_p99": _pct(admission_ms, 0.99),
        "p50_ms": _pct(delivery_ms, 0.5),
        "p99_ms": _pct(delivery_ms, 0.99),
        "server_cpu_ms": 1000 * server_cpu / n,
        "client_cpu_ms": 1000 * client_cpu / n,
    }


async def client_latency(n: int, latency_ms: float) -> dict[str, float]:
    """n rollouts asked of ``RolloutClient.run_state`` at once (what ``RemoteExecutor`` calls):
    call -> state, minus the model's time, admission included."""
    proc, url = start_stub_server(latency_ms)
    latency = latency_ms / 1000
    ask = dict(
        chat_completions_url="http://127.0.0.1:9/v1",
        llm_api_key=None,
        model="m",
        sampling_args=None,
    )

    def row(i: int) -> Any:
        return {
            "prompt": [{"role": "user", "content": "q"}],
            "example_id": i,
            "task": "t",
            "answer": "",
            "info": {},
        }

    try:
        async with RolloutClient(url) as client:
            await client.run_state(row(-1), **ask)  # warm-up

            async def one(i: int) -> float:
                t = time.perf_counter()
                state = await client.run_state(row(i), **ask)
                assert not state.get("error"), state.get("error")
                return time.perf_counter() - t - latency

            s0, c0 = cpu_sec(proc.pid), cpu_sec()
            delays = [1000 * d for d in await asyncio.gather(*(one(i) for i in range(n)))]
            server_cpu, client_cpu = cpu_sec(proc.pid) - s0, cpu_sec() - c0
    finally:
        stop(proc)
    return {
        "polls": n,
        "p50_ms": _pct(delays, 0.5),
        "p99_ms": _pct(delays, 0.99),
        "server_cpu_ms": 1000 * server_cpu / n,
        "client_cpu_ms": 1000 * client_cpu / n,
    }


async def _health(http: LoadClient) -> dict[str, Any]:
    status, data = await http.request("GET", "/health")
    assert status == 200, (status, data)
    return dict(data)


async def _until(what: str, check: Any, limit_sec: float) -> float:
    """Seconds until ``await check()`` is true (polled every 50 ms), or RuntimeError."""
    t = time.perf_counter()
    while not await check():
        if time.perf_counter() - t > limit_sec:
            raise RuntimeError(f"{what}: not within {limit_sec}s")
        await asyncio.sleep(0.05)
    return time.perf_counter() - t


async def held_then_expired(n: int, lease_sec: float) -> dict[str, float]:
    """n rollouts admitted (one batch) against a 10-minute model, each then long-polled by its
    own GET: the server's RSS per in-flight rollout and RSS and fds per held poll. Then the
    polls stop: every lease lapses, every task is cancelled, the server goes idle."""
    proc, url = start_stub_server(600_000, lease_sec)
    try:
        async with LoadClient(url) as http:
            await _admit(http, "warm-up")  # never polled either
            rss0, fds0 = proc_status(proc.pid)
            _, accepted = await _admit_batch(http, [f"e{i}" for i in range(n)])
            rss1, _ = proc_status(proc.pid)
            async with LoadClient(url) as pollers:
                polls = [asyncio.ensure_future(_long_poll(pollers, a)) for a in accepted]

                async def all_held() -> bool:
                    return bool((await _health(http))["held_polls"] == n)

                await _until("every poll held", all_held, 300)
                rss2, fds2 = proc_status(proc.pid)
                for p in polls:
                    p.cancel()
                await asyncio.gather(*polls, return_exceptions=True)
            stopped_at = time.perf_counter()

            async def idle() -> bool:
                health = await _health(http)
                return bool(health["lifecycle"]["active_rollouts"] == 0 and health["running"] == 0)

            await _until("lease expiry", idle, lease_sec + 300)
            idle_after = time.perf_counter() - stopped_at
            finals = await _long_poll_batch_once(http, accepted)
    finally:
        stop(proc)
    return {
        "admitted": len(accepted),
        "kib_per_rollout": 1024 * (rss1 - rss0) / n,
        "kib_per_poll": 1024 * (rss2 - rss1) / n,
        "fds_per_poll": (fds2 - fds0) / n,
        "expired": sum(r.get("err_category") == "lease_expired" for r in finals),
        "idle_after_sec": idle_after,
    }


async def _long_poll_batch_once(
    http: LoadClient, accepted: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """One ``POST /rollouts/results`` (answers at once when one is terminal)."""
    leases = {a["rollout_id"]: a["polling_lease_token"] for a in accepted}
    status, data = await http.request("POST", "/rollouts/results", json={"leases": leases})
    assert status == 200, (status, data)
    results: list[dict[str, Any]] = data["results"]
    return results


async def drain_on_sigterm(n: int, latency_ms: float) -> dict[str, float]:
    """n rollouts in flight (one batch), long-polled together, when SIGTERM arrives: all are
    answered within the drain budget, then the process exits."""
    proc, url = start_stub_server(latency_ms)
    try:
        async with LoadClient(url) as http:
            _, accepted = await _admit_batch(http, [f"d{i}" for i in range(n)])
            polls = asyncio.ensure_future(_long_poll_many(http, accepted))
            t = time.perf_counter()
            proc.send_signal(signal.SIGTERM)
            answered = len(await polls)
            await asyncio.to_thread(proc.wait, 120)
            exit_sec = time.perf_counter() - t
    finally:
        if proc.poll() is None:
            proc.kill()
    return {
        "in_flight": n,
        "answered": answered,
        "exit_sec": exit_sec,
        "returncode": proc.returncode,
    }


async def _on_uvloop(coro: Any) -> Any:
    """Run ``coro`` on a uvloop loop in a thread when uvloop is installed (as the server does):
    the long-poll clients are a load generator here, and should cost the shared cores little."""
    try:
        import uvloop
    except ImportError:
        return await coro
    return await asyncio.to_thread(uvloop.run, coro)


def _load() -> str:
    return f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs"


async def main(a: argparse.Namespace) -> None:
    if not a.skip_throughput:
        # asyncio's own loop here: the driver of an in-process run and of a remote one alike.
        with FakeServerProcess(latency_ms=a.latency_ms) as fake:
            tp = await throughput(fake, a.rollouts, a.concurrency, a.grouped)
        print(_load())
        print(
            f"throughput ({a.rollouts} rollouts, {'groups of 4' if a.grouped else 'independent'}, "
            f"{a.concurrency} concurrent, model {a.latency_ms} ms): in-process {tp['in_process_rps']:.0f}/s, "
            f"remote executor {tp['server_rps']:.0f}/s, ratio {tp['ratio']:.2f} (target >= 0.85)"
        )
        print(
            f"CPU ms per rollout: in-process {tp['local_cpu_ms']:.2f}; through the server: driver "
            f"{tp['driver_cpu_ms']:.2f} + server process {tp['server_cpu_ms']:.2f} (targets <= 0.5 each)"
        )
    for n, batch in ((n, batch) for n in a.polls for batch in (False, True)):
        lp = await _on_uvloop(poll_latency(n, a.poll_latency_ms, batch))
        print(_load())
        how = (
            "in one POST /rollouts, long-polled together (POST /rollouts/results)"
            if batch
            else "at once, each by its own POST /rollout and long-polled by its own GET"
        )
        print(
            f"{n} rollouts admitted {how} (model {a.poll_latency_ms:.0f} ms): "
            f"admission p50 {lp['admit_p50']:.0f} ms, p99 {lp['admit_p99']:.0f} ms; result delivered beyond "
            f"the model's time after the 202: p50 {lp['p50_ms']:.0f} ms, p99 {lp['p99_ms']:.0f} ms; CPU ms per "
            f"rollout: server {lp['server_cpu_ms']:.3f}, load client {lp['client_cpu_ms']:.3f}"
        )
    for n in a.polls:
        cl = await _on_uvloop(client_latency(n, a.poll_latency_ms))
        print(_load())
        print(
            f"{n} rollouts asked of RolloutClient.run_state at once (the executor's path; model "
            f"{a.poll_latency_ms:.0f} ms): state returned beyond the model's time after the call, admission "
            f"included: p50 {cl['p50_ms']:.0f} ms, p99 {cl['p99_ms']:.0f} ms; CPU ms per rollout: server "
            f"{cl['server_cpu_ms']:.3f}, RolloutClient {cl['client_cpu_ms']:.3f}"
        )
    if a.scale:
        ex = await _on_uvloop(held_then_expired(a.scale, a.lease_sec))
        print(_load())
        print(
            f"{ex['admitted']} rollouts in flight: {ex['kib_per_rollout']:.1f} KiB server RSS each; each "
            f"long-polled by its own GET: {ex['kib_per_poll']:.1f} KiB and {ex['fds_per_poll']:.2f} fds per "
            f"held poll; polls stopped: {ex['expired']} failed lease_expired, all cancelled, server idle "
            f"{ex['idle_after_sec']:.1f} s later (lease {a.lease_sec:.0f} s)"
        )
        dr = await _on_uvloop(drain_on_sigterm(a.scale, a.drain_latency_ms))
        print(_load())
        print(
            f"SIGTERM with {dr['in_flight']} rollouts in flight (model {a.drain_latency_ms:.0f} ms, drain "
            f"budget 10 s): {dr['answered']} answered, exit {dr['exit_sec']:.1f} s after the signal "
            f"(status {dr['returncode']})"
        )


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--rollouts", type=int, default=1000)
    p.add_argument("--concurrency", type=int, default=32)
    p.add_argument(
        "--latency-ms", type=float, default=20.0, help="fake model latency (throughput run)"
    )
    p.add_argument(
        "--polls",
        type=int,
        nargs="*",
        default=[1000, 10000],
        help="sizes of the long-poll runs (e.g. --polls 1000 10000; none: skip)",
    )
    p.add_argument("--poll-latency-ms", type=float, default=3000.0)
    p.add_argument(
        "--scale",
        type=int,
        default=10000,
        help="rollouts in flight for the lease-expiry and SIGTERM-drain runs (0: skip)",
    )
    p.add_argument(
        "--lease-sec", type=float, default=20.0, help="polling lease of the held/lease-expiry run"
    )
    p.add_argument(
        "--drain-latency-ms", type=float, default=3000.0, help="model latency of the drain run"
    )
    p.add_argument(
        "--grouped", action="store_true", help="groups of 4 rollouts (default: independent)"
    )
    p.add_argument("--skip-throughput", action="store_true", help="long polls (and --scale) only")
    p.add_argument(
        "--skip-polls", action="store_true", help="throughput only (same as --polls with no size)"
    )
    p.add_argument("--serve-stub", type=int, metavar="PORT", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.skip_polls:
        a.polls = []
    return a


if __name__ == "__main__":
    args = parse_args()
    if args.serve_stub:
        serve_stub(args.serve_stub, args.poll_latency_ms / 1000, args.lease_sec)
    else:
        # Every held poll is a connection: lift the soft limit on open files (children inherit it).
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        asyncio.run(main(args))
