"""mkdocs hooks: the API reference and the CLI reference, generated at build time.

The reference pages come from what each package facade exports (its ``__all__``), found by
walking the package, so they follow the package layout with no list kept by hand. The CLI page
comes from the argparse parsers themselves.
"""

from __future__ import annotations

import argparse
import ast
import html
import importlib
import inspect
import pkgutil
import re
import sys
import textwrap
import typing
import warnings
from dataclasses import is_dataclass
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

sys.path.insert(0, str(Path(__file__).parent))  # mkdocs loads this file alone: its sibling too
import docs_pictures  # noqa: E402

PACKAGE = "verifiers_lite"
# Docstrings name other objects with Sphinx roles (:class:`~a.b.C`): shown as code (``C``).
SPHINX_ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|exc|obj):<code>(~?)([^<]*)</code>")
REFERENCE_DIR = "reference"
CLI_PAGE = "cli.md"
PICTURES_DIR = "pictures"  # made by docs_pictures.py from real runs
# An attribute entry whose description is empty (the tempered part stops at the next object).
BARE_ATTRIBUTE = re.compile(
    r'<div class="doc doc-object doc-attribute">(?:(?!<div class="doc doc-object).)*?'
    r'<div class="doc doc-contents ">\s*</div>\s*</div>',
    re.S,
)
# Where a TypedDict of options finds the description of a key it does not describe itself.
FIELD_DOC_SOURCES = ("verifiers_lite.run.run_config.RunConfig",)
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


def _alias_doc(package: Any, name: str) -> str:
    """The string right after ``name = ...`` in the module that defines it (a type alias's or a
    constant's documentation), found through the facade's import of it."""
    module = getattr(package, "_LAZY", {}).get(name)
    if not module:
        return ""
    tree = ast.parse(inspect.getsource(importlib.import_module(module)))
    for node, after in zip(tree.body, tree.body[1:], strict=False):
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets) and (
            isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
        ):
            return inspect.cleandoc(str(after.value.value))
    return ""


def _plain_entry(package: Any, shown: str, name: str) -> str:
    try:
        value = getattr(package, name)
    except ImportError as exc:
        return f"`{shown}.{name}` (needs an optional extra: {exc})"
    if typing.get_origin(value) is not None:  # a type alias: what it stands for, not a class
        return f"Type alias: `{shown}.{name} = {value!r}`\n\n{_alias_doc(package, name)}"
    if callable(value):
        try:
            return f"`{shown}.{name}{inspect.signature(value)}`\n\n{inspect.getdoc(value) or ''}"
        except (TypeError, ValueError):
            pass
    return (
        f"`{shown}.{name}`: `{type(value).__name__}` = `{value!r}`\n\n{_alias_doc(package, name)}"
    )


def reference_pages() -> dict[str, str]:
    """path -> markdown of every facade's page. An object is documented on the page of the
    package that defines it; the root's page (which re-exports what a notebook uses) lists its
    names, each with its summary and a link there: one anchor per object, pages of a size a
    table of contents can follow."""
    documented: dict[str, str] = {}
    facades = public_facades()
    return {
        reference_page_path(facade): reference_markdown(facade, documented)
        for facade in [*facades[1:], *facades[:1]]
    }


def _value(identifier: str) -> Any:
    module, _, name = identifier.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):  # a nested qualname (Class.method) or an extra
        return None


def _param_docs(klass: type) -> dict[str, str]:
    """Parameter descriptions of a class's docstring and its ``__init__``'s (``Args:``)."""
    import docstring_parser

    found: dict[str, str] = {}
    for doc in (klass.__doc__, getattr(klass.__dict__.get("__init__"), "__doc__", None)):
        if doc:
            parsed = docstring_parser.parse(inspect.cleandoc(doc))
            found.update(
                {p.arg_name: " ".join((p.description or "").split()) for p in parsed.params}
            )
    return found


def constructor_parameters(cls: type) -> list[tuple[str, str, str, str, str]]:
    """``(name, type, default, description, class)`` of every parameter a class's constructor
    takes, those it passes on to its bases' (``*args``, ``**kwargs``) included."""
    rows: dict[str, tuple[str, str, str, str, str]] = {}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if not klass.__module__.startswith(PACKAGE) or init is None:
            continue
        # A dataclass's fields are its parameters: their ``#:`` comments describe them.
        docs = (
            {**field_docs(klass), **_param_docs(klass)}
            if is_dataclass(klass)
            else _param_docs(klass)
        )
        forwards = False
        for p in list(inspect.signature(init).parameters.values())[1:]:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                forwards = True
            elif p.name not in rows:
                kind = "" if p.annotation is p.empty else str(p.annotation)
                default = "" if p.default is p.empty else repr(p.default)
                rows[p.name] = (p.name, kind, default, docs.get(p.name, ""), klass.__name__)
        if not forwards:
            break
    return list(rows.values())


def _inherits_parameters(cls: type) -> bool:
    """Whether its signature hides parameters: its constructor passes ``*args``/``**kwargs``
    on, or it has none of its own and takes its base's."""
    init = cls.__dict__.get("__init__")
    if init is None:
        return any(
            k.__dict__.get("__init__") for k in cls.__mro__[1:] if k.__module__.startswith(PACKAGE)
        )
    kinds = {p.kind for p in inspect.signature(init).parameters.values()}
    return bool(kinds & {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD})


def _cell(text: str) -> str:
    """Text for a table cell: no line breaks, pipes that do not split the row."""
    return " ".join(text.split()).replace("|", "&#124;")


def _code_cell(text: str) -> str:
    return f"<code>{html.escape(text).replace('|', '&#124;')}</code>" if text else ""


def _parameters_table(cls: type) -> list[str]:

    lines = [
        f"**Constructor parameters** of `{cls.__name__}`, its bases' included:",
        "",
        "| Parameter | Type | Default | Description |",
        "| --- | --- | --- | --- |",
    ]
    for name, kind, default, text, owner in constructor_parameters(cls):
        where = "" if owner == cls.__name__ else f" (from `{owner}`)"
        lines.append(
            f"| `{name}` | {_code_cell(kind)} | {_code_cell(default)} | {_cell(text)}{where} |"
        )
    return [*lines, ""]


def field_docs(cls: type) -> dict[str, str]:
    """A class's field descriptions from its source: ``#:`` comments (beside or above a field)
    and attribute docstrings (a string right after it), its bases' included."""
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith(PACKAGE):
            continue
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):
            continue
        lines = source.splitlines()
        body = ast.parse(source).body[0]
        nodes = getattr(body, "body", [])
        for i, node in enumerate(nodes):
            if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
                continue
            text = _comment_doc(lines, node.lineno - 1)
            after = nodes[i + 1] if i + 1 < len(nodes) else None
            if isinstance(after, ast.Expr) and isinstance(
                getattr(after, "value", None), ast.Constant
            ):
                text = text or str(after.value.value)
            if text:
                found[node.target.id] = " ".join(text.split())
    return found


def _comment_doc(lines: list[str], at: int) -> str:
    """The ``#:`` comment beside line ``at`` or the ``#:`` lines right above it."""
    beside = lines[at].split("#:", 1)
    if len(beside) == 2:
        return beside[1].strip()
    above = []
    for line in reversed(lines[:at]):
        if not line.strip().startswith("#:"):
            break
        above.insert(0, line.strip()[2:].strip())
    return " ".join(above)


def _typeddict_table(cls: type) -> list[str]:
    """Every key of a TypedDict with its type and description (the same-named field of a class
    in FIELD_DOC_SOURCES where it has none of its own)."""
    docs = {}
    for source in FIELD_DOC_SOURCES:
        docs.update(field_docs(_value(source)))
    docs.update(field_docs(cls))
    hints = {}
    for klass in reversed(cls.__mro__):
        hints.update(getattr(klass, "__annotations__", {}))
    lines = [
        f"**Keys** of `{cls.__name__}`:",
        "",
        "| Key | Type | Description |",
        "| --- | --- | --- |",
    ]
    for name, kind in hints.items():
        shown = kind if isinstance(kind, str) else getattr(kind, "__name__", repr(kind))
        lines.append(f"| `{name}` | {_code_cell(str(shown))} | {_cell(docs.get(name, ''))} |")
    return [*lines, ""]


def _documented_entry(name: str, identifier: str) -> list[str]:
    """The mkdocstrings block; a name exported under another name gets its own heading too. A
    class whose signature hides parameters it passes to its bases, and a dataclass (whose
    fields' descriptions are comments mkdocstrings does not read), gets its whole list of
    parameters, between its heading and its members."""
    level = 2
    lines = []
    if identifier.rsplit(".", 1)[-1] != name:
        lines = [f"## `{name}`", "", f"Exported name of `{identifier}`.", ""]
        level = 3
    head = [
        f"::: {identifier}",
        "    options:",
        "      show_root_heading: true",
        "      show_root_full_path: false",
        f"      heading_level: {level}",
    ]
    value = _value(identifier)
    if inspect.isclass(value) and typing.is_typeddict(value):
        return [*lines, *head, "      members: false", "", *_typeddict_table(value)]
    if not (inspect.isclass(value) and (_inherits_parameters(value) or is_dataclass(value))):
        return [*lines, *head, ""]
    return [
        *lines,
        *head,
        "      members: false",
        "      show_docstring_parameters: false",
        "",
        *_parameters_table(value),
        # Each member on its own: one block of them all would have to hide the class's
        # description, and mkdocstrings would hide every member's with it.
        *(
            line
            for member in _own_members(value)
            for line in (
                f"::: {identifier}.{member}",
                "    options:",
                "      show_root_heading: true",
                "      show_root_full_path: false",
                f"      heading_level: {level + 1}",
                "",
            )
        ),
    ]


def _own_members(cls: type) -> list[str]:
    """The public methods, properties and annotated attributes a class defines itself, in
    source order (what mkdocstrings lists of a class: the package's filters drop ``_`` names)."""
    annotated = list(cls.__dict__.get("__annotations__", {}))
    found = []
    for name, value in cls.__dict__.items():
        if name.startswith("_"):
            continue
        function = value.__func__ if isinstance(value, (classmethod, staticmethod)) else value
        function = function.fget if isinstance(function, property) else function
        if inspect.isfunction(function):
            found.append((function.__code__.co_firstlineno, name))
    lines = _attribute_lines(cls)
    found += [(lines.get(name, 0), name) for name in annotated if not name.startswith("_")]
    return [name for _, name in sorted(set(found))]


def _attribute_lines(cls: type) -> dict[str, int]:
    """The source line of each annotated attribute of a class (empty without its source)."""
    try:
        lines, first = inspect.getsourcelines(cls)
    except (OSError, TypeError):
        return {}
    body = ast.parse(textwrap.dedent("".join(lines))).body[0]
    return {
        node.target.id: first + node.lineno - 1
        for node in getattr(body, "body", [])
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    }


def _summary_entry(name: str, identifier: str, page: str) -> list[str]:
    """A name documented on another page: its first line and a link there."""
    value = _value(identifier)
    doc = (inspect.getdoc(value) or "") if value is not None else ""
    first = " ".join(doc.split("\n\n")[0].split())
    package = page.removeprefix(f"{REFERENCE_DIR}/").removesuffix(".md").replace("-", ".")
    return [
        f"## `{name}`",
        "",
        f"{first} [Documented in `vf.{package}`]({page.removeprefix(REFERENCE_DIR + '/')}#{identifier}).",
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
            lines += _summary_entry(name, identifier, documented[identifier])
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
    """Adds the generated pages and pictures to the site (they exist only in the build, never
    on disk)."""
    for path, markdown in reference_pages().items():
        files.append(File.generated(config, path, content=markdown))
    files.append(File.generated(config, CLI_PAGE, content=cli_markdown()))
    for name, png in docs_pictures.pictures().items():
        files.append(File.generated(config, f"{PICTURES_DIR}/{name}", content=png))
    return files


def _plain_role(match: re.Match[str]) -> str:
    shortened, target = match.groups()
    return f"<code>{target.rsplit('.', 1)[-1] if shortened else target}</code>"


def _without_bare_attributes(text: str, page: Any) -> str:
    """The page without attribute entries that say nothing but their name (``api = api``),
    and without their table-of-contents entries."""
    gone: set[str] = set()

    def drop(match: re.Match[str]) -> str:
        gone.update(re.findall(r'<h\d id="([^"]+)"', match.group(0)))
        return ""

    text = BARE_ATTRIBUTE.sub(drop, text)

    def prune(links: list[Any]) -> list[Any]:
        kept = [link for link in links if link.id not in gone]
        for link in kept:
            link.children = prune(link.children)
        return kept

    if gone and getattr(page, "toc", None) is not None:
        page.toc.items = prune(page.toc.items)
    return text


def on_page_content(html: str, page: Any, config: Any, files: Files) -> str:
    """Sphinx roles in the reference's docstrings read as plain code names; attributes with no
    description are left out."""
    return _without_bare_attributes(SPHINX_ROLE.sub(_plain_role, html), page)
