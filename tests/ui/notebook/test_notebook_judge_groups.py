"""notebooks/04_judge_and_groups.ipynb runs top to bottom in a real kernel; the saved result is checked."""

from __future__ import annotations

import pytest

from tests.ui.notebook.helpers import errors_of, execute, outputs_of

pytestmark = pytest.mark.slow


def test_judge_and_groups(jupyter_kernel, notebook_backend, tmp_path):
    nb, _ = execute(
        "04_judge_and_groups.ipynb",
        tmp_path,
        {"VF_NOTEBOOK_SMALL": "1", "VF_NOTEBOOK_MODEL": notebook_backend},
    )
    assert errors_of(nb) == []
    assert len(outputs_of(nb, "image/png")) >= 2  # per-task reward and pass@k plots
    tables = [html for _, html in outputs_of(nb, "text/html")]
    per_task = next(h for h in tables if "reward_mean" in h and "pass@1" in h)
    assert all(t in per_task for t in ("arithmetic", "chain_sum", "judged"))
    assert any("judge_response" in h for h in tables)
    # The progress display's saved frame counts the cache: all misses first, all hits on the re-run.
    frames = [h for h in tables if "vf-progress" in h]
    assert len(frames) == 2 and " hits / " in frames[0] and "cache 0 hits" in frames[0]
    assert " / 0 misses" in frames[1]
    printed = "".join(
        o.get("text", "")
        for c in nb.cells
        for o in c.get("outputs", [])
        if o.get("name") == "stdout"
    )
    assert "'hit_ratio': 1.0" in printed and "'misses': 0" in printed
    assert (tmp_path / "outputs" / "04_cache.sqlite").is_file()
