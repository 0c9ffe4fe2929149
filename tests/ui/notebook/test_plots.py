import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import verifiers_lite as vf  # noqa: E402
from tests.helpers.sample_rows import tool_rows  # noqa: E402
from verifiers_lite.ui.notebook.plots import runs_frame  # noqa: E402


def run(model: str, temperature: float, shift: float = 0.0) -> vf.GenerateOutputs:
    rows = tool_rows()
    for i, r in enumerate(rows):
        r["reward"] = min(1.0, r["reward"] + shift * (i % 2))
    return vf.GenerateOutputs(
        rows=rows,
        metadata={"env_id": "calc", "model": model, "sampling_args": {"temperature": temperature}},
    )


def test_runs_are_labelled_by_what_differs():
    df = runs_frame([run("m", 0.2), run("m", 1.0)])
    assert sorted(df["run"].unique()) == ["temperature=0.2", "temperature=1.0"]
    df = runs_frame({"base": run("a", 0.2), "tuned": run("b", 0.2)})
    assert sorted(df["run"].unique()) == ["base", "tuned"]


def test_runs_frame_has_each_runs_temperature_and_model_to_split_by():
    df = runs_frame([run("m", 0.2), run("n", 1.0)])
    assert df.groupby("run")[["temperature", "model"]].first().to_dict("index") == {
        "m, temperature=0.2": {"temperature": 0.2, "model": "m"},
        "n, temperature=1.0": {"temperature": 1.0, "model": "n"},
    }
    ax = vf.plot_rewards(df, by="temperature")
    legend = sorted(t.get_text().split("  ")[0] for t in ax.get_legend().get_texts())
    assert legend == ["temperature=0.2", "temperature=1.0"]


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
    rows = [
        {
            "example_id": i // 2,
            "rollout_index": i % 2,
            "reward": r,
            "advantage": 0.0,
            "turns": (turns or [1] * len(rewards))[i],
            "metrics": {},
        }
        for i, r in enumerate(rewards)
    ]
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


def _drawn(ax):
    """The figure rendered: (renderer, RGB array with row 0 at the top)."""
    import numpy as np

    fig = ax.figure
    fig.canvas.draw()
    return fig.canvas.get_renderer(), np.asarray(fig.canvas.buffer_rgba())[..., :3].astype(int)


def _near(pixels, color, tol: int = 40):
    import numpy as np
    from matplotlib.colors import to_rgb

    rgb = np.array([round(255 * c) for c in to_rgb(color)])  # alpha ignored: give what is shown
    return (np.abs(pixels - rgb) <= tol).all(axis=-1)


def _data_boxes(ax, renderer):
    """Display-space boxes of what carries data: bars with height, and every plotted point."""
    import numpy as np
    from matplotlib.transforms import Bbox

    boxes = [
        p.get_window_extent(renderer)
        for p in ax.patches
        if getattr(p, "get_height", lambda: 1)() > 0
    ]
    for line in ax.get_lines():
        for x, y in ax.transData.transform(
            np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float)
        ):
            boxes.append(Bbox.from_bounds(x - 3, y - 3, 6, 6))
    return boxes


def _uniform(n_values: int, shift: int) -> vf.GenerateOutputs:
    """Rewards spread evenly over ``n_values`` values: bars of one height fill the whole plot width."""
    rewards = [((i + shift) % n_values) / (n_values - 1) for i in range(4 * n_values)]
    rows = [
        {
            "example_id": i // 4,
            "rollout_index": i % 4,
            "reward": r,
            "advantage": r - 0.5,
            "turns": 1 + i % 3,
            "metrics": {},
        }
        for i, r in enumerate(rewards)
    ]
    return vf.GenerateOutputs(
        rows=rows, metadata={"env_id": "e", "model": "m", "rollouts_per_example": 4}
    )


@pytest.mark.parametrize(
    "draw",
    [
        vf.plot_rewards,
        lambda d: vf.plot_rewards(d, kind="ecdf"),
        vf.plot_pass_at_k,
        vf.plot_advantages,
        vf.plot_reward_vs_turns,
    ],
)
def test_the_legend_never_covers_the_data_and_every_swatch_shows(draw):
    runs = {
        "first run": _uniform(12, 0),
        "second run": _uniform(12, 5),
    }  # data everywhere in the plot
    ax = draw(runs)
    renderer, pixels = _drawn(ax)
    legend = ax.get_legend()
    box = legend.get_window_extent(renderer)
    fig_box = ax.figure.bbox
    assert (
        fig_box.x0 <= box.x0
        and box.x1 <= fig_box.x1
        and fig_box.y0 <= box.y0
        and box.y1 <= fig_box.y1
    )
    hits = [b for b in _data_boxes(ax, renderer) if b.overlaps(box)]
    assert not hits, f"legend {box} covers data at {hits[:3]}"
    height = pixels.shape[0]
    inside = pixels[int(height - box.y1) : int(height - box.y0), int(box.x0) : int(box.x1)]
    for handle in legend.legend_handles:  # each series' swatch is drawn, in its colour
        assert _near(inside, _shown_colour(handle), tol=30).sum() >= 10, (
            f"no visible swatch for {handle}"
        )


def _shown_colour(handle):
    """The colour a legend swatch shows: its line or face colour, blended over white by its alpha."""
    from matplotlib.colors import to_rgba

    if hasattr(handle, "get_xdata"):  # a line
        raw = handle.get_color()
    elif hasattr(handle, "get_segments"):  # error bars
        raw = handle.get_color()[0]
    else:  # a patch: its face colour carries its alpha
        raw = handle.get_facecolor()
    r, g, b, a = to_rgba(raw)
    return tuple(a * c + (1 - a) for c in (r, g, b))


def test_coinciding_pass_at_k_curves_stay_visible():
    same = _uniform(6, 0)
    ax = vf.plot_pass_at_k({"a": same, "b": same})  # one curve, twice
    first, second = ax.get_lines()[:2]
    assert list(first.get_ydata()) == list(second.get_ydata())
    _, pixels = _drawn(ax)
    shown = [_near(pixels, line.get_color(), tol=30).sum() for line in (first, second)]
    assert min(shown) >= 0.3 * max(shown), f"one curve hides the other: pixels per series {shown}"
