"""Every code block of README.md and of every docs page runs as printed, or is marked as one that
cannot run here.

- Each page's Python blocks run in order in one namespace, as in one notebook per page
  (``doc_runner.py``; pages in reading order, in one scratch directory), against what the docs say:
  the embedded model, ``vf.ScriptedClient``; environments they build must
  reach their maximal reward under a perfect scripted player.
- Shell blocks run with ``bash -e`` in a scratch directory.
- Printed output (``<!-- readme: output of `CMD` -->``) is compared, by shape, with what CMD prints now.
- Blocks that cannot run here (``<!-- readme: skip (REASON) -->``) still have their ``vf-lite``
  command lines parsed; a ``<!-- readme: synopsis -->`` block may name only real options.

Markers are described in ``doc_blocks.py``; an unmarked block that cannot run fails.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.docs import doc_blocks as rb
from verifiers_lite.cli.parser import build_parser
from verifiers_lite.cli.serve import build_parser as build_serve_parser

REPO = rb.REPO
PAGES = [rb.parse(p) for p in rb.pages()]
BLOCKS = [b for page in PAGES for b in page.blocks]
RUN_KINDS = ("run", "setup-run")


def _of(*kinds: str, langs: tuple[str, ...] | None = None) -> list[rb.Block]:
    return [b for page in PAGES for b in page.of(*kinds, langs=langs)]


PYTHON_BLOCKS = _of(*RUN_KINDS, langs=rb.PYTHON)
SHELL_BLOCKS = _of(*RUN_KINDS, langs=rb.SHELL)
SESSION_TIMEOUT = 900


def _ids(blocks: list[rb.Block]) -> list[str]:
    return [f"{b.page}:L{b.line}" for b in blocks]


def _env(tmp: Path) -> dict[str, str]:
    """The environment blocks run in: this checkout first on the import path, the venv's scripts
    (vf-lite) first on PATH, caches and outputs in the scratch directory, plots off-screen."""
    path = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return {
        **os.environ,
        "PYTHONPATH": path,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "MPLBACKEND": "Agg",
        "VERIFIERS_LITE_CACHE": str(tmp / "responses.sqlite"),
        "PYTHONUNBUFFERED": "1",
    }


@pytest.fixture(scope="module")
def python_session(
    docs_session: tuple[dict[tuple[str, int], dict[str, Any]], Path],
) -> dict[tuple[str, int], dict[str, Any]]:
    """The result of each Python block by its page and line."""
    return docs_session[0]


@pytest.fixture(scope="module")
def docs_session(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[dict[tuple[str, int], dict[str, Any]], Path]:
    """Run every Python block once, in one process (one embedded model server shared by the
    pages that ask for one), a namespace per page, in one scratch directory; the result of each
    block by its page and line, and that directory (what the blocks saved)."""
    pytest.importorskip(
        "llama_cpp", reason="the docs' examples use the embedded model (the 'local' extra)"
    )
    tmp = tmp_path_factory.mktemp("docs-python")
    pages = [
        {
            "path": page.path,
            "blocks": [
                {"line": b.line, "code": b.code, "setup": b.setup}
                for b in page.of(*RUN_KINDS, langs=rb.PYTHON)
            ],
        }
        for page in PAGES
    ]
    (tmp / "blocks.json").write_text(json.dumps(pages))
    results = tmp / "results.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).with_name("doc_runner.py")),
            str(tmp / "blocks.json"),
            str(results),
        ],
        cwd=tmp,
        env=_env(tmp),
        capture_output=True,
        text=True,
        timeout=SESSION_TIMEOUT,
    )
    by_line = (
        {(r["page"], r["line"]): r for r in json.loads(results.read_text())}
        if results.exists()
        else {}
    )
    for r in by_line.values():
        r["output"] = proc.stdout[-4000:] + proc.stderr[-4000:]
    return by_line, tmp


@pytest.mark.parametrize("block", PYTHON_BLOCKS, ids=_ids(PYTHON_BLOCKS))
@pytest.mark.slow
@pytest.mark.local_model
def test_python_block_runs(
    python_session: dict[tuple[str, int], dict[str, Any]], block: rb.Block
) -> None:
    result = python_session.get((block.page, block.line))
    assert result is not None, f"{block.name} never ran (the session died before it)"
    assert result["ok"], (
        f"{block.name} failed:\n{result.get('error')}\n--- session output (tail) ---\n{result['output']}"
    )


@pytest.mark.slow
@pytest.mark.local_model
def test_the_examples_that_build_environments_were_played_perfectly(
    python_session: dict[tuple[str, int], dict[str, Any]],
) -> None:
    checked = [name for r in python_session.values() for name in r["checked"]]
    assert "WordChain" in checked, checked


QUICKSTART = [b for b in PYTHON_BLOCKS if b.page.startswith("docs/tutorial/")]


@pytest.mark.slow
@pytest.mark.local_model
def test_the_quickstart_saves_its_runs_and_compares_two_that_differ_only_by_system_prompt(
    docs_session: tuple[dict[tuple[str, int], dict[str, Any]], Path],
) -> None:
    by_line, tmp = docs_session
    got = [by_line.get((b.page, b.line), {}) for b in QUICKSTART]
    assert QUICKSTART and all(r.get("ok") for r in got), [r.get("error") for r in got]
    runs = {
        name: tmp / "runs" / name
        for name in ("quickstart", "quickstart-brief", "quickstart-rescored")
    }
    meta = {name: json.loads((p / "metadata.json").read_text()) for name, p in runs.items()}
    rows = {
        name: [json.loads(x) for x in (p / "results.jsonl").read_text().splitlines()]
        for name, p in runs.items()
    }
    # evaluate's num_examples counts: 10 of the environment's 20 questions, 4 rollouts each, saved
    assert {len({r["example_id"] for r in rows[n]}) for n in runs} == {10} and {
        len(r) for r in rows.values()
    } == {40}
    a, b = meta["quickstart"], meta["quickstart-brief"]
    systems = [
        {r["prompt"][0]["content"] for r in rows[n]} for n in ("quickstart", "quickstart-brief")
    ]
    assert (
        systems[1] == {"Answer with the number only."}
        and len(systems[0]) == 1
        and systems[0] != systems[1]
    )
    # the two runs differ by the system prompt alone (it is an argument of the environment)
    same = [k for k in a["fingerprint"] if k != "env_args"]
    assert [a["fingerprint"][k] for k in same] == [b["fingerprint"][k] for k in same]
    assert {k: v for k, v in a["env_args"].items() if k != "system_prompt"} == {
        k: v for k, v in b["env_args"].items() if k != "system_prompt"
    }
    import verifiers_lite as vf

    c = vf.compare_runs(runs["quickstart"], runs["quickstart-brief"])
    assert (
        c.labels == ('system "Solve the arithmetic problem…"', 'system "Answer with the number…"')
        and c.shared == 10
    )
    assert meta["quickstart-rescored"]["rescored_from"]["path"] == str(runs["quickstart"].resolve())


@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=_ids(SHELL_BLOCKS))
def test_shell_block_runs(block: rb.Block, tmp_path: Path) -> None:
    proc = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", block.code],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, (
        f"{block.name} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )


OUTPUT_BLOCKS = _of("output")


@pytest.mark.parametrize("block", OUTPUT_BLOCKS, ids=_ids(OUTPUT_BLOCKS))
@pytest.mark.slow
def test_printed_output_has_the_shape_of_a_fresh_run(
    block: rb.Block, tmp_path: Path, fake_server: Any
) -> None:
    if "vf-lite eval" in block.arg and "$FAKE_URL" not in block.arg:
        pytest.importorskip(
            "llama_cpp", reason="the command runs the embedded model (the 'local' extra)"
        )
    env = {**_env(tmp_path), "FAKE_URL": fake_server.base_url}
    proc = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", block.arg],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"`{block.arg}` failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
    shown, fresh = output_shape(block.code), output_shape(proc.stdout)
    fresh = [row for row in fresh if row[0] != "warning" or "warning" in {r[0] for r in shown}]
    assert shown == fresh, (
        f"{block.name} differs from what `{block.arg}` prints now:\n{proc.stdout}"
    )


def output_shape(text: str) -> list[tuple[str, str]]:
    """(label, form of the value) per line, so a fresh run's figures, categories and paths do
    not matter, its lines, labels, order and wording do: signed numbers become N, run
    directories PATH, ``name=count`` or ``name count`` lists (or "none") ``K=N…``, and a table
    row keyed by a number (an example id) one ``<row>``. A ``$ command`` line is the command."""
    rows = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("$ "):
            continue
        if set(line.strip()) == {"-"}:
            rows.append(("<rule>", ""))
            continue
        line = re.sub(r"outputs/evals/\S+", "PATH", line)
        line = re.sub(r"[+-]?\d+(?:[.,]\d+)*", "N", line)
        m = re.match(r"^(\s*\S(?:.*?\S)??)\s{2,}(\S.*)$", line)
        label, value = (m[1], m[2]) if m else (line.rstrip(), "")
        if label.strip() == "N":
            rows.append(("<row>", ""))
            continue
        value = re.sub(r"^(?:none|[\w.-]+[= ]N(?:, [\w.-]+[= ]N)*)$", "K=N…", value)
        rows.append((label, value))
    return rows


MARKED = _of("skip", "synopsis")


@pytest.mark.parametrize("block", MARKED + SHELL_BLOCKS, ids=_ids(MARKED + SHELL_BLOCKS))
def test_vf_lite_command_lines_parse(block: rb.Block, capsys: pytest.CaptureFixture[str]) -> None:
    """Blocks that cannot run here still use only options the command line accepts."""
    if block.kind == "synopsis" or block.lang not in rb.SHELL:
        return
    for argv in rb.vf_lite_commands(block.code):
        try:
            if argv[:1] == ["serve"]:
                build_serve_parser().parse_args(argv[1:])
            else:
                build_parser().parse_args(argv)
        except SystemExit:
            pytest.fail(
                f"{block.name}: `vf-lite {' '.join(argv)}` does not parse:\n{capsys.readouterr().err}"
            )


SYNOPSES = _of("synopsis")


@pytest.mark.parametrize("block", SYNOPSES, ids=_ids(SYNOPSES))
def test_synopsis_names_only_real_commands_and_options(block: rb.Block) -> None:
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices  # type: ignore[union-attr]
    for command, text in synopsis_commands(block.code):
        if command == "serve":
            known = {o for a in build_serve_parser()._actions for o in a.option_strings}
        else:
            assert command in commands, f"{block.name}: `vf-lite {command}` is no command"
            known = {o for a in commands[command]._actions for o in a.option_strings}
        named = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", text))
        assert named <= known, f"{block.name}: `vf-lite {command}` has no {sorted(named - known)}"


def synopsis_commands(code: str) -> list[tuple[str, str]]:
    """(subcommand, its synopsis text without comments) per ``vf-lite`` line and its
    indented continuation lines."""
    out: list[tuple[str, str]] = []
    for line in code.splitlines():
        text = line.split(" #")[0]
        if text.startswith("vf-lite "):
            out.append((text.split()[1], text))
        elif text.strip() and out:
            out[-1] = (out[-1][0], out[-1][1] + " " + text)
    return out


def test_every_block_runs_or_is_marked() -> None:
    unrunnable = [
        b.name for b in BLOCKS if b.kind in RUN_KINDS and b.lang not in rb.PYTHON + rb.SHELL
    ]
    assert not unrunnable, (
        f"blocks neither Python nor shell and unmarked: {unrunnable}; mark them "
        "<!-- readme: output of `CMD` -->, synopsis or skip (REASON)"
    )
    unexplained = [b.name for b in BLOCKS if b.kind == "skip" and len(b.arg) < 8]
    assert not unexplained, f"skipped blocks must say why: {unexplained}"
    assert (
        PYTHON_BLOCKS and OUTPUT_BLOCKS and SYNOPSES
    )  # the docs have each kind: the parser found them
    assert len(PAGES) > 1 and all(page.blocks for page in PAGES if "/tutorial/" in page.path)


def test_output_shape_ignores_figures_and_paths_but_not_lines_or_labels() -> None:
    shown = (
        "rollouts              40 (10 examples x 4)\nreward                0.600 ± 0.078\n"
        "stop reasons          stop 39, length 1\nresults               outputs/evals/a--m/20261201-023147\n"
    )
    rerun = (
        "rollouts              8 (2 examples x 4)\nreward                1.000 ± 0.000\n"
        "stop reasons          stop 8\nresults               outputs/evals/a--m/20261202-101010-1\n"
    )
    assert output_shape(shown) == output_shape(rerun)
    assert output_shape(shown) != output_shape(
        rerun.replace("stop reasons", "stops")
    )  # a label renamed
    assert output_shape(shown) != output_shape("\n".join(rerun.splitlines()[:3]))  # a line gone
    assert output_shape(shown) != output_shape(
        rerun.replace("± 0.000", "± 0.000  95% CI [1.000, 1.000]")
    )
