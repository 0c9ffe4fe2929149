"""The bundled environments ship as ``verifiers_lite_envs`` (a name no other distribution
installs), each registered under the entry point group ``vf-lite init``'s packages use."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import verifiers_lite as vf
from tests.helpers.paths import REPO
from verifiers_lite.core.registry import ENTRY_POINT_GROUP

BUNDLED_DIR = REPO / "environments" / "verifiers_lite_envs"


def _bundled_modules() -> set[str]:
    """Bundled environment ids read off the folder: every public module."""
    return {p.stem for p in BUNDLED_DIR.glob("*.py") if not p.name.startswith("_")}


def _expected_entry_points() -> dict[str, str]:
    return {m: f"verifiers_lite_envs.{m}:load_environment" for m in _bundled_modules()}


def test_every_bundled_environment_is_registered_as_an_entry_point():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"][ENTRY_POINT_GROUP] == _expected_entry_points()
    assert set(vf.list_environments(installed=False)) == _bundled_modules()


def test_a_bundled_environment_loads_from_its_package():
    env = vf.load_environment("arithmetic", num_examples=2)
    assert env.source_module == "verifiers_lite_envs.arithmetic"
    assert Path(sys.modules[env.source_module].__file__).resolve() == BUNDLED_DIR / "arithmetic.py"


@pytest.mark.slow
def test_the_wheel_holds_the_bundled_package_and_no_top_level_environments(tmp_path):
    src = tmp_path / "src"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    for name in ("verifiers_lite", "environments"):
        shutil.copytree(REPO / name, src / name, ignore=skip)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (REPO / name).exists():
            shutil.copy(REPO / name, src / name)
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(tmp_path / "dist"),
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("verifiers_lite-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
        entry_text = next(
            zf.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt")
        )
    assert top == {"verifiers_lite", "verifiers_lite_envs"}  # no "environments"
    shipped = {
        n.removeprefix("verifiers_lite_envs/")
        for n in names
        if n.startswith("verifiers_lite_envs/")
    }
    assert {f"{m}.py" for m in _bundled_modules()} | {"__init__.py", "_common.py"} <= shipped
    entry_points = configparser.ConfigParser(delimiters=("=",))
    entry_points.optionxform = str  # type: ignore[assignment,method-assign]
    entry_points.read_string(entry_text)
    assert dict(entry_points[ENTRY_POINT_GROUP]) == _expected_entry_points()
