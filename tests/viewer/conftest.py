"""Runs written by ``evaluate`` against the fake model server, and a viewer over them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import verifiers_lite as vf
from verifiers_lite.results.store import read_rows

from .viewer_proc import ViewerProcess

XSS = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> What is 2 + 2?'


def boxed_correct(completion: Any, answer: str) -> float:
    return 1.0 if vf.extract_boxed_answer(completion[-1]["content"] or "") == answer else 0.0


def _env(rows: list[dict[str, str]]) -> vf.SingleTurnEnv:
    return vf.SingleTurnEnv(dataset=rows, rubric=vf.Rubric([boxed_correct]))


@pytest.fixture(scope="session")
def runs(tmp_path_factory, fake_server_process) -> dict[str, Any]:
    """Five finished runs under one folder: two of one environment (to compare), a tool-using
    one, one with errored rollouts, one whose completions hold markup. Returns paths and the
    ``GenerateOutputs`` each ``evaluate`` returned."""
    root = tmp_path_factory.mktemp("viewer-runs")
    fs = fake_server_process
    client = vf.ChatClient(fs.base_url)
    arith = vf.load_environment("arithmetic", num_examples=12)
    out: dict[str, Any] = {}

    def run(name: str, env: Any, model: str, **kw: Any) -> None:
        fs.reset()
        fs.configure(latency_ms=0, correct_rate=0.5, faults=kw.pop("faults", []))
        out[name] = env.evaluate_sync(
            client, model, results_path=str(root / "evals" / name), progress=False, **kw
        )

    run("arith-a", arith, "fake-arith", num_examples=12, rollouts_per_example=3)
    run("arith-b", arith, "fake-echo", num_examples=12, rollouts_per_example=3)
    run(
        "calc",
        vf.load_environment("calculator"),
        "fake-tool",
        num_examples=3,
        rollouts_per_example=2,
    )
    run(
        "errored",
        _env([{"question": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(4)]),
        "fake-arith",
        rollouts_per_example=2,
        max_concurrent=1,
        faults=[{"status": 400, "message": "bad <b>args</b>"}] * 3,
    )
    run("xss", _env([{"question": XSS, "answer": "4"}]), "fake-echo", rollouts_per_example=2)
    fs.reset()
    fs.configure(latency_ms=0, correct_rate=0.5, faults=[])
    return {
        "root": root,
        "outputs": out,
        "disk": {k: read_rows(root / "evals" / k / "results.jsonl") for k in out},
    }


@pytest.fixture(scope="session")
def viewer(runs) -> Any:
    with ViewerProcess(str(runs["root"])) as v:
        yield v


def run_id(name: str) -> str:
    """The viewer's id of a run under ``<root>/evals/``."""
    return f"evals~{name}"


def stats_by_hand(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Reward mean over scored rows and error counts, computed without the library."""
    rewards = [r["reward"] for r in rows if r.get("reward") is not None]
    errors: dict[str, int] = {}
    for r in rows:
        if r.get("error"):
            errors[r["error"]["category"]] = errors.get(r["error"]["category"], 0) + 1
    return {
        "mean": sum(rewards) / len(rewards) if rewards else None,
        "scored": len(rewards),
        "errors": errors,
    }


@pytest.fixture
def artifacts_dir(request) -> Path:
    import os

    base = Path(os.environ.get("VF_TEST_ARTIFACTS") or Path(__file__).parent / "artifacts")
    base.mkdir(parents=True, exist_ok=True)
    return base
