"""Classic modules get the classic ``verifiers`` names; nothing else in the process does.

Each check runs in a fresh interpreter (imports are process state): with a stand-in for
verifiers 0.4 on the path (a top-level package with only ``__version__`` and ``verifiers.v1``),
and with no ``verifiers`` at all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

from tests.helpers.paths import REPO

CLASSIC_MODULE = """
import verifiers as vf
from verifiers.types import Messages, State
from verifiers.utils.data_utils import extract_hash_answer


def load_environment(n: int = 2):
    import verifiers.rubrics.rubric as rubric_module  # a deferred import resolves the same way

    def exact(completion, answer) -> float:
        return 1.0 if completion[-1].content == answer else 0.0

    rows = [{"question": f"q{i}", "answer": extract_hash_answer(f"x #### {i}")} for i in range(n)]
    return vf.SingleTurnEnv(dataset=rows, rubric=rubric_module.Rubric(funcs=[exact]))
"""

CLASSIC_PACKAGE_INIT = """
from .rubrics import make_rubric
import verifiers as vf


def load_environment():
    return vf.SingleTurnEnv(dataset=[{"question": "q", "answer": "a"}], rubric=make_rubric())
"""

CLASSIC_PACKAGE_RUBRICS = """
from verifiers import *  # noqa: F403 - classic modules did this too


def make_rubric():
    return Rubric(funcs=[lambda completion: 1.0])  # noqa: F405
"""

PLAIN_FIRST = """
import verifiers as vf


def load_environment():
    return vf.SingleTurnEnv(dataset=[{"question": "q", "answer": "a"}])
"""

V1_MODULE = """
import verifiers.v1 as v1
import verifiers_lite


def load_environment():
    env = verifiers_lite.SingleTurnEnv(dataset=[{"question": "q", "answer": "a"}], env_id="v1user")
    env.seen_v1 = v1.MARK
    return env
"""

CHILD = """
import importlib, importlib.util, json, sys
before = importlib.util.find_spec("verifiers")
before = before.origin if before else None
import verifiers_lite
from verifiers_lite.classic.scope import ClassicNamespace, is_classic_scoped
from verifiers_lite.clients.scripted import ScriptedClient

try:
    import cl_first  # imported first by hand, outside the classic scope
    plain_first = type(cl_first.vf).__name__
except ModuleNotFoundError:
    plain_first = None
env = verifiers_lite.load_environment("cl_mod", n=3)
first_env = verifiers_lite.load_environment("cl_first")
out = env.evaluate_sync(ScriptedClient(lambda m: m[-1]["content"][1:]), "m", progress=False)
module = sys.modules["cl_mod"]
pkg_env = verifiers_lite.load_environment("cl_pkg")
report = {
    "before": before,
    "rewards": [r["reward"] for r in out.rows],
    "vf_is_shim": isinstance(module.vf, ClassicNamespace),
    "scoped": [is_classic_scoped(sys.modules[m]) for m in ("cl_mod", "cl_pkg", "cl_pkg.rubrics")],
    "pkg_type": type(pkg_env).__module__,
    "plain_rows": all(type(m) is dict for r in out.rows for m in r["completion"] + r["prompt"]),
    "plain_first": plain_first,
    "first_env": type(first_env).__name__,
}
try:
    import verifiers
    report["after"] = {"file": verifiers.__file__, "version": verifiers.__version__,
                       "classic_names": hasattr(verifiers, "SingleTurnEnv")}
    v1_env = verifiers_lite.load_environment("cl_v1")
    report["v1"] = v1_env.seen_v1
    report["v1_scoped"] = is_classic_scoped(sys.modules["cl_v1"])
except ModuleNotFoundError as exc:
    report["after"] = None
    report["verifiers_in_modules"] = "verifiers" in sys.modules
try:
    import verifiers_lite.classic.scope as scope
    scope.resolve("verifiers.envs.no_such_module")
except ModuleNotFoundError as exc:
    report["unknown"] = str(exc)
print("REPORT" + json.dumps(report))
"""


def _write_modules(base: Path, fake_verifiers: bool) -> None:
    (base / "cl_mod.py").write_text(textwrap.dedent(CLASSIC_MODULE))
    pkg = base / "cl_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent(CLASSIC_PACKAGE_INIT))
    (pkg / "rubrics.py").write_text(textwrap.dedent(CLASSIC_PACKAGE_RUBRICS))
    (base / "cl_v1.py").write_text(textwrap.dedent(V1_MODULE))
    (base / "cl_first.py").write_text(textwrap.dedent(PLAIN_FIRST))
    if fake_verifiers:
        real = base / "site" / "verifiers"
        (real / "v1").mkdir(parents=True)
        (real / "__init__.py").write_text('__version__ = "0.4.0"\n')
        (real / "v1" / "__init__.py").write_text('MARK = "the real v1"\n')


def _run_child(tmp_path: Path, fake_verifiers: bool) -> dict:
    _write_modules(tmp_path, fake_verifiers)
    path = [str(REPO), str(tmp_path)] + ([str(tmp_path / "site")] if fake_verifiers else [])
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
    # q0/q1/q2 answered with 0/1/2: each the answer extract_hash_answer gave.
    assert report["rewards"] == [1.0, 1.0, 1.0]
    assert report["vf_is_shim"] is True
    assert report["scoped"] == [True, True, True]
    assert report["pkg_type"] == "verifiers_lite.classic.multiturn"
    assert report["plain_rows"] is True
    assert (
        report["first_env"] == "SingleTurnEnv"
    )  # re-imported within the scope by load_environment
    assert "verifiers.envs.no_such_module" in report["unknown"]


def test_beside_a_real_verifiers_04_classic_modules_get_the_shim_and_everyone_else_the_real_package(
    tmp_path,
):
    report = _run_child(tmp_path, fake_verifiers=True)
    _assert_classic_ran(report)
    assert report["before"].endswith(os.path.join("site", "verifiers", "__init__.py"))
    assert report["after"] == {"file": report["before"], "version": "0.4.0", "classic_names": False}
    assert report["v1"] == "the real v1"  # verifiers.v1 is never redirected
    assert report["v1_scoped"] is False  # a module using only verifiers.v1 is not classic
    assert report["plain_first"] == "module"  # imported by hand it saw the real package


def test_without_any_verifiers_classic_modules_run_and_verifiers_stays_unimportable(tmp_path):
    report = _run_child(tmp_path, fake_verifiers=False)
    _assert_classic_ran(report)
    assert report["before"] is None
    assert report["after"] is None and report["verifiers_in_modules"] is False
    assert report["plain_first"] is None  # imported by hand it failed; load_environment still works


def test_verifiers_lite_installs_no_top_level_verifiers_package():
    """The distribution ships only verifiers_lite's own packages: no ``verifiers`` of its own."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    include = config["tool"]["setuptools"]["packages"]["find"]["include"]
    assert include and all(
        p.split(".")[0] in ("verifiers_lite", "verifiers_lite_envs") for p in include
    )
    assert not (REPO / "verifiers").exists() and not (REPO / "environments" / "verifiers").exists()
