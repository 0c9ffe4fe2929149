"""Hand-made output rows with the shapes that break naive Arrow conversion."""

from __future__ import annotations

from typing import Any


def tool_rows() -> list[dict[str, Any]]:
    """Two examples × two rollouts; tool calls, nested info of varying shape, an error row."""
    rows = []
    for eid in range(2):
        for idx in range(2):
            ok = (eid + idx) % 2 == 0
            completion: list[dict[str, Any]] = (
                [
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": f"c{eid}{idx}",
                                "type": "function",
                                "function": {"name": "calculator", "arguments": '{"expr": "2+2"}'},
                            }
                        ],
                    },
                    {"role": "tool", "tool_call_id": f"c{eid}{idx}", "content": "4"},
                    {"role": "assistant", "content": "\\boxed{4}"},
                ]
                if ok
                else [{"role": "assistant", "content": "no idea"}]
            )
            rows.append(
                {
                    "example_id": eid,
                    "rollout_index": idx,
                    "trajectory_id": f"t{eid}{idx}",
                    "task": "calc",
                    "prompt": [
                        {"role": "system", "content": "Use tools."},
                        {"role": "user", "content": f"2+2 #{eid}"},
                    ],
                    "completion": completion,
                    "answer": "4",
                    "info": {"level": eid, "tags": ["a", "b"]}
                    if eid == 0
                    else {"level": "hard", "extra": {"x": [1, {"y": 2}]}},
                    "reward": 1.0 if ok else 0.0,
                    "metrics": {"correct": 1.0 if ok else 0.0, "tool_calls": 1 if ok else 0},
                    "advantage": 0.5 if ok else -0.5,
                    "turns": 2 if ok else 1,
                    "stop_reason": "stop",
                    "error": None
                    if ok or eid == 0
                    else {"category": "model_api", "message": "HTTP 500 <boom>"},
                    "timing": {"generation_ms": 10.0, "scoring_ms": 1.0, "total_ms": 11.0},
                    "usage": {"prompt_tokens": 12, "completion_tokens": 7},
                }
            )
    return rows
