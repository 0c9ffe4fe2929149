"""A driver the no-orphan tests kill: ``python -m tests.programs.driver PIDS_FILE``.

Runs one program rollout (a program that forks a child ignoring SIGTERM, both hanging, their
pids written to PIDS_FILE) with a long time limit, so only the driver's death can end it.
"""

from __future__ import annotations

import signal
import sys

import verifiers_lite as vf
from tests.programs.helpers import agent, program_env


def main() -> None:
    # As at a terminal: a shell starts background jobs with SIGINT ignored, and a child inherits it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    env = program_env(agent("fork", sys.argv[1]), limits=vf.Limits(time_s=600))
    env.evaluate_sync(vf.ScriptedClient("x"), "m", progress=False)


if __name__ == "__main__":
    main()
