"""Runs the two frameworks over the corpus in their own processes, and caches the reference.

verifiers 0.3.1's rollouts are cached under ``.cache/classic-oracle/`` keyed by a hash of what
decides them (the environment's module, the local data, the run's settings, the deterministic
model, the harness, verifiers' version), so a rerun with nothing changed starts no 0.3.1 process;
from cold, one process runs every missing environment.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.classic import records
from tests.classic.corpus_specs import SPECS, helper_files, module_file
from tests.helpers.paths import ORACLE_PYTHON, REPO

HERE = Path(__file__).resolve().parent

BESIDE_SITE = REPO / ".venv-verifiers04-site"
CACHE_DIR = REPO / ".cache" / "classic-oracle"
_MODEL_FILES = ("conversation_model.py", "conversation_server.py")
# The two conditions verifiers_lite runs the corpus under: alone, and with verifiers 0.4 importable.
CONDITIONS = ("without_verifiers", "beside_verifiers_0_4")
_HARNESS_FILES = ("local_datasets.py", "records.py", "corpus_specs.py", "run_oracle.py")


def oracle_version() -> str | None:
    """The verifiers version in the reference venv (None when it is not built)."""
    site = sorted(
        (REPO / ".venv-verifiers031" / "lib").glob("python*/site-packages/verifiers-*.dist-info")
    )
    return site[0].name.removeprefix("verifiers-").removesuffix(".dist-info") if site else None


def oracle_key(name: str) -> str:
    """What decides environment ``name``'s reference rollouts, as a hash."""
    h = hashlib.sha256(f"verifiers {oracle_version()}\n{name}\n".encode())
    files = [
        module_file(name),
        *helper_files(name),
        *sorted((HERE / "corpus" / "data").rglob("*.jsonl")),
        *(HERE / f for f in _HARNESS_FILES),
        *(REPO / "verifiers_lite" / "testing" / f for f in _MODEL_FILES),
    ]
    for f in files:
        label = f.relative_to(REPO).as_posix() if f.is_relative_to(REPO) else f.name
        h.update(label.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:24]


# Environments build their judges' clients from these; the judges are pointed at the local model.
_STUB_KEYS = {"OPENAI_API_KEY": "stub", "JUDGE_API_KEY": "stub"}


def _run(cmd: list[str], env: dict[str, str], what: str, timeout: float) -> None:
    proc = subprocess.run(
        cmd, env={**_STUB_KEYS, **env}, capture_output=True, text=True, timeout=timeout, cwd=REPO
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{what} exited with {proc.returncode}:\n{proc.stderr[-4000:]}")


def _collect(out: Path, names: list[str]) -> dict[str, dict[str, Any]]:
    """Each name's rollouts (``{"rollouts": [...]}``) or its traceback (``{"failure": ...}``)."""
    found: dict[str, dict[str, Any]] = {}
    for name in names:
        failure, result = out / f"{name}.failure", out / f"{name}.json"
        found[name] = (
            records.read(result)
            if result.is_file()
            else {
                "failure": failure.read_text() if failure.is_file() else "the runner wrote nothing"
            }
        )
        warned = out / f"{name}.warnings.json"
        if warned.is_file():
            found[name]["warnings"] = records.read(warned)
    return found


def oracle_results(names: list[str], base_url: str, scratch: Path) -> dict[str, dict[str, Any]]:
    """verifiers 0.3.1's rollouts for ``names``: from the cache, else computed (and cached)."""
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    keys = {n: oracle_key(n) for n in names}
    missing = [n for n in names if not (CACHE_DIR / f"{keys[n]}.json").is_file()]
    if missing:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        _run(
            [
                str(ORACLE_PYTHON),
                str(HERE / "run_oracle.py"),
                "--base-url",
                base_url,
                "--out",
                str(scratch),
                *missing,
            ],
            env,
            "the verifiers 0.3.1 runner",
            timeout=600,
        )
        for name, result in _collect(scratch, missing).items():
            # a refusal is a result too, where the spec expects one or says a failure is kept
            if (
                "failure" not in result
                or SPECS[name].get("refused")
                or SPECS[name].get("keep_failure")
            ):
                (CACHE_DIR / f"{keys[name]}.json").write_text(json.dumps(result))
    found = {n: records.read(CACHE_DIR / f"{keys[n]}.json") for n in names if n not in missing}
    return {**found, **_collect(scratch, missing)}


def lite_results(
    names: list[str], base_url: str, scratch: Path, beside_verifiers_04: bool
) -> dict[str, Any]:
    """verifiers_lite's rollouts for ``names``, run in a process where ``verifiers`` is absent or
    is the real 0.4 distribution; ``_process`` says which ``verifiers`` it saw before and after."""
    path = [str(REPO)] + ([str(BESIDE_SITE)] if beside_verifiers_04 else [])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    _run(
        [
            sys.executable,
            str(HERE / "run_lite.py"),
            "--base-url",
            base_url,
            "--out",
            str(scratch),
            *names,
        ],
        env,
        "the verifiers_lite runner",
        timeout=600,
    )
    found: dict[str, Any] = _collect(scratch, names)
    found["_process"] = records.read(scratch / "_process.json")
    return found
