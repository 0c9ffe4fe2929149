"""The GRPO benchmark's last lines carry what a reader compares runs by: held-out before/after,
the paired difference with its interval, steps, wall time, steps/minute, the machine's flags,
cores and threads, the stream check and the early stop; the curves come out as PNGs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location(
        "train_grpo_report", ROOT / "benchmarks" / "train_grpo.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _summary() -> dict[str, Any]:
    steps = [
        {"step": i, "reward_mean": 0.2 + 0.01 * i, "reward_ci95": [0.1, 0.4], "example_ids": []}
        for i in range(20)
    ]
    steps[3].update(kl_to_base=0.05, ratio_mean=1.0, ratio_min=0.99, ratio_max=1.01)
    return {
        "split": "held_out",
        "settings": {"seed": 2},
        "reward_before": 0.275,
        "reward_after": 0.41,
        "diff": 0.135,
        "ci95": [0.05, 0.22],
        "p_value": 0.002,
        "wins_ties_losses": [90, 100, 50],
        "eval_examples": 240,
        "eval_rollouts": 4,
        "step_stats": steps,
        "trl_log": [{"step": i + 1, "reward": 0.2, "entropy": 0.3 - 0.01 * i} for i in range(20)],
        "probe": [
            {"step": k, "reward": 0.28 + 0.01 * k, "reward_ci95": [0.2, 0.5]} for k in (0, 10, 20)
        ],
        "stopped_early_at": 20,
        "questions_trained": 80,
        "fresh_questions_checked": True,
        "steps": 20,
        "steps_per_min": 6.5,
        "wall_s": {"total": 1700.0, "train": 1400.0, "eval": 240.0},
        "timing": {},
        "machine": {
            "avx512": False,
            "amx": False,
            "torch_cpu_capability": "AVX2",
            "cpus_available": 2,
            "cpu_count": 2,
        },
        "torch_threads": 2,
        "threads_timing": {"threads": [2, 1], "s_per_step": {"2": 8.0, "1": 12.0}},
        "load_avg_start": "1.0 1.0 1.0",
        "load_avg_end": "2.0 2.0 2.0",
    }


def test_the_last_lines_name_the_figures_and_the_machine() -> None:
    lines = _bench().report(_summary())
    tail = "\n".join(lines[-5:])
    assert "seed 2: held_out reward before 0.275, after 0.410 (240 questions x 4 rollouts)" in tail
    assert "paired difference +0.135, 95% interval [+0.050, +0.220]" in tail
    assert "steps 20 (80 questions, each once, none evaluated: checked)" in tail
    assert "early stop at step 20 (validation probe)" in tail
    assert "wall 28.3 min" in tail and "6.50 steps/min" in tail
    assert "AVX-512 no" in tail and "torch kernels AVX2" in tail
    assert "2 of 2 cores available, torch threads 2" in tail
    assert "threads 2: 8.0 s/step, 1: 12.0 s/step (1.50x, alternating)" in tail
    assert [ln for ln in lines if ln.startswith("probe at step")] == [
        "probe at step   0: 0.280 [0.200, 0.500]",
        "probe at step  10: 0.380 [0.200, 0.500]",
        "probe at step  20: 0.480 [0.200, 0.500]",
    ]


def test_the_curves_are_written_as_pngs(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    paths = _bench().plot(_summary(), tmp_path)
    assert [p.name for p in paths] == ["reward.png", "kl_entropy.png", "ratios.png"]
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000
