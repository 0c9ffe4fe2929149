"""``vf-lite init NAME``: an installable environment package, found by ``load_environment``."""

from __future__ import annotations

import re
from pathlib import Path

from verifiers_lite.core.registry import ENTRY_POINT_GROUP

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")

_PYPROJECT = """[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "{dist}"
version = "0.1.0"
description = "{summary}"
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["verifiers_lite"]

[project.entry-points."{group}"]
{name} = "{module}:load_environment"

[tool.setuptools]
py-modules = ["{module}"]
"""

_MODULE = '''"""{name}: {summary}

Measures: replace with what this environment measures. Data: a seeded generator (same seed,
same questions). Reward: ``correct`` (1/0).
"""

from __future__ import annotations

import random
from typing import Any

import verifiers_lite as vf


def make_rows(num_examples: int, seed: int) -> list[dict[str, Any]]:
    """Deterministic questions for ``seed``."""
    rng = random.Random(seed)
    rows = []
    for i in range(num_examples):
        a, b = rng.randint(0, 9), rng.randint(0, 9)
        rows.append({{"example_id": i, "question": f"What is {{a}} + {{b}}?", "answer": str(a + b)}})
    return rows


def correct(completion: Any, answer: str, parser: vf.Parser) -> float:
    """1.0 when the boxed answer (else the whole reply) equals the gold answer."""
    text = parser.parse_answer(completion) or ""
    boxed = vf.extract_boxed_answer(text)
    return 1.0 if (boxed if boxed is not None else text).strip() == answer else 0.0


def load_environment(num_examples: int = 20, seed: int = 0) -> vf.SingleTurnEnv:
    """Build the {name} environment.

    Args:
        num_examples: questions generated.
        seed: generator seed.
    """
    if num_examples < 1:
        raise ValueError(f"num_examples must be >= 1, got {{num_examples}}")
    return vf.SingleTurnEnv(
        dataset=lambda: make_rows(num_examples, seed),
        system_prompt="Answer with the result in \\\\boxed{{}}.",
        rubric=vf.Rubric([correct]),
    )
'''

_TEST = '''"""{name}: the environment loads by name and grades right answers 1 and wrong ones 0."""

import verifiers_lite as vf
from {module} import correct, load_environment


def test_loads_by_name_and_is_deterministic():
    env = vf.load_environment("{name}", num_examples=3)
    assert env.get_eval_dataset() == load_environment(num_examples=3).get_eval_dataset()


def test_reward():
    parser = vf.Parser()
    assert correct([{{"role": "assistant", "content": "\\\\boxed{{7}}"}}], "7", parser) == 1.0
    assert correct([{{"role": "assistant", "content": "\\\\boxed{{8}}"}}], "7", parser) == 0.0
'''

_README = """# {name}

{summary}

    pip install -e .
    vf-lite list            # shows {name}
    vf-lite eval {name} -n 5
    pytest tests

`load_environment` is registered under the `{group}` entry point group in `pyproject.toml`,
so `vf.load_environment("{name}")` finds it once the package is installed.
"""


def scaffold_environment(name: str, path: Path | None = None, summary: str | None = None) -> Path:
    """Write a new environment package for ``name`` into ``path`` (default ``./name``)."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(
            f"environment name must start with a letter and hold only letters, digits, '-' and '_' "
            f"(64 at most), got {name!r}"
        )
    target = Path(path) if path is not None else Path.cwd() / name
    if target.exists() and any(target.iterdir()):
        raise FileExistsError(f"{target} exists and is not empty")
    module = name.replace("-", "_").lower()
    fields = {
        "name": name,
        "module": module,
        "dist": f"vf-env-{module.replace('_', '-')}",
        "summary": summary or "A verifiers_lite environment.",
        "group": ENTRY_POINT_GROUP,
    }
    files = {
        "pyproject.toml": _PYPROJECT,
        f"{module}.py": _MODULE,
        f"tests/test_{module}.py": _TEST,
        "README.md": _README,
    }
    for rel, template in files.items():
        dest = target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(template.format(**fields), encoding="utf-8")
    return target
