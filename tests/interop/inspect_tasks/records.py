"""Inspect tasks over local files: csv_dataset with a FieldSpec, json_dataset with
record_to_sample; prompt_template and user_message; exact, f1, pattern and answer scorers."""

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import FieldSpec, Sample, csv_dataset, json_dataset
from inspect_ai.scorer import answer, exact, f1, pattern
from inspect_ai.solver import generate, prompt_template, system_message, user_message

HERE = Path(__file__).parent


@task
def csv_sums() -> Task:
    return Task(
        dataset=csv_dataset(
            str(HERE / "people.csv"),
            FieldSpec(input="question", target="expected", id="qid", metadata=["difficulty"]),
        ),
        solver=[
            system_message("You are a calculator ({difficulty} level)."),
            prompt_template("Question: {prompt}\nReply with the number."),
            generate(),
        ],
        scorer=[exact(), f1()],
    )


def _record(record: dict) -> Sample:
    return Sample(input=record["prompt"], target=record["solution"], id=record["key"])


@task
def json_reverse(epochs: int = 2) -> Task:
    return Task(
        dataset=json_dataset(str(HERE / "words.jsonl"), _record),
        solver=[
            system_message("Reverse the text you are given."),
            user_message("Keep it short."),
            generate(),
        ],
        scorer=[pattern(r"(\w+)\s*$"), answer("word")],
        epochs=epochs,
    )
