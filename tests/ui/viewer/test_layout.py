"""The viewer's pages as a reader sees them in a 1300 px Chromium window, measured in the DOM:
the rollouts table fits the window (and the nav bar spans it), an answer column, integer metrics
as integers, each rollout's own time, rubric and system prompt on the run page, separated links,
a picker with headers, completions across the compare columns, no dead Compare link in a one-run
HTML file. The runs are scripted, so every expected figure is known without the library.
Screenshots go to $VF_TEST_ARTIFACTS (default tests/ui/viewer/artifacts/) as viewer-layout-*.png."""

from __future__ import annotations

import asyncio
import re
import urllib.parse
from collections import defaultdict
from typing import Any

import pytest

import verifiers_lite as vf
from tests.helpers.browser import CHROMIUM, NO_CHROMIUM, NO_PLAYWRIGHT
from tests.ui.viewer.viewer_proc import ViewerProcess
from verifiers_lite.results.store import read_rows

pytestmark = pytest.mark.slow
sync_api = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT)
if CHROMIUM is None:
    pytest.skip(NO_CHROMIUM, allow_module_level=True)

WIDTH = 1300
SLOW_S = 1.5
SYSTEM = (
    "You are a careful assistant. Think step by step, then give the final answer as \\boxed{N}."
)
QUESTIONS = [
    (f"What is {i + 3} + {2 * i + 1}? Explain the steps.", i + 3 + 2 * i + 1) for i in range(4)
]


def correct(completion, answer) -> float:
    return 1.0 if vf.extract_boxed_answer(completion[-1]["content"] or "") == answer else 0.0


def num_words(completion) -> int:
    return len((completion[-1]["content"] or "").split())


def _reply(wrong_every: int):
    calls: dict[str, int] = defaultdict(int)

    async def reply(messages):
        q = messages[-1]["content"]
        calls[q] += 1
        if calls[q] == 1:
            await asyncio.sleep(
                SLOW_S
            )  # one slow rollout per group: its own time differs from the group's
        a, b = map(int, re.findall(r"What is (\d+) \+ (\d+)", q)[0])
        total = a + b + (1 if calls[q] % wrong_every == 0 else 0)
        return (
            f"First I take {a}, then I add {b} to it, counting up one at a time, which gives {total}. "
            f"Checking the other way round gives {total} as well. The final answer is \\boxed{{{total}}}."
        )

    return reply


@pytest.fixture(scope="module")
def reading(tmp_path_factory) -> dict[str, Any]:
    """Two runs of one environment at two temperatures, under one folder, and a viewer on it."""
    root = tmp_path_factory.mktemp("reading")
    env = vf.SingleTurnEnv(
        dataset=[{"question": q, "answer": str(a)} for q, a in QUESTIONS],
        system_prompt=SYSTEM,
        rubric=vf.Rubric([correct, num_words], weights=[1.0, 0.0]),
    )
    outs = {}
    for t, wrong in ((0.2, 3), (1.0, 2)):
        outs[t] = env.evaluate_sync(
            vf.ScriptedClient(_reply(wrong)),
            "tiny-model",
            rollouts_per_example=3,
            sampling_args={"temperature": t},
            results_path=str(root / f"T{t}"),
            progress=False,
        )
    with ViewerProcess(str(root)) as viewer:
        yield {
            "root": root,
            "outputs": outs,
            "viewer": viewer,
            "disk": {t: read_rows(root / f"T{t}" / "results.jsonl") for t in outs},
        }


@pytest.fixture
def page(browser):
    # The page's own Content-Security-Policy stays on: nothing here may need an exception to it.
    ctx = browser.new_context(viewport={"width": WIDTH, "height": 900})
    pg = ctx.new_page()
    pg.set_default_timeout(30_000)
    pg.errors = []  # type: ignore[attr-defined]
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))  # type: ignore[attr-defined]
    yield pg
    assert pg.errors == []  # type: ignore[attr-defined]
    ctx.close()


def box(pg, selector: str) -> dict[str, float]:
    return pg.eval_on_selector(
        selector,
        "e => { const r = e.getBoundingClientRect(); "
        "return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height}; }",
    )


def column(pg, table: str, header: str) -> list[str]:
    """The cell texts under ``header`` in ``table``."""
    return pg.evaluate(
        """([table, header]) => {
        const t = document.querySelector(table);
        const i = [...t.querySelectorAll("thead th")]
            .findIndex(th => th.textContent.replace(/[▲▼]/g, "").trim() === header);
        if (i < 0) return null;
        return [...t.querySelectorAll("tbody tr")].map(tr => tr.children[i].textContent.trim());
    }""",
        [table, header],
    )


def test_rollouts_table_fits_the_window_with_answer_integers_and_own_time(
    reading, page, artifacts_dir
):
    pg, v = page, reading["viewer"]
    pg.goto(v.url + "#/runs/T0.2/rollouts?sort=example_id")
    pg.wait_for_selector("table#rows tbody tr")
    shot = artifacts_dir / "viewer-layout-rollouts.png"
    pg.screenshot(path=str(shot), full_page=True)
    table, nav = box(pg, "table#rows"), box(pg, "header.top")
    assert table["right"] <= WIDTH, f"the rollouts table overflows a {WIDTH} px window: {table}"
    assert pg.evaluate("document.documentElement.scrollWidth") <= WIDTH  # no sideways scrolling
    assert nav["left"] == 0 and nav["right"] >= table["right"]  # the nav bar spans the content
    disk = sorted(reading["disk"][0.2], key=lambda r: (r["example_id"], r["rollout_index"]))
    answers = {str(i): str(a) for i, (_, a) in enumerate(QUESTIONS)}
    assert column(pg, "table#rows", "answer") == [answers[str(r["example_id"])] for r in disk]
    words = [
        str(len(r["completion"][-1]["content"].split())) for r in disk
    ]  # counted here, by hand
    assert column(pg, "table#rows", "num_words") == words  # 38, not 38.000
    shown_ms = [int(x) for x in column(pg, "table#rows", "ms")]
    for eid in {r["example_id"] for r in disk}:
        group = [(ms, r) for ms, r in zip(shown_ms, disk, strict=True) if r["example_id"] == eid]
        slow = [ms for ms, _ in group if ms >= SLOW_S * 1000]
        assert len(slow) == 1, (
            group
        )  # the one rollout that waited; the group's time would show on all
        assert all(r["timing"]["total_ms"] >= SLOW_S * 1000 for _, r in group)


def test_run_page_shows_rubric_and_system_prompt(reading, page, artifacts_dir):
    pg = page
    pg.goto(reading["viewer"].url + "#/runs/T0.2")
    pg.wait_for_selector("#reward-mean")
    pg.screenshot(path=str(artifacts_dir / "viewer-layout-run.png"), full_page=True)
    rubric = pg.eval_on_selector_all(
        "table#rubric tbody tr",
        "trs => trs.map(tr => [...tr.children].map(td => td.textContent.trim()))",
    )
    assert rubric == [["correct", "1"], ["num_words", "0"]]
    assert pg.inner_text("#system-prompt").strip() == SYSTEM
    means = dict(
        pg.eval_on_selector_all(
            "h3:has-text('Metrics') + table.kv tr",
            "trs => trs.map(tr => [tr.children[0].textContent, tr.children[1].textContent])",
        )
    )
    words = {len(r["completion"][-1]["content"].split()) for r in reading["disk"][0.2]}
    assert words == {int(means["num_words"])}, (
        means
    )  # every completion as long: the count, as an integer
    assert pg.locator("table.kv:has-text('mean time / rollout')").count() == 1


def test_transcript_answer_beside_reward_and_separate_links(reading, page, artifacts_dir):
    pg = page
    pg.goto(reading["viewer"].url + "#/runs/T0.2/rows/1/1")
    pg.wait_for_selector("#transcript")
    pg.screenshot(path=str(artifacts_dir / "viewer-layout-transcript.png"), full_page=True)
    reward_row = pg.locator("#transcript table.kv tr", has_text="reward").first.inner_text()
    assert f"answer {QUESTIONS[1][1]}" in " ".join(reward_row.split())
    links = pg.eval_on_selector_all(
        "#rollout-links a",
        "as => as.map(a => { const r = a.getBoundingClientRect(); return [r.left, r.right]; })",
    )
    assert len(links) == 3
    gaps = [b[0] - a[1] for a, b in zip(links, links[1:], strict=False)]
    assert min(gaps) >= 12, f"links run together: gaps {gaps} px"
    assert "rollout " in pg.inner_text("#transcript table.kv")  # the rollout's own time


def test_compare_picker_has_headers_and_completions_span_their_columns(
    reading, page, artifacts_dir
):
    pg = page
    pg.goto(reading["viewer"].url + "#/compare")
    pg.wait_for_selector("table#compare-picker tbody tr")
    pg.screenshot(path=str(artifacts_dir / "viewer-layout-compare-picker.png"), full_page=True)
    heads = pg.eval_on_selector_all(
        "table#compare-picker thead th", "ths => ths.map(th => th.textContent)"
    )
    assert {"run", "env", "model", "mean reward ± stderr"} <= set(heads)

    q = urllib.parse.urlencode([("runs", "T0.2"), ("runs", "T1.0"), ("example", "0")])
    pg.goto(reading["viewer"].url + "#/compare?" + q)
    pg.locator(".compare-col .compare-rollout").nth(5).wait_for()  # 3 rollouts in each of 2 runs
    assert pg.locator(".compare-col .compare-rollout").count() == 6
    pg.screenshot(path=str(artifacts_dir / "viewer-layout-compare.png"), full_page=True)
    assert pg.locator(".compare-col table").count() == 0  # no metric tables between the completions
    cols = pg.eval_on_selector_all(
        ".compare-col", "cs => cs.map(c => c.getBoundingClientRect().width)"
    )
    assert len(cols) == 2 and min(cols) >= 0.4 * WIDTH  # side by side, each near half the window
    for r in pg.eval_on_selector_all(
        ".compare-rollout",
        """rs => rs.map(r => {
            const msg = r.querySelector('.msg.assistant'), facts = r.querySelector('.facts');
            return {card: r.getBoundingClientRect().width, msg: msg.getBoundingClientRect().width,
                    facts: facts.getBoundingClientRect().height,
                    font: parseFloat(getComputedStyle(msg.querySelector('.content')).fontSize)}; })""",
    ):
        assert r["msg"] >= 0.97 * r["card"] and r["facts"] <= 48 and r["font"] >= 13, r
    assert pg.inner_text("#compare-answer") == str(QUESTIONS[0][1])


def test_one_run_html_file_has_no_dead_compare_link(reading, page, tmp_path, artifacts_dir):
    path = reading["outputs"][0.2].to_html(tmp_path / "one.html")
    pg = page
    pg.goto(path.as_uri())
    pg.wait_for_selector("#reward-mean")
    assert pg.locator("a[href='#/compare']").count() == 0
    pg.goto(path.as_uri() + "#/compare")  # typed by hand: says why, not an error
    pg.wait_for_selector("text=nothing to compare")
    assert pg.locator(".errbox").count() == 0
    pg.screenshot(path=str(artifacts_dir / "viewer-layout-html-compare.png"), full_page=True)
