"""inspect_ai itself, run in a subprocess (its own venv, or this interpreter when it has the
extra) against a model server on 127.0.0.1 through its ``openai-api/<service>/<model>``
provider: the logs the interop tests read and the scores the differential test compares."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ORACLE = REPO / ".venv-inspect" / "bin" / "python"
TASKS = Path(__file__).resolve().parent / "inspect_tasks"
SERVICE = "vfstub"

_SCRIPT = """
import json, sys
from inspect_ai import eval
spec, model, log_dir, args = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
logs = eval(spec, model=model, log_dir=log_dir, display="none", task_args=args,
            max_connections=4, log_format="eval")
for log in logs:
    if log.status != "success":
        sys.exit(f"inspect run failed: {log.status}: {log.error}")
    print(log.location)
"""


def inspect_python() -> str:
    """The oracle venv's interpreter, else this one when inspect_ai imports here; else skip
    (fail when ``VF_REQUIRE_INSPECT_ORACLE`` is set)."""
    if ORACLE.exists():
        return str(ORACLE)
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        if os.environ.get("VF_REQUIRE_INSPECT_ORACLE"):
            pytest.fail("inspect_ai is missing: run .ci/install_inspect_oracle.sh")
        pytest.skip("needs inspect_ai (.ci/install_inspect_oracle.sh or the inspect extra)")
    return sys.executable


def run_inspect(
    spec: str | list[str],
    base_url: str,
    model: str,
    log_dir: Path,
    task_args: dict | None = None,
) -> list[Path]:
    """Run ``spec`` (``file.py@task``, or several) with inspect_ai against ``base_url``; the
    logs written, in the order of the specs."""
    env = {
        **os.environ,
        f"{SERVICE.upper()}_BASE_URL": base_url,
        f"{SERVICE.upper()}_API_KEY": "local",
        "INSPECT_LOG_DIR": str(log_dir),
        "NO_PROXY": "127.0.0.1,localhost",
    }
    done = subprocess.run(
        [
            inspect_python(),
            "-c",
            _SCRIPT,
            json.dumps(spec),
            f"openai-api/{SERVICE}/{model}",
            str(log_dir),
            json.dumps(task_args or {}),
        ],
        env=env,
        cwd=str(TASKS),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [Path(line) for line in done.stdout.split() if line.endswith(".eval")]
