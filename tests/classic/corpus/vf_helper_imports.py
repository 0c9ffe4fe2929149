"""An environment whose helpers live outside it, as in many community repositories: a sibling
top-level module, a ``utils``-style package beside it, a helper imported lazily inside a reward
function, and ``importlib.import_module("verifiers...")``. Each helper imports ``verifiers``
itself; the rewards check that every part sees the same ``verifiers`` classes."""

import importlib

import verifiers as vf
import vfh_shared
from datasets import Dataset
from vfh_utils.scoring import boxed_or_last_word

xml_parser_module = importlib.import_module("verifiers.parsers.xml_parser")


def same_classes(parser) -> float:
    return float(
        isinstance(vfh_shared.PARSER, vf.Parser)
        and isinstance(parser, vf.XMLParser)
        and xml_parser_module.XMLParser is vf.XMLParser
        and vfh_shared.rubric_class() is vf.Rubric
    )


def lazy_helper(completion, answer) -> float:
    import vfh_lazy  # imported when the first rollout is scored

    return vfh_lazy.ends_with(completion, answer)


def extracted(completion, answer) -> float:
    return float(boxed_or_last_word(completion) == answer)


def load_environment(n: int = 6) -> vf.SingleTurnEnv:
    parser = vf.XMLParser(["answer"], answer_field="answer")
    rows = [{"question": f"Name the number {i} and box it.", "answer": str(i)} for i in range(n)]
    rubric = vf.Rubric(
        funcs=[extracted, same_classes, lazy_helper, vfh_shared.mentions_answer],
        weights=[1.0, 0.5, 0.25, 0.125],
        parser=parser,
    )
    return vf.SingleTurnEnv(dataset=Dataset.from_list(rows), parser=parser, rubric=rubric)
