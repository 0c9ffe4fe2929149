"""Run each page's Python blocks as a reader would in one notebook per page: a page's blocks in
order, in one namespace of their own, top-level ``await`` allowed (one event loop for the whole
session, as a kernel has). Pages run one after another in one scratch directory, so a tutorial
page reads the runs an earlier page saved.

Every environment a block builds by hand (not loaded from the registry) must reach its maximal
reward when played perfectly by ``vf.ScriptedClient``: the docs' own advice, applied to their
own examples. A block that builds one with no perfect player in ``PLAYERS`` fails.

Usage: ``python doc_runner.py PAGES_JSON RESULTS_JSON`` (results are rewritten after each
block, so a crash or a timeout still says which block got how far).
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import re
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import verifiers_lite as vf


def _word_chain_player(messages: list[dict[str, Any]]) -> str:
    """Answers with a word starting with the last letter of the word asked about, with the
    punctuation and capitals a model adds."""
    words = {
        "a": "Apple.",
        "e": "elephant",
        "t": "Tiger!",
        "r": "rabbit",
        "n": "Nest,",
        "h": "hat",
        "s": "sun",
    }
    asked = re.findall(r"'([^']*)'", str(messages[-1].get("content") or ""))
    if not asked:
        return "The word is: Apple."
    return words.get(asked[-1][-1:].lower(), "egg")


def _mcp_store_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """Computes with the MCP calculator, stores the result, reads it back, then answers."""
    turn = sum(m["role"] == "assistant" for m in messages)
    if turn == 0:
        return [{"name": "calculator", "arguments": {"expression": "6 * 7"}}]
    if turn == 1:
        return [
            {"name": "kv_set", "arguments": {"key": "x", "value": str(messages[-1]["content"])}}
        ]
    return [{"name": "kv_get", "arguments": {"key": "x"}}] if turn == 2 else None


# env_id -> (a client that plays perfectly, the maximal reward). The maximum is worked out by hand
# from the page's example, never read from the environment.
def _colour_player(messages: list[dict[str, Any]]) -> str:
    """Names the colour of the image it is shown, decoding the PNG as the fake vision model does."""
    from verifiers_lite.testing.png import data_uri_colour

    url = next(
        p["image_url"]["url"] for p in messages[-1]["content"] if p.get("type") == "image_url"
    )
    return f"The image is {data_uri_colour(url)}."


PLAYERS: dict[str, tuple[Callable[[], Any], float]] = {
    # says_four: exact answer "4" scores 1.0
    "says_four": (lambda: vf.ScriptedClient("4"), 1.0),
    # WordChain(max_turns=5), reward len(words) / 5: five linked words score 1.0
    "WordChain": (lambda: vf.ScriptedClient(_word_chain_player), 1.0),
    # mcp_demo: reward 1 when the value read back from the store is the calculator's result
    "mcp_demo": (
        lambda: vf.ScriptedClient(["", "", "", "Stored 42."], tool_calls=_mcp_store_calls),
        1.0,
    ),
    # one question, 3 + 4: the calculator called, then the boxed answer (1.0)
    "thinking-calculator": (
        lambda: vf.ScriptedClient(
            ["", "The answer is \\boxed{7}."],
            tool_calls=[[{"name": "calculator", "arguments": {"expression": "3 + 4"}}], None],
        ),
        1.0,
    ),
    # each picture's colour named as the reward asks (1.0)
    "colours": (lambda: vf.ScriptedClient(_colour_player), 1.0),
    # the agent-programs page: the program prints the model's "4" for 2 + 2, exact match (1.0)
    "ProgramEnv": (lambda: vf.ScriptedClient("4"), 1.0),
    # the viewer page's ToolEnv: add(2, 3) called, then "5" said (1.0)
    "ToolEnv": (
        lambda: vf.ScriptedClient(
            ["", "5"], tool_calls=[[{"name": "add", "arguments": {"a": 2, "b": 3}}], None]
        ),
        1.0,
    ),
}


def _run(
    src: str, namespace: dict[str, Any], loop: asyncio.AbstractEventLoop, page: str, line: int
) -> None:
    code = compile("\n" * line + src, page, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    if code.co_flags & inspect.CO_COROUTINE:
        loop.run_until_complete(eval(code, namespace))
    else:
        exec(code, namespace)


def _hand_built(value: Any) -> list[vf.Environment]:
    """Environments a block built by hand (a group of registry environments is not one)."""
    if not isinstance(value, vf.Environment) or value.loaded_as is not None:
        return []
    if isinstance(value, vf.EnvGroup):
        return [e for member in value.envs.values() for e in _hand_built(member)]
    return [value]


def _check_players(namespace: dict[str, Any], seen: set[int], where: str) -> list[str]:
    """Play each environment the block built by hand perfectly; its mean reward must be the maximum."""
    checked = []
    for value in list(namespace.values()):
        for env in _hand_built(value):
            if id(env) in seen:
                continue
            seen.add(id(env))
            if env.env_id not in PLAYERS:
                raise AssertionError(
                    f"{where} builds environment {env.env_id!r}: add a perfect player for it to "
                    f"PLAYERS in tests/docs/doc_runner.py (the docs' advice: it must reach its maximal "
                    f"reward under vf.ScriptedClient)"
                )
            make_client, best = PLAYERS[env.env_id]
            out = env.evaluate_sync(make_client(), "perfect-player", progress=False)
            errors = [r["error"] for r in out.rows if r.get("error")]
            rewards = sorted({r["reward"] for r in out.rows})
            if errors or rewards != [best]:
                raise AssertionError(
                    f"{where}: {env.env_id} played perfectly scores {rewards} "
                    f"(maximum {best}); errors: {errors[:2]}"
                )
            checked.append(env.env_id)
    return checked


def main(pages_file: str, results_file: str) -> int:
    pages = json.loads(Path(pages_file).read_text(encoding="utf-8"))
    loop = asyncio.new_event_loop()
    seen: set[int] = set()
    results: list[dict[str, Any]] = []
    for page in pages:
        namespace: dict[str, Any] = {"__name__": "__main__"}  # a fresh notebook per page
        for block in page["blocks"]:
            results.append(_run_block(block, page["path"], namespace, loop, seen))
            with open(results_file, "w", encoding="utf-8") as f:
                json.dump(results, f, indent=1)
    return 0


def _run_block(
    block: dict[str, Any],
    page: str,
    namespace: dict[str, Any],
    loop: asyncio.AbstractEventLoop,
    seen: set[int],
) -> dict[str, Any]:
    t0 = time.perf_counter()
    where = f"{page}:{block['line']}"
    result: dict[str, Any] = {"page": page, "line": block["line"], "ok": True, "checked": []}
    print(f"--- {where}", flush=True)
    try:
        if block["setup"]:
            _run(block["setup"], namespace, loop, page, block["line"] - 1)
        _run(block["code"], namespace, loop, page, block["line"])
        result["checked"] = _check_players(namespace, seen, where)
    except BaseException:  # a failing block is reported, and the next ones still run
        result.update(ok=False, error=traceback.format_exc(limit=-6))
    result["seconds"] = round(time.perf_counter() - t0, 2)
    return result


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
