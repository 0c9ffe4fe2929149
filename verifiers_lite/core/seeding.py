"""Per-rollout sampling seeds derived from a run seed: reproducible runs, distinct group members."""

from __future__ import annotations

import hashlib
from typing import Any, Final, cast

from verifiers_lite.core.records import RolloutInput

SEED_KEY: Final = "seed"
_MAX = 2**31 - 1  # fits every server's seed field (llama.cpp uint32, vLLM/OpenAI int)


def derive_seed(run_seed: int, example_id: Any, rollout_index: int) -> int:
    """The seed of one rollout: a hash of (run seed, example_id, rollout index), so a rerun or
    a resume draws the same samples and the rollouts of one group draw different ones."""
    digest = hashlib.sha256(f"{run_seed}:{example_id!r}:{rollout_index}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % _MAX


def check_run_seed(run_seed: Any) -> int:
    """The run seed, refused (ValueError) unless it is an integer."""
    if isinstance(run_seed, bool) or not isinstance(run_seed, int):
        raise ValueError(f"seed must be an integer or None, got {run_seed!r}")
    return run_seed


def seeded_input(inp: RolloutInput, run_seed: int, rollout_index: int) -> RolloutInput:
    """The input of one rollout with its seed (a copy; the rollout index is the input's position
    among the inputs of its example, as the scheduler numbers them). A ``seed`` already on the
    input is kept."""
    if SEED_KEY in inp:
        return inp
    out = dict(inp)
    out[SEED_KEY] = derive_seed(run_seed, inp["example_id"], rollout_index)
    return cast(RolloutInput, out)
