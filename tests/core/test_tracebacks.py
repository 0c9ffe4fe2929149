"""Where an author's code failed is kept: a bug in ``env_response`` or in a reward function
leaves its type, message and the stack from the author's own frames (file, line, function,
source line; the library's frames folded) on the row; a saved run stores each distinct
traceback once and its rows the key; ``VF_DEBUG=1`` keeps every frame."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import verifiers_lite as vf
from verifiers_lite.core.tracebacks import user_traceback
from verifiers_lite.results.store import read_rows

AUTHOR_MODULE = """
import verifiers_lite as vf


class HintEnv(vf.MultiTurnEnv):
    async def env_response(self, messages, state):
        hint = state["hints"][0]  # the author's bug: nothing put 'hints' on the state
        return [{"role": "user", "content": hint}]


def as_number(completion, answer):
    return float(int(completion[-1]["content"]) == int(answer))  # the bug: not always a number


def rows(n):
    return [{"question": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(n)]
"""


def _author_module(tmp_path: Path) -> tuple[ModuleType, Path]:
    path = tmp_path / "hint_env.py"
    path.write_text(AUTHOR_MODULE)
    spec = importlib.util.spec_from_file_location("hint_env_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module, path


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def test_env_bug_keeps_the_authors_frame_and_folds_the_librarys(fake_server, tmp_path):
    module, path = _author_module(tmp_path)
    env = module.HintEnv(dataset=module.rows(3), max_turns=3)
    run = tmp_path / "run"
    out = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-echo",
        rollouts_per_example=2,
        results_path=str(run),
        progress=False,
    )
    errors = [r["error"] for r in out.rows]
    assert all(e and e["category"] == "env_error" for e in errors)
    text = errors[0]["traceback"]
    line = _line_of(path, 'hint = state["hints"][0]')
    # the author's frame, as Python prints it: file, line, function, then the source line
    assert f'File "{path}", line {line}, in env_response\n    hint = state["hints"][0]' in text
    assert text.rstrip().endswith("KeyError: 'hints'")
    assert "of the library folded]" in text
    assert "verifiers_lite" + "/" not in text.replace(str(path), "")  # no library file shown
    # six rows, one distinct traceback: stored once, the rows hold its key
    assert len({e["traceback_id"] for e in errors}) == 1
    table = [json.loads(line) for line in (run / "tracebacks.jsonl").read_text().splitlines()]
    assert [t["id"] for t in table] == [errors[0]["traceback_id"]] and table[0]["traceback"] == text
    saved = (run / "results.jsonl").read_text()
    assert 'hint = state[\\"hints\\"][0]' not in saved and "folded]" not in saved
    assert saved.count(errors[0]["traceback_id"]) == 6
    # read back (on demand, or all at once), each row has its text again
    loaded = vf.load_results(str(run))
    assert [r["error"]["traceback"] for r in loaded.rows] == [text] * 6
    assert read_rows(run / "results.jsonl")[5]["error"]["traceback"] == text


def test_a_reward_functions_bug_keeps_its_frame(fake_server, tmp_path):
    module, path = _author_module(tmp_path)
    env = vf.SingleTurnEnv(dataset=module.rows(2), rubric=vf.Rubric([module.as_number]))
    out = env.evaluate_sync(vf.ChatClient(fake_server.base_url), "fake-arith", progress=False)
    (first, *_) = out.rows
    assert first["error"]["category"] == "rubric_error"
    line = _line_of(path, "return float(int(")
    assert f'File "{path}", line {line}, in as_number' in first["error"]["traceback"]
    assert "ValueError: invalid literal for int()" in first["error"]["traceback"]


def test_a_model_error_has_no_traceback_and_vf_debug_keeps_every_frame(fake_server, monkeypatch):
    # no frame of a failed model request is the author's: the message says it all
    fake_server.configure(faults=[{"status": 400, "message": "bad request"}])
    env = vf.SingleTurnEnv(dataset=[{"question": "What is 1 + 1?", "answer": "2"}])
    (row,) = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-arith", progress=False
    ).rows
    assert row["error"]["category"] == "model_http_error" and "traceback" not in row["error"]
    try:
        exec(compile("raise KeyError('x')", "/nowhere/author.py", "exec"))
    except KeyError as exc:
        assert 'File "/nowhere/author.py", line 1, in <module>' in (user_traceback(exc) or "")

    module_dir = Path(vf.__file__).parent
    try:
        vf.Rubric(["not callable"])  # raised inside the library, called from here
    except TypeError as exc:
        folded = user_traceback(exc) or ""
        monkeypatch.setenv("VF_DEBUG", "1")
        full = user_traceback(exc) or ""
    assert str(module_dir) not in folded and "of the library folded]" in folded
    assert f'File "{module_dir}' in full and "folded" not in full


def test_old_runs_without_a_traceback_table_still_load(tmp_path):
    run = tmp_path / "old"
    run.mkdir()
    row = {
        "example_id": 0,
        "rollout_index": 0,
        "prompt": [{"role": "user", "content": "q"}],
        "completion": [],
        "reward": None,
        "metrics": {},
        "stop_reason": "error",
        "error": {"category": "env_error", "message": "KeyError: 'hints'"},
    }
    (run / "results.jsonl").write_text(json.dumps(row) + "\n")
    (run / "metadata.json").write_text(json.dumps({"env_id": "old", "model": "m"}))
    (loaded,) = vf.load_results(str(run)).rows
    assert loaded["error"] == row["error"]


def test_tool_tracebacks_count_calls_rollouts_and_distinct_texts():
    from verifiers_lite.core.tracebacks import ToolTracebacks, traceback_key

    def call(text=None, error="exception"):
        record = {"id": "c", "name": "calc", "error": error}
        if text is not None:
            record["traceback"], record["traceback_id"] = text, traceback_key(text)
        return record

    rows = [
        # two calls raised at one place, a third was called wrong (no traceback: not counted)
        {
            "trajectory": [
                {"tool_calls": [call("A"), call(None, "bad_arguments")]},
                {"tool_calls": [call("A")]},
            ]
        },
        {"trajectory": [{"tool_calls": [call("B")]}, {}]},
        {"trajectory": [{"tool_calls": [call(None, None)]}]},  # a tool that ran
        {"error": {"category": "env_error", "message": "x", "traceback": "C"}},  # not a tool's
    ]
    tools = ToolTracebacks().add_all(rows)
    # by hand: 3 calls with a traceback (A, A, B) in 2 rollouts, 2 distinct texts
    assert (tools.calls, tools.rollouts) == (3, 2)
    assert list(tools.distinct.values()) == [("A", 2), ("B", 1)]
    assert tools.line() == "tool errors: 3 calls in 2 rollouts, 2 distinct tracebacks"
    assert ToolTracebacks().add_all(rows[1:2]).line() == (
        "tool errors: 1 call in 1 rollout, 1 distinct traceback"
    )
