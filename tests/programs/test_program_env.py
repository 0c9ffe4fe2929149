"""ProgramEnv: a program per rollout, its example delivered, what it left scored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import verifiers_lite as vf
from tests.programs.helpers import agent, program_env, rows
from verifiers_lite.core.trajectory import model_calls
from verifiers_lite.testing.fake_server import FakeServerProcess


def _reply_with_question(messages: list[dict[str, Any]]) -> str:
    return f"answer to {messages[-1]['content']}"


DIALECTS = ["chat", "chat_stream", "responses", "responses_stream"]


def test_an_sdk_program_in_each_dialect_is_scored_from_what_it_left() -> None:
    env = program_env(agent("sdk", *DIALECTS), "alpha", "beta")
    out = env.evaluate_sync(vf.ScriptedClient(_reply_with_question), "run-model", progress=False)
    for row in out.rows:
        assert row["error"] is None, row["error"]
        question = row["prompt"][-1]["content"]
        program = row["env_state"]["program"]
        assert program["answer"].splitlines() == [f"answer to {question}"] * 4
        assert program["exit_code"] == 0
        calls = model_calls(row)
        assert [(c["dialect"], c["stream"]) for c in calls] == [
            ("chat", False),
            ("chat", True),
            ("responses", False),
            ("responses", True),
        ]
        assert all(c["request"]["messages"][-1]["content"] == question for c in calls)
        # Each call starts afresh (its history extends no earlier call's): a branch each.
        assert [c["branch"] for c in calls] == [0, 1, 2, 3]
        # The conversation it ended on, then its answer (which differs from that last reply).
        assert row["completion"] == [
            {"role": "assistant", "content": f"answer to {question}"},
            {"role": "assistant", "content": program["answer"]},
        ]
        assert row["stop_reason"] == "stop" and row["turns"] == 4


def test_each_token_reaches_only_its_own_rollout() -> None:
    questions = [f"question {i}" for i in range(8)]
    env = program_env(agent("echo"), *questions, max_concurrent=8)
    out = env.evaluate_sync(vf.ScriptedClient(_reply_with_question), "m", progress=False)
    for row in out.rows:
        question = row["prompt"][-1]["content"]
        calls = model_calls(row)
        assert [c["request"]["messages"][-1]["content"] for c in calls] == [question]
        assert row["env_state"]["program"]["answer"] == f"answer to {question}"


@pytest.mark.parametrize("key", ["", "vfp-not-a-rollout"])
def test_a_call_without_a_valid_token_is_refused(key: str) -> None:
    env = program_env(agent("bad_key", key))
    client = vf.ScriptedClient("never")
    row = env.evaluate_sync(client, "m", progress=False).rows[0]
    assert row["env_state"]["program"]["answer"] == "401"
    assert client.requests == 0 and row["env_state"]["program_calls"] == []


def test_secrets_are_withheld_unless_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-parent")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "t-parent")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-parent")
    monkeypatch.setenv("PLAIN_SETTING", "kept")
    env = program_env(agent("env"), pass_env=["MY_SERVICE_TOKEN"], env={"EXTRA": "given"})
    row = env.evaluate_sync(vf.ScriptedClient("x"), "the-model", progress=False).rows[0]
    seen = json.loads(row["env_state"]["program"]["stdout"])
    assert "ANTHROPIC_API_KEY" not in seen
    assert seen["MY_SERVICE_TOKEN"] == "t-parent" and seen["PLAIN_SETTING"] == "kept"
    assert seen["EXTRA"] == "given" and seen["VF_MODEL"] == "the-model"
    assert seen["OPENAI_API_KEY"].startswith("vfp-") and seen["OPENAI_BASE_URL"].startswith(
        "http://127.0.0.1:"
    )
    assert seen["VF_QUESTION"] == "q" and seen["VF_TASK_FILE"].endswith("task.json")


def test_argv_placeholders_files_and_answer_file(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    (template / "README").write_text("from the template")
    script = (
        "import json,sys,pathlib;"
        "t=json.load(open(sys.argv[2]));"
        "pathlib.Path('out.txt').write_text(sys.argv[1]+'|'+t['question']+'|'+pathlib.Path('given.txt').read_text());"
        "print('noise', {})"
    )
    import sys

    env = vf.ProgramEnv(
        [sys.executable, "-c", script, "{info[tag]}", "{task_file}"],
        dataset=[
            {"question": "Q1", "answer": "x", "info": {"tag": "T", "files": {"given.txt": "G"}}}
        ],
        workdir_template=template,
        answer_file="out.txt",
    )
    row = env.evaluate_sync(vf.ScriptedClient("x"), "m", progress=False).rows[0]
    program = row["env_state"]["program"]
    assert program["answer"] == "T|Q1|G"
    assert program["files"]["README"] == "from the template"
    assert program["stdout"].strip() == "noise {}"  # braces that are no placeholder stay
    assert set(program["files"]) == {"README", "given.txt", "out.txt"}  # not the task file


def test_a_crash_is_an_env_error_row_with_exit_code_and_stderr() -> None:
    env = program_env(agent("crash"))
    row = env.evaluate_sync(vf.ScriptedClient("x"), "m", progress=False).rows[0]
    assert row["error"]["category"] == "env_error"
    assert "code 3" in row["error"]["message"] and "about to fail" in row["error"]["message"]
    assert row["env_state"]["program"]["exit_code"] == 3


def test_a_python_callable_runs_in_a_subprocess() -> None:
    from tests.programs.callables import ask_model

    env = program_env(ask_model, "what now")
    row = env.evaluate_sync(vf.ScriptedClient(_reply_with_question), "m", progress=False).rows[0]
    assert row["error"] is None, row["error"]
    assert row["env_state"]["program"]["answer"] == "answer to what now"
    assert row["reward"] == 0.0  # the rubric compares with the question itself


def test_bad_construction_is_refused_before_any_work() -> None:
    with pytest.raises(ValueError, match="argv list"):
        vf.ProgramEnv("python agent.py", dataset=rows("q"))
    with pytest.raises(ValueError, match="top-level function"):
        vf.ProgramEnv(lambda task: "x", dataset=rows("q"))
    with pytest.raises(ValueError, match="stdin"):
        vf.ProgramEnv(agent("echo"), dataset=rows("q"), stdin="file")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="vf.Limits"):
        vf.ProgramEnv(agent("echo"), dataset=rows("q"), limits={"turns": 2})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_output_bytes"):
        vf.ProgramEnv(agent("echo"), dataset=rows("q"), max_output_bytes=0)


def test_sampling_args_of_the_environment_override_the_program(
    fake_server: FakeServerProcess,
) -> None:
    env = program_env(agent("sdk", "chat"), sampling_args={"temperature": 0.0, "max_tokens": 9})
    client = vf.ChatClient(fake_server.base_url)
    row = env.evaluate_sync(client, "fake-echo", progress=False).rows[0]
    assert row["error"] is None, row["error"]
    sent = fake_server.requests()[-1]
    assert sent["model"] == "fake-echo"  # the run's model, whatever the program named
    assert sent["temperature"] == 0.0 and sent["max_tokens"] == 9 and sent["top_p"] == 0.5
    assert "user" not in sent
    assert row["env_state"]["program"]["program_models"] == ["gpt-x"]


def test_divergent_histories_are_branches_and_the_last_one_is_the_completion() -> None:
    replies = iter(["a1", "a2", "s1", "a3"])
    env = program_env(agent("branches"), "start")
    row = env.evaluate_sync(vf.ScriptedClient(lambda m: next(replies)), "m", progress=False).rows[0]
    assert row["error"] is None, row["error"]
    calls = model_calls(row)  # every call, each request whole
    assert [c["branch"] for c in calls] == [0, 0, 1, 0]
    assert [c["message"]["content"] for c in calls] == ["a1", "a2", "s1", "a3"]
    assert calls[2]["request"]["messages"] == [
        {"role": "system", "content": "summariser"},
        {"role": "user", "content": "sum up"},
    ]
    assert [m["content"] for m in calls[3]["request"]["messages"]] == [
        "main",
        "start",
        "a1",
        "go on",
        "a2",
        "summary: s1",
    ]
    assert all(c["timing"]["latency_ms"] >= 0 for c in calls)
    # The row's trajectory is the branch it ended on.
    trajectory = vf.core.model_calls({k: v for k, v in row.items() if k != "env_state"})
    assert [s["message"]["content"] for s in trajectory] == ["a1", "a2", "a3"]
    assert [s["request"]["messages"] for s in trajectory] == [
        c["request"]["messages"] for c in calls if c["branch"] == 0
    ]
    assert [m["content"] for m in row["completion"]] == ["a1", "go on", "a2", "summary: s1", "a3"]


def test_rescore_reads_the_saved_calls_without_running_the_program(tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    import sys

    script = f"import sys;open({str(counter)!r},'a').write('x');print(sys.stdin.read().upper())"
    env = vf.ProgramEnv([sys.executable, "-c", script], dataset=rows("abc", "de"))
    out = env.evaluate_sync(
        vf.ScriptedClient("x"), "m", progress=False, results_path=tmp_path / "run"
    )
    assert counter.read_text() == "xx"

    def shouted(state: Any) -> float:
        return float(len(state["program"]["answer"]))

    again = vf.rescore(tmp_path / "run", vf.Rubric([shouted]))
    assert sorted(r["reward"] for r in again.rows) == [2.0, 3.0]
    assert counter.read_text() == "xx"
    assert len(out.rows) == 2
