"""A module of the utils-style package that imports verifiers."""

from verifiers.types import Messages
from verifiers.utils.data_utils import extract_boxed_answer


def boxed_or_last_word(completion: Messages) -> str:
    text = str(completion[-1].content or "")
    boxed = extract_boxed_answer(text, strict=True)
    return boxed or (text.split()[-1].strip(".") if text.split() else "")
