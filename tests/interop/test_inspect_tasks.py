"""Loading inspect tasks as environments: what is refused (before any request, naming it) and
how a task is named."""

from __future__ import annotations

import pytest

import verifiers_lite as vf
from tests.interop.inspect_runner import TASKS

pytest.importorskip("inspect_ai", reason="needs the inspect extra")


@pytest.mark.parametrize(
    ("task", "named"), [("own_solver", "solver 'shout'"), ("own_scorer", "scorer 'always'")]
)
def test_a_solver_or_scorer_not_run_here_is_refused_by_name(task: str, named: str) -> None:
    with pytest.raises(vf.VerifiersError, match=named) as refused:
        vf.load_environment(f"inspect:{TASKS}/unsupported.py@{task}")
    assert isinstance(refused.value, ValueError)


def test_bad_specs_say_what_is_wrong(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="no inspect task file"):
        vf.load_environment(f"inspect:{tmp_path}/missing.py@x")
    with pytest.raises(ValueError, match=r"no @task 'nope'.*'products', 'sums'"):
        vf.load_environment(f"inspect:{TASKS}/arithmetic.py@nope")
    with pytest.raises(ValueError, match="name one as"):
        vf.load_environment(f"inspect:{TASKS}/arithmetic.py")


def test_task_arguments_reach_the_task_and_epochs_are_offered() -> None:
    env = vf.load_environment(f"inspect:{TASKS}/arithmetic.py@sums", n=3, epochs=5)
    assert env.epochs == 5
    assert env.env_id == f"inspect:{TASKS}/arithmetic.py@sums"
    assert env.env_args == {"n": 3, "epochs": 5}
    out = env.evaluate_sync(vf.ScriptedClient("x"), "m", num_examples=-1, progress=False)
    assert len(out) == 3 and [r["example_id"] for r in out.rows] == [0, 1, 2]
