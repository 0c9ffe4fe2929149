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
    "vf_message_objects": {"num_examples": 6, "rollouts": 2},
    "vf_helper_imports": {
        "num_examples": 6,
        "rollouts": 2,
        "helpers": [
            "vfh_shared.py",
            "vfh_utils/__init__.py",
            "vfh_utils/scoring.py",
            "vfh_lazy.py",
        ],
    },
}


# Modules verifiers 0.3.1 refuses (spec "refused"): verifiers_lite's default mode must refuse
# them with 0.3.1's error. Its lenient mode runs them ("lite_mode"), and must give the rewards
# 0.3.1 gives for the same environment written for it ("oracle_args": fixed=True). Arrow holds
# no message objects under either framework, so that one has no lenient run.
REFUSED = (
    "vf_refused_list_dataset",
    "vf_refused_string_task",
    "vf_refused_sync_is_completed",
    "vf_refused_state_turn",
    "vf_refused_tuple_env_response",
    "vf_refused_string_prompt_system",
    "vf_refused_message_objects_in_dataset",
)
for _name in REFUSED:
    SPECS[_name] = {"num_examples": 6, "rollouts": 2, "refused": True}
    if _name != "vf_refused_message_objects_in_dataset":
        SPECS[_name.replace("vf_refused_", "vf_lenient_")] = {
            "module": _name,
            "num_examples": 6,
            "rollouts": 2,
            "lite_mode": "lenient",
            "oracle_args": {"fixed": True},
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


def module_name(name: str) -> str:
    """The environment module spec ``name`` loads (the spec's own name unless it says)."""
    return str(SPECS[name].get("module", name))


def module_file(name: str) -> Path:
    """The environment module spec ``name`` is loaded from."""
    return Path(SPECS[name].get("dir", CORPUS_DIR)) / f"{module_name(name)}.py"


def helper_files(name: str) -> list[Path]:
    """The helper modules environment ``name`` imports from beside it (``helpers`` in its spec)."""
    return [module_file(name).parent / h for h in SPECS[name].get("helpers", [])]


def module_dirs() -> list[str]:
    """The folders to put on ``sys.path`` so every environment module imports by its name."""
    return list(
        dict.fromkeys([str(CORPUS_DIR)] + [str(s["dir"]) for s in SPECS.values() if "dir" in s])
    )


def env_args(name: str, base_url: str, oracle: bool = False) -> dict[str, Any]:
    """The environment's ``load_environment`` keywords with the model's URL filled in (for the
    verifiers 0.3.1 run, ``oracle_args`` when the spec has them)."""
    spec = SPECS[name]
    args = spec["oracle_args"] if oracle and "oracle_args" in spec else spec.get("args", {})
    return {k: (v.format(base_url=base_url) if isinstance(v, str) else v) for k, v in args.items()}
