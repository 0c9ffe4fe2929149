"""The live widget and the results table in a real kernel say when an interval is undefined
(an all-zero run: no variance), instead of showing 0.000 ± 0.000 [0.000, 0.000]."""

from __future__ import annotations

import html

import pytest

pytestmark = pytest.mark.slow

CELL = """
import verifiers_lite as vf
env = vf.SingleTurnEnv(dataset=[{"question": f"q{i}", "answer": "1"} for i in range(3)],
                       rubric=vf.Rubric([lambda completion: 0.0]), env_id="zeros")
out = env.evaluate_sync(vf.ScriptedClient("no"), "m", rollouts_per_example=2)
out
"""
REASON = "95% CI undefined: no variance, every example's mean is 0.000"


def test_the_widget_and_the_results_table_name_the_undefined_interval(kernel):
    out = kernel.run(CELL)
    live = [
        html.unescape(u["value"])
        for u in out["updates"]
        if isinstance(u.get("value"), str) and "mean reward" in u["value"]
    ]
    assert live and REASON in live[-1], live[-1:]  # the widget's last figures
    shown = [html.unescape(h) for h in out["html"]]
    assert any(
        REASON in h and "vf-progress" in h for h in shown
    )  # the final frame a saved notebook keeps
    assert any(REASON in h and "vf-results" in h for h in shown)  # the results table
    assert not any("0.000 ± 0.000" in h for h in shown + live)
