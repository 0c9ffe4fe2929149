"""``python -m verifiers_lite.local.llama_server ARGS``: ``llama_cpp.server`` with CPU safety.

The same command line as ``python -m llama_cpp.server``; extra buffer types are turned off
first where they would crash (see :mod:`verifiers_lite.local.cpu_safety`).
"""

from __future__ import annotations

import runpy
import sys

from verifiers_lite.local.cpu_safety import apply_to_llama_cpp


def main() -> None:
    if not apply_to_llama_cpp():
        print("verifiers_lite: llama.cpp extra buffer types off (AMX build)", file=sys.stderr)
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
