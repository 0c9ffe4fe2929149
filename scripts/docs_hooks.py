"""mkdocs hooks: the API reference and the CLI reference, generated at build time.

The reference pages come from what each package facade exports (its ``__all__``), found by
walking the package, so they follow the package layout with no list kept by hand. The CLI page
comes from the argparse parsers themselves.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import pkgutil
import re
import warnings
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

PACKAGE = "verifiers_lite"
# Docstrings name other objects with Sphinx roles (:class:`~a.b.C`): shown as code (``C``).
SPHINX_ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|exc|obj):<code>(~?)([^<]*)</code>")
REFERENCE_DIR = "reference"
CLI_PAGE = "cli.md"
# Where the ``vf-lite serve`` parser lives.
SERVE_PARSER_MODULES = ("verifiers_lite.cli.serve",)


def public_facades() -> list[str]:
    """Every public package (no ``_`` part) of the library that exports names, root first."""
    root = importlib.import_module(PACKAGE)
    found = [PACKAGE]
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{PACKAGE}."):
        if info.ispkg and not any(part.startswith("_") for part in info.name.split(".")):
            found.append(info.name)
    return [name for name in found if getattr(importlib.import_module(name), "__all__", None)]


def reference_page_path(facade: str) -> str:
    """``reference/verifiers_lite.md`` for the root, ``reference/server.md`` for ``vf.server``."""
    short = facade.removeprefix(f"{PACKAGE}.") if facade != PACKAGE else PACKAGE
    return f"{REFERENCE_DIR}/{short.replace('.', '-')}.md"


def _identifier(facade: str, name: str) -> str | None:
    """The dotted path where an exported object is defined, for mkdocstrings to document."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            value = getattr(importlib.import_module(facade), name)
        except ImportError:  # an optional extra not installed here
            return None
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None)
    if (
        isinstance(module, str)
        and module.startswith(PACKAGE)
        and isinstance(qualname, str)
        and "<locals>" not in qualname
    ):
        return f"{module}.{qualname}"
    return None


def _plain_entry(package: Any, shown: str, name: str) -> str:
    try:
        value = getattr(package, name)
    except ImportError as exc:
        return f"`{shown}.{name}` (needs an optional extra: {exc})"
    if callable(value):
        try:
            return f"`{shown}.{name}{inspect.signature(value)}`\n\n{inspect.getdoc(value) or ''}"
        except (TypeError, ValueError):
            pass
    return f"`{shown}.{name}`: `{type(value).__name__}` = `{value!r}`"


def reference_pages() -> dict[str, str]:
    """path -> markdown of every facade's page. An object two facades export is documented
    on the first (the root comes first) and linked from the others: one anchor per object."""
    documented: dict[str, str] = {}
    return {
        reference_page_path(facade): reference_markdown(facade, documented)
        for facade in public_facades()
    }


def _documented_entry(name: str, identifier: str) -> list[str]:
    """The mkdocstrings block; a name exported under another name gets its own heading too."""
    level = 2
    lines = []
    if identifier.rsplit(".", 1)[-1] != name:
        lines = [f"## `{name}`", "", f"Exported name of `{identifier}`.", ""]
        level = 3
    return lines + [
        f"::: {identifier}",
        "    options:",
        "      show_root_heading: true",
        "      show_root_full_path: false",
        f"      heading_level: {level}",
        "",
    ]


def reference_markdown(facade: str, documented: dict[str, str]) -> str:
    """One page: the facade's summary, then every exported name with its signature and types."""
    package = importlib.import_module(facade)
    summary = (package.__doc__ or "").strip().split("\n\n")[0]
    shown = "vf" if facade == PACKAGE else f"vf.{facade.removeprefix(PACKAGE + '.')}"
    lines = [
        f"# `{facade}`",
        "",
        f"Imported as `{shown}` (`import verifiers_lite as vf`).",
        "",
        summary,
        "",
    ]
    for name in sorted(package.__all__):
        identifier = _identifier(facade, name)
        if identifier is None:  # a constant, or a name whose extra is not installed here
            lines += [f"## `{name}`", "", _plain_entry(package, shown, name), ""]
        elif identifier in documented:
            page = documented[identifier].removeprefix(f"{REFERENCE_DIR}/")
            lines += [
                f"## `{name}`",
                "",
                f"The same object as [`{name}`]({page}#{identifier}).",
                "",
            ]
        else:
            documented[identifier] = reference_page_path(facade)
            lines += _documented_entry(name, identifier)
    return "\n".join(lines)


def _options_table(parser: argparse.ArgumentParser) -> list[str]:
    rows = ["| Option | Default | Description |", "| --- | --- | --- |"]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            continue
        flags = ", ".join(action.option_strings) or (action.metavar or action.dest)
        if action.option_strings and action.nargs != 0:
            flags += f" {action.metavar or action.dest.upper()}"
        default = (
            ""
            if action.default in (None, argparse.SUPPRESS) or action.nargs == 0
            else f"`{action.default}`"
        )
        text = (action.help or "").replace("|", "\\|").replace("\n", " ")
        rows.append(f"| `{flags}` | {default} | {text} |")
    return rows


def _command_section(title: str, parser: argparse.ArgumentParser) -> list[str]:
    lines = [
        f"## `{title}`",
        "",
        parser.description or "",
        "",
        "```text",
        parser.format_usage().strip(),
        "```",
        "",
    ]
    return lines + _options_table(parser) + [""]


def serve_parser() -> argparse.ArgumentParser:
    """``vf-lite serve``'s own parser (the main parser passes its arguments through)."""
    for module_name in SERVE_PARSER_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        if hasattr(module, "build_parser"):
            return module.build_parser()
    raise ImportError(f"no build_parser in any of {SERVE_PARSER_MODULES}")


def cli_markdown() -> str:
    """Every ``vf-lite`` command with its usage line and options, read from the parsers."""
    main = importlib.import_module("verifiers_lite.cli.parser").build_parser()
    lines = [
        "# Command line: `vf-lite`",
        "",
        "Generated from the command's own argument parsers.",
        "",
        "```text",
        main.format_usage().strip(),
        "```",
        "",
    ]
    commands = next(a for a in main._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in commands.choices.items():
        parser = serve_parser() if name == "serve" else sub
        lines += _command_section(f"vf-lite {name}", parser)
    return "\n".join(lines)


def _section_pages(docs_dir: Path, folder: str, listed: list[Any]) -> list[Any]:
    """A nav section: its listed pages that exist, in their order, then its folder's other pages."""
    names = [entry for entry in listed if isinstance(entry, str)]
    on_disk = sorted(p.relative_to(docs_dir).as_posix() for p in (docs_dir / folder).glob("*.md"))
    return [name for name in names if name in on_disk] + [
        name for name in on_disk if name not in names
    ]


def on_config(config: Any) -> Any:
    """The nav: the generated reference pages under Reference, and the Tutorial and Guides
    sections as their folders hold them (a page is in the nav as soon as it is written)."""
    docs_dir = Path(config["docs_dir"])
    folders = {"Tutorial": "tutorial", "Guides": "guides"}
    nav = []
    for entry in config["nav"] or []:
        title, target = next(iter(entry.items())) if isinstance(entry, dict) else (None, entry)
        if title == "Reference":
            target = [reference_page_path(facade) for facade in public_facades()] + [CLI_PAGE]
        elif title in folders:
            target = _section_pages(docs_dir, folders[title], target or [])
        elif isinstance(target, str) and not (docs_dir / target).exists():
            continue  # a page not written yet
        if target:
            nav.append({title: target} if title else target)
    config["nav"] = nav
    return config


def on_files(files: Files, config: Any) -> Files:
    """Adds the generated pages to the site (they exist only in the build, never on disk)."""
    for path, markdown in reference_pages().items():
        files.append(File.generated(config, path, content=markdown))
    files.append(File.generated(config, CLI_PAGE, content=cli_markdown()))
    return files


def _plain_role(match: re.Match[str]) -> str:
    shortened, target = match.groups()
    return f"<code>{target.rsplit('.', 1)[-1] if shortened else target}</code>"


def on_page_content(html: str, page: Any, config: Any, files: Files) -> str:
    """Sphinx roles in the reference's docstrings read as plain code names."""
    return SPHINX_ROLE.sub(_plain_role, html)
