import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import verifiers_lite as vf  # noqa: E402
from verifiers_lite.notebook.plots import runs_frame  # noqa: E402

from .sample_rows import tool_rows  # noqa: E402


def run(model: str, temperature: float, shift: float = 0.0) -> vf.GenerateOutputs:
    rows = tool_rows()
    for i, r in enumerate(rows):
        r["reward"] = min(1.0, r["reward"] + shift * (i % 2))
    return vf.GenerateOutputs(rows=rows, metadata={"env_id": "calc", "model": model,
                                                   "sampling_args": {"temperature": temperature}})


def test_runs_are_labelled_by_what_differs():
    df = runs_frame([run("m", 0.2), run("m", 1.0)])
    assert sorted(df["run"].unique()) == ["temperature=0.2", "temperature=1.0"]
    df = runs_frame({"base": run("a", 0.2), "tuned": run("b", 0.2)})
    assert sorted(df["run"].unique()) == ["base", "tuned"]


@pytest.mark.parametrize("kind", ["hist", "ecdf"])
def test_plot_rewards_compares_runs(kind):
    ax = vf.plot_rewards([run("small", 0.7), run("big", 0.7, 0.3)], kind=kind)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert len(labels) == 2 and any(lbl.startswith("big") for lbl in labels)
    assert ax.get_xlabel() == "reward" and "Reward distribution" in ax.get_title()
    assert ax.figure.canvas.get_renderer() is not None  # drawable headless


def test_plot_rewards_by_column_on_a_dataframe_and_given_ax():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    df = run("m", 0.5).to_pandas()
    assert vf.plot_rewards(df, by="example_id", ax=ax) is ax
    assert "by example_id" in ax.get_title()
    with pytest.raises(KeyError, match="nope"):
        vf.plot_rewards(df, by="nope")
    with pytest.raises(ValueError, match="kind"):
        vf.plot_rewards(df, kind="violin")


def test_continuous_rewards_use_a_histogram():
    df = pd.DataFrame({"reward": [i / 37 for i in range(37)], "example_id": range(37)})
    ax = vf.plot_rewards(df)
    assert ax.patches and ax.get_ylabel() == "fraction of rollouts"


def test_turns_pass_at_k_and_advantages():
    runs = [run("a", 0.7), run("b", 0.7, 0.5)]
    ax = vf.plot_reward_vs_turns(runs)
    assert ax.get_xlabel() == "turns" and len(ax.get_legend().get_texts()) == 2
    ax = vf.plot_pass_at_k(runs)
    lines = ax.get_lines()
    assert [list(ln.get_xdata()) for ln in lines] == [[1, 2], [1, 2]]
    assert list(lines[0].get_ydata()) == [0.5, 1.0]
    ax = vf.plot_advantages(runs[0])
    assert "zero=0%" in ax.get_legend().get_texts()[0].get_text()
    ax.figure.savefig(__import__("io").BytesIO(), format="png")


def _one_run(rewards: list[float], turns: list[int] | None = None) -> vf.GenerateOutputs:
    rows = [{"example_id": i // 2, "rollout_index": i % 2, "reward": r, "advantage": 0.0,
             "turns": (turns or [1] * len(rewards))[i], "metrics": {}} for i, r in enumerate(rewards)]
    return vf.GenerateOutputs(rows=rows, metadata={"env_id": "e", "model": "tiny-model"})


def test_one_run_series_is_named_after_its_model():
    ax = vf.plot_rewards(_one_run([0.0, 1.0, 1.0, 0.0]))
    (label,) = [t.get_text() for t in ax.get_legend().get_texts()]
    assert label.startswith("tiny-model") and "n=4" in label and "mean=0.500" in label


def test_few_distinct_rewards_sit_at_their_values_on_a_numeric_axis():
    ax = vf.plot_rewards(_one_run([0.0, 0.0, 0.2, 1.0, 1.0, 1.0]))
    centers = sorted(p.get_x() + p.get_width() / 2 for p in ax.patches)
    assert centers == pytest.approx([0.0, 0.2, 1.0])  # positions are the rewards themselves
    heights = {round(p.get_x() + p.get_width() / 2, 6): p.get_height() for p in ax.patches}
    assert heights == pytest.approx({0.0: 2 / 6, 0.2: 1 / 6, 1.0: 3 / 6})


def test_two_runs_bars_stay_near_their_reward():
    a, b = _one_run([0.0, 1.0]), _one_run([0.2, 1.0])
    ax = vf.plot_rewards({"a": a, "b": b})
    for p in ax.patches:
        if p.get_height() > 0:
            center = p.get_x() + p.get_width() / 2
            assert min(abs(center - v) for v in (0.0, 0.2, 1.0)) < 0.1


def test_reward_vs_turns_draws_points_not_lines_across_missing_turns():
    ax = vf.plot_reward_vs_turns(_one_run([1.0, 0.0, 0.5, 0.5], turns=[1, 1, 5, 5]))
    data_lines = [ln for ln in ax.get_lines() if len(ln.get_xdata()) == 2]
    assert data_lines and all(ln.get_linestyle() == "None" for ln in data_lines)
    assert sorted(data_lines[0].get_xdata()) == [1, 5]  # nothing drawn at turns 2-4
    assert list(data_lines[0].get_ydata()) == [0.5, 0.5]
