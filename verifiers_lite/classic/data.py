"""Classic ``verifiers.utils.data_utils``: prompts, answer extractors, and the example datasets
(read from a local copy or cache of the hub dataset; nothing downloads)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from verifiers_lite.classic.errors import ClassicUnsupportedError

THINK_BOXED_SYSTEM_PROMPT = (
    "Think step-by-step inside <think>...</think> tags.     "
    "Then, give your final answer inside \\boxed{}."
)
BOXED_SYSTEM_PROMPT = "Please reason step by step, and put your final answer within \\boxed{}."


def extract_boxed_answer(text: str, strict: bool = False) -> str:
    """The content of the last ``\\boxed{...}`` (braces balanced). Without one, or unbalanced:
    ``text`` itself, or ``""`` when ``strict``."""
    start = text.rfind("\\boxed{")
    if start == -1:
        return "" if strict else text
    begin = start + len("\\boxed{")
    depth = 1
    for i in range(begin, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[begin:i]
    return "" if strict else text


def extract_hash_answer(text: str) -> str:
    """GSM8K's answer: what follows ``####`` (stripped), else the text unchanged."""
    if "####" not in text:
        return text
    return text.split("####")[1].strip()


# name -> (hub path, config, default split, the row -> {question, answer} mapping)
_EXAMPLES: dict[str, tuple[str, str | None, str, Callable[[dict[str, Any]], dict[str, Any]]]] = {
    "gsm8k": (
        "openai/gsm8k",
        "main",
        "test",
        lambda x: {"question": x["question"], "answer": extract_hash_answer(x["answer"])},
    ),
    "math": (
        "chiayewken/competition_math",
        None,
        "train",
        lambda x: {"question": x["problem"], "answer": extract_boxed_answer(x["solution"])},
    ),
    "math500": (
        "HuggingFaceH4/MATH-500",
        None,
        "test",
        lambda x: {"question": x["problem"], "answer": x["answer"]},
    ),
    "aime2024": (
        "HuggingFaceH4/aime_2024",
        None,
        "train",
        lambda x: {"question": x["problem"], "answer": str(int(x["answer"]))},
    ),
    "amc2023": (
        "knoveleng/AMC-23",
        None,
        "train",
        lambda x: {"question": x["problem"], "answer": x["answer"]},
    ),
    "openrs": (
        "knoveleng/open-rs",
        None,
        "train",
        lambda x: {"question": x["problem"], "answer": x["answer"]},
    ),
    "mmlu_pro": (
        "TIGER-Lab/MMLU-Pro",
        None,
        "validation",
        lambda x: {
            "question": f"Question: {x['question']}\n"
            + "".join(f"\n{'ABCDEFGHIJ'[i]}: {o}" for i, o in enumerate(x["options"])),
            "answer": x["answer"],
        },
    ),
}


def load_example_dataset(
    name: str = "gsm8k", split: str | None = None, n: int | None = None, seed: int = 0
) -> Any:
    """A classic example dataset as ``question``/``answer`` rows, read with
    ``datasets.load_dataset`` (so only from a local copy or cache: nothing downloads here);
    ``n`` rows shuffled by ``seed`` when given. A dataset that cannot be read offline is a
    :class:`ClassicUnsupportedError` naming it and what to do instead."""
    if name not in _EXAMPLES:
        raise ClassicUnsupportedError(
            f"load_example_dataset({name!r}) is not one of the example datasets verifiers_lite's classic layer "
            f"reads ({', '.join(sorted(_EXAMPLES))}); build the dataset locally with the same columns"
        )
    path, config, default_split, to_row = _EXAMPLES[name]
    import datasets

    try:
        dataset = (datasets.load_dataset(path, config) if config else datasets.load_dataset(path))[
            split or default_split
        ]
    except Exception as exc:
        raise ClassicUnsupportedError(
            f"load_example_dataset({name!r}) needs the Hugging Face dataset {path!r} ({exc.__class__.__name__}: "
            f"{exc}); verifiers_lite downloads nothing: put it in the local datasets cache, or build the "
            "dataset locally (datasets.Dataset.from_list with 'question' and 'answer') and pass it in"
        ) from exc
    if n is not None and n > 0:
        dataset = dataset.shuffle(seed=seed).select(range(n))
    return dataset.map(to_row, remove_columns=dataset.column_names)
