"""No import cycle among the package's modules: every import counts, the ones made only for type
checking and the ones made inside functions included (a package's ``__init__`` importing its own
submodules is an import like any other)."""

from __future__ import annotations

import grimp

PACKAGE = "verifiers_lite"


def import_graph() -> dict[str, set[str]]:
    graph = grimp.build_graph(PACKAGE, exclude_type_checking_imports=False)
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_cycles():
    """The finder itself, on a graph with a known answer: a 3-cycle, a 2-cycle and a chain."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    assert sorted(cycles(edges)) == [["a", "b", "c"], ["d", "e"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, (
        "import cycles (each line one strongly connected set of modules):\n"
        + "\n".join(" <-> ".join(c) for c in found)
    )


def test_the_environment_protocol_is_strictly_typed():
    """The scheduler's view of an environment type-checks under ``mypy --strict``."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "verifiers_lite/core/runnable.py",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]


def test_the_library_types_satisfy_the_protocols(tmp_path):
    """Environments (an environment group included) and rubrics (a judge's, a group's) are what
    the scheduler and the results layer are typed against: checked by mypy, not assumed."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    check = tmp_path / "protocol_check.py"
    check.write_text(
        "from verifiers_lite.envs.env_group import EnvGroup, EnvGroupRubric\n"
        "from verifiers_lite.envs.single_turn_env import SingleTurnEnv\n"
        "from verifiers_lite.rubrics.judge import JudgeRubric\n"
        "from verifiers_lite.rubrics.rubric import Rubric\n"
        "from verifiers_lite.core.runnable import RunnableEnvironment, ScoringRubric\n\n\n"
        "def env(e: RunnableEnvironment) -> None: ...\n"
        "def rubric(r: ScoringRubric) -> None: ...\n\n\n"
        "def check(s: SingleTurnEnv, g: EnvGroup, r: Rubric, j: JudgeRubric, gr: EnvGroupRubric) -> None:\n"
        "    env(s)\n    env(g)\n    rubric(r)\n    rubric(j)\n    rubric(gr)\n"
        "    rubric(g.rubric)\n    env(next(iter(g.group_members.values())))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", str(check)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-1000:]
