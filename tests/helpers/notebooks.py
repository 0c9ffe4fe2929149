"""The scripts of ``notebooks/`` (the notebooks' builders) imported as modules."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.helpers.paths import NOTEBOOKS


def notebook_script(name: str) -> ModuleType:
    """``notebooks/<name>.py`` as a module; ``notebook_cli`` is loaded first because the builders
    import it by name, as they do when run as scripts from that folder."""
    for module_name in ("notebook_cli", name):
        if module_name not in sys.modules:
            spec = importlib.util.spec_from_file_location(
                module_name, NOTEBOOKS / f"{module_name}.py"
            )
            assert spec is not None and spec.loader is not None, module_name
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            spec.loader.exec_module(module)
    return sys.modules[name]
