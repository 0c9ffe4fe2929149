"""Classic modules get the classic ``verifiers`` names; nothing else in the process does.

Each check runs in a fresh interpreter (imports are process state): with a stand-in for
verifiers 0.4 on the path (a top-level package with only ``__version__`` and ``verifiers.v1``),
with the real verifiers 0.3.1's package files on the path (when its reference venv is built),
and with no ``verifiers`` at all. Helpers an environment imports from beside it (a sibling
module, a ``utils``-style package, one imported lazily, one through ``importlib``) are scoped
too, and after loading ``sys.modules`` holds under every one of those names what it held before."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from tests.helpers.paths import ORACLE_PYTHON, REPO

CLASSIC_MODULE = """
import importlib

import verifiers as vf
from datasets import Dataset
from verifiers.types import Messages, State
from verifiers.utils.data_utils import extract_hash_answer

import cl_helper                        # a sibling top-level module that imports verifiers
from cl_utils.helpers import strip_one  # a utils-style package beside it
imported = importlib.import_module("cl_imported")          # through importlib
parser_module = importlib.import_module("verifiers.parsers.parser")


def load_environment(n: int = 2):
    import verifiers.rubrics.rubric as rubric_module  # a deferred import resolves the same way

    def exact(completion, answer) -> float:
        import cl_lazy  # a helper imported lazily, when the first rollout is scored

        same = cl_helper.same_classes(vf) and imported.PARSER_CLASS is parser_module.Parser
        return cl_lazy.equal(strip_one(completion[-1].content), answer) * float(same)

    rows = [{"question": f"q{i}", "answer": extract_hash_answer(f"x #### {i}")} for i in range(n)]
    return vf.SingleTurnEnv(
        dataset=Dataset.from_list(rows), rubric=rubric_module.Rubric(funcs=[exact])
    )
"""

HELPERS = {
    "cl_helper.py": """
        import verifiers as vf
        from verifiers.types import Messages

        def same_classes(other) -> bool:
            return other.Rubric is vf.Rubric and other.Messages is Messages
    """,
    "cl_utils/__init__.py": '"""No verifiers here; its module below imports it."""\n',
    "cl_utils/helpers.py": """
        from verifiers.utils.data_utils import extract_boxed_answer

        def strip_one(text: str) -> str:
            return extract_boxed_answer(text)[1:]
    """,
    "cl_imported.py": """
        from verifiers.parsers.parser import Parser

        PARSER_CLASS = Parser
    """,
    "cl_lazy.py": """
        import verifiers as vf

        def equal(a: str, b: str) -> float:
            return 1.0 if a == b and vf.Rubric is not None else 0.0
    """,
    "cl_pkg/__init__.py": """
        from .rubrics import make_rubric
        import verifiers as vf
        from datasets import Dataset


        def load_environment():
            rows = Dataset.from_list([{"question": "q", "answer": "a"}])
            return vf.SingleTurnEnv(dataset=rows, rubric=make_rubric())
    """,
    "cl_pkg/rubrics.py": """
        from verifiers import *  # noqa: F403 - classic modules did this too


        def make_rubric():
            return Rubric(funcs=[lambda completion: 1.0])  # noqa: F405
    """,
    "cl_first.py": """
        import verifiers as vf
        from datasets import Dataset


        def load_environment():
            return vf.SingleTurnEnv(dataset=Dataset.from_list([{"question": "q", "answer": "a"}]))
    """,
    "cl_v1.py": """
        import verifiers.v1 as v1
        import verifiers_lite


        def load_environment():
            env = verifiers_lite.SingleTurnEnv(dataset=[{"question": "q", "answer": "a"}], env_id="v1user")
            env.seen_v1 = v1.MARK
            return env
    """,
}

NAMES = ["cl_mod", "cl_helper", "cl_utils", "cl_utils.helpers", "cl_imported", "cl_lazy", "cl_pkg"]

CHILD = """
import importlib, importlib.util, json, sys
before = importlib.util.find_spec("verifiers")
before = before.origin if before else None
import verifiers_lite
from verifiers_lite.classic.scope import ClassicNamespace, is_classic_function
from verifiers_lite.clients.scripted import ScriptedClient
from verifiers_lite.core.registry import environment_loader

NAMES = __NAMES__


def plain_import(name):
    try:
        module = importlib.import_module(name)
    except Exception as exc:
        return type(exc).__name__
    return "scoped" if is_classic_function(getattr(module, "same_classes", None)) else "plain"


try:
    import cl_first  # imported first by hand, outside the classic scope
    plain_first = type(cl_first.vf).__name__
except ModuleNotFoundError:
    plain_first = None
held = {n: sys.modules.get(n) for n in NAMES + ["cl_first"]}
env = verifiers_lite.load_environment("cl_mod", n=3)
first_env = verifiers_lite.load_environment("cl_first")
out = env.evaluate_sync(ScriptedClient(lambda m: "x" + m[-1]["content"][1:]), "m", progress=False)
pkg_env = verifiers_lite.load_environment("cl_pkg")
loader = environment_loader("cl_mod")
report = {
    "before": before,
    "rewards": [r["reward"] for r in out.rows],
    "errors": [r.get("error") for r in out.rows],
    "vf_is_shim": isinstance(loader.__globals__["vf"], ClassicNamespace),
    "scoped": is_classic_function(loader),
    "pkg_type": type(pkg_env).__module__,
    "plain_rows": all(type(m) is dict for r in out.rows for m in r["completion"] + r["prompt"]),
    "plain_first": plain_first,
    "first_env": type(first_env).__name__,
    "left": [n for n, m in held.items() if sys.modules.get(n) is not m],
    "plain_helper": plain_import("cl_helper"),
}
try:
    import verifiers
    report["after"] = {"file": verifiers.__file__, "version": verifiers.__version__,
                       "classic_names": hasattr(verifiers, "SingleTurnEnv")}
    v1_env = verifiers_lite.load_environment("cl_v1")
    report["v1"] = v1_env.seen_v1
    report["v1_scoped"] = is_classic_function(environment_loader("cl_v1"))
except ModuleNotFoundError as exc:
    report["after"] = None
    report["verifiers_in_modules"] = "verifiers" in sys.modules
try:
    import verifiers_lite.classic.scope as scope
    scope.resolve("verifiers.envs.no_such_module")
except ModuleNotFoundError as exc:
    report["unknown"] = str(exc)
print("REPORT" + json.dumps(report))
""".replace("__NAMES__", repr(NAMES))


def _write_modules(base: Path) -> None:
    (base / "cl_mod.py").write_text(textwrap.dedent(CLASSIC_MODULE))
    for name, text in HELPERS.items():
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text(textwrap.dedent(text))


def _verifiers_site(base: Path, which: str) -> list[str]:
    """A folder holding ``verifiers``: a stand-in for 0.4, or 0.3.1's own package files."""
    site = base / "site"
    if which == "0.4":
        (site / "verifiers" / "v1").mkdir(parents=True)
        (site / "verifiers" / "__init__.py").write_text('__version__ = "0.4.0"\n')
        (site / "verifiers" / "v1" / "__init__.py").write_text('MARK = "the real v1"\n')
        return [str(site)]
    if which == "0.3.1":
        found = sorted(ORACLE_PYTHON.parents[1].glob("lib/python*/site-packages/verifiers"))
        if not found:
            if os.environ.get("VF_REQUIRE_CLASSIC_ORACLE") == "1":
                pytest.fail("the verifiers 0.3.1 reference venv is not built")
            pytest.skip("the verifiers 0.3.1 reference venv is not built")
        site.mkdir()
        (site / "verifiers").symlink_to(found[0])
        return [str(site)]
    return []


def _run_child(tmp_path: Path, which: str) -> dict:
    _write_modules(tmp_path)
    path = [str(REPO), str(tmp_path), *_verifiers_site(tmp_path, which)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("REPORT"))
    return json.loads(line[len("REPORT") :])


def _assert_classic_ran(report: dict) -> None:
    # q0/q1/q2 answered with x0/x1/x2: each the answer extract_hash_answer gave, read through the
    # helpers, every one of which saw the classic layer's classes.
    assert report["errors"] == [None, None, None]
    assert report["rewards"] == [1.0, 1.0, 1.0]
    assert report["vf_is_shim"] is True and report["scoped"] is True
    assert report["pkg_type"] == "verifiers_lite.classic.multiturn"
    assert report["plain_rows"] is True
    assert report["first_env"] == "SingleTurnEnv"  # loaded within the scope by load_environment
    assert report["left"] == []  # sys.modules holds what it held before, under every name
    assert "verifiers.envs.no_such_module" in report["unknown"]


def test_beside_a_real_verifiers_04_classic_modules_get_the_shim_and_everyone_else_the_real_package(
    tmp_path,
):
    report = _run_child(tmp_path, "0.4")
    _assert_classic_ran(report)
    assert report["before"].endswith(os.path.join("site", "verifiers", "__init__.py"))
    assert report["after"] == {"file": report["before"], "version": "0.4.0", "classic_names": False}
    assert report["v1"] == "the real v1"  # verifiers.v1 is never redirected
    assert report["v1_scoped"] is False  # a module using only verifiers.v1 is not classic
    assert report["plain_first"] == "module"  # imported by hand it saw the real package
    assert report["plain_helper"] == "ModuleNotFoundError"  # verifiers.types: not in 0.4


def test_beside_the_real_verifiers_031_classic_modules_and_their_helpers_get_the_shim(tmp_path):
    """Beside a real 0.3.1 a helper imported without the scope would get 0.3.1's classes and
    mix them with the classic layer's: every helper here must see the layer's (rewards 1.0)."""
    report = _run_child(tmp_path, "0.3.1")
    _assert_classic_ran(report)
    assert report["before"].endswith(os.path.join("site", "verifiers", "__init__.py"))
    assert report["plain_helper"] != "scoped"  # a plain import elsewhere is not scoped


def test_without_any_verifiers_classic_modules_run_and_verifiers_stays_unimportable(tmp_path):
    report = _run_child(tmp_path, "none")
    _assert_classic_ran(report)
    assert report["before"] is None
    assert report["after"] is None and report["verifiers_in_modules"] is False
    assert report["plain_first"] is None  # imported by hand it failed; load_environment still works
    assert report["plain_helper"] == "ModuleNotFoundError"  # as without verifiers_lite


def test_verifiers_lite_installs_no_top_level_verifiers_package():
    """The distribution ships only verifiers_lite's own packages: no ``verifiers`` of its own."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    include = config["tool"]["setuptools"]["packages"]["find"]["include"]
    assert include and all(
        p.split(".")[0] in ("verifiers_lite", "verifiers_lite_envs") for p in include
    )
    assert not (REPO / "verifiers").exists() and not (REPO / "environments" / "verifiers").exists()
