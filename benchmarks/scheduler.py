"""Scheduler overhead: verifiers_lite generate vs a bare client loop sending the same requests.

Workload: 250 examples x 4 rollouts (N=1000), single-turn and 3-turn, 128 requests in flight,
against the fake server (verifiers_lite.testing.fake_server) at 0 ms and 50 ms latency.
Each case runs in its own subprocess so CPU time and peak RSS are its own.

    python benchmarks/scheduler.py            # all cases
    python benchmarks/scheduler.py --quick    # 0 ms only

Target: CPU per single-turn rollout <= 0.85 ms; >= 1000 single-turn rollouts/s;
`import verifiers_lite` <= 0.3 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

from _rss import peak_rss_mb  # benchmarks/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]
N_EXAMPLES, PER_EXAMPLE, IN_FLIGHT = 250, 4, 128


def _rows() -> list[dict]:
    return [
        {"question": f"What is {i} + {i % 9}?", "answer": str(i + i % 9)} for i in range(N_EXAMPLES)
    ]


def _case_vf(base_url: str, turns: int, transport: str) -> dict:
    import verifiers_lite as vf

    def correct(completion, answer) -> float:
        return float(vf.extract_boxed_answer(completion[-1]["content"] or "") == answer)

    class Repeat(vf.MultiTurnEnv):
        async def env_response(self, messages, state):
            return [{"role": "user", "content": "Check again."}]

    rubric = vf.Rubric([correct])
    env = (
        vf.SingleTurnEnv(dataset=_rows(), rubric=rubric)
        if turns == 1
        else Repeat(dataset=_rows(), rubric=rubric, max_turns=turns)
    )
    if transport == "openai":
        import openai

        client = openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0)
    else:
        client = vf.ChatClient(base_url)
    env.evaluate_sync(client, "fake-arith", num_examples=4, progress=False)  # warm connections
    t0, c0 = time.perf_counter(), time.process_time()
    out = env.evaluate_sync(
        client,
        "fake-arith",
        rollouts_per_example=PER_EXAMPLE,
        max_concurrent=IN_FLIGHT,
        progress=False,
    )
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    assert len(out) == N_EXAMPLES * PER_EXAMPLE and not out.summary["errors"], out
    return {"wall": wall, "cpu": cpu, "n": len(out)}


def _case_bare(base_url: str, turns: int, transport: str) -> dict:
    """The floor: the same requests with a semaphore and nothing else."""
    rows = _rows()

    async def main() -> dict:
        sem = asyncio.Semaphore(IN_FLIGHT)
        if transport == "openai":
            import openai

            client = openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0)

            async def send(messages):
                r = await client.chat.completions.create(model="fake-arith", messages=messages)
                return r.choices[0].message.content
        else:
            import aiohttp

            session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1024))

            async def send(messages):
                async with session.post(
                    f"{base_url}/chat/completions",
                    json={"model": "fake-arith", "messages": messages},
                ) as r:
                    return (await r.json())["choices"][0]["message"]["content"]

        async def one(row):
            messages = [{"role": "user", "content": row["question"]}]
            for t in range(turns):
                async with sem:
                    content = await send(messages)
                messages = [*messages, {"role": "assistant", "content": content}]
                if t < turns - 1:
                    messages.append({"role": "user", "content": "Check again."})

        await asyncio.gather(*(one(r) for r in rows[:4]))
        t0, c0 = time.perf_counter(), time.process_time()
        await asyncio.gather(*(one(r) for r in rows for _ in range(PER_EXAMPLE)))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        if transport != "openai":
            await session.close()
        return {"wall": wall, "cpu": cpu, "n": len(rows) * PER_EXAMPLE}

    return asyncio.run(main())


def _child(args: argparse.Namespace) -> None:
    fn = _case_vf if args.impl == "vf" else _case_bare
    result = fn(args.base_url, args.turns, args.transport)
    result["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(result))


def _import_time() -> float:
    code = "import time; t=time.perf_counter(); import verifiers_lite; print(time.perf_counter()-t)"
    times = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT
            ).stdout
        )
        for _ in range(5)
    ]
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="0 ms latency only")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--impl", default="vf")
    parser.add_argument("--transport", default="aiohttp")
    parser.add_argument("--turns", type=int, default=1)
    parser.add_argument("--base-url", default="")
    args = parser.parse_args()
    if args.child:
        return _child(args)

    sys.path.insert(0, str(ROOT))
    from verifiers_lite.testing.fake_server import FakeServerProcess

    print(f"import verifiers_lite: {_import_time() * 1000:.0f} ms (target <= 300 ms)")
    print(
        f"{'latency':>7} {'turns':>5} {'impl':<22} {'rollouts/s':>10} {'CPU ms/rollout':>14} {'peak RSS MB':>11}"
    )
    cases = [("vf", "aiohttp"), ("bare", "aiohttp"), ("vf", "openai"), ("bare", "openai")]
    for latency in [0] if args.quick else [0, 50]:
        with FakeServerProcess(latency_ms=latency) as server:
            for turns in (1, 3):
                results = {}
                for impl, transport in cases:
                    cmd = [
                        sys.executable,
                        __file__,
                        "--child",
                        "--impl",
                        impl,
                        "--transport",
                        transport,
                        "--turns",
                        str(turns),
                        "--base-url",
                        server.base_url,
                    ]
                    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
                    if proc.returncode:
                        print(proc.stderr[-2000:])
                        raise SystemExit(1)
                    r = json.loads(proc.stdout.strip().splitlines()[-1])
                    results[(impl, transport)] = r
                    label = f"{'verifiers_lite' if impl == 'vf' else 'bare loop'} ({transport})"
                    print(
                        f"{latency:>5}ms {turns:>5} {label:<22} {r['n'] / r['wall']:>10.0f} "
                        f"{r['cpu'] * 1000 / r['n']:>14.2f} {r['peak_rss_mb']:>11.0f}"
                    )
                vf_r, bare_r = results[("vf", "aiohttp")], results[("bare", "aiohttp")]
                bare_oa = results[("bare", "openai")]
                print(
                    f"        ratios ({turns}-turn): vf/bare-aiohttp throughput {bare_r['wall'] / vf_r['wall']:.2f}, "
                    f"vf/bare-openai throughput {bare_oa['wall'] / vf_r['wall']:.2f}, "
                    f"CPU vf/bare-aiohttp {vf_r['cpu'] / bare_r['cpu']:.2f}"
                )


if __name__ == "__main__":
    main()
