"""The bundled agent-program environments: model-free (ScriptedClient) and on the embedded model."""

from __future__ import annotations

import re
from typing import Any

import pytest
from verifiers_lite_envs.calculator import calculator

import verifiers_lite as vf
from verifiers_lite._util.extras import is_installed
from verifiers_lite.core.trajectory import model_calls


def _solver(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A perfect calculator agent's model: call the tool on the question, then box its result."""
    last = messages[-1]
    if last["role"] == "tool":
        return {"content": f"The answer is \\boxed{{{last['content']}}}."}
    expression = re.search(r"What is (.+)\?", str(last["content"])).group(1)  # type: ignore[union-attr]
    return {
        "content": "",
        "tool_calls": [{"name": "calculator", "arguments": {"expression": expression}}],
    }


@pytest.mark.parametrize(
    "sdk",
    [
        "openai",
        pytest.param(
            "agents",
            marks=pytest.mark.skipif(not is_installed("agents"), reason="needs the 'agents' extra"),
        ),
    ],
)
def test_calculator_agent_reaches_full_reward_with_a_perfect_script(sdk: str) -> None:
    env = vf.load_environment("calculator_agent", num_examples=3, sdk=sdk)
    out = env.evaluate_sync(vf.ScriptedClient(_solver), "scripted", progress=False)
    for row in out.rows:
        assert row["error"] is None, row["error"]
        assert row["reward"] == 1.0 and row["metrics"]["used_calculator"] == 1.0
        calls = model_calls(row)
        assert len(calls) == 2 and calls[1]["request"]["messages"][-1]["role"] == "tool"
        assert calls[0]["dialect"] == ("responses" if sdk == "agents" else "chat")
    # The program's answer is the truth, computed here independently of the program.
    answers = [r["env_state"]["program"]["answer"] for r in out.rows]
    truths = [
        calculator(r["prompt"][-1]["content"].removeprefix("What is ").rstrip("?"))
        for r in out.rows
    ]
    assert [a.split("{")[1].rstrip("}.") for a in answers] == truths


def test_fix_file_agent_is_rewarded_for_the_file_it_fixed() -> None:
    fixes = {
        "add": "sed -i 's/a - b/a + b/' solution.py",
        "square": "sed -i 's/x \\* 2/x * x/' solution.py",
    }

    def model(messages: list[dict[str, Any]]) -> dict[str, Any]:
        if messages[-1]["role"] == "tool":
            return {"content": "Fixed."}
        name = re.search(r"`(\w+)`", messages[-1]["content"]).group(1)  # type: ignore[union-attr]
        command = fixes.get(name, "true")
        return {"content": "", "tool_calls": [{"name": "shell", "arguments": {"command": command}}]}

    env = vf.load_environment("fix_file_agent", num_examples=3)
    out = env.evaluate_sync(vf.ScriptedClient(model), "scripted", progress=False)
    rewards = [r["reward"] for r in out.rows]
    assert [r["error"] for r in out.rows] == [None] * 3
    assert rewards == [1.0, 1.0, 0.0]  # the third (is_even) was left as it was
    assert [r["metrics"]["edited"] for r in out.rows] == [1.0, 1.0, 0.0]
    assert "a + b" in out.rows[0]["env_state"]["program"]["files"]["solution.py"]


@pytest.mark.local_model
@pytest.mark.slow
@pytest.mark.parametrize(
    ("env_id", "args"),
    [
        ("calculator_agent", {}),
        pytest.param(
            "calculator_agent",
            {"sdk": "agents"},
            marks=pytest.mark.skipif(not is_installed("agents"), reason="needs the 'agents' extra"),
        ),
        ("fix_file_agent", {}),
    ],
)
def test_program_environments_run_against_the_embedded_model(
    local_llm: Any, env_id: str, args: dict[str, Any]
) -> None:
    # A generous timeout: the embedded model answers one request at a time on shared cores.
    env = vf.load_environment(env_id, num_examples=1, max_calls=3, timeout=600, **args)
    out = env.evaluate_sync(local_llm.client(), local_llm.model_name, progress=False)
    for row in out.rows:
        # The small model may answer badly, but every call went through and was captured.
        assert row["error"] is None or row["error"]["category"] == "env_error", row["error"]
        assert row["env_state"]["program_calls"], row
        assert all(c["usage"]["completion_tokens"] > 0 for c in row["env_state"]["program_calls"])
