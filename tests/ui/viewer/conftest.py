"""Runs written by ``evaluate`` against the fake model server, a viewer over them, and a
headless Chromium to open its pages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import verifiers_lite as vf
from tests.helpers.browser import TIMEOUT_MS, launch_chromium
from tests.helpers.envs import boxed_correct
from tests.ui.viewer.helpers import XSS
from tests.ui.viewer.viewer_proc import ViewerProcess
from verifiers_lite.results.store import read_rows


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


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch_chromium()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A page that records its errors and requests. The page's CSP (scripts only from the
    server) would also stop an injected script; it is bypassed here so the markup test proves
    the escaping alone (and so Playwright can evaluate)."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    pg = ctx.new_page()
    pg.set_default_timeout(TIMEOUT_MS)
    pg.errors = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    pg.on("console", lambda m: m.type == "error" and pg.errors.append(m.text))
    pg.requests = []
    pg.on("request", lambda r: pg.requests.append(r.url))
    yield pg
    ctx.close()


@pytest.fixture
def artifacts_dir(request) -> Path:
    import os

    base = Path(os.environ.get("VF_TEST_ARTIFACTS") or Path(__file__).parent / "artifacts")
    base.mkdir(parents=True, exist_ok=True)
    return base
