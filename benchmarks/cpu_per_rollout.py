"""CPU per rollout of a whole process: verifiers_lite's ``generate`` vs a bare aiohttp loop.

Workload: single-turn, ``ChatClient``, N rollouts (default 4,000: 1,000 examples x 4), 128 in
flight, against the zero-latency fake server on 127.0.0.1. Each side runs in its own subprocess
in the same invocation, so the ratio compares figures taken on one machine at one time.

    python benchmarks/cpu_per_rollout.py                      # figures and the ratio
    python benchmarks/cpu_per_rollout.py --rollouts 2000      # a smaller run
    python benchmarks/cpu_per_rollout.py --profile 25         # plus cProfile's top 25 entries
    python benchmarks/cpu_per_rollout.py --previous 0.636     # fail above a previous release's figure

Goal: verifiers_lite's CPU per rollout at most 2x the bare loop's, and never above the previous
release's figure (``--previous``, ms/rollout measured on the same machine).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PER_EXAMPLE, IN_FLIGHT, GOAL_RATIO = 4, 128, 2.0


def _rows(n_examples: int) -> list[dict]:
    return [
        {"question": f"What is {i} + {i % 9}?", "answer": str(i + i % 9)} for i in range(n_examples)
    ]


def _case_vf(base_url: str, n_examples: int, profile: int) -> dict:
    import verifiers_lite as vf

    def correct(completion, answer) -> float:
        return float(vf.extract_boxed_answer(completion[-1]["content"] or "") == answer)

    env = vf.SingleTurnEnv(dataset=_rows(n_examples), rubric=vf.Rubric([correct]))
    client = vf.ChatClient(base_url)
    env.evaluate_sync(client, "fake-arith", num_examples=4, progress=False)  # warm connections
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    t0, c0 = time.perf_counter(), time.process_time()
    out = env.evaluate_sync(
        client,
        "fake-arith",
        rollouts_per_example=PER_EXAMPLE,
        max_concurrent=IN_FLIGHT,
        progress=False,
    )
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    if profiler is not None:
        import io
        import pstats

        profiler.disable()
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(profile)
        print(text.getvalue(), file=sys.stderr)
    assert len(out) == n_examples * PER_EXAMPLE and not out.summary["errors"], out.summary
    return {"wall": wall, "cpu": cpu, "n": len(out)}


def _case_bare(base_url: str, n_examples: int, profile: int) -> dict:
    """The floor: the same requests, a semaphore, the answers parsed, nothing else."""
    rows = _rows(n_examples)

    async def main() -> dict:
        import aiohttp

        sem = asyncio.Semaphore(IN_FLIGHT)
        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1024))

        async def one(row: dict) -> str:
            messages = [{"role": "user", "content": row["question"]}]
            async with (
                sem,
                session.post(
                    f"{base_url}/chat/completions",
                    json={"model": "fake-arith", "messages": messages},
                ) as r,
            ):
                return (await r.json())["choices"][0]["message"]["content"]

        await asyncio.gather(*(one(r) for r in rows[:4]))
        t0, c0 = time.perf_counter(), time.process_time()
        await asyncio.gather(*(one(r) for r in rows for _ in range(PER_EXAMPLE)))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        await session.close()
        return {"wall": wall, "cpu": cpu, "n": len(rows) * PER_EXAMPLE}

    return asyncio.run(main())


def _run_child(impl: str, base_url: str, n_examples: int, profile: int) -> dict:
    cmd = [sys.executable, __file__, "--child", impl, "--base-url", base_url]
    cmd += ["--examples", str(n_examples), "--profile", str(profile)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode:
        print(proc.stderr[-3000:])
        raise SystemExit(1)
    if profile and impl == "vf":
        print(proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rollouts", type=int, default=4000)
    parser.add_argument("--profile", type=int, default=0, help="print cProfile's top N entries")
    parser.add_argument("--previous", type=float, help="the previous release's ms/rollout")
    parser.add_argument("--child", choices=["vf", "bare"], help=argparse.SUPPRESS)
    parser.add_argument("--base-url", default="", help=argparse.SUPPRESS)
    parser.add_argument("--examples", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        fn = _case_vf if args.child == "vf" else _case_bare
        print(json.dumps(fn(args.base_url, args.examples, args.profile)))
        return

    sys.path.insert(0, str(ROOT))
    from verifiers_lite.testing.fake_server import FakeServerProcess

    n_examples = max(1, args.rollouts // PER_EXAMPLE)
    with FakeServerProcess(latency_ms=0) as server:
        bare = _run_child("bare", server.base_url, n_examples, 0)
        vf = _run_child("vf", server.base_url, n_examples, 0)
        if args.profile:  # a separate run: the profiler's own cost stays out of the figures
            _run_child("vf", server.base_url, n_examples, args.profile)
    vf_ms, bare_ms = vf["cpu"] * 1000 / vf["n"], bare["cpu"] * 1000 / bare["n"]
    ratio = vf_ms / bare_ms
    print(f"rollouts: {vf['n']}, in flight: {IN_FLIGHT}, single-turn, ChatClient, 0 ms stub")
    print(f"verifiers_lite  CPU {vf_ms:.3f} ms/rollout  {vf['n'] / vf['wall']:.0f} rollouts/s")
    print(
        f"bare aiohttp    CPU {bare_ms:.3f} ms/rollout  {bare['n'] / bare['wall']:.0f} rollouts/s"
    )
    print(f"ratio           {ratio:.2f}x (goal <= {GOAL_RATIO:.1f}x)")
    failed = False
    if args.previous is not None:
        print(f"previous        {args.previous:.3f} ms/rollout")
        failed = vf_ms > args.previous
    print(json.dumps({"vf_ms": vf_ms, "bare_ms": bare_ms, "ratio": ratio}))
    if failed:
        raise SystemExit("CPU per rollout is above the previous release's figure")


if __name__ == "__main__":
    main()
