"""How an example reaches a program: its task file, argv placeholders, environment, stdin.

Every rollout's working directory holds the example's ``info["files"]`` and ``task.json``
(``question``, ``prompt``, ``info``, ``example_id``, ``task``; never the answer). The command's
arguments may hold placeholders (``{question}``, ``{task_file}``, ``{workdir}``,
``{example_id}``, ``{info[key]}``). The program's environment is the driver's, less every
variable that looks like a secret (unless named in ``pass_env``), plus
``OPENAI_BASE_URL``/``OPENAI_API_KEY`` (the interception endpoint and the rollout's token),
``VF_TASK_FILE``, ``VF_QUESTION``, ``VF_EXAMPLE_ID``, ``VF_WORKDIR``, ``VF_MODEL`` and the
environment's own ``env``. Its stdin is the question, the task file's JSON, or nothing.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from verifiers_lite.core.dataset import RolloutInput

__all__ = [
    "Command",
    "StdinMode",
    "argv_for",
    "child_env",
    "command_argv",
    "snapshot_files",
    "stdin_for",
    "task_fields",
    "write_files",
    "write_task",
]

StdinMode = Literal["question", "task", "none"]
Command = Sequence[str] | Callable[..., Any]

_SECRET = re.compile(
    r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION)"
    r"|^(OPENAI|ANTHROPIC|AZURE|AWS|GOOGLE|GCP|HF|HUGGING|GITHUB|GH|GITLAB|COHERE|MISTRAL|GROQ|"
    r"TOGETHER|FIREWORKS|DEEPSEEK|XAI|GEMINI|OPENROUTER|WANDB|PRIME)_",
    re.IGNORECASE,
)
TASK_FILE = "task.json"
_PLACEHOLDER = re.compile(
    r"\{(question|task_file|workdir|example_id|task|info)(?:\[([^\]{}]+)\])?\}"
)


def question_of(prompt: Any) -> str:
    """The text of the prompt's last user message (the whole string for a text prompt)."""
    if isinstance(prompt, str):
        return prompt
    for message in reversed(prompt or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return "".join(p.get("text", "") for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


def task_fields(rollout_input: RolloutInput | Mapping[str, Any]) -> dict[str, Any]:
    """What a program is told of its example (``task.json``)."""
    return {
        "question": question_of(rollout_input.get("prompt")),
        "prompt": rollout_input.get("prompt"),
        "info": rollout_input.get("info") or {},
        "example_id": rollout_input.get("example_id"),
        "task": rollout_input.get("task", "default"),
    }


def command_argv(command: Command) -> list[str]:
    """The argv list of ``command``; a Python callable runs in a subprocess by its import path
    (``module:qualname``), so it must be defined at a module's top level."""
    if callable(command):
        module = getattr(command, "__module__", None)
        qualname = getattr(command, "__qualname__", "")
        if not module or module == "__main__" or "<" in qualname:
            raise ValueError(
                f"a callable program runs in a subprocess by its import path: {command!r} must be "
                "a top-level function of an importable module (not __main__, a lambda, a local "
                "function or a notebook cell)"
            )
        return [
            sys.executable,
            "-m",
            "verifiers_lite.programs.run_callable",
            f"{module}:{qualname}",
        ]
    if isinstance(command, (str, bytes)) or not isinstance(command, Sequence) or not command:
        raise ValueError(
            f"command must be an argv list (e.g. ['python', 'agent.py', '{{question}}']) or a "
            f"Python callable; got {command!r}"
        )
    if not all(isinstance(a, str) for a in command):
        raise ValueError(f"every argument of command must be a string; got {command!r}")
    return list(command)


def argv_for(argv: Sequence[str], fields: Mapping[str, Any], workdir: Path) -> list[str]:
    """``argv`` with its placeholders filled; other braces (code given with ``-c``) are left
    as they are."""
    values = {**fields, "task_file": str(workdir / TASK_FILE), "workdir": str(workdir)}
    info = fields.get("info") or {}

    def fill(match: re.Match[str]) -> str:
        name, key = match.group(1), match.group(2)
        if key is not None:
            return str(info.get(key, "")) if isinstance(info, Mapping) else ""
        return str(values.get(name, ""))

    return [_PLACEHOLDER.sub(fill, a) for a in argv]


def child_env(
    base: Mapping[str, str],
    *,
    pass_env: Sequence[str],
    own: Mapping[str, str],
    endpoint: Mapping[str, str],
) -> dict[str, str]:
    """The program's environment (see the module's docstring)."""
    kept = {k: v for k, v in base.items() if k in pass_env or not _SECRET.search(k)}
    return {**kept, **own, **endpoint}


def stdin_for(mode: StdinMode, fields: Mapping[str, Any]) -> bytes | None:
    if mode == "question":
        return str(fields["question"]).encode()
    if mode == "task":
        return json.dumps(fields).encode()
    return None


def write_task(workdir: Path, fields: Mapping[str, Any]) -> Path:
    path = workdir / TASK_FILE
    path.write_text(json.dumps(fields, ensure_ascii=False))
    return path


def write_files(workdir: Path, files: Any) -> None:
    """Write an example's ``info["files"]`` (relative path -> text) into ``workdir``."""
    if not files:
        return
    if not isinstance(files, Mapping):
        raise ValueError("info['files'] must map relative paths to text")
    root = workdir.resolve()
    for rel, text in files.items():
        path = (workdir / str(rel)).resolve()
        if not path.is_relative_to(root) or path == root:
            raise ValueError(f"info['files'] path {rel!r} is not inside the working directory")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(str(text))


def snapshot_files(workdir: Path, *, per_file: int = 65536, total: int = 1 << 20) -> dict[str, str]:
    """The text of the files the program left in ``workdir`` (relative paths, the task file
    left out; each cut at ``per_file`` bytes, ``total`` bytes in all)."""
    files: dict[str, str] = {}
    budget = total
    for path in sorted(workdir.rglob("*")):
        rel = path.relative_to(workdir).as_posix()
        if rel == TASK_FILE or not path.is_file() or path.is_symlink() or budget <= 0:
            continue
        with path.open("rb") as fh:
            data = fh.read(min(per_file, budget))
        budget -= len(data)
        files[rel] = data.decode("utf-8", "replace")
    return files
