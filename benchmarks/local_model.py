"""64 arithmetic rollouts through verifiers_lite vs the same 64 requests sent directly.

Both sides talk to the same embedded llama.cpp server (SmolLM2-135M) at the same concurrency,
with temperature 0 so they ask the model for exactly the same work. Printed: wall time of each,
completion tokens, decode speed (completion tokens/s), the llama.cpp build's CPU features (the
project installs a portable build: no -march=native), and the throughput ratio direct_wall /
vf_wall (target >= 0.95: the library's scheduling, scoring and saving cost at most 5% next to
the model), next to the figures measured before with a native (-march=native) build.

    python benchmarks/local_model.py                 # 64 rollouts, concurrency 4, 4 reps
    python benchmarks/local_model.py --sweep         # also: which concurrency / threads is fastest

Runs on CPU; expect 2-3 minutes on 2 cores (more on a loaded machine: compare the ratio, not
the seconds).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import verifiers_lite as vf  # noqa: E402
from verifiers_lite.local.supervisor import LocalModel  # noqa: E402

SAMPLING = {"max_tokens": 16, "temperature": 0.0}
# Measured on 2 shared AMD EPYC cores with the earlier -march=native build (same 64 rollouts,
# concurrency 4): direct 10.1 s / vf 10.5 s and 13.5 s / 13.5 s, ratio 0.97-1.00.
NATIVE_BUILD_REFERENCE = (
    "native build (before): direct 10.1-13.5 s, vf 10.5-13.5 s, ratio 0.97-1.00"
)


def build_inputs(n_rollouts: int, per_example: int) -> tuple[Any, list[dict[str, Any]]]:
    env = vf.load_environment("arithmetic", num_examples=max(1, n_rollouts // per_example))
    return env, env.get_eval_inputs(rollouts_per_example=per_example)


async def direct(
    base_url: str, model: str, inputs: list[dict[str, Any]], concurrency: int
) -> tuple[float, int]:
    """The same requests with a bare aiohttp client: no scheduling, scoring or saving."""
    import aiohttp

    sem = asyncio.Semaphore(concurrency)
    tokens = 0

    async def one(session: aiohttp.ClientSession, inp: dict[str, Any]) -> None:
        nonlocal tokens
        async with (
            sem,
            session.post(
                f"{base_url}/chat/completions",
                json={"model": model, "messages": inp["prompt"], **SAMPLING},
            ) as resp,
        ):
            body = json.loads(await resp.text())
            tokens += int(body["usage"]["completion_tokens"])

    async with aiohttp.ClientSession() as session:
        t0 = time.perf_counter()
        await asyncio.gather(*(one(session, inp) for inp in inputs))
        return time.perf_counter() - t0, tokens


def through_vf(
    env: Any, client: Any, model: str, inputs: list[dict[str, Any]], concurrency: int
) -> tuple[float, int]:
    """The rollouts through verifiers_lite: grouped scheduling, rubric scoring, results saved."""
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        out = env.generate_sync(
            inputs,
            client,
            model,
            sampling_args=SAMPLING,
            max_concurrent=concurrency,
            results_path=str(Path(tmp) / "run"),
            progress=False,
        )
        wall = time.perf_counter() - t0
    assert not any(r.get("error") for r in out.rows), [
        r["error"] for r in out.rows if r.get("error")
    ][:1]
    return wall, out.summary["completion_tokens"]


def compare(
    server: LocalModel, n: int, per_example: int, concurrency: int, reps: int
) -> dict[str, float]:
    env, inputs = build_inputs(n, per_example)
    client = server.client()
    asyncio.run(direct(server.base_url, server.model_name, inputs[:2], 1))  # warm-up
    d_times, v_times, d_tok, v_tok = [], [], 0, 0
    for rep in range(reps):
        # Interleaved and alternating who goes first (d v, v d, ...), so drifting load from
        # other processes on the machine hits both sides alike.
        for side in ("direct", "vf") if rep % 2 == 0 else ("vf", "direct"):
            if side == "direct":
                w, d_tok = asyncio.run(
                    direct(server.base_url, server.model_name, inputs, concurrency)
                )
                d_times.append(w)
            else:
                w, v_tok = through_vf(env, client, server.model_name, inputs, concurrency)
                v_times.append(w)
    d, v = statistics.median(d_times), statistics.median(v_times)
    return {
        "direct_s": d,
        "vf_s": v,
        "ratio": d / v,
        "direct_tokens": d_tok,
        "vf_tokens": v_tok,
        "rollouts_per_s": len(inputs) / v,
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("-n", "--rollouts", type=int, default=64)
    ap.add_argument("-r", "--rollouts-per-example", type=int, default=4)
    ap.add_argument("-c", "--concurrency", type=int, default=4)
    ap.add_argument(
        "--threads", type=int, default=None, help="llama.cpp threads (default: all cores)"
    )
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument(
        "--sweep",
        action="store_true",
        help="also time direct requests at other concurrency/threads",
    )
    args = ap.parse_args()
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}")
    import llama_cpp

    from verifiers_lite.local.cpu_safety import cpu_has_amx

    info = llama_cpp.llama_print_system_info().decode(errors="replace")
    features = [
        f.split("=")[0].strip()
        for f in info.replace("CPU :", "|").split("|")
        if f.strip().endswith("= 1")
    ]
    print(
        f"llama.cpp build: {' '.join(features)}; this CPU has {'' if cpu_has_amx() else 'no '}AMX"
    )
    with LocalModel(n_threads=args.threads) as server:
        res = compare(server, args.rollouts, args.rollouts_per_example, args.concurrency, args.reps)
        print(
            f"{args.rollouts} arithmetic rollouts, concurrency {args.concurrency}, "
            f"{server.n_threads} llama.cpp threads, median of {args.reps}:"
        )
        print(
            f"  direct (aiohttp)   {res['direct_s']:7.2f} s   {res['direct_tokens']} completion tokens"
        )
        print(
            f"  verifiers_lite     {res['vf_s']:7.2f} s   {res['vf_tokens']} completion tokens"
            f"   ({res['rollouts_per_s']:.2f} rollouts/s)"
        )
        print(
            f"  decode speed       {res['direct_tokens'] / res['direct_s']:7.1f} completion tokens/s direct, "
            f"{res['vf_tokens'] / res['vf_s']:.1f} through verifiers_lite"
        )
        print(f"  ratio direct/vf    {res['ratio']:7.3f}   (target >= 0.95)")
        print(f"  reference          {NATIVE_BUILD_REFERENCE}")
        if args.sweep:
            _, inputs = build_inputs(args.rollouts, args.rollouts_per_example)
            for c in (1, 2, 4, 16):
                w, _ = asyncio.run(direct(server.base_url, server.model_name, inputs, c))
                print(
                    f"  sweep: direct, concurrency {c:3d}, {server.n_threads} threads: {w:6.2f} s"
                )
    if args.sweep:
        sweep_processes(args)


def sweep_processes(args: argparse.Namespace) -> None:
    """llama-cpp-python's server answers one request at a time: compare 1 process using every
    core with one single-threaded process per core (examples split between them, as vf routes)."""
    from verifiers_lite.local.supervisor import start_servers

    _, inputs = build_inputs(args.rollouts, args.rollouts_per_example)
    cores = os.cpu_count() or 1
    for parallel in sorted({1, min(4, cores)}):
        servers = start_servers(parallel, n_threads=max(1, cores // parallel))
        try:

            async def split(servers: list[Any] = servers, parallel: int = parallel) -> float:
                t0 = time.perf_counter()
                await asyncio.gather(
                    *(
                        direct(
                            s.base_url,
                            s.model_name,
                            [x for x in inputs if x["example_id"] % parallel == i],
                            max(1, args.concurrency // parallel),
                        )
                        for i, s in enumerate(servers)
                    )
                )
                return time.perf_counter() - t0

            asyncio.run(split())  # warm-up
            times = [asyncio.run(split()) for _ in range(args.reps)]
            print(
                f"  sweep: {parallel} process(es) x {servers[0].n_threads} thread(s), concurrency "
                f"{args.concurrency}: median {statistics.median(times):6.2f} s"
            )
        finally:
            for s in servers:
                s.stop()


if __name__ == "__main__":
    main()
