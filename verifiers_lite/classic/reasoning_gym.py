"""Classic ReasoningGymEnv: reasoning-gym tasks (generated offline) as a single-turn environment.

``vf.ReasoningGymEnv(gym="arc_1d", num_train_examples=..., num_eval_examples=..., seed=...)``
generates ``num_train_examples + num_eval_examples`` entries with reasoning-gym (a task name, or a
list of names / ``DatasetSpec`` keywords for a composite), the first ones the training set, the
rest the eval set. Each row's ``answer`` is its entry's index; ``check_answer_reward_func`` scores
the parsed answer with the task's own scorer, and the parser's format reward is kept at weight 0,
as in verifiers 0.3.1 (which also left out the ``num_turns`` metric here). Parser default:
``XMLParser(["answer"])``.
"""

from __future__ import annotations

from typing import Any

from verifiers_lite._util.extras import require
from verifiers_lite.classic.multiturn import SingleTurnEnv
from verifiers_lite.classic.parsers import XMLParser
from verifiers_lite.classic.rubric import Rubric


def _reasoning_gym() -> Any:
    return require("reasoning_gym", "vf.ReasoningGymEnv", "envs", package="reasoning-gym")


def build_rg_dataset(gym: str | list[str | dict[str, Any]], total: int, seed: int) -> Any:
    """The reasoning-gym dataset of ``total`` entries for one task or a composite of several."""
    rg = _reasoning_gym()
    if isinstance(gym, str):
        return rg.create_dataset(gym, size=total, seed=seed)
    from reasoning_gym.composite import DatasetSpec

    specs = []
    for item in gym:
        if isinstance(item, str):
            specs.append(DatasetSpec(name=item, weight=1.0, config={}))
        elif isinstance(item, dict):
            specs.append(DatasetSpec(**item))
        else:
            raise ValueError(f"Invalid dataset config: {item}")
    return rg.create_dataset("composite", datasets=specs, size=total, seed=seed)


class ReasoningGymEnv(SingleTurnEnv):
    """``vf.ReasoningGymEnv`` (see the module)."""

    def __init__(
        self,
        gym: str | list[str | dict[str, Any]],
        num_train_examples: int = 1000,
        num_eval_examples: int = 100,
        system_prompt: str | None = None,
        parser: Any = None,
        seed: int = 0,
    ) -> None:
        self.gym, self.seed = gym, seed
        self.num_train_examples, self.num_eval_examples = num_train_examples, num_eval_examples
        self.rg_dataset = build_rg_dataset(gym, num_train_examples + num_eval_examples, seed)
        rows = [
            {
                "question": x["question"],
                "answer": str(i),
                "info": {"source_dataset": x["metadata"]["source_dataset"]},
            }
            for i, x in enumerate(self.rg_dataset)
        ]
        parser = parser or XMLParser(fields=["answer"])
        rubric = Rubric(parser=parser)
        rg_dataset = self.rg_dataset

        async def check_answer_reward_func(completion: Any, answer: str, **kwargs: Any) -> float:
            response = str(parser.parse_answer(completion)).strip()
            return float(rg_dataset.score_answer(answer=response, entry=rg_dataset[int(answer)]))

        rubric.add_reward_func(check_answer_reward_func)
        rubric.add_reward_func(parser.get_format_reward_func(), weight=0.0)
        if system_prompt is None:
            from reasoning_gym.utils import SYSTEM_PROMPTS

            system_prompt = SYSTEM_PROMPTS["default"]
        from datasets import Dataset

        super().__init__(
            dataset=Dataset.from_list(rows[:num_train_examples]),
            eval_dataset=Dataset.from_list(rows[num_train_examples:]),
            system_prompt=system_prompt,
            parser=parser,
            rubric=rubric,
            message_type="chat",
        )
        self.rubric = rubric  # as in 0.3.1: its own rubric alone, without the num_turns metric
        self._set_pass_threshold()
