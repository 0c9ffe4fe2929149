"""A helper module beside vf_helper_imports (a top-level module of its own) that imports
verifiers itself."""

import verifiers as vf
from verifiers.types import Messages

PARSER = vf.Parser()


def rubric_class() -> type:
    from verifiers.rubrics.rubric import Rubric  # a deferred import in a helper

    return Rubric


def mentions_answer(completion: Messages, answer: str) -> float:
    return float(answer in str(completion[-1].content or ""))
