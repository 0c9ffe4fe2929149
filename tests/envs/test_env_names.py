"""An environment built by hand is named by ``env_id=`` or else by its own class, everywhere a
run is shown: metadata, the results table, vf.compare, the viewer's run list, the HTML file."""

from __future__ import annotations

import inspect

import pytest

import verifiers_lite as vf
from verifiers_lite.executors.ray import _env_spec

ROWS = [
    {"question": "What is 2 + 2?", "answer": "4"},
    {"question": "What is 3 + 3?", "answer": "6"},
]


def _exact(completion, answer) -> float:
    return 1.0 if (completion[-1]["content"] or "").strip() == answer else 0.0


class Capitals(vf.SingleTurnEnv):
    """A notebook's own environment class."""


def _views(out: vf.GenerateOutputs, tmp_path) -> dict[str, str]:
    """The name each surface shows for the run."""
    from verifiers_lite.ui.viewer.runs import RunRegistry

    path = out.save(tmp_path / "saved")
    runs = RunRegistry([path]).refresh()
    html_file = out.to_html(tmp_path / "run.html").read_text()
    return {
        "metadata": out.metadata["env_id"],
        "compare": vf.compare([out], details=True)["env"].iloc[0],
        "viewer": runs[0].summary()["env_id"],
        "table": out._repr_html_(),
        "html": html_file,
        "repr": repr(out),
    }


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda: vf.SingleTurnEnv(dataset=ROWS, rubric=vf.Rubric([_exact]), env_id="sums"), "sums"),
        (lambda: Capitals(dataset=ROWS, rubric=vf.Rubric([_exact])), "Capitals"),
        (
            lambda: Capitals(dataset=ROWS, rubric=vf.Rubric([_exact]), env_id="capitals-v2"),
            "capitals-v2",
        ),
    ],
)
def test_a_hand_built_environment_is_named_everywhere(tmp_path, make, name):
    env = make()
    out = env.evaluate_sync(vf.ScriptedClient("4"), "scripted", progress=False)
    views = _views(out, tmp_path)
    assert views["metadata"] == views["compare"] == views["viewer"] == name
    for surface in ("table", "html", "repr"):
        assert name in views[surface], surface
    for surface in ("table", "repr"):  # (the HTML file's manifest names the class: code identity)
        assert "SingleTurnEnv" not in views[surface], surface
    assert f'"env_id": "{name}"' in views["html"]


def test_env_id_is_a_documented_argument_of_every_environment_class():
    for cls in (
        vf.Environment,
        vf.SingleTurnEnv,
        vf.MultiTurnEnv,
        vf.ToolEnv,
        vf.PythonEnv,
        vf.EnvGroup,
    ):
        assert "env_id" in (cls.__doc__ or ""), cls.__name__
    assert "env_id" in inspect.signature(vf.Environment.__init__).parameters
    assert vf.ToolEnv(tools=[], dataset=ROWS, env_id="t").env_id == "t"
    group = vf.EnvGroup(
        [vf.SingleTurnEnv(dataset=ROWS, env_id="a"), vf.SingleTurnEnv(dataset=ROWS, env_id="b")]
    )
    assert group.env_id == "a+b" and group.names == ["a", "b"]
    assert vf.EnvGroup(list(group.envs.values()), env_id="mix").env_id == "mix"
    for bad in ("", "  ", 3):
        with pytest.raises(ValueError, match="env_id must be a non-empty string"):
            vf.SingleTurnEnv(dataset=ROWS, env_id=bad)


def test_by_task_parts_are_labelled_by_their_task():
    group = vf.EnvGroup(
        [
            vf.SingleTurnEnv(dataset=ROWS, rubric=vf.Rubric([_exact]), env_id="easy"),
            vf.SingleTurnEnv(dataset=ROWS[:1], rubric=vf.Rubric([_exact]), env_id="hard"),
        ]
    )
    out = group.evaluate_sync(vf.ScriptedClient("4"), "scripted", progress=False)
    parts = out.by_task()
    assert [p.metadata["task"] for p in parts.values()] == ["easy", "hard"]
    assert {p.metadata["env_id"] for p in parts.values()} == {"easy+hard"}
    unnamed = vf.compare(list(parts.values()))  # a list: the rows differ by task, so named by it
    assert unnamed["run"].tolist() == ["easy", "hard"]
    # scored by the task's own rows: "easy" has 2 examples (one right), "hard" 1 (right)
    assert unnamed["reward_mean"].tolist() == [0.5, 1.0]


def test_ray_rebuilds_by_id_only_what_load_environment_built_under_that_id():
    loaded = vf.load_environment("arithmetic", num_examples=3)
    assert _env_spec(loaded) == {"env_id": "arithmetic", "env_args": {"num_examples": 3}}
    # named like a bundled environment, but built by hand: shipped whole, never swapped for it
    mine = vf.SingleTurnEnv(dataset=ROWS, env_id="arithmetic")
    assert _env_spec(mine) == {"env": mine}
