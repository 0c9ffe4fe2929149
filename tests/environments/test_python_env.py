"""PythonEnv and the bundled python_math environment, driven by a scripted model."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import pytest

import verifiers_lite as vf
from verifiers_lite.clients.scripted import ScriptedClient
from verifiers_lite.sandbox import launch

LIMITS = vf.SandboxLimits(timeout=5, cpu=5, memory_mb=512)


def _tool_outputs(messages: list[dict]) -> list[str]:
    return [m["content"] for m in messages if m.get("role") == "tool"]


def test_python_tool_keeps_state_within_a_rollout_and_not_across_rollouts():
    rows = [{"example_id": i, "question": f"secret {i}", "answer": str(i)} for i in range(3)]

    def respond(messages: list[dict]) -> dict | str:
        outputs = _tool_outputs(messages)
        secret = next(m for m in messages if m["role"] == "user")["content"].split()[-1]
        script = [
            "print('secret' in dir())",  # a fresh interpreter: nothing from another rollout
            f"secret = {secret} * 7",
            "secret // 7",  # a bare expression is printed, as in a REPL
        ]
        if len(outputs) < len(script):
            return {
                "tool_calls": [
                    {
                        "id": f"c{len(outputs)}",
                        "name": "python",
                        "arguments": {"code": script[len(outputs)]},
                    }
                ]
            }
        return f"\\boxed{{{outputs[-1].strip()}}}"

    def correct(completion, answer) -> float:
        return 1.0 if vf.extract_boxed_answer(completion[-1]["content"]) == answer else 0.0

    env = vf.PythonEnv(dataset=rows, limits=LIMITS, rubric=vf.Rubric([correct]), max_turns=6)
    assert [t["function"]["name"] for t in env.tool_defs] == ["python"]
    # Interpreters another test left behind share this process's uid range: only new ones count.
    earlier = set(_sandbox_processes())
    out = env.evaluate_sync(
        ScriptedClient(respond), "scripted", rollouts_per_example=2, progress=False
    )
    assert len(out.rows) == 6 and all(r["error"] is None for r in out.rows)
    for row in out.rows:
        tools = _tool_outputs(row["completion"])
        assert tools == ["False\n", "[no output]", f"{row['answer']}\n"]
        assert row["reward"] == 1.0
    assert env.sandbox.started == 6  # one interpreter per rollout
    if os.geteuid() == 0:  # each rollout's interpreter is gone with its rollout, before any close()
        assert set(_sandbox_processes()) - earlier == set()
    env.sandbox.close()


def _sandbox_processes() -> list[int]:
    low = launch._UID_BASE + (os.getpid() % 100_000) * 1000
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        if (
            low <= int(status.split("Uid:", 1)[1].split()[0]) < low + 1000
            and "State:\tZ" not in status
        ):
            found.append(int(entry))
    return found


def test_tool_reports_errors_and_timeouts_to_the_model():
    rows = [{"example_id": 0, "question": "go", "answer": "x"}]
    cells = ["1 / 0", "import time\ntime.sleep(30)", "print('after')"]

    def respond(messages: list[dict]) -> dict | str:
        n = len(_tool_outputs(messages))
        return (
            {"tool_calls": [{"name": "python", "arguments": {"code": cells[n]}}]}
            if n < len(cells)
            else "done"
        )

    env = vf.PythonEnv(dataset=rows, limits=vf.SandboxLimits(timeout=1.5, cpu=5), max_turns=5)
    out = env.evaluate_sync(ScriptedClient(respond), "scripted", progress=False)
    div, slow, after = _tool_outputs(out.rows[0]["completion"])
    assert "ZeroDivisionError" in div and "[exit status 1]" in div
    assert "wall-clock limit" in slow
    assert after.startswith("[the previous interpreter was killed") and after.endswith("after\n")
    env.sandbox.close()


def test_python_env_arguments_are_checked():
    with pytest.raises(ValueError, match="either sandbox= or limits="):
        vf.PythonEnv(
            dataset=[{"question": "q", "answer": "a"}],
            sandbox=vf.Sandbox(pool_size=1),
            limits=LIMITS,
        )


def _solve(question: str) -> str:
    """Code a model would write for python_math questions (the sandbox computes the answer)."""
    numbers = [
        int(n) for n in re.findall(r"\d+", question.split(":")[-1] if ":" in question else question)
    ]
    if "Least Common Multiple" in question:
        return f"import math\nprint(math.lcm(*{numbers}))"
    if "Greatest Common Divisor" in question:
        return f"import math\nprint(math.gcd(*{numbers}))"
    a, b = re.search(r"(\d+)\s*\*\s*(\d+)", question).groups()
    return f"print({a} * {b})"


def test_python_math_end_to_end_with_code_computed_answers():
    pytest.importorskip("reasoning_gym")
    env = vf.load_environment("python_math", num_examples=6, seed=1)
    rows = env.get_eval_dataset()
    assert [r["info"]["rg_task"] for r in rows] == ["lcm", "gcd", "products"] * 2

    def respond(messages: list[dict]) -> dict | str:
        outputs = _tool_outputs(messages)
        if not outputs:
            question = next(m["content"] for m in messages if m["role"] == "user")
            return {"tool_calls": [{"name": "python", "arguments": {"code": _solve(question)}}]}
        return f"<answer>{outputs[-1].strip()}</answer>"

    out = env.evaluate_sync(ScriptedClient(respond), "scripted", progress=False)
    df = out.to_pandas()
    assert df["error"].isna().all()
    assert (df["rg_score"] == 1.0).all() and (df["used_python"] == 1.0).all()
    # the answers came from the sandbox, and agree with an independent computation here
    for row in out.rows:
        nums = [int(n) for n in re.findall(r"\d+", row["prompt"][-1]["content"].split(":")[-1])]
        expected = {"lcm": math.lcm(*nums), "gcd": math.gcd(*nums)}.get(row["info"]["rg_task"])
        if expected is not None:
            assert _tool_outputs(row["completion"]) == [f"{expected}\n"]
    json.dumps(out.rows)  # rows stay plain data (no sandbox objects leak into them)
    env.sandbox.close()


def test_python_math_checks_its_options():
    pytest.importorskip("reasoning_gym")
    with pytest.raises(ValueError, match="no_such_task"):
        vf.load_environment("python_math", tasks="no_such_task")
    with pytest.raises(ValueError, match="num_examples"):
        vf.load_environment("python_math", num_examples=0)
