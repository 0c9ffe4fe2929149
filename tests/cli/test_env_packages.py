"""Environment packages: ``vf-lite init`` -> ``pip install -e`` -> ``vf-lite list/eval`` in a fresh venv."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from verifiers_lite.cli import main
from verifiers_lite.core.registry import ENTRY_POINT_GROUP


def test_init_writes_a_package_and_refuses_bad_names(tmp_path, capsys):
    assert main(["init", "word-count", "--path", str(tmp_path / "pkg")]) == 0
    files = sorted(
        str(p.relative_to(tmp_path / "pkg")) for p in (tmp_path / "pkg").rglob("*") if p.is_file()
    )
    assert files == ["README.md", "pyproject.toml", "tests/test_word_count.py", "word_count.py"]
    pyproject = (tmp_path / "pkg" / "pyproject.toml").read_text()
    assert f'[project.entry-points."{ENTRY_POINT_GROUP}"]' in pyproject
    assert 'word-count = "word_count:load_environment"' in pyproject
    assert "pip install -e" in capsys.readouterr().out
    assert main(["init", "word-count", "--path", str(tmp_path / "pkg")]) == 2  # not empty: refused
    assert "not empty" in capsys.readouterr().err
    assert main(["init", "1bad name", "--path", str(tmp_path / "bad")]) == 2
    assert "environment name" in capsys.readouterr().err and not (tmp_path / "bad").exists()


def test_list_shows_bundled_environments_with_descriptions(capsys):
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    by_id = {line.split()[0]: line for line in lines}
    assert {"arithmetic", "humaneval", "python_math"} <= set(by_id)
    assert "unit tests decide" in by_id["humaneval"] and "Python tool" in by_id["python_math"]


@pytest.mark.slow
def test_init_install_list_eval_in_a_temporary_venv(tmp_path, fake_server):
    pkg = tmp_path / "scored-sums"
    assert main(["init", "scored-sums", "--path", str(pkg)]) == 0
    # A new venv that sees this environment's packages (verifiers_lite and its dependencies) through a
    # .pth file, so the scaffold installs with --no-deps (pip fetches only its build backend).
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # addsitedir (not a bare path) so the parent's own .pth files, the editable install's among them, apply
    Path(purelib, "_parent_env.pth").write_text(
        "".join(f"import site; site.addsitedir({d!r})\n" for d in site.getsitepackages())
    )
    run_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    install = subprocess.run(
        [py, "-m", "pip", "install", "-q", "--no-deps", "-e", str(pkg)],
        capture_output=True,
        text=True,
        env=run_env,
        timeout=300,
        cwd=tmp_path,
    )
    assert install.returncode == 0, install.stderr[-2000:]

    def vf_lite(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [py, "-m", "verifiers_lite.cli", *args],
            capture_output=True,
            text=True,
            env=run_env,
            timeout=300,
            cwd=tmp_path,
        )

    listed = vf_lite("list")
    assert listed.returncode == 0, listed.stderr
    line = next(ln for ln in listed.stdout.splitlines() if ln.startswith("scored-sums"))
    assert "A verifiers_lite environment." in line and "installed (vf-env-scored-sums)" in line
    assert "humaneval" in listed.stdout  # bundled ones are still listed
    ev = vf_lite(
        "eval",
        "scored-sums",
        "-b",
        fake_server.base_url,
        "-m",
        "fake-arith",
        "-n",
        "4",
        "-r",
        "2",
        "-s",
        str(tmp_path / "out"),
        "--no-plot",
        "-q",
    )
    assert ev.returncode == 0, ev.stderr[-2000:]
    rows = [
        json.loads(ln)
        for ln in next((tmp_path / "out").rglob("results.jsonl")).read_text().splitlines()
    ]
    assert len(rows) == 8 and all(r["error"] is None for r in rows)
    # the fake model boxes a op b right or wrong; the package's own reward must agree with that
    for r in rows:
        a, b = (
            int(x)
            for x in r["prompt"][-1]["content"].removeprefix("What is ").rstrip("?").split(" + ")
        )
        said = r["completion"][-1]["content"].split("\\boxed{")[1].split("}")[0]
        assert r["reward"] == (1.0 if said == str(a + b) else 0.0)
    # and its scaffolded test passes in that venv
    pytest_run = subprocess.run(
        [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(pkg / "tests")],
        capture_output=True,
        text=True,
        env=run_env,
        timeout=300,
        cwd=pkg,
    )
    assert pytest_run.returncode == 0, pytest_run.stdout[-2000:]


def test_load_environment_finds_an_entry_point_without_importing_by_module_name(
    tmp_path, monkeypatch
):
    """An entry point may name a module whose name differs from the environment id."""
    pkg = tmp_path / "site"
    (pkg / "odd_module_name.py").parent.mkdir(parents=True)
    (pkg / "odd_module_name.py").write_text(
        '"""Counts letters."""\nimport verifiers_lite as vf\n\n'
        "def load_environment(n: int = 2):\n"
        "    return vf.SingleTurnEnv(dataset=[{'question': 'q', 'answer': 'a'}] * n)\n"
    )
    dist = pkg / "letters_env-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: letters-env\nVersion: 0.1\nSummary: letters\n"
    )
    (dist / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nletters = odd_module_name:load_environment\n"
    )
    monkeypatch.syspath_prepend(str(pkg))
    import verifiers_lite as vf

    env = vf.load_environment("letters", n=3)
    assert len(env.get_eval_dataset()) == 3 and env.env_id == "letters"
    assert "letters" in vf.list_environments()
    with pytest.raises(ValueError, match="does not take"):
        vf.load_environment("letters", m=1)
    assert sys.modules.get("letters") is None
