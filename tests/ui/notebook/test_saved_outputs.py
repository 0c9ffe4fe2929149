"""A notebook's outputs as saved and read later, executed in a real kernel (nbclient) and opened
in Debian's Chromium at 1300 px: the token-limit warning once per cell, a readable reward
histogram (axes, ticks, counts), ``vf.compare`` within the window, ``out.view()`` leaving a
static snapshot (no iframe onto a dead server), the interrupt note broken between words.
Measured in the DOM; with ``VF_TEST_ARTIFACTS`` set, each cell's picture is kept there."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest

from tests.helpers.browser import CHROMIUM, NO_CHROMIUM
from tests.ui.notebook.helpers import RecordingClient

pytestmark = pytest.mark.slow
WIDTH = 1300
WARNING = "stopped at the token limit"
QUESTIONS = [("What is 2 + 2?", "4"), ("What is 1 + 3?", "4"), ("What is 3 + 3?", "6")]
PATH = "outputs/evals/word_chain_game--SmolLM2-135M-Instruct/20261201-021500"

CELLS = [
    "import verifiers_lite as vf\n"
    f"env = vf.SingleTurnEnv(dataset=[{{'question': q, 'answer': a}} for q, a in {QUESTIONS!r}],\n"
    "                        rubric=vf.Rubric([lambda completion, answer: float(answer in "
    "completion[-1]['content'])]))\n"
    "cut = vf.ScriptedClient({'content': 'It is \\\\boxed{4}', 'finish_reason': 'length'})",
    "out = env.evaluate_sync(cut, 'tiny-model', rollouts_per_example=4)\nout",
    "out",
    "runs = {'T=0.2': out, 'T=1.0': env.evaluate_sync(vf.ScriptedClient('\\\\boxed{6}'), 'tiny-model', "
    "rollouts_per_example=4, sampling_args={'temperature': 1.0}, progress=False)}\nvf.compare(runs)",
    "vf.plot_rewards(runs);",
    "vf.plot_pass_at_k({'T=0.2': out, 'again': out});",
    "out.view()",
    "from verifiers_lite._util.interrupt import RunInterrupted, interrupt_note\n"
    f"raise RunInterrupted(interrupt_note(12, 40, 12, {PATH!r}))",
]
RUN, AGAIN, COMPARE, REWARDS, PASS_AT_K, VIEW, INTERRUPT = range(1, 8)


@pytest.fixture(scope="module")
def saved(jupyter_kernel, tmp_path_factory) -> nbformat.NotebookNode:
    """The notebook executed (its kernel, and the viewer server in it, gone), read back from disk."""
    work = tmp_path_factory.mktemp("saved-outputs")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    client = RecordingClient(
        nb,
        kernel_name=jupyter_kernel,
        store_widget_state=True,
        timeout=300,
        allow_errors=True,
        resources={"metadata": {"path": str(work)}},
    )
    client.execute()
    nbformat.write(nb, work / "saved.ipynb")
    return nbformat.read(work / "saved.ipynb", as_version=4)


def shown(output: dict) -> str:
    """What a reader sees of one output: its HTML, else its text."""
    data = output.get("data", {})
    return "".join(data.get("text/html") or data.get("text/plain") or output.get("text") or "")


def test_the_length_warning_appears_once_per_cell(saved):
    run_cell = [shown(o) for o in saved.cells[RUN].outputs]
    assert sum(text.count(WARNING) for text in run_cell) == 1, (
        run_cell
    )  # the run's frame, not again below
    assert len(run_cell) == 2  # the run's final frame and the returned results
    assert (
        sum(shown(o).count(WARNING) for o in saved.cells[AGAIN].outputs) == 1
    )  # shown again later


def test_a_saved_view_holds_a_snapshot_and_no_iframe(saved):
    html = "".join(shown(o) for o in saved.cells[VIEW].outputs)
    assert "<iframe" not in html.lower()
    assert "vf-view-snapshot" in html and "12 rollouts" in html
    assert (
        f"mean reward <b>{2 / 3:.3f}</b>" in html
    )  # 2 of 3 questions have answer 4, the only reply


def test_the_interrupt_note_is_broken_between_words(saved):
    (err,) = [o for o in saved.cells[INTERRUPT].outputs if o.output_type == "error"]
    lines = err.traceback
    assert " ".join(lines).startswith("KeyboardInterrupt: run stopped; 12 of 40 rollouts are saved")
    assert all(len(x) <= 88 or " " not in x for x in lines) and repr(PATH) in " ".join(lines)


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_saved_outputs_read_well_in_chromium(saved, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(saved)
    page_file = tmp_path / "saved.html"
    page_file.write_text(body, encoding="utf-8")
    keep = Path(os.environ["VF_TEST_ARTIFACTS"]) if os.environ.get("VF_TEST_ARTIFACTS") else None
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        pg = browser.new_page(viewport={"width": WIDTH, "height": 900})
        pg.goto(page_file.as_uri())
        cells = pg.locator(".jp-Cell")

        def picture(i: int, name: str) -> None:
            if keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
                cells.nth(i).screenshot(path=str(keep / f"notebook-saved-{name}.png"))

        # The reward histogram of the run's frame: an axis of ticks and counts, not a sliver.
        hist = cells.nth(RUN).locator(".vf-hist")
        bars = hist.locator(".vf-bars").bounding_box()
        assert bars["height"] >= 80 and bars["width"] >= 300, bars
        assert hist.locator(".vf-xtick").all_inner_texts() == ["0", "0.25", "0.5", "0.75", "1"]
        assert hist.locator(".vf-yaxis span").all_inner_texts() == [
            "8",
            "0",
        ]  # 8 of 12 rollouts scored 1
        assert hist.locator(".vf-bin span").all_inner_texts() == ["4"] + [""] * 8 + ["8"]
        assert "reward" in hist.inner_text()
        picture(RUN, "run")
        # vf.compare fits the window
        table = cells.nth(COMPARE).locator("table").bounding_box()
        assert table["x"] + table["width"] <= WIDTH, table
        picture(COMPARE, "compare")
        picture(REWARDS, "plot-rewards")
        picture(PASS_AT_K, "plot-pass-at-k")
        # out.view(): the probe found no server, so no frame was added; the snapshot reads on
        view = cells.nth(VIEW).locator(".vf-view")
        view.and_(pg.locator("[data-live='0']")).wait_for(state="attached")
        assert pg.locator("iframe").count() == 0 and "12 rollouts" in view.inner_text()
        picture(VIEW, "view")
        # The interrupt note: as many rendered lines as it has lines (none broken again mid-word)
        note = cells.nth(INTERRUPT).locator(".jp-OutputArea-output pre").first
        height, line = note.evaluate(
            "e => [e.getBoundingClientRect().height, parseFloat(getComputedStyle(e).lineHeight)]"
        )
        n_lines = len(
            [o for o in saved.cells[INTERRUPT].outputs if o.output_type == "error"][0].traceback
        )
        assert round(height / line) == n_lines, (height, line, n_lines)
        picture(INTERRUPT, "interrupt")
        browser.close()
