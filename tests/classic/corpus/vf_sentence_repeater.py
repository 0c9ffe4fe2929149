from difflib import SequenceMatcher

import verifiers as vf
from datasets import load_dataset
from verifiers.types import Messages, State

ORDINALS = ["first", "second", "third", "fourth", "fifth"]


def to_questions(x):
    sentences = x["text"].split(". ")[:5]
    order = [2, 0, 4, 1, 3]
    questions = [f"What's the {ORDINALS[i]} sentence of the paragraph?" for i in order]
    answers = [f'The {ORDINALS[i]} sentence of the paragraph is: "{sentences[i]}"' for i in order]
    paragraph = ". ".join(sentences)
    return {
        "prompt": [
            {"role": "user", "content": f'Answer questions about the following paragraph:\n\n"{paragraph}"\n\n{questions[0]}'}
        ],
        "info": {"questions": questions, "answers": answers},
    }


class SentenceRepeaterEnv(vf.MultiTurnEnv):
    @vf.stop
    async def all_questions_answered(self, state: State) -> bool:
        return len(state["trajectory"]) >= len(state["info"]["questions"])

    async def env_response(self, messages: Messages, state: State, **kwargs) -> Messages:
        return [vf.UserMessage(content=state["info"]["questions"][len(state["trajectory"])])]


def completion_messages(completion, **kwargs) -> float:
    return float(len(completion))


def load_environment(num_questions: int = 3, **kwargs) -> vf.Environment:
    def build_dataset():
        dataset = load_dataset("agentlans/wikipedia-paragraphs", split="train")
        dataset = dataset.map(to_questions, remove_columns=["text"])
        return dataset.map(
            lambda x: {"info": {k: v[:num_questions] for k, v in x["info"].items()}}
        )

    parser = vf.Parser()

    def compare_answers(parser, completion, info, similarity, **kwargs) -> float:
        replies = [m["content"] for m in parser.get_assistant_messages(completion)]
        if len(replies) != len(info["answers"]):
            return 0.0
        return sum(similarity(r, a) for r, a in zip(replies, info["answers"])) / len(replies)

    async def distinct_in_group(completions, **kwargs) -> list[float]:
        finals = [c[-1]["content"] for c in completions]
        return [0.1 if finals.count(f) == 1 else 0.0 for f in finals]

    rubric = vf.Rubric(parser=parser, funcs=[compare_answers])
    rubric.add_class_object("similarity", lambda a, b: SequenceMatcher(None, a, b).ratio())
    rubric.add_reward_func(distinct_in_group, weight=1.0)
    rubric.add_metric(completion_messages)
    return SentenceRepeaterEnv(dataset=build_dataset, parser=parser, rubric=rubric, **kwargs)
