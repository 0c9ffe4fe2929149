"""Peak RSS of a long run: N single-turn rollouts against the fake server with results_path.

    python benchmarks/memory.py [--n 100000]

Target: 100,000 rollouts stay under 500 MB peak RSS (results streamed to disk).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from _rss import peak_rss_mb  # benchmarks/ is on sys.path when a script runs

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--per-example", type=int, default=4)
    args = parser.parse_args()
    import verifiers_lite as vf
    from verifiers_lite.testing.fake_server import FakeServerProcess

    n_examples = args.n // args.per_example
    rows = [{"question": f"What is {i} + {i % 9}?", "answer": str(i + i % 9)} for i in range(n_examples)]

    def correct(completion, answer) -> float:
        return float(vf.extract_boxed_answer(completion[-1]["content"] or "") == answer)

    env = vf.SingleTurnEnv(dataset=rows, rubric=vf.Rubric([correct]))
    with FakeServerProcess() as server, tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        out = env.evaluate_sync(vf.ChatClient(server.base_url), "fake-arith", rollouts_per_example=args.per_example,
                                results_path=tmp, max_concurrent=128, progress=False)
        wall = time.perf_counter() - t0
        size_mb = (Path(tmp) / "results.jsonl").stat().st_size / 2**20
    peak = peak_rss_mb()
    print(f"{len(out)} rollouts in {wall:.1f}s ({len(out) / wall:.0f}/s); results.jsonl {size_mb:.0f} MB; "
          f"peak RSS {peak:.0f} MB (target < 500 MB)")


if __name__ == "__main__":
    main()
