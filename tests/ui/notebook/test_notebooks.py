"""Each example notebook runs top to bottom in a real kernel; the saved result is checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.notebook.helpers import errors_of, execute, outputs_of, widget_models

pytestmark = pytest.mark.slow


def run_notebook(name: str, workdir: Path, backend: str):
    nb, client = execute(name, workdir, {"VF_NOTEBOOK_SMALL": "1", "VF_NOTEBOOK_MODEL": backend})
    assert errors_of(nb) == []
    return nb, client


def eval_cells(nb) -> list[int]:
    return [
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code"
        and "evaluate_sync" in c.source
        and "progress=False" not in c.source
    ]


def assert_live_progress(nb, client) -> None:
    """Widget final state complete and green; updates (partial progress) arrived mid-cell."""
    models = widget_models(nb)
    bars = [m["state"] for m in models.values() if m["model_name"] == "IntProgressModel"]
    assert bars, "no progress widget saved"
    for bar in bars:
        assert bar["value"] == bar["max"] > 0 and bar["bar_style"] == "success"
    texts = [m["state"].get("value", "") for m in models.values() if m["model_name"] == "HTMLModel"]
    assert any("mean reward" in t and "±" in t for t in texts)
    for i in eval_cells(nb):
        updates = client.widget_updates(i)
        partial = [
            u["value"] for u in updates if isinstance(u.get("value"), int) and u["value"] > 0
        ]
        # Progress moved while the cell ran (how many updates depends on the model's speed: the
        # display sends at most one every 50 ms, and the fake model finishes in a few waves).
        assert partial and min(partial) < max(partial), (
            f"cell {i}: no intermediate progress {partial} ({len(updates)} updates)"
        )
        # The saved output is the static final frame: readable without a widget manager.
        frames = [
            o
            for o in nb.cells[i].outputs
            if "vf-progress" in o.get("data", {}).get("text/html", "")
        ]
        assert frames and "mean reward" in frames[0]["data"]["text/plain"]


def test_quickstart(executed_quickstart):
    nb, client = executed_quickstart
    assert_live_progress(nb, client)
    assert len(outputs_of(nb, "image/png")) >= 2
    tables = [html for _, html in outputs_of(nb, "text/html") if "GenerateOutputs" in html]
    assert tables and "mean reward" in tables[0]


def test_custom_multiturn_env(jupyter_kernel, notebook_backend, tmp_path):
    nb, client = run_notebook("02_custom_multiturn_env.ipynb", tmp_path, notebook_backend)
    assert_live_progress(nb, client)
    # The scripted perfect player reached the maximal reward before the model ran.
    check = next(c for c in nb.cells if c.cell_type == "code" and "ScriptedClient" in c.source)
    assert check.outputs[0]["data"]["text/plain"].startswith("(1.5,")
    assert len(outputs_of(nb, "image/png")) >= 2
    frame = next(html for _, html in outputs_of(nb, "text/html") if "step_accuracy" in html)
    assert "GenerateOutputs" in frame or "turns" in frame
    printed = "".join(
        o.get("text", "")
        for c in nb.cells
        for o in c.get("outputs", [])
        if o.get("name") == "stdout"
    )
    assert "user:" in printed and "assistant:" in printed


def test_reward_distributions(jupyter_kernel, notebook_backend, tmp_path):
    nb, client = run_notebook("03_reward_distributions.ipynb", tmp_path, notebook_backend)
    assert_live_progress(nb, client)
    compared = next(html for _, html in outputs_of(nb, "text/html") if "reward_stderr" in html)
    assert "T=0.2" in compared and "T=1.2" in compared and "pass@1" in compared
    assert len(outputs_of(nb, "image/png")) >= 5
