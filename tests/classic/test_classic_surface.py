"""The rest of the classic surface: JudgeRubric prompts and clients, EnvGroup(env_names=),
load_example_dataset (read through datasets.load_dataset, never downloaded), refusals named
before any request, message views, string prompts as text completions, and vf-lite eval."""

from __future__ import annotations

import copy
import json
import os
import pickle
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest
from datasets import Dataset

import verifiers_lite.classic as vf
from tests.classic.recording import RecordingClient
from tests.helpers.paths import REPO
from verifiers_lite.classic.completions import TextCompletions, completion_prompt
from verifiers_lite.classic.messages import classic_message, to_plain

ROWS = [{"question": "2+2", "answer": "4"}]  # Dataset.from_list(ROWS) for classic ones


class FakeJudgeClient:
    """``judge_client.chat.completions.create(...)`` answering "yes"; keeps the requests."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    async def _create(self, **kwargs):
        self.requests.append(kwargs)
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content="yes"))])


def test_judge_rubric_offers_judge_with_its_prompt_client_and_model():
    judge_client = FakeJudgeClient()
    rubric = vf.JudgeRubric(
        judge_client=judge_client,
        judge_model="jm",
        judge_sampling_args={"max_tokens": 5},
        judge_prompt="Q={question} A={answer} R={response}",
    )

    async def verdict(judge, prompt, completion, answer, state) -> float:
        first = await judge(prompt, completion, answer, state)
        await judge(prompt, completion, answer, state)  # cached on the state: no second request
        return 1.0 if first == "yes" else 0.0

    rubric.add_reward_func(verdict)
    out = vf.SingleTurnEnv(dataset=Dataset.from_list(ROWS), rubric=rubric).evaluate_sync(
        RecordingClient(lambda m, t: "four"), "m", progress=False
    )
    assert out.rows[0]["reward"] == 1.0
    # As in verifiers 0.3.1, a message-list prompt gives an empty {question}.
    assert judge_client.requests == [
        {
            "model": "jm",
            "messages": [{"role": "user", "content": "Q= A=4 R=four"}],
            "max_completion_tokens": 5,
        }
    ]


def test_env_group_names_tasks_and_scores_each_rollout_with_its_own_environment():
    def right(completion, answer) -> float:
        return float(completion[-1].content == answer)

    def constant(completion) -> float:
        return 0.25

    first = vf.SingleTurnEnv(dataset=Dataset.from_list(ROWS), rubric=vf.Rubric(funcs=[right]))
    second = vf.SingleTurnEnv(
        dataset=Dataset.from_list([{"question": "3+3", "answer": "6"}]),
        rubric=vf.Rubric(funcs=[constant]),
    )
    assert vf.EnvGroup([first, second]).env_names == ["env_0", "env_1"]
    group = vf.EnvGroup([first, second], env_names=["a", "b"])
    out = group.evaluate_sync(RecordingClient(lambda m, t: "4"), "m", progress=False)
    rows = sorted(out.rows, key=lambda r: r["example_id"])
    assert [(r["task"], r["example_id"], r["reward"]) for r in rows] == [
        ("a", 0, 1.0),
        ("b", 1, 0.25),
    ]
    assert rows[1]["metrics"] == {"constant": 0.25, "num_turns": 1.0}


def test_load_example_dataset_reads_the_hub_name_through_datasets_and_never_downloads(monkeypatch):
    import datasets

    asked = []

    def local(path, name=None, **kwargs):
        asked.append((path, name))
        rows = [{"question": f"q{i}", "answer": f"work #### {i}"} for i in range(4)]
        return datasets.DatasetDict({"train": datasets.Dataset.from_list(rows)})

    monkeypatch.setattr(datasets, "load_dataset", local)
    ds = vf.load_example_dataset("gsm8k", split="train")
    assert asked == [("openai/gsm8k", "main")]
    assert ds.column_names == ["question", "answer"] and ds["answer"] == ["0", "1", "2", "3"]
    shuffled = vf.load_example_dataset("gsm8k", "train", n=2, seed=3)
    expected = datasets.Dataset.from_list([{"i": i} for i in range(4)]).shuffle(seed=3)["i"][:2]
    assert shuffled["answer"] == [str(i) for i in expected]

    def offline(*args, **kwargs):
        raise ConnectionError("no network")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    with pytest.raises(vf.ClassicUnsupportedError, match="openai/gsm8k.*downloads nothing"):
        vf.load_example_dataset("gsm8k")
    with pytest.raises(
        vf.ClassicUnsupportedError, match=r"load_example_dataset\('nope'\) is not one of"
    ):
        vf.load_example_dataset("nope")


def test_prime_sandbox_environments_are_refused_by_name_before_any_request():
    with pytest.raises(
        vf.ClassicUnsupportedError, match="SandboxEnv.*Prime Intellect's remote sandboxes"
    ):
        vf.SandboxEnv(dataset=Dataset.from_list(ROWS))
    with pytest.raises(ValueError, match="Either dataset or eval_dataset"):
        vf.SingleTurnEnv()


def test_messages_are_verifiers_031_models_and_survive_copies():
    """As verifiers 0.3.1 made them (its behaviour observed in its own venv; the corpus's
    vf_message_objects compares reward code reading them with 0.3.1 itself)."""
    stored = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
        ],
    }
    message = classic_message(stored)
    call = message.tool_calls[0]
    assert type(message) is vf.AssistantMessage and not isinstance(message, dict)
    assert (message.role, message["role"], message.reasoning_content, call.id, call.name) == (
        "assistant",
        "assistant",
        None,
        "c1",
        "add",
    )
    assert call.model_dump() == {"id": "c1", "name": "add", "arguments": "{}"}
    assert str(call) == "id='c1' name='add' arguments='{}'"
    with pytest.raises(AttributeError):
        call.function  # noqa: B018 - 0.3.1's tool call is flat
    with pytest.raises(AttributeError):
        message["missing"]  # noqa: B018
    with pytest.raises(TypeError, match="not JSON serializable"):
        json.dumps([message])
    assert message.get("missing", 1) == 1 and "content" in message and "missing" not in message
    tool = vf.ToolMessage(content="5", tool_call_id="c1")
    assert tool == {"role": "tool", "tool_call_id": "c1", "content": "5"}
    assert str(tool) == "role='tool' tool_call_id='c1' content='5'"
    for copied in (copy.deepcopy(message), pickle.loads(pickle.dumps(message))):
        assert copied == message and copied.tool_calls[0].name == "add"
    plain = to_plain(message)
    assert plain == {"role": "assistant", "tool_calls": stored["tool_calls"]}
    assert type(plain) is dict and type(plain["tool_calls"][0]) is dict


def test_native_environments_keep_plain_dict_messages():
    """Only the classic boundary converts: a native environment's reward code gets dicts."""
    import verifiers_lite

    seen = []

    def look(completion, prompt) -> float:
        seen.append((type(completion[0]), type(prompt[0])))
        return 1.0

    env = verifiers_lite.SingleTurnEnv(dataset=ROWS, rubric=verifiers_lite.Rubric([look]))
    env.evaluate_sync(RecordingClient(lambda m, t: "4"), "m", progress=False)
    assert seen == [(dict, dict)]


async def test_string_prompts_go_out_as_one_text_completion():
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
    ]
    assert completion_prompt(messages) == "sys\n\ngo"
    seen = []

    class Completer:
        async def complete_text(self, model, prompt, sampling_args):
            seen.append((prompt, sampling_args))
            from verifiers_lite.core.model_client import ChatResponse

            return ChatResponse(message={"role": "assistant", "content": " more"})

    response = await TextCompletions(Completer()).chat("m", messages, {"stop": ["\n"]})
    assert response.content == " more" and seen == [("sys\n\ngo", {"stop": ["\n"]})]
    with pytest.raises(vf.ClassicUnsupportedError, match="tools cannot be offered"):
        await TextCompletions(Completer()).chat("m", messages, None, [{"type": "function"}])
    with pytest.raises(vf.ClassicUnsupportedError, match="sends chat only"):
        TextCompletions(RecordingClient(lambda m, t: ""))


def test_vf_lite_eval_runs_a_classic_module_with_env_args(tmp_path):
    from verifiers_lite.testing.fake_server import FakeServerProcess

    (tmp_path / "cl_sums.py").write_text(
        textwrap.dedent("""
        import verifiers as vf
        from datasets import Dataset

        def load_environment(top: int = 2):
            rows = [{"question": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(top)]
            def right(completion, question) -> float:  # an input column, taken by name
                return float(completion[-1].content == question)
            return vf.SingleTurnEnv(dataset=Dataset.from_list(rows), rubric=vf.Rubric(funcs=[right]))
    """)
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(tmp_path)])}
    with FakeServerProcess() as server:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "verifiers_lite.cli",
                "eval",
                "cl_sums",
                "-a",
                '{"top": 3}',
                "-b",
                server.base_url,
                "-m",
                "fake-echo",
                "-n",
                "-1",
                "-r",
                "1",
                "-q",
                "--no-plot",
                "-s",
                str(tmp_path / "out"),
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = next((tmp_path / "out").glob("*/*/results.jsonl"))
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert sorted(r["example_id"] for r in rows) == [0, 1, 2]
    assert [r["metrics"]["right"] for r in rows] == [
        1.0,
        1.0,
        1.0,
    ]  # fake-echo repeats the question


def test_a_classic_run_resumes_and_rescores_to_the_same_rows(tmp_path):
    import verifiers_lite

    class Replies(vf.MultiTurnEnv):
        async def env_response(self, messages, state, **kwargs):
            return [{"role": "user", "content": "again"}]

    def turns_and_info(completion, info, extra) -> float:
        return float(sum(m.role == "assistant" for m in completion)) + info["w"] + extra

    def make():
        rows = [
            {"question": f"q{i}", "answer": "", "info": {"w": i}, "extra": 0.5} for i in range(3)
        ]
        return Replies(
            dataset=Dataset.from_list(rows), max_turns=2, rubric=vf.Rubric(funcs=[turns_and_info])
        )

    client = RecordingClient(lambda m, t: "ok")
    first = make().evaluate_sync(
        client, "m", rollouts_per_example=2, results_path=tmp_path / "run", progress=False
    )
    calls = len(client.requests)
    again = make().evaluate_sync(
        client, "m", rollouts_per_example=2, results_path=tmp_path / "run", progress=False
    )
    rescored = verifiers_lite.rescore(tmp_path / "run", make().rubric)

    def key(rows):
        return sorted(
            (r["example_id"], r["rollout_index"], r["reward"], tuple(sorted(r["metrics"].items())))
            for r in rows
        )

    assert len(client.requests) == calls == 12  # the resume asked nothing more
    assert key(first.rows) == key(again.rows) == key(rescored.rows)
    assert sorted(r["reward"] for r in first.rows)[::2] == [2.5, 3.5, 4.5]  # 2 turns + w + 0.5


def test_reasoning_gym_env_scores_with_the_task_scorer():
    rg = pytest.importorskip("reasoning_gym")
    entries = list(rg.create_dataset("chain_sum", size=6, seed=3))
    truth = {x["question"]: x["answer"] for x in entries}
    answered_right = entries[3][
        "question"
    ]  # the first eval entry; the other two get a wrong answer
    env = vf.ReasoningGymEnv(gym="chain_sum", num_train_examples=3, num_eval_examples=3, seed=3)

    def reply(messages, tools):
        question = messages[-1]["content"]
        return (
            f"<answer>{truth[question]}</answer>"
            if question == answered_right
            else "<answer>wrong</answer>"
        )

    out = env.evaluate_sync(RecordingClient(reply), "m", progress=False)
    rows = sorted(out.rows, key=lambda r: r["example_id"])
    assert [r["prompt"][-1]["content"] for r in rows] == [
        x["question"] for x in entries[3:]
    ]  # the eval split
    assert [r["reward"] for r in rows] == [1.0, 0.0, 0.0]
    # <answer> starts and ends the message; no num_turns here (0.3.1 replaced the group by its own rubric)
    assert all(
        r["metrics"] == {"check_answer_reward_func": r["reward"], "format_reward_func": 1.0}
        for r in rows
    )
