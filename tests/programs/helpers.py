"""Helpers of the program-environment tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import verifiers_lite as vf

ROOT = Path(__file__).resolve().parents[2]


def agent(mode: str, *args: str) -> list[str]:
    """The argv of a test program (``tests/programs/agents.py``)."""
    return [sys.executable, "-m", "tests.programs.agents", mode, *args]


def child_env() -> dict[str, str]:
    """What a test program started by hand needs to import the checkout."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


def rows(*questions: str) -> list[dict[str, Any]]:
    return [{"question": q, "answer": q, "example_id": i} for i, q in enumerate(questions)]


def program_env(command: list[str], *questions: str, **kwargs: Any) -> vf.ProgramEnv:
    """A program environment over ``questions`` (rewarded 1.0 when it answers the question)."""

    def echoed(state: Any, answer: str) -> float:
        return 1.0 if state["program"]["answer"] == answer else 0.0

    kwargs.setdefault("rubric", vf.Rubric([echoed]))
    return vf.ProgramEnv(command, dataset=rows(*(questions or ("q",))), **kwargs)


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie waiting to be reaped does not), read from /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def group_members(pgid: int) -> list[int]:
    """Live processes of process group ``pgid`` (read from /proc here, not by the product)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            rest = stat[stat.rfind(")") + 2 :].split()
            if rest[0] != "Z" and int(rest[2]) == pgid:
                found.append(int(entry.name))
    return found
