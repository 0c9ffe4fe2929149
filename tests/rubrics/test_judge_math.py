"""JudgeRubric against a second fake server acting as judge; MathRubric on math-verify."""

from __future__ import annotations

import pytest

import verifiers_lite as vf
from tests.helpers.envs import arithmetic_rows
from verifiers_lite.testing.fake_server import FakeServerProcess, free_port

# The fake judge computes "A - B" (always right at correct_rate=1), so its verdict is checkable
# by hand: \boxed{0} exactly when the response states the answer.
JUDGE_PROMPT = "Grade it. Compute {answer} - {response}"


def zero_means_right(text: str) -> float:
    boxed = vf.extract_boxed_answer(text)
    if boxed is None:
        raise ValueError(f"no verdict in {text!r}")
    return 1.0 if boxed == "0" else 0.0


def boxed_number(text: str) -> str:
    return vf.extract_boxed_answer(text) or ""


class BoxedParser(vf.Parser):
    def parse(self, text: str) -> str:
        return boxed_number(text)


@pytest.fixture(scope="module")
def judge_server():
    with FakeServerProcess(correct_rate=1.0) as server:
        yield server


@pytest.fixture
def judge(judge_server):
    judge_server.reset()
    judge_server.configure(latency_ms=0, correct_rate=1.0, faults=[])
    return judge_server


def judged_env(judge_url: str, n: int = 6, **kwargs) -> vf.SingleTurnEnv:
    rubric = vf.JudgeRubric(
        vf.ChatClient(judge_url, retry=kwargs.pop("retry", None)),
        "fake-arith",
        prompt=JUDGE_PROMPT,
        parse=zero_means_right,
        parser=BoxedParser(),
        **kwargs,
    )
    return vf.SingleTurnEnv(dataset=arithmetic_rows(n), rubric=rubric)


def test_judge_scores_match_a_hand_check_and_are_kept_on_the_row(fake_server, judge):
    out = judged_env(judge.base_url).evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-arith", rollouts_per_example=2, progress=False
    )
    assert all(r["error"] is None for r in out.rows)
    for r in out.rows:
        right = boxed_number(r["completion"][-1]["content"]) == r["answer"]
        assert r["reward"] == r["metrics"]["judge_score"] == (1.0 if right else 0.0)
        assert r["judge"]["score"] == r["reward"] and "\\boxed{" in r["judge"]["response"]
    assert {r["reward"] for r in out.rows} == {0.0, 1.0}
    assert judge.stats()["requests"] == 12
    df = out.to_pandas()
    assert list(df["judge_score"]) == [r["reward"] for r in out.rows]


def test_a_failing_judge_endpoint_gives_rubric_error_rows_and_the_run_goes_on(fake_server, judge):
    # Two 500s with one attempt each: those two rollouts are rubric errors, the rest are scored.
    judge.configure(faults=[{"status": 500}, {"status": 500}])
    out = judged_env(
        judge.base_url, retry=vf.RetryPolicy(max_attempts=1), max_concurrent=1
    ).evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-arith", rollouts_per_example=2, progress=False
    )
    errored = [r for r in out.rows if r["error"]]
    assert len(errored) == 2
    assert all(
        r["error"]["category"] == "rubric_error" and "HTTP 500" in r["error"]["message"]
        for r in errored
    )
    assert all(r["reward"] is None for r in errored)
    assert sum(1 for r in out.rows if r["reward"] is not None) == 10


def test_judge_calls_use_the_retry_policy(fake_server, judge):
    judge.configure(faults=[{"status": 500}, {"status": 503}])
    out = judged_env(
        judge.base_url, n=2, retry=vf.RetryPolicy(max_attempts=3, base_delay=0.01)
    ).evaluate_sync(vf.ChatClient(fake_server.base_url), "fake-arith", progress=False)
    assert all(r["error"] is None for r in out.rows)
    assert judge.stats()["requests"] == 4


def test_a_judge_that_is_down_fails_every_row_cleanly(fake_server):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    out = judged_env(dead, n=3, retry=vf.RetryPolicy(max_attempts=1)).evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-arith", progress=False
    )
    assert [r["error"]["category"] for r in out.rows] == ["rubric_error"] * 3
    assert all("judge_score" in r["error"]["message"] for r in out.rows)


def test_judge_concurrency_limit(fake_server, judge):
    judge.configure(latency_ms=40)
    judged_env(judge.base_url, n=8, max_concurrent=2).evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-arith", rollouts_per_example=2, progress=False
    )
    assert judge.stats()["max_in_flight"] == 2


def test_judge_answers_are_cached(fake_server, judge, tmp_path):
    env = judged_env(judge.base_url, cache=tmp_path / "judge.sqlite")
    client = vf.ChatClient(fake_server.base_url)
    first = env.evaluate_sync(
        client, "fake-arith", progress=False, sampling_args={"temperature": 0}
    )
    again = judged_env(judge.base_url, cache=tmp_path / "judge.sqlite").evaluate_sync(
        client, "fake-arith", progress=False, sampling_args={"temperature": 0}
    )
    assert judge.stats()["requests"] == 6
    assert [r["reward"] for r in again.rows] == [r["reward"] for r in first.rows]


def test_judge_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="give judge_model"):
        vf.JudgeRubric("http://127.0.0.1:1/v1")
    with pytest.raises(ValueError, match=r"\{response\} or \{completion\}"):
        vf.JudgeRubric(prompt="Is {answer} right?")


@pytest.mark.parametrize(
    ("candidate", "gold", "expected"),
    [
        ("The answer is \\boxed{\\frac{1}{2}}", "0.5", 1.0),
        ("$0.5$", "\\frac{1}{2}", 1.0),
        ("7", "7", 1.0),
        ("\\boxed{8}", "7", 0.0),
        ("$\\{1, 2\\}$", "\\{2, 1\\}", 1.0),
        ("", "7", 0.0),
    ],
)
def test_math_verify_equivalences(candidate, gold, expected):
    from verifiers_lite.rubrics.math import verify_answer

    assert verify_answer(candidate, gold) == expected


def test_arithmetic_with_the_math_scorer_agrees_with_exact_matching(fake_server):
    client = vf.ChatClient(fake_server.base_url)
    args = {"rollouts_per_example": 2, "sampling_args": {"temperature": 0}, "progress": False}
    exact = vf.load_environment("arithmetic", num_examples=10).evaluate_sync(
        client, "fake-arith", **args
    )
    math = vf.load_environment("arithmetic", num_examples=10, scorer="math").evaluate_sync(
        client, "fake-arith", **args
    )
    assert [r["completion"] for r in math.rows] == [r["completion"] for r in exact.rows]
    assert [r["reward"] for r in math.rows] == [r["reward"] for r in exact.rows]
    assert {r["reward"] for r in math.rows} == {0.0, 1.0}
    assert "math_verified" in math.rows[0]["metrics"]
    with pytest.raises(ValueError, match="scorer must be"):
        vf.load_environment("arithmetic", scorer="fuzzy")


def test_resume_refuses_another_judge_prompt(fake_server, judge, tmp_path):
    client = vf.ChatClient(fake_server.base_url)
    judged_env(judge.base_url, n=2).evaluate_sync(
        client, "fake-arith", results_path=str(tmp_path), progress=False
    )
    other = vf.SingleTurnEnv(
        dataset=arithmetic_rows(2),
        rubric=vf.JudgeRubric(
            vf.ChatClient(judge.base_url),
            "fake-arith",
            prompt="Compute {response} - {answer}",
            parse=zero_means_right,
            parser=BoxedParser(),
        ),
    )
    with pytest.raises(vf.ResumeMismatchError, match="rubric: saved") as refused:
        other.evaluate_sync(client, "fake-arith", results_path=str(tmp_path), progress=False)
    # The changed setting is named on its own line, the other settings are not.
    said = [line.strip() for line in str(refused.value).splitlines() if "setting" in line]
    assert said == [
        f"rubric: setting 'prompt': saved {JUDGE_PROMPT!r}, now 'Compute {{response}} - {{answer}}'"
    ]
