"""A reward function may say why it scored so (``vf.Score(value, explanation)``): the value is
the metric, the explanation is kept per rollout per function (``row["explanations"]``), in the
DataFrame's ``explanations`` column, and a re-score replaces it with its own."""

from __future__ import annotations

import verifiers_lite as vf

ROWS = [{"question": f"What is {i} + 3?", "answer": str(i + 3)} for i in range(3)]


def stated(completion, answer):
    found = vf.extract_boxed_answer(completion[-1]["content"] or "")
    if found == answer:
        return vf.Score(1.0, "boxed the right answer")
    return vf.Score(0.0, f"expected {answer}, found {found}")


def plain_length(completion):
    return len(completion[-1]["content"] or "") / 100


@vf.group_reward
def first_of_group(completion):
    return [vf.Score(1.0 if i == 0 else 0.0, f"rank {i}") for i in range(len(completion))]


def test_scores_explained_per_rollout_and_function(fake_server, tmp_path):
    rubric = vf.Rubric([stated, plain_length, first_of_group], weights=[1.0, 0.0, 0.0])
    out = vf.SingleTurnEnv(dataset=ROWS, rubric=rubric).evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        rollouts_per_example=2,
        results_path=str(tmp_path / "run"),
        progress=False,
    )
    for r in out.rows:
        found = vf.extract_boxed_answer(r["completion"][-1]["content"])
        right = found == r["answer"]
        assert r["metrics"]["stated"] == (1.0 if right else 0.0) == r["reward"]
        want = "boxed the right answer" if right else f"expected {r['answer']}, found {found}"
        # a plain number explains nothing: only the functions that said why are there
        assert r["explanations"] == {
            "stated": want,
            "first_of_group": f"rank {r['rollout_index']}",
        }
    frame = vf.load_results(str(tmp_path / "run")).to_pandas()
    assert list(frame["explanations"]) == [r["explanations"] for r in out.rows]

    # a re-score with functions that explain nothing keeps no old explanation
    again = vf.rescore(str(tmp_path / "run"), vf.Rubric([plain_length]))
    assert all("explanations" not in r for r in again.rows)
