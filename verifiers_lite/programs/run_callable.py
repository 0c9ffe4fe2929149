"""Run a Python callable as a program: ``python -m verifiers_lite.programs.run_callable mod:name``.

The callable is called with the example's fields (the task file's contents: ``question``,
``prompt``, ``info``, ``example_id``, ``task``); it reaches the model through the ``openai`` SDK
(``OPENAI_BASE_URL``/``OPENAI_API_KEY`` are set). What it returns, when not None, is printed
as its answer; a coroutine function is run with ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import os
import sys
from typing import Any


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or ":" not in args[0]:
        raise SystemExit("usage: python -m verifiers_lite.programs.run_callable module:qualname")
    module_name, qualname = args[0].split(":", 1)
    target: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        target = getattr(target, part)
    with open(os.environ["VF_TASK_FILE"], encoding="utf-8") as fh:
        task = json.load(fh)
    result = target(task)
    if inspect.iscoroutine(result):
        result = asyncio.run(result)
    if result is not None:
        print(result)


if __name__ == "__main__":
    main()
