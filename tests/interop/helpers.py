"""What the inspect_ai interop tests share: a run of the calculator environment against the fake
thinking model (reasoning, tool calls, usage) with one rollout failed by an HTTP 400, and what
rows carry once written to an inspect log and read back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import verifiers_lite as vf
from verifiers_lite.core.columns import ROW_KEYS
from verifiers_lite.testing.fake_server import FakeServerProcess

EXAMPLES, ROLLOUTS = 3, 2


def thinking_run(server: FakeServerProcess, path: Path) -> vf.GenerateOutputs:
    """3 examples x 2 rollouts of ``calculator`` by ``fake-think``; the first request is answered
    HTTP 400, so one rollout is an error row."""
    server.configure(faults=[{"status": 400}])
    env = vf.load_environment("calculator", num_examples=EXAMPLES)
    return env.evaluate_sync(
        vf.ChatClient(base_url=server.base_url),
        "fake-think",
        num_examples=EXAMPLES,
        rollouts_per_example=ROLLOUTS,
        sampling_args={"temperature": 0.0, "max_tokens": 64},
        max_concurrent=1,
        results_path=path,
    )


def comparable(row: dict[str, Any]) -> dict[str, Any]:
    """A row's public fields, tool-call arguments as parsed JSON (inspect keeps them as a dict)."""
    out = {k: row.get(k) for k in ROW_KEYS}
    out["completion"] = [
        {
            **m,
            "tool_calls": [
                {
                    **c,
                    "function": {
                        **c["function"],
                        "arguments": json.loads(c["function"]["arguments"]),
                    },
                }
                for c in m["tool_calls"]
            ],
        }
        if m.get("tool_calls")
        else m
        for m in row.get("completion") or []
    ]
    return out
