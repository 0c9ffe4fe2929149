"""vf.compare_runs: the paired comparison's bookkeeping on small runs whose figures are
computed here by hand (and by scipy's paired t-test), and the labels runs get."""

from __future__ import annotations

import math

import pytest
from scipy import stats

import verifiers_lite as vf


def _rows(
    per_example: dict[int, list[float | None]], system: str | None = None, question: str = "q{}"
) -> list[dict]:
    rows = []
    for eid, rewards in per_example.items():
        prompt = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": question.format(eid)}
        ]
        for k, r in enumerate(rewards):
            rows.append(
                {
                    "example_id": eid,
                    "rollout_index": k,
                    "prompt": prompt,
                    "answer": str(eid),
                    "info": {},
                    "task": "default",
                    "reward": r,
                    "error": {"category": "model_timeout", "message": "x"} if r is None else None,
                }
            )
    return rows


def _run(
    per_example: dict[int, list[float | None]], temperature: float | None = None, **kw
) -> vf.GenerateOutputs:
    meta = {
        "env_id": "toy",
        "model": "m",
        "sampling_args": {} if temperature is None else {"temperature": temperature},
    }
    return vf.GenerateOutputs(_rows(per_example, **kw), meta)


A = {0: [1.0, 0.0], 1: [1.0, 1.0], 2: [0.0, 0.0], 4: [None], 5: [1.0]}
B = {0: [1.0, 1.0], 1: [1.0, 0.0], 2: [1.0, 0.0], 3: [0.0], 4: [1.0]}


def test_hand_computed_difference_and_bookkeeping():
    c = vf.compare_runs(_run(A, 0.2), _run(B, 1.2))
    # Shared and scored in both: examples 0, 1, 2 with means a (0.5, 1, 0), b (1, 0.5, 0.5).
    d = [0.5, -0.5, 0.5]
    ref = stats.ttest_rel([1.0, 0.5, 0.5], [0.5, 1.0, 0.0])
    assert c.diff == pytest.approx(1 / 6) and (c.mean_a, c.mean_b) == pytest.approx((0.5, 2 / 3))
    assert c.stderr == pytest.approx(math.sqrt(1 / 3) / math.sqrt(3))
    assert c.ci == pytest.approx(
        (ref.confidence_interval(0.95).low, ref.confidence_interval(0.95).high)
    )
    assert c.p_value == pytest.approx(ref.pvalue)
    assert (c.wins, c.ties, c.losses, c.shared) == (2, 0, 1, 3)
    assert (c.only_a, c.only_b, c.unscored) == ((5,), (3,), (4,))  # reported, not dropped
    # MDE = (t(0.975; 2) + t(0.8; 2)) · SE
    assert c.mde == pytest.approx((stats.t.ppf(0.975, 2) + stats.t.ppf(0.8, 2)) * c.stderr)
    df = c.per_example.set_index("example_id")
    assert list(df.loc[[0, 1, 2], "diff"]) == pytest.approx(d)
    assert dict(df["outcome"]) == {
        0: "b better",
        1: "b worse",
        2: "b better",
        4: "unscored in a",
        5: "only in a",
        3: "only in b",
    }
    assert list(df.loc[[0, 4], "scored_a"]) == [2, 0]
    assert c.labels == ("temperature=0.2", "temperature=1.2")
    text = str(c)
    for needle in (
        "temperature=1.2 − temperature=0.2",
        "+0.167 ± 0.333",
        "b better on 2, tied on 0, worse on 1",
        "3 shared, 1 only in a (5), 1 only in b (3), 1 unscored in a run (4)",
        "paired t-test, 2 df",
    ):
        assert needle in text, (needle, text)
    assert "+0.167" in repr(c) and "p=" in repr(c)
    assert "b better on 2" in c._repr_html_() and "<table" in c._repr_html_()


def test_examples_needed_from_a_comparison_and_from_a_run():
    rng_a = {i: [float(i % 3 == 0), float(i % 2 == 0)] for i in range(30)}
    rng_b = {i: [float(i % 3 != 1), float(i % 5 != 0)] for i in range(30)}
    a, b = _run(rng_a, 0.2), _run(rng_b, 1.0)
    c = vf.compare_runs(a, b)

    def least_n(sd: float, delta: float) -> int:  # by brute force, with scipy's t
        n = 2
        while (stats.t.ppf(0.975, n - 1) + stats.t.ppf(0.8, n - 1)) * sd / math.sqrt(n) > delta:
            n += 1
        return n

    diffs = [sum(rng_b[i]) / 2 - sum(rng_a[i]) / 2 for i in range(30)]
    sd_d = stats.tstd(diffs)
    assert c.examples_needed(0.1) == vf.examples_needed(c, 0.1) == least_n(sd_d, 0.1)
    means = [sum(v) / 2 for v in rng_a.values()]
    assert vf.examples_needed(a, 0.1) == least_n(math.sqrt(2) * stats.tstd(means), 0.1)
    with pytest.raises(ValueError, match="positive"):
        vf.examples_needed(c, 0)


def test_same_id_with_another_question_is_refused_but_a_system_prompt_change_is_not():
    a = _run({0: [1.0], 1: [0.0], 2: [1.0]}, 0.2)
    other = vf.GenerateOutputs(
        _rows({0: [1.0], 1: [1.0], 2: [1.0]}, question="another question {}"),
        {"env_id": "toy", "model": "m"},
    )
    with pytest.raises(
        vf.ExamplesMismatchError, match=r"different inputs under the same example ids \(3 of 3"
    ):
        vf.compare_runs(a, other)
    assert vf.compare_runs(a, other, check_inputs=False).shared == 3
    new_system = vf.GenerateOutputs(
        _rows({0: [0.0], 1: [1.0], 2: [1.0]}, system="Be brief."),
        {"env_id": "toy", "model": "m", "env_args": {"system_prompt": "Be brief."}},
    )
    c = vf.compare_runs(a, new_system)
    # the system message of the first row names the prompt (these runs record no prompt template),
    # once: the environment argument that set it is not named again
    assert c.shared == 3 and c.labels == (
        "temperature=0.2, no system prompt",
        'temperature=default, system "Be brief."',
    )


def test_no_shared_example_gives_counts_and_no_figures():
    c = vf.compare_runs(_run({0: [1.0]}), _run({1: [0.0]}))
    assert (
        (c.shared, c.only_a, c.only_b) == (0, (0,), (1,))
        and math.isnan(c.diff)
        and math.isnan(c.p_value)
    )
    assert c.labels == ("a", "b")  # nothing differs between the runs


def test_run_directories_and_given_labels(tmp_path):
    a, b = _run(A, 0.2), _run(B, 0.2)
    c = vf.compare_runs(
        str(a.save(tmp_path / "a")), b.save(tmp_path / "b"), labels=("before", "after")
    )
    assert c.labels == ("before", "after") and c.shared == 3
    assert c.sources == (str(tmp_path / "a"), str(tmp_path / "b"))
    with pytest.raises(FileNotFoundError):
        vf.compare_runs(tmp_path / "missing", b)
    with pytest.raises(TypeError, match="GenerateOutputs or run directories"):
        vf.compare_runs(42, b)


def test_runs_are_labelled_by_what_differs_everywhere():
    base = {
        "env_id": "arith",
        "model": "m",
        "sampling_args": {"temperature": 0.2},
        "env_args": {"digits": 1},
    }
    runs = [
        vf.GenerateOutputs(_rows({0: [1.0], 1: [0.0]}), {**base, **change})
        for change in ({}, {"sampling_args": {"temperature": 1.2}}, {"env_args": {"digits": 2}})
    ]
    expected = [
        "digits=1, temperature=0.2",
        "digits=1, temperature=1.2",
        "digits=2, temperature=0.2",
    ]
    assert list(vf.compare(runs)["run"]) == expected
    from verifiers_lite.ui.notebook.plots import runs_frame

    assert list(dict.fromkeys(runs_frame(runs)["run"])) == expected
    assert list(vf.compare(runs[:2])["run"]) == ["temperature=0.2", "temperature=1.2"]
    models = [
        vf.GenerateOutputs(runs[0].rows, {**runs[0].metadata, "model": name})
        for name in ("small", "big")
    ]
    assert vf.compare_runs(*models).labels == ("small", "big")


def test_by_task_parts_are_labelled_by_task():
    rows = [
        {**r, "task": t, "example_id": r["example_id"] + off}
        for t, off in (("math", 0), ("code", 10))
        for r in _rows({0: [1.0], 1: [0.0]})
    ]
    out = vf.GenerateOutputs(rows, {"env_id": "group", "model": "m"})
    parts = out.by_task()
    assert list(vf.compare(list(parts.values()))["run"]) == ["math", "code"]
    assert list(vf.compare(parts)["run"]) == ["math", "code"]
