"""Response cache: a cached re-run of 1,000 rollouts against the first run that filled the cache.

Fake OpenAI-compatible server on 127.0.0.1 with a per-request latency (a stand-in for a model),
250 examples x 4 rollouts at temperature 0.7. Run 1 fills a fresh cache (all misses); run 2 is the
same evaluation with another rubric (all hits, no model call). Prints wall times, the ratio and the
hit counts as JSON.

    python benchmarks/cache.py [--latency-ms 50] [--examples 250] [--rollouts 4]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import verifiers_lite as vf
from verifiers_lite.testing.fake_server import FakeServerProcess


def exact(completion, answer) -> float:
    return 1.0 if vf.extract_boxed_answer(completion[-1]["content"] or "") == answer else 0.0


def close(completion, answer) -> float:
    got = vf.extract_boxed_answer(completion[-1]["content"] or "")
    return max(0.0, 1.0 - abs(int(got) - int(answer)) / 10) if got else 0.0


def env(n: int, reward) -> vf.SingleTurnEnv:
    rows = [{"question": f"What is {i} + {i % 9}?", "answer": str(i + i % 9)} for i in range(n)]
    return vf.SingleTurnEnv(dataset=rows, rubric=vf.Rubric([reward]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency-ms", type=float, default=50.0)
    ap.add_argument("--examples", type=int, default=250)
    ap.add_argument("--rollouts", type=int, default=4)
    ap.add_argument("--concurrency", type=int, default=64)
    a = ap.parse_args()
    with FakeServerProcess(latency_ms=a.latency_ms) as server, tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "responses.sqlite"
        client = vf.ChatClient(server.base_url)
        times, metas = [], []
        for reward in (exact, close):
            t0 = time.perf_counter()
            out = env(a.examples, reward).evaluate_sync(
                client,
                "fake-arith",
                rollouts_per_example=a.rollouts,
                max_concurrent=a.concurrency,
                sampling_args={"temperature": 0.7},
                cache=cache,
                progress=False,
            )
            times.append(time.perf_counter() - t0)
            metas.append(out.metadata["cache"])
        print(
            json.dumps(
                {
                    "rollouts": a.examples * a.rollouts,
                    "latency_ms": a.latency_ms,
                    "concurrency": a.concurrency,
                    "first_run_s": round(times[0], 3),
                    "cached_rerun_s": round(times[1], 3),
                    "speedup": round(times[0] / times[1], 2),
                    "first_run_cache": metas[0],
                    "rerun_cache": metas[1],
                    "model_requests": server.stats()["requests"],
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
