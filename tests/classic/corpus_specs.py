"""How each corpus environment is run by both frameworks: its arguments, how many examples,
rollouts per example and the sampling arguments. ``{base_url}`` in an argument becomes the
deterministic model's URL (judges are pointed at it). Standard library only: the verifiers 0.3.1
venv reads it too.

Other classic environments are compared on the same terms by naming a JSON file of specs in
``VF_CLASSIC_EXTRA_SPECS``: ``{"name": {"dir": "folder holding name.py", "args": {...},
"num_examples": 6, "rollouts": 2}}`` (``dir`` relative to the file).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

CORPUS_DIR = Path(__file__).resolve().parent / "corpus"
MODEL_NAME = "conversation-model"
SAMPLING_ARGS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 256}
JUDGE = {"judge_base_url": "{base_url}", "judge_model": MODEL_NAME}

SPECS: dict[str, dict[str, Any]] = {
    "vf_gsm8k": {"num_examples": 8, "rollouts": 2},
    "vf_gsm8k_xml_fewshot": {"num_examples": 8, "rollouts": 2},
    "vf_math_think": {"num_examples": 8, "rollouts": 2},
    "vf_reverse_text": {"num_examples": 8, "rollouts": 2},
    "vf_doublecheck": {"args": {"num_train_examples": 6}, "num_examples": 6, "rollouts": 2},
    "vf_word_guess": {"num_examples": 6, "rollouts": 2},
    "vf_alphabet_sort": {"num_examples": 6, "rollouts": 2},
    "vf_sentence_repeater": {"num_examples": 4, "rollouts": 2},
    "vf_tool_test": {"num_examples": 8, "rollouts": 2},
    "vf_calculator_tools": {"num_examples": 6, "rollouts": 2},
    "vf_stateful_notes": {"num_examples": 6, "rollouts": 2},
    "vf_self_reward": {
        "args": {"base_url": "{base_url}", "judge_model": MODEL_NAME},
        "num_examples": 6,
        "rollouts": 2,
    },
    "vf_toxicity_judge": {"args": JUDGE, "num_examples": 8, "rollouts": 2},
    "vf_continuation": {"args": JUDGE, "num_examples": 6, "rollouts": 2},
    "vf_math_group": {"num_examples": -1, "rollouts": 2},
}


def _extra_specs() -> dict[str, dict[str, Any]]:
    path = os.environ.get("VF_CLASSIC_EXTRA_SPECS")
    if not path:
        return {}
    specs: dict[str, dict[str, Any]] = json.loads(Path(path).read_text())
    for spec in specs.values():
        spec["dir"] = str((Path(path).parent / spec.get("dir", ".")).resolve())
    return specs


SPECS.update(_extra_specs())


def module_file(name: str) -> Path:
    """The environment module ``name`` is loaded from."""
    return Path(SPECS[name].get("dir", CORPUS_DIR)) / f"{name}.py"


def module_dirs() -> list[str]:
    """The folders to put on ``sys.path`` so every environment module imports by its name."""
    return list(
        dict.fromkeys([str(CORPUS_DIR)] + [str(s["dir"]) for s in SPECS.values() if "dir" in s])
    )


def env_args(name: str, base_url: str) -> dict[str, Any]:
    """The environment's ``load_environment`` keywords with the model's URL filled in."""
    args = SPECS[name].get("args", {})
    return {k: (v.format(base_url=base_url) if isinstance(v, str) else v) for k, v in args.items()}
