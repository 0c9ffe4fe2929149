"""Peak RSS of long runs with results_path: N single-turn rollouts, each N in its own process.

    python benchmarks/memory.py --n 100000 --n 300000 --n 1000000 [--client scripted|server]
                                [--no-fsync] [--per-example 4 | --examples 25000]
                                [--dataset arrow|list] [--parquet]

For each N: wall time, the dataset's memory (RSS once the environment is built, before the
run), the peak RSS of the run and of reading its outputs back (``len``, ``summary``, pass@k,
a two-column DataFrame, all streamed from disk; with ``--parquet`` also ``to_parquet``), and
the growth of the peak between successive N. The dataset grows with N (N / 4 examples):
``--dataset arrow`` (default) is a ``datasets.Dataset`` memory-mapped from an Arrow file, as
``datasets.load_dataset`` gives; ``list`` is a Python list of dicts the benchmark builds (the
caller's memory, which grows with N whatever the library does). ``--client scripted`` (default)
answers in-process (``vf.ScriptedClient``: no HTTP, so the
figures are the library's own); ``server`` goes through the fake OpenAI server as a real
client would.

Targets: peak RSS of 1,000,000 rollouts <= 1 GB, and flat: the 300k run within 10% of the
100k one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _rss import peak_rss_mb  # noqa: E402


def current_rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def answer(messages: list[dict]) -> str:
    """Right on even numbers, wrong on odd ones: a reward mean near 0.5."""
    a, b = map(int, re.findall(r"-?\d+", messages[-1]["content"])[:2])
    return f"The answer is \\boxed{{{a + b if a % 2 == 0 else a + b + 1}}}."


def example(i: int) -> dict:
    return {"question": f"What is {i} + {i % 9}?", "answer": str(i + i % 9)}


def arrow_dataset(n_examples: int, directory: str):
    """A ``datasets.Dataset`` memory-mapped from an Arrow file written in batches (no list of
    every row is ever built), as ``datasets.load_dataset`` returns one."""
    import datasets
    import pyarrow as pa

    path = Path(directory) / "dataset.arrow"
    schema = pa.schema([("question", pa.string()), ("answer", pa.string())])
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, schema) as writer:
        for start in range(0, n_examples, 10_000):
            batch = [example(i) for i in range(start, min(n_examples, start + 10_000))]
            writer.write_batch(pa.RecordBatch.from_pylist(batch, schema=schema))
    return datasets.Dataset.from_file(str(path))


def one_run(
    n: int, per_example: int, client_kind: str, fsync: bool, dataset: str, parquet: bool
) -> dict:
    import verifiers_lite as vf

    n_examples = n // per_example

    def correct(completion, answer) -> float:
        return float(vf.extract_boxed_answer(completion[-1]["content"] or "") == answer)

    with tempfile.TemporaryDirectory() as tmp:
        rows = (
            arrow_dataset(n_examples, tmp)
            if dataset == "arrow"
            else [example(i) for i in range(n_examples)]
        )
        env = vf.SingleTurnEnv(dataset=rows, rubric=vf.Rubric([correct]))
        tmp = str(Path(tmp) / "run")
        before = current_rss_mb()
        t0 = time.perf_counter()
        if client_kind == "scripted":
            out = env.evaluate_sync(
                vf.ScriptedClient(answer),
                "scripted",
                rollouts_per_example=per_example,
                results_path=tmp,
                max_concurrent=128,
                progress=False,
                fsync=fsync,
            )
        else:
            from verifiers_lite.testing.fake_server import FakeServerProcess

            with FakeServerProcess() as server:
                out = env.evaluate_sync(
                    vf.ChatClient(server.base_url),
                    "fake-arith",
                    rollouts_per_example=per_example,
                    results_path=tmp,
                    max_concurrent=128,
                    progress=False,
                    fsync=fsync,
                )
        wall = time.perf_counter() - t0
        run_peak = peak_rss_mb()
        t1 = time.perf_counter()
        s = out.summary
        pass1 = out.pass_at_k(1)
        df = out.to_pandas(columns=["example_id", "reward"])
        read_s = time.perf_counter() - t1
        parquet_s = None
        if parquet:
            t2 = time.perf_counter()
            out.to_parquet(Path(tmp).parent / "out.parquet")
            parquet_s = time.perf_counter() - t2
        size_mb = (Path(tmp) / "results.jsonl").stat().st_size / 2**20
        assert len(out) == n and s["num_rollouts"] == n and len(df) == n, (
            len(out),
            s["num_rollouts"],
            len(df),
        )
    return {
        "n": n,
        "wall_s": wall,
        "rate": n / wall,
        "file_mb": size_mb,
        "dataset_rss_mb": before,
        "run_peak_mb": run_peak,
        "peak_mb": peak_rss_mb(),
        "read_s": read_s,
        "parquet_s": parquet_s,
        "reward_mean": s["reward_mean"],
        "pass@1": pass1,
        "lazy": out.lazy,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, action="append", help="rollouts (repeat for several runs)")
    parser.add_argument("--per-example", type=int, default=4)
    parser.add_argument(
        "--examples",
        type=int,
        default=0,
        help="a fixed dataset of this many examples, N / examples rollouts each (pass@k "
        "with large k): the dataset's own memory then does not grow with N",
    )
    parser.add_argument("--client", choices=("scripted", "server"), default="scripted")
    parser.add_argument(
        "--no-fsync",
        action="store_true",
        help="fsync=False: each group's write is not waited to the disk (memory is the same; "
        "on these disks an fsync per group, not the library, sets the pace)",
    )
    parser.add_argument(
        "--dataset",
        choices=("arrow", "list"),
        default="arrow",
        help="the dataset: a memory-mapped datasets.Dataset (default) or a Python list of dicts",
    )
    parser.add_argument(
        "--parquet", action="store_true", help="also time to_parquet in the read-back"
    )
    parser.add_argument(
        "--one", action="store_true", help=argparse.SUPPRESS
    )  # a child: one run, JSON out
    args = parser.parse_args()
    ns = args.n or [100_000]
    if args.one:
        print(
            json.dumps(
                one_run(
                    ns[0],
                    args.per_example,
                    args.client,
                    not args.no_fsync,
                    args.dataset,
                    args.parquet,
                )
            )
        )
        return
    print(
        f"load average before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
        f"({os.cpu_count()} cores); client {args.client}, "
        + (
            f"{args.examples} examples"
            if args.examples
            else f"{args.per_example} rollouts per example"
        )
        + ", "
        f"dataset {args.dataset}, fsync {'off' if args.no_fsync else 'on'}"
    )
    print(subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip())
    print(
        f"{'rollouts':>9} {'wall':>8} {'rate':>7} {'file':>8} {'dataset':>8} {'run peak':>9} {'growth':>7} "
        f"{'peak':>7} {'growth':>7} {'read back':>10} {'load':>5}"
    )
    prev = prev_run = None
    for n in ns:
        per_example = n // args.examples if args.examples else args.per_example
        proc = subprocess.run(
            [
                sys.executable,
                __file__,
                "--one",
                "--n",
                str(n),
                "--per-example",
                str(per_example),
                "--client",
                args.client,
                "--dataset",
                args.dataset,
                *(["--no-fsync"] if args.no_fsync else []),
                *(["--parquet"] if args.parquet else []),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            sys.exit(f"run of {n} failed:\n{proc.stderr[-3000:]}")
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        growth = f"{(r['peak_mb'] / prev - 1) * 100:+.1f}%" if prev else "—"
        run_growth = f"{(r['run_peak_mb'] / prev_run - 1) * 100:+.1f}%" if prev_run else "—"
        print(
            f"{n:>9,} {r['wall_s']:>7.0f}s {r['rate']:>6.0f}/s {r['file_mb']:>6.0f}MB {r['dataset_rss_mb']:>6.0f}MB "
            f"{r['run_peak_mb']:>7.0f}MB {run_growth:>7} {r['peak_mb']:>5.0f}MB {growth:>7} {r['read_s']:>9.1f}s "
            f"{os.getloadavg()[0]:>5.2f}"
            + (f"  to_parquet {r['parquet_s']:.1f}s" if r["parquet_s"] is not None else ""),
            flush=True,
        )
        prev, prev_run = r["peak_mb"], r["run_peak_mb"]
    print(
        "dataset: RSS with the environment built, before the run; run peak: peak RSS when the run has "
        "returned; peak: after reading the outputs back (summary, pass@1, two DataFrame columns; "
        "pandas alone is ~100 MB); growth: over the previous N"
    )
    print(subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip())


if __name__ == "__main__":
    main()
