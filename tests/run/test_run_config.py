"""vf.RunConfig: the run options, checked when made; evaluate/generate build one from keywords."""

from __future__ import annotations

import dataclasses

import pytest

import verifiers_lite as vf
from tests.helpers.envs import make_env
from verifiers_lite.run.run_config import EvaluationOptions, RunOptions


def test_keyword_options_are_exactly_the_config_fields():
    """The keywords generate/evaluate accept (typed for IDEs and mypy) are the RunConfig fields:
    one list, checked here, so neither can gain an option the other lacks."""
    fields = [f.name for f in dataclasses.fields(vf.RunConfig)]
    assert sorted(RunOptions.__annotations__) == sorted(fields)
    assert set(fields) - set(EvaluationOptions.__annotations__) == {"rollouts_per_example", "seed"}
    for f in dataclasses.fields(vf.RunConfig):
        assert (
            f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        ), f.name


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("max_concurrent", 0, ValueError),
        ("max_concurrent", -3, ValueError),
        ("max_concurrent", 2.5, TypeError),
        ("rollouts_per_example", 0, ValueError),
        ("seed", "7", ValueError),
        ("seed", True, ValueError),
        ("sampling_args", [("temperature", 0)], TypeError),
        ("on_log", "print", TypeError),
        ("results_path", 3, TypeError),
    ],
)
def test_a_bad_value_is_refused_at_construction_naming_the_field(field, value, error):
    with pytest.raises(error, match=rf"RunConfig\.{field}"):
        vf.RunConfig(**{field: value})


def test_good_values_are_kept_and_replace_checks_again():
    cfg = vf.RunConfig(max_concurrent=4, seed=None, sampling_args={"temperature": 0.5})
    assert (cfg.max_concurrent, cfg.seed, cfg.sampling_args) == (4, None, {"temperature": 0.5})
    assert cfg.replace(max_concurrent=8).max_concurrent == 8 and cfg.max_concurrent == 4
    with pytest.raises(ValueError, match=r"RunConfig\.max_concurrent"):
        cfg.replace(max_concurrent=0)


def test_a_bad_value_passed_as_a_keyword_fails_before_any_request(fake_server):
    env = make_env(2)
    with pytest.raises(ValueError, match=r"RunConfig\.max_concurrent must be >= 1, got -1"):
        env.evaluate_sync(fake_server.base_url, "fake-arith", max_concurrent=-1, progress=False)
    assert fake_server.stats()["requests"] == 0


def test_a_config_and_keywords_give_the_same_run(fake_server):
    """The same options as a RunConfig or as keywords: the same rows (a fresh run each)."""
    env = make_env(3)
    by_keywords = env.evaluate_sync(
        fake_server.base_url,
        "fake-arith",
        rollouts_per_example=2,
        progress=False,
        max_concurrent=2,
        sampling_args={"temperature": 0.0},
    )
    cfg = vf.RunConfig(progress=False, max_concurrent=2, sampling_args={"temperature": 0.0})
    by_config = env.evaluate_sync(
        fake_server.base_url, "fake-arith", rollouts_per_example=2, config=cfg
    )
    strip = [
        (r["example_id"], r["rollout_index"], r["completion"], r["reward"])
        for r in by_keywords.rows
    ]
    assert strip == [
        (r["example_id"], r["rollout_index"], r["completion"], r["reward"]) for r in by_config.rows
    ]
    assert (
        by_config.metadata["max_concurrent"] == 2
        and by_config.metadata["rollouts_per_example"] == 2
    )
    assert by_config.metadata["sampling_args"]["temperature"] == 0.0


def test_keywords_beside_a_config_override_its_fields(fake_server):
    env = make_env(2)
    out = env.generate_sync(
        [{"question": "1 + 1", "answer": "2"}],
        fake_server.base_url,
        "fake-arith",
        config=vf.RunConfig(max_concurrent=1, progress=False),
        max_concurrent=3,
    )
    assert out.metadata["max_concurrent"] == 3


def test_config_must_be_a_run_config(fake_server):
    env = make_env(2)
    with pytest.raises(
        TypeError, match=r"^generate_sync\(\): config must be a RunConfig, got dict"
    ):
        env.generate_sync(
            [{"question": "1 + 1", "answer": "2"}],
            fake_server.base_url,
            "fake-arith",
            config={"progress": False},
        )
    assert fake_server.stats()["requests"] == 0
