"""A helper imported lazily, inside a reward function of vf_helper_imports."""

import verifiers as vf


def ends_with(completion: vf.Messages, answer: str) -> float:
    return float(str(completion[-1].content or "").rstrip(".}").endswith(answer))
