"""The GRPO benchmark trains on fresh questions: over the longest default run, every step's
questions are new, none repeats, and none is a held-out, validation or probe question."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "train_grpo_bench", ROOT / "benchmarks" / "train_grpo.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve the module by name
    spec.loader.exec_module(module)
    return module


def _pairs(texts: list[str]) -> list[tuple[int, str, int]]:
    """(a, op, b) read back from each question's text, independently of the generator."""
    out = []
    for t in texts:
        m = re.fullmatch(r"What is (\d+) ([+*-]) (\d+)\?", t)
        assert m, t
        out.append((int(m[1]), m[2], int(m[3])))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_whole_default_run_trains_on_fresh_questions_never_evaluated(bench, seed: int) -> None:
    s = bench.Settings(seed=seed)
    stream = bench.questions(bench.training_env(s.steps, s.questions_per_step, s.seed))
    assert s.steps == bench.MAX_STEPS and len(stream) == s.steps * s.questions_per_step
    steps = [stream[k : k + s.questions_per_step] for k in range(0, len(stream), 4)]
    assert len(steps) == s.steps
    train = _pairs(stream)
    assert len(set(train)) == len(train), "a training question repeats within the run"
    assert all(max(a, b) <= 99 and op == "+" for a, op, b in train)  # two-digit additions
    held_out = _pairs(bench.questions(bench.eval_env("held_out")))
    validation = _pairs(bench.questions(bench.eval_env("validation")))
    probe = _pairs(bench.questions(bench.probe_env()))
    assert len(held_out) == len(set(held_out)) == bench.HELD_OUT_QUESTIONS
    assert len(validation) == len(set(validation)) == bench.HELD_OUT_QUESTIONS
    assert len(probe) == len(set(probe)) == bench.PROBE_QUESTIONS
    for name, other in (("held-out", held_out), ("validation", validation), ("probe", probe)):
        assert not set(train) & set(other), f"a training question is a {name} question"
    assert not set(probe) & set(validation)  # the probe is not the set settings are chosen on
    assert not set(held_out) & (set(validation) | set(probe))


def test_what_the_run_records_is_checked_against_the_stream(bench) -> None:
    env = bench.training_env(3, 4)
    texts = bench.questions(env)
    recorded = [{"example_ids": [0, 1, 2, 3]}, {"example_ids": [4, 5, 6, 7]}]
    assert bench.trained_questions(recorded, env) == texts[:8]


def test_more_steps_than_the_split_has_questions_for_is_refused(bench) -> None:
    with pytest.raises(ValueError, match="would repeat"):
        bench.training_env(2000, 4)  # 8,000 questions; the train third of 10,000 has ~3,300


def test_each_seed_trains_on_its_own_order_of_the_train_split(bench) -> None:
    streams = [bench.questions(bench.training_env(800, 4, seed)) for seed in (0, 1, 2)]
    assert len({tuple(q[:20]) for q in streams}) == 3  # three runs start on different questions
    whole = set(bench.questions(bench.environment("train", 4000)))  # the whole train split
    assert all(set(q) <= whole for q in streams)
