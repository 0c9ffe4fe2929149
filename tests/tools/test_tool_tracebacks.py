"""A tool the author wrote that raises: the model is told the error's message and the rollout goes
on, while the stack from the author's frames (the library's, the event loop's and its worker
threads' folded) is kept on the tool call's record, saved with the row and read back."""

from __future__ import annotations

import importlib.util
import inspect
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

import verifiers_lite as vf
from verifiers_lite.core.trajectory import model_calls
from verifiers_lite.results.store import read_rows

AUTHOR_TOOLS = '''
def calculator(expression: str) -> str:
    """Evaluate a sum.

    Args:
        expression: e.g. "3 + 4".
    """
    table = {"1 + 1": "2"}
    return table[expression]  # the author's bug: only one sum is known


async def async_calculator(expression: str) -> str:
    """Evaluate a sum.

    Args:
        expression: e.g. "3 + 4".
    """
    a, b = expression.split(" * ")  # the author's bug: it only reads products
    return str(int(a) * int(b))
'''


def _author_module(tmp_path: Path) -> ModuleType:
    path = tmp_path / "author_tools.py"
    path.write_text(AUTHOR_TOOLS)
    spec = importlib.util.spec_from_file_location("author_tools_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _raising_line(fn, marker: str) -> tuple[str, int, str]:
    """The file, line number and text of ``fn``'s source line holding ``marker``, read with
    inspect."""
    lines, first = inspect.getsourcelines(fn)
    offset = next(i for i, line in enumerate(lines) if marker in line)
    return inspect.getsourcefile(fn) or "", first + offset, lines[offset].strip()


@pytest.mark.parametrize(
    ("name", "marker", "exception"),
    [
        ("calculator", "return table[expression]", "KeyError: '17 + 25'"),  # run in a thread
        ("async_calculator", 'expression.split(" * ")', "ValueError: not enough values"),
    ],
)
def test_a_tool_that_raises_keeps_the_authors_frame(fake_server, tmp_path, name, marker, exception):
    module = _author_module(tmp_path)
    fn = getattr(module, name)
    fn.__name__ = "calculator"  # the fake model calls the tool by this name
    env = vf.ToolEnv(tools=[fn], dataset=[{"question": "What is 17 + 25?", "answer": "42"}])
    run = tmp_path / "run"
    out = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-tool",
        results_path=str(run),
        progress=False,
    )
    (row,) = out.rows
    assert row["error"] is None  # the model was answered, the rollout went on
    told = fake_server.requests()[1]["messages"][-1]
    assert told["role"] == "tool" and exception.split(":")[0] in told["content"]
    assert "Traceback" not in told["content"]  # the model gets the message, not the stack

    (tool_call,) = model_calls(row)[0]["tool_calls"]
    assert tool_call["error"] == "exception"
    text = tool_call["traceback"]
    path, line, source = _raising_line(fn, marker)
    assert f'File "{path}", line {line}, in {name}\n    {source}' in text
    assert exception in text.splitlines()[-1]
    assert "of the library folded]" in text
    assert "File " not in text.replace(f'File "{path}"', "")  # no other file shown
    # saved with the row and read back the same
    (saved,) = read_rows(run / "results.jsonl")
    assert model_calls(saved)[0]["tool_calls"][0]["traceback"] == text


def test_a_tool_that_ran_or_was_called_wrong_keeps_no_traceback(fake_server, tmp_path):
    def calculator(expression: str, digits: int) -> str:
        """Needs an argument the model does not send.

        Args:
            expression: e.g. "3 + 4".
            digits: how many digits.
        """
        return expression

    env = vf.ToolEnv(tools=[calculator], dataset=[{"question": "What is 1 + 1?", "answer": "2"}])
    (row,) = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-tool", progress=False
    ).rows
    (tool_call,) = model_calls(row)[0]["tool_calls"]
    assert tool_call["error"] == "bad_arguments" and "traceback" not in tool_call


def test_a_runs_tool_traceback_is_stored_once_and_read_back_on_every_call(fake_server, tmp_path):
    module = _author_module(tmp_path)
    fn = module.async_calculator
    fn.__name__ = "calculator"  # the fake model calls the tool by this name
    questions = [
        {"question": f"What is {a} + {a + 3}?", "answer": str(2 * a + 3)} for a in (1, 5, 9)
    ]
    env = vf.ToolEnv(tools=[fn], dataset=questions)
    run = tmp_path / "run"
    out = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-tool",
        rollouts_per_example=2,
        results_path=str(run),
        progress=False,
    )
    calls = [c for row in out.rows for step in model_calls(row) for c in step.get("tool_calls", [])]
    assert len(out.rows) == 6 and len(calls) == 6
    assert all(c["error"] == "exception" for c in calls)
    (text,) = {c["traceback"] for c in calls}  # six calls, one place they raised
    assert "ValueError: not enough values to unpack" in text

    # on disk: the text once, in tracebacks.jsonl, under its key; each saved call keeps the key
    table = [json.loads(line) for line in (run / "tracebacks.jsonl").read_text().splitlines()]
    assert [t["traceback"] for t in table] == [text]
    assert (run / "results.jsonl").read_text().count(table[0]["id"]) == 6
    on_disk = b"".join(p.read_bytes() for p in run.iterdir() if p.is_file())
    assert on_disk.count(json.dumps(text)[1:-1].encode()) == 1
    assert on_disk.count(b"in async_calculator") == 1  # the author's frame, once in the run

    # read back, every tool call has its full text again: the rows equal the ones in memory
    loaded = vf.load_results(str(run)).rows
    assert [model_calls(r) for r in loaded] == [model_calls(r) for r in out.rows]
    read_back = [c for r in loaded for step in model_calls(r) for c in step.get("tool_calls", [])]
    assert [c["traceback"] for c in read_back] == [text] * 6
