"""CPU per rollout of a whole process: verifiers_lite's ``generate`` vs a bare aiohttp loop.

Workload: single-turn, ``ChatClient``, N rollouts (default 4,000: 1,000 examples x 4), 128 in
flight, against the zero-latency fake server on 127.0.0.1. Each side runs in its own subprocess
in the same invocation, so the ratio compares figures taken on one machine at one time.

    python benchmarks/cpu_per_rollout.py                      # figures and the ratio
    python benchmarks/cpu_per_rollout.py --rollouts 2000      # a smaller run
    python benchmarks/cpu_per_rollout.py --profile 25         # plus cProfile's top 25 entries
    python benchmarks/cpu_per_rollout.py --baseline 1a15f54   # beside a git revision's code
    python benchmarks/cpu_per_rollout.py --repeat 3           # 3 rounds, sides alternating
    python benchmarks/cpu_per_rollout.py --previous 0.636     # fail above a previous release's figure

``--baseline REV`` checks REV out into a temporary git worktree and measures its code with this
same workload in the same invocation, side by side (each round runs bare, this tree, REV); it
fails when this tree's median is above REV's by more than ``--tolerance`` (default 5%: the
rounds' spread on a shared machine).

Goal: verifiers_lite's CPU per rollout at most 2x the bare loop's, and never above the previous
release's figure (``--baseline REV``, or ``--previous`` ms/rollout measured on the same machine).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
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
    return {"wall": wall, "cpu": cpu, "n": len(out), "package": str(Path(vf.__file__).parent)}


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


def _run_child(
    impl: str, base_url: str, n_examples: int, profile: int, tree: Path | None = None
) -> dict:
    """One side measured in its own process; ``tree``: import verifiers_lite from that checkout."""
    cmd = [sys.executable, __file__, "--child", impl, "--base-url", base_url]
    cmd += ["--examples", str(n_examples), "--profile", str(profile)]
    tree = tree or ROOT
    # the tree's package first on the path, ahead of an installed (or editable) one
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(tree / "environments")])}
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tree, env=env)
    if proc.returncode:
        print(proc.stderr[-3000:])
        raise SystemExit(1)
    if profile and impl == "vf":
        print(proc.stderr)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    # the code measured is the tree's own, not an installed copy found first
    expected = tree / "verifiers_lite"
    if impl == "vf" and Path(result["package"]).resolve() != expected.resolve():
        raise SystemExit(f"measured {result['package']}, not {expected}")
    return result


@contextlib.contextmanager
def _checkout(rev: str) -> Iterator[Path]:
    """``rev`` checked out into a temporary git worktree, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="vf-baseline-") as tmp:
        tree = Path(tmp) / "tree"
        git = ["git", "-C", str(ROOT)]
        subprocess.run([*git, "worktree", "add", "--detach", str(tree), rev], check=True)
        try:
            yield tree
        finally:
            subprocess.run([*git, "worktree", "remove", "--force", str(tree)], check=False)


def _ms(result: dict) -> float:
    return result["cpu"] * 1000 / result["n"]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rollouts", type=int, default=4000)
    parser.add_argument("--profile", type=int, default=0, help="print cProfile's top N entries")
    parser.add_argument("--previous", type=float, help="the previous release's ms/rollout")
    parser.add_argument("--baseline", metavar="REV", help="also measure this git revision's code")
    parser.add_argument("--repeat", type=int, default=1, help="rounds, the sides alternating")
    parser.add_argument(
        "--tolerance", type=float, default=0.05, help="how far above --baseline still passes"
    )
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
    runs: dict[str, list[dict]] = {"bare": [], "vf": [], "baseline": []}
    with contextlib.ExitStack() as stack:
        tree = stack.enter_context(_checkout(args.baseline)) if args.baseline else None
        server = stack.enter_context(FakeServerProcess(latency_ms=0))
        for _ in range(max(1, args.repeat)):
            runs["bare"].append(_run_child("bare", server.base_url, n_examples, 0))
            runs["vf"].append(_run_child("vf", server.base_url, n_examples, 0))
            if tree is not None:
                runs["baseline"].append(_run_child("vf", server.base_url, n_examples, 0, tree))
        if args.profile:  # a separate run: the profiler's own cost stays out of the figures
            _run_child("vf", server.base_url, n_examples, args.profile)
    ms = {side: [_ms(r) for r in rs] for side, rs in runs.items() if rs}
    med = {side: statistics.median(v) for side, v in ms.items()}
    rate = {side: statistics.median(r["n"] / r["wall"] for r in runs[side]) for side in ms}
    ratio = med["vf"] / med["bare"]
    n = runs["vf"][0]["n"]
    print(f"rollouts: {n}, in flight: {IN_FLIGHT}, single-turn, ChatClient, 0 ms stub")
    names = {"vf": "verifiers_lite", "bare": "bare aiohttp", "baseline": f"at {args.baseline}"}
    for side in ("vf", "baseline", "bare"):
        if side in ms:
            each = " / ".join(f"{x:.3f}" for x in ms[side])
            print(
                f"{names[side]:<16}CPU {med[side]:.3f} ms/rollout (median; {each})  "
                f"{rate[side]:.0f} rollouts/s"
            )
    print(f"ratio           {ratio:.2f}x the bare loop (goal <= {GOAL_RATIO:.1f}x)")
    failed: list[str] = []
    figures: dict[str, float] = {"vf_ms": med["vf"], "bare_ms": med["bare"], "ratio": ratio}
    if "baseline" in med:
        to_base = med["vf"] / med["baseline"]
        figures.update(baseline_ms=med["baseline"], to_baseline=to_base)
        print(f"vs {args.baseline:<12}{to_base:.2f}x its CPU per rollout")
        if to_base > 1 + args.tolerance:
            failed.append(f"above {args.baseline}'s figure by more than {args.tolerance:.0%}")
    if args.previous is not None:
        print(f"previous        {args.previous:.3f} ms/rollout")
        if med["vf"] > args.previous:
            failed.append("above the previous release's figure")
    print(json.dumps(figures))
    if failed:
        raise SystemExit("CPU per rollout is " + "; ".join(failed))


if __name__ == "__main__":
    main()
