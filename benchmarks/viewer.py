"""``vf-lite view`` on large runs: first-page latency and server memory (loopback only).

For runs of 1k and 100k rollouts (rows shaped like ``evaluate``'s, ~1 KB each, written group by
group by the results store) a ``vf-lite view`` subprocess is started and timed on:
first page of the Rollouts table (cold: the server's first request; warm: median of 5), the Run
page (statistics; waits at most 0.5 s for the index), an error filter, a sort by reward, a
text search, the last page, one transcript. Then the server's RSS (VmRSS) and peak (VmHWM), beside
the peak RSS of a process that only loads the same file as dicts (``read_rows``), which is what
holding every row in memory would cost.

Run: ``python benchmarks/viewer.py [--sizes 1000 100000]``.

Last measured (2 cores shared with other jobs, load ~8; 100k rows = 101 MB file; ms):
  rows     first page cold / warm   run page   error filter   sort   search   server RSS / peak   read_rows peak
  1,000        420-970 / 12            7            7           19      51        54 / 54 MB           26 MB
  100,000      580-830 / 37-45       970         9300*         250    1700        77 / 77 MB          531 MB
"cold" is a fresh server's very first request (uvicorn/anyio first-request paths; ~130 ms when measured
in-process), so it barely depends on the run's size: the first page never waits for the whole
file. The run page waits at most 0.5 s for indexing, then shows what is indexed and fills in live.
* a filter needs the whole index: on a fresh server it waits for the background scan of the
101 MB file (seconds on these busy cores); later filters on the same server take ~20 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from verifiers_lite.core.summary import RunSummary  # noqa: E402
from verifiers_lite.results.store import ResultsStore  # noqa: E402

PER_EXAMPLE = 4


def make_run(path: Path, n_rows: int, seed: int = 0) -> Path:
    """A finished-looking run of ``n_rows`` rollouts (3% errored), written like ``evaluate``."""
    rng = random.Random(seed)
    store = ResultsStore(path, fsync=False)
    meta = {
        "env_id": "arithmetic",
        "model": "bench",
        "num_rollouts": n_rows,
        "rollouts_per_example": PER_EXAMPLE,
        "sampling_args": {"max_tokens": 64},
        "env_args": {},
    }
    store.open(meta)
    totals = RunSummary()  # a finished run's metadata carries its summary, as generate writes it
    for e in range(n_rows // PER_EXAMPLE):
        group = []
        for i in range(PER_EXAMPLE):
            ok = rng.random() < 0.5
            err = rng.random() < 0.03
            group.append(
                {
                    "example_id": e,
                    "rollout_index": i,
                    "trajectory_id": f"{e:08x}{i:08x}",
                    "task": "default",
                    "prompt": [
                        {
                            "role": "system",
                            "content": "Solve the arithmetic problem. Reply with the equation and its result.",
                        },
                        {"role": "user", "content": f"What is {e % 97} + {i}? Example {e}."},
                    ],
                    "completion": []
                    if err
                    else [
                        {
                            "role": "assistant",
                            "content": "Let me think step by step. " * 8
                            + f"\\boxed{{{e % 97 + i + (0 if ok else 1)}}}",
                        }
                    ],
                    "answer": str(e % 97 + i),
                    "info": {"seed": e},
                    "reward": None if err else float(ok),
                    "metrics": {} if err else {"correct": float(ok), "answered": 1.0},
                    "advantage": None if err else 0.0,
                    "turns": 0 if err else 1,
                    "stop_reason": "error" if err else "stop",
                    "error": {"category": "model_timeout", "message": "no answer within 300 s"}
                    if err
                    else None,
                    "timing": {
                        "start": 1.8e9,
                        "generation_ms": rng.uniform(50, 500),
                        "scoring_ms": 0.1,
                        "total_ms": rng.uniform(50, 500),
                    },
                    "usage": {"prompt_tokens": 40, "completion_tokens": 0 if err else 60},
                    "input_hash": "0123456789abcdef",
                    "attempts": 1,
                }
            )
        store.append_group(group)
        totals.add_all(group)
    store.close()
    store.write_metadata({**meta, "status": "completed_with_errors", **totals.summary()})
    return path


def vm(pid: int) -> dict[str, float]:
    out = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) / 1024
    return out


def timed(url: str) -> tuple[float, Any]:
    t0 = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as resp:
        body = json.loads(resp.read())
    return time.perf_counter() - t0, body


def read_rows_peak(path: Path) -> float:
    """Peak RSS (MB) of a fresh process holding every row as a dict."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[2]); from verifiers_lite.results.store import read_rows;"
        "from benchmarks._rss import peak_rss_mb; rows = read_rows(__import__('pathlib').Path(sys.argv[1]));"
        "print(peak_rss_mb())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path / "results.jsonl"), str(REPO)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip())


def bench(n_rows: int, tmp: Path, first_page_only: bool = False) -> dict[str, Any]:
    run = make_run(tmp / f"run{n_rows}", n_rows)
    size_mb = (run / "results.jsonl").stat().st_size / 1e6
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "verifiers_lite.cli",
            "view",
            str(run),
            "--port",
            "0",
            "--no-browser",
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        assert proc.stdout is not None
        url = ""
        for line in proc.stdout:
            if "serving at " in line:
                url = line.split("serving at ", 1)[1].split()[0].rstrip("/")
                break
        startup = time.perf_counter() - t0
        rid = run.name
        rows = f"{url}/api/runs/{rid}/rows"
        r: dict[str, Any] = {
            "rows": n_rows,
            "file_mb": round(size_mb, 1),
            "startup_s": round(startup, 2),
            "load": os.getloadavg()[0],
        }
        r["first_page_cold_ms"] = timed(rows + "?limit=50")[0] * 1000
        r["first_page_warm_ms"] = (
            statistics.median(timed(rows + "?limit=50")[0] for _ in range(5)) * 1000
        )
        r["run_page_ms"] = timed(f"{url}/api/runs/{rid}")[0] * 1000
        r["runs_list_ms"] = timed(f"{url}/api/runs")[0] * 1000
        if first_page_only:
            mem = vm(proc.pid)
            r["server_rss_mb"], r["server_peak_mb"] = round(mem["VmRSS"]), round(mem["VmHWM"])
            return r
        r["error_filter_ms"] = timed(rows + "?error=any")[0] * 1000
        r["sort_reward_ms"] = timed(rows + "?sort=-reward")[0] * 1000
        dt, body = timed(rows + "?q=Example%2012345.")
        r["search_ms"], r["search_hits"] = dt * 1000, body["total"]
        r["last_page_ms"] = timed(rows + f"?offset={n_rows - 50}&limit=50")[0] * 1000
        r["transcript_ms"] = (
            timed(f"{url}/api/runs/{rid}/rows/{n_rows // PER_EXAMPLE - 1}/0")[0] * 1000
        )
        mem = vm(proc.pid)
        r["server_rss_mb"], r["server_peak_mb"] = round(mem["VmRSS"]), round(mem["VmHWM"])
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    r["read_rows_peak_mb"] = round(read_rows_peak(run))
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    ap.add_argument(
        "--first-page-only",
        action="store_true",
        help="time the first page, the run page and the runs list only (no filters that "
        "wait for the whole index, no read_rows comparison): for 1M-row runs",
    )
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="vf-view-bench-") as tmp:
        for n in args.sizes:
            results.append(bench(n, Path(tmp), args.first_page_only))
            print(
                json.dumps(
                    {k: round(v, 1) if isinstance(v, float) else v for k, v in results[-1].items()}
                ),
                flush=True,
            )
    if args.first_page_only:
        return
    print(
        f"\n{'rows':>8} {'first page cold/warm':>22} {'run page':>9} {'errors':>7} {'sort':>7} {'search':>8} "
        f"{'RSS/peak MB':>12} {'read_rows MB':>13}"
    )
    for r in results:
        print(
            f"{r['rows']:>8,} {r['first_page_cold_ms']:>11.0f} / {r['first_page_warm_ms']:>4.0f} ms "
            f"{r['run_page_ms']:>7.0f}ms {r['error_filter_ms']:>5.0f}ms {r['sort_reward_ms']:>5.0f}ms "
            f"{r['search_ms']:>6.0f}ms {r['server_rss_mb']:>5} / {r['server_peak_mb']:<5} {r['read_rows_peak_mb']:>10}"
        )


if __name__ == "__main__":
    main()
