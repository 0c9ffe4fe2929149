"""Every name a package facade offers resolves: each ``__all__`` entry of every package of
verifiers_lite, imported in a fresh process (so no earlier import hides a dead entry)."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import verifiers_lite

PACKAGE_DIR = Path(verifiers_lite.__file__).parent


def _packages() -> list[str]:
    """Every package (a folder with ``__init__.py``) under verifiers_lite, found on disk."""
    found = ["verifiers_lite"]
    for info in pkgutil.walk_packages([str(PACKAGE_DIR)], prefix="verifiers_lite."):
        if info.ispkg:
            found.append(info.name)
    return sorted(found)


_RESOLVE = """
import importlib, json, sys, warnings
warnings.simplefilter("ignore", DeprecationWarning)
package = importlib.import_module(sys.argv[1])
broken = {}
for name in getattr(package, "__all__", []):
    try:
        getattr(package, name)
    except ImportError as exc:  # an optional extra missing is reported, not a dead name
        if "pip install" not in str(exc) and "extra" not in str(exc):
            broken[name] = f"{type(exc).__name__}: {exc}"
    except Exception as exc:
        broken[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps(broken))
"""


def test_the_walk_finds_the_facades():
    packages = _packages()
    assert {"verifiers_lite.server", "verifiers_lite.remote", "verifiers_lite.rollout"} <= set(
        packages
    )


@pytest.mark.parametrize("package", _packages())
def test_every_exported_name_resolves(package):
    done = subprocess.run(
        [sys.executable, "-c", _RESOLVE, package], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    broken = json.loads(done.stdout.strip().splitlines()[-1])
    assert broken == {}, f"{package} exports names that do not resolve: {broken}"


def test_the_root_offers_at_most_75_names():
    assert len(verifiers_lite.__all__) <= 75, sorted(verifiers_lite.__all__)


_MOVED_NAMES = """
import importlib, json, warnings
import verifiers_lite as vf
seen = {}
for name, home in vf._MOVED.items():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = getattr(vf, name)
    messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    seen[name] = [value is getattr(importlib.import_module(home), name), messages, name in vf.__all__]
print(json.dumps(seen))
"""


def test_a_name_moved_off_the_root_still_resolves_with_a_warning_naming_its_package():
    done = subprocess.run(
        [sys.executable, "-c", _MOVED_NAMES], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert {
        "create_rollout_server",
        "RolloutClient",
        "LocalExecutor",
        "Template",
        "grpo_trainer",
    } <= set(seen)
    for name, (same, messages, listed) in seen.items():
        home = verifiers_lite._MOVED[name]
        assert same and not listed, name
        assert messages == [
            f"verifiers_lite.{name} moved to {home}.{name}; the old name is removed in the next "
            f"release"
        ], (name, messages)
