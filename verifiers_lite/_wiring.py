"""What the package root plugs into the layers below it when it is imported: the progress
displays (the notebook widget, then the tqdm bar), the results' viewer, static HTML and
notebook HTML, the importer that runs classic ``verifiers`` modules within their scope, and the
interop layer's readers and loaders (inspect_ai logs and tasks).

The core never imports the UI: it offers registries (``progress.register_display``,
``outputs.register_viewer``, ``registry.register_module_importer``) and this module, a layer of the
import contract in ``pyproject.toml`` (under the command line, over the UI), fills them with plain
imports the import graph sees, importing the UI itself only when used."""

from __future__ import annotations

from typing import Any

from verifiers_lite.classic import scope as classic_scope
from verifiers_lite.core import progress, registry
from verifiers_lite.results import outputs


def _notebook_display(desc: str) -> Any:
    """The live widget, where it applies: the notebook layer imported only when a run starts."""
    from verifiers_lite.ui.notebook.display import notebook_progress

    return notebook_progress(desc)


def _terminal_display(desc: str) -> Any:
    """The tqdm bar: the display wherever no other applies."""
    from verifiers_lite.ui.terminal_progress import TqdmProgress

    return TqdmProgress(desc)


def _results_html(outputs: Any) -> str:
    from verifiers_lite.ui.notebook.results_html import results_html

    return results_html(outputs)


def _view(outputs: Any, **kwargs: Any) -> Any:
    from verifiers_lite.ui.viewer.serve import view

    return view(outputs, **kwargs)


def _write_html(outputs: Any, path: Any) -> Any:
    from verifiers_lite.ui.viewer.standalone import write_html

    return write_html(outputs, path)


def _read_inspect_log(path: Any) -> Any:
    from verifiers_lite.interop.inspect_import import load_inspect_log

    return load_inspect_log(path)


def _inspect_environment(env_id: str, **task_args: Any) -> Any:
    from verifiers_lite.interop.inspect_task import load_inspect_environment

    return load_inspect_environment(env_id, **task_args)


def wire() -> None:
    """Register the displays, viewers and the classic importer (idempotent)."""
    progress.register_display(_notebook_display)
    progress.register_display(_terminal_display)  # last: it always applies
    outputs.register_viewer("view", _view)
    outputs.register_viewer("write_html", _write_html)
    outputs.register_viewer("repr_html", _results_html)
    # inspect_ai logs, read by the interop layer (inspect_ai imported only when one is read)
    outputs.register_run_reader(".eval", _read_inspect_log)
    # Environment modules written for the classic API are imported within the classic scope
    # (standard library only until a classic module is found).
    registry.register_module_importer(
        classic_scope.import_environment_module, classic_scope.run_environment_loader
    )
    # inspect_ai tasks as environments: "inspect:file.py@task"
    registry.register_id_scheme("inspect:", _inspect_environment)
