"""The package's seams are declared, never sniffed: no ``isinstance`` test of an executor or a
transport anywhere in the package, and no two classes of one name."""

from __future__ import annotations

import ast
import importlib
import re
from collections import defaultdict
from pathlib import Path

import pytest

import verifiers_lite

PACKAGE = Path(verifiers_lite.__file__).parent
SNIFF = re.compile(r"isinstance\(.*(Executor|Transport)\)")


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_no_module_sniffs_an_executor_or_a_transport() -> None:
    hits = [
        f"{p.relative_to(PACKAGE)}:{n}: {line.strip()}"
        for p in _sources()
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if SNIFF.search(line)
    ]
    assert hits == [], (
        "declare a capability on the protocol instead of testing the class:\n" + "\n".join(hits)
    )


#: The classic namespace reproduces the names another library gave (``vf.Environment``,
#: ``vf.Rubric``, ...) so that environments written for it load unchanged: its names are that
#: library's, not this package's, and are exempt.
CLASSIC = PACKAGE / "classic"


def test_no_two_classes_share_a_name() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path in (p for p in _sources() if CLASSIC not in p.parents):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                where[node.name].append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    twice = {name: places for name, places in where.items() if len(places) > 1}
    assert twice == {}, f"one name, one class: {twice}"


def _assigned_names(node: ast.stmt) -> list[str]:
    """The names a module-level statement binds by assignment (an alias included)."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign):
        targets = [node.target]
    else:
        return []
    return [t.id for t in targets if isinstance(t, ast.Name)]


def test_a_chat_message_is_defined_once() -> None:
    """``Message`` is assigned in ``core/messages.py`` alone; every other module imports it.
    The classic layer's ``verifiers.types.Message`` is another thing classic code calls by that
    name (verifiers 0.3.1's message models, made at the classic boundary only)."""
    where = [
        f"{path.relative_to(PACKAGE)}"
        for path in _sources()
        for node in ast.parse(path.read_text(), str(path)).body
        if "Message" in _assigned_names(node)
    ]
    assert where == ["classic/types.py", "core/messages.py"], where


def test_the_old_name_of_a_turns_usage_still_imports_with_a_warning() -> None:
    from verifiers_lite import clients
    from verifiers_lite.core.model_client import TurnUsage

    with pytest.warns(DeprecationWarning, match="TurnUsage"):
        assert clients.Usage is TurnUsage


def test_the_old_name_of_the_wires_categories_still_imports_with_a_warning() -> None:
    protocol = importlib.import_module("verifiers_lite.server.protocol")
    with pytest.warns(DeprecationWarning, match="WireErrorCategory"):
        assert protocol.ErrorCategory is protocol.WireErrorCategory


def test_the_rollout_servers_client_and_the_executors_path_are_apart() -> None:
    """The osmosis-compatible client, the connection it shares and the executor's path each
    stay a readable size; the executor's path never reaches into the client."""
    import inspect

    from verifiers_lite.remote import client, connection, state_runs

    for part in (client.RolloutClient, connection.RolloutConnection):
        assert len(inspect.getsource(part).splitlines()) < 250, part
    assert "RolloutClient" not in inspect.getsource(state_runs)


def test_a_runs_client_is_typed_as_what_a_run_takes(mypy_errors) -> None:
    """``ModelClientLike`` stands where ``client: Any`` stood: a URL, a ModelClient, an
    ``AsyncOpenAI``-like client or a list of them type-check; a number does not."""
    errors = mypy_errors(
        "import verifiers_lite as vf\n"
        "from verifiers_lite.core.model_client import ModelClientLike\n"
        "from verifiers_lite.clients.resolve import as_model_clients\n"
        "class SDK:\n    chat: object = None\n"
        "def fine(env: vf.SingleTurnEnv, c: vf.ChatClient) -> None:\n"
        "    env.evaluate_sync('http://127.0.0.1:9/v1', 'm')\n"
        "    env.evaluate_sync([c, 'http://127.0.0.1:9/v1'], 'm')\n"
        "    as_model_clients(SDK())\n"
        "    typed: ModelClientLike = c\n"
        "def wrong(env: vf.SingleTurnEnv) -> None:\n"
        "    env.evaluate_sync(42, 'm')\n"
    )
    assert errors == [(12, "arg-type")]


def test_the_sdk_clients_a_signature_takes_are_typed(mypy_errors) -> None:
    """Where a signature takes the ``openai`` SDK's client it says so: the SDK's clients
    type-check (a classic judge, the SDK path's adapter, the lean client made from one, the
    blocking ChatAPI), a number does not; ``client: Any`` stays only where documented why."""
    errors = mypy_errors(
        "import openai\n"
        "import verifiers_lite as vf\n"
        "from verifiers_lite.classic import JudgeRubric\n"
        "from verifiers_lite.classic.completions import TextCompletions\n"
        "from verifiers_lite.clients import OpenAIChatAPI, OpenAIClientAdapter\n"
        "def fine(sdk: openai.AsyncOpenAI, blocking: openai.OpenAI, c: vf.ChatClient) -> None:\n"
        "    JudgeRubric(judge_client=sdk)\n"
        "    OpenAIClientAdapter(sdk)\n"
        "    vf.ChatClient.from_openai(sdk)\n"
        "    OpenAIChatAPI('m', client=blocking)\n"
        "    TextCompletions(c)\n"
        "def wrong() -> None:\n"
        "    JudgeRubric(judge_client=42)\n"
        "    OpenAIClientAdapter(42)\n"
        "    vf.ChatClient.from_openai(42)\n"
        "    OpenAIChatAPI('m', client=42)\n"
        "    TextCompletions(42)\n"
    )
    assert errors == [(line, "arg-type") for line in range(13, 18)]
    loose = [
        f"{p.relative_to(PACKAGE)}: {line.strip()}"
        for p in _sources()
        for line in p.read_text().splitlines()
        if re.search(r"\bclient: Any\b", line)
    ]
    assert loose == ["clients/openai_adapter.py: def _copy_for_loop(client: Any) -> Any:"], loose
