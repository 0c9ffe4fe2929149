"""Bytes per rollout of the stored model calls, on a 5-turn environment.

Runs the guess-the-number game against the fake server's bisecting model (``fake-guess``) with a
range too wide to finish in 5 guesses, so every rollout makes exactly 5 model calls, and a system
prompt of ``--system-chars`` characters (a realistic instruction block). Each saved row is
measured as one JSON line (``results.jsonl``) in three layouts:

- ``no_call_records``: the row without per-call records (each step only its finish reason, as
  rows were stored before calls were kept);
- ``whole_requests``: every call kept with its request's messages whole (the growing prompt
  stored once per call);
- ``stored``: as the library writes it (each request's new messages only).

    python benchmarks/trajectory_bytes.py [--examples 20] [--system-chars 2000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import verifiers_lite as vf
from verifiers_lite.core.trajectory import model_calls
from verifiers_lite.results.store import read_rows
from verifiers_lite.testing.fake_server import FakeServerProcess


def _bytes(row: dict[str, Any]) -> int:
    return len(json.dumps(row, ensure_ascii=False).encode())


def layouts(row: dict[str, Any]) -> dict[str, int]:
    """The row's size in each layout (see the module's docstring)."""
    calls = model_calls(row)
    bare = {k: v for k, v in row.items() if k != "trajectory"}
    bare["finish_reasons"] = [c.get("finish_reason") for c in calls]
    whole = {**bare, "trajectory": [dict(c) for c in calls]}
    del whole["finish_reasons"]
    return {"no_call_records": _bytes(bare), "whole_requests": _bytes(whole), "stored": _bytes(row)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=20)
    ap.add_argument("--system-chars", type=int, default=2000)
    a = ap.parse_args()
    env = vf.load_environment("guess_number", num_examples=a.examples, high=1000, max_turns=5)
    env.system_prompt = ((env.system_prompt or "") + " Think it through. " * a.system_chars)[
        : a.system_chars
    ]
    with FakeServerProcess() as server, tempfile.TemporaryDirectory() as tmp:
        server.configure(latency_ms=0)
        env.evaluate_sync(
            vf.ChatClient(server.base_url), "fake-guess", results_path=tmp, progress=False
        )
        rows = read_rows(Path(tmp) / "results.jsonl")
    turns = sorted({r["turns"] for r in rows})
    sizes = [layouts(dict(r)) for r in rows]
    per = {k: round(sum(s[k] for s in sizes) / len(sizes)) for k in sizes[0]}
    print(
        json.dumps(
            {
                "rollouts": len(rows),
                "turns_per_rollout": turns,
                "system_prompt_chars": a.system_chars,
                "bytes_per_rollout": per,
                "stored_vs_whole": round(per["stored"] / per["whole_requests"], 3),
                "errors": sum(1 for r in rows if r.get("error")),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
