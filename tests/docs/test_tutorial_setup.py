"""The tutorial's notebook steps work as written: JupyterLab is installed by the extras
``scripts/setup.sh`` installs, and the one command the tutorial gives (the one setup.sh runs)
registers a kernel that starts and imports verifiers_lite."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from tests.helpers.paths import DOCS, REPO

TUTORIAL = DOCS / "tutorial" / "02-first-evaluation.md"


def _register_line() -> list[str]:
    (line,) = [ln for ln in TUTORIAL.read_text().splitlines() if "ipykernel install" in ln]
    return shlex.split(line)


def test_setup_registers_the_kernel_the_tutorial_names():
    args = _register_line()
    setup = (REPO / "scripts" / "setup.sh").read_text().splitlines()
    (line,) = [ln for ln in setup if "ipykernel install" in ln]
    assert [a for a in shlex.split(line) if a != ">/dev/null"] == args
    name = args[args.index("--display-name") + 1]
    assert f'"{name}"' in TUTORIAL.read_text()  # the kernel the reader is told to pick


def test_jupyterlab_comes_with_the_notebook_extra():
    extras = (REPO / "pyproject.toml").read_text()
    notebook = re.search(r"^notebook = \[(.*)\]$", extras, re.M)
    assert notebook and "jupyterlab" in notebook.group(1)
    setup = (REPO / "scripts" / "setup.sh").read_text()
    assert re.search(r"pip install .*\.\[[^\]]*\bnotebook\b", setup)
    done = subprocess.run(
        [sys.executable, "-m", "jupyterlab", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip().split(".")[0]) >= 4


def test_the_registered_kernel_starts_and_imports_the_library(tmp_path: Path):
    args = _register_line()
    assert args[:1] == [".venv/bin/python"]
    env = {**os.environ, "JUPYTER_DATA_DIR": str(tmp_path), "JUPYTER_PATH": str(tmp_path)}
    subprocess.run([sys.executable, *args[1:]], env=env, check=True, capture_output=True)
    listed = subprocess.run(
        [sys.executable, "-m", "jupyter", "kernelspec", "list", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    spec = json.loads(listed.stdout)["kernelspecs"]["verifiers-lite"]["spec"]
    assert spec["display_name"] == "verifiers_lite (.venv)"
    assert Path(spec["argv"][0]).resolve() == Path(sys.executable).resolve()
    code = "import verifiers_lite as vf; print(vf.__name__)"
    ran = subprocess.run(
        [
            sys.executable,
            "-c",
            "import jupyter_client, sys\n"
            "km, kc = jupyter_client.manager.start_new_kernel(kernel_name='verifiers-lite')\n"
            "out = []\n"
            f"kc.execute_interactive({code!r}, timeout=60, output_hook=lambda m: out.append("
            "m['content'].get('text', '')))\n"
            "km.shutdown_kernel(now=True)\n"
            "print(''.join(out))",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    assert "verifiers_lite" in ran.stdout
