"""The viewer in headless Chromium says what its figures mean: a re-scored run is marked and
links to the run it came from; runs that differ by system prompt are labelled by it; undefined
intervals and power are named so, with the reason; a rollout's time is split by name; an
environment's own state keys show in the transcript; rows come in example order; the reward
histogram stands on a numeric axis; the page URLs the docs document exist."""

from __future__ import annotations

import asyncio
import re
import urllib.parse

import pytest

import verifiers_lite as vf
from tests.helpers.paths import DOCS
from tests.ui.viewer.viewer_proc import ViewerProcess

pytestmark = pytest.mark.slow
REWARDS = {0: 0.0, 1: 7 / 6, 2: 1.25, 3: 1.5}  # shown 0.00, 1.17, 1.25, 1.50
VIEWER_GUIDE = DOCS / "guides" / "viewer.md"


class Tries(vf.MultiTurnEnv):
    """Two turns; the environment counts the tries on the State under a key of its own."""

    async def env_response(self, messages, state):
        state["tries"] = state.get("tries", 0) + 1
        return [{"role": "user", "content": "try again"}]


def by_example(example_id) -> float:
    return REWARDS[example_id]


async def late_for_low_examples(messages) -> str:
    n = int(messages[0]["content"].split()[1])
    await asyncio.sleep(0.03 * (4 - n))  # low examples finish last: the file holds them last
    return "42"


def never_right(completion) -> float:
    return 0.0


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("trust-runs")
    tries = Tries(
        dataset=[{"question": f"question {i}", "answer": "42"} for i in range(4)],
        rubric=vf.Rubric([by_example]),
        max_turns=2,
        env_id="tries",
    )
    tries.evaluate_sync(
        vf.ScriptedClient(late_for_low_examples),
        "scripted",
        rollouts_per_example=2,
        results_path=str(root / "tries"),
        progress=False,
    )
    vf.rescore(root / "tries", vf.Rubric([never_right]))  # -> root/tries-rescored
    questions = [{"question": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(3)]
    for name, system in (("zero-plain", None), ("zero-system", "Answer with the number only.")):
        env = vf.SingleTurnEnv(
            dataset=questions, rubric=vf.Rubric([never_right]), system_prompt=system, env_id="zeros"
        )
        env.evaluate_sync(
            vf.ScriptedClient("no"),
            "scripted",
            rollouts_per_example=2,
            results_path=str(root / name),
            progress=False,
        )
    one = vf.SingleTurnEnv(dataset=questions[:1], rubric=vf.Rubric([never_right]), env_id="zeros")
    one.evaluate_sync(
        vf.ScriptedClient("no"),
        "scripted",
        rollouts_per_example=3,
        results_path=str(root / "one"),
        progress=False,
    )
    return root


@pytest.fixture(scope="module")
def viewer(root):
    with ViewerProcess(str(root)) as v:
        yield v


def _run_page(pg, viewer, run_id: str) -> None:
    pg.goto(f"{viewer.url}#/runs/{urllib.parse.quote(run_id)}")
    pg.wait_for_selector("#reward-mean")


def test_a_rescored_run_is_marked_and_links_to_its_source(viewer, page):
    pg = page
    pg.goto(viewer.url)
    pg.wait_for_selector("table#runs tbody tr")
    marked = [
        pg.locator(f"tr[data-run='{r}'] .badge.rescored").count()
        for r in ("tries", "tries-rescored")
    ]
    assert marked == [0, 1]
    _run_page(pg, viewer, "tries-rescored")
    assert pg.locator("h2 .badge.rescored").count() == 1
    pg.click("#rescored-from")
    # the source's own page: no re-scored badge, no "re-scored from" (waited for: the page re-renders)
    pg.wait_for_function(
        "location.hash === '#/runs/tries' && !!document.querySelector('#reward-mean') && "
        "!document.querySelector('h2 .badge.rescored')"
    )
    assert "re-scored from" not in pg.inner_text("main") and "tries · scripted" in pg.inner_text(
        "h2"
    )
    assert pg.errors == []  # type: ignore[attr-defined]


def test_compare_names_the_system_prompt_and_says_undefined(viewer, page):
    pg = page
    pg.goto(f"{viewer.url}#/compare?runs=zero-plain&runs=zero-system")
    pg.wait_for_selector("#compare-paired")
    labels = pg.locator("#compare-runs tr td:nth-child(2)").all_inner_texts()
    assert labels == ["no system prompt", 'system "Answer with the number…"']
    paired = pg.inner_text("#compare-paired")
    assert paired.count("undefined: no variance in either run") == 3, (
        paired
    )  # difference, p-value, detectable
    assert "0.000 (" not in paired.replace("+", "")
    assert "95% CI undefined: no variance, every example's mean is 0.000" in pg.inner_text(
        "#compare-runs"
    )
    _run_page(pg, viewer, "one")
    assert "95% CI undefined: one example" in pg.inner_text("#reward-mean")
    pg.goto(viewer.url)
    pg.wait_for_selector("tr[data-run='one']")
    assert "95% CI undefined: one example" in pg.inner_text("tr[data-run='one']")
    assert pg.errors == []  # type: ignore[attr-defined]


def test_time_is_split_by_name_and_the_environment_state_is_shown(viewer, page):
    pg = page
    _run_page(pg, viewer, "tries")
    timing = pg.inner_text("#mean-timing")
    for name in (
        "waiting for a request slot",
        "in the model request",
        "in the environment",
        "waiting for its group",
        "scoring",
    ):
        assert name in timing, timing
    pg.goto(f"{viewer.url}#/runs/tries/rows/2/1")
    pg.wait_for_selector("#transcript")
    assert "in the model request" in pg.inner_text("#row-timing")
    env_state = pg.inner_text("#env-state")
    assert re.search(r"tries\s+1", env_state), (
        env_state
    )  # one environment turn between two model turns


def test_rollouts_in_example_order_and_the_histogram_on_a_numeric_axis(viewer, page):
    pg = page
    pg.goto(f"{viewer.url}#/runs/tries/rollouts")
    pg.wait_for_selector("table#rows tbody tr")
    ids = [int(t) for t in pg.locator("table#rows tbody tr td:first-child").all_inner_texts()]
    assert ids == sorted(ids) == [0, 0, 1, 1, 2, 2, 3, 3]
    _run_page(pg, viewer, "tries")
    centers = {}
    for col in pg.locator("#reward-hist .col").all():
        box = col.bounding_box()
        centers[float(col.get_attribute("data-value"))] = box["x"] + box["width"] / 2
    values = sorted(centers)
    assert values == pytest.approx(sorted(REWARDS.values()))
    span = centers[values[-1]] - centers[values[0]]
    for v in values:  # each bar stands where its value lies on the axis, not at an even step
        assert (centers[v] - centers[values[0]]) / span == pytest.approx(
            (v - values[0]) / (values[-1] - values[0]), abs=0.02
        )
    ticks = pg.locator("#reward-hist .tick").all_inner_texts()
    assert ticks == ["0.00", "1.17", "1.25", "1.50"]


def test_the_page_urls_the_docs_document_exist(viewer, page):
    text = VIEWER_GUIDE.read_text(encoding="utf-8")
    for url in ("#/runs/ID", "#/runs/ID/rollouts", "#/runs/ID/rows/E/R", "#/compare?runs=A&runs=B"):
        assert f"`{url}`" in text, url
    pg = page
    for url, selector in (
        ("#/runs/tries", "#reward-mean"),
        ("#/runs/tries/rollouts", "table#rows tbody tr"),
        ("#/runs/tries/rows/0/1", "#transcript"),
        ("#/compare?runs=zero-plain&runs=zero-system", "#compare-paired"),
    ):
        pg.goto(viewer.url + url)
        pg.wait_for_selector(selector)
        assert "No such page" not in pg.inner_text("main")
