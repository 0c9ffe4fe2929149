"""The committed notebooks carry outputs made from their current sources by the embedded model
(``python notebooks/build_notebooks.py --execute`` regenerates them)."""

from __future__ import annotations

import nbformat
import pytest

from tests.helpers.notebooks import notebook_script
from tests.ui.notebook.helpers import NOTEBOOKS

build_notebooks = notebook_script("build_notebooks")

REGEN = "run `python notebooks/build_notebooks.py --execute {name}` and commit the result"
NAMES = list(build_notebooks.NOTEBOOKS)


@pytest.fixture(params=NAMES)
def committed(request):
    name = request.param
    return name, nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


def test_sources_match_the_build_script(committed):
    name, nb = committed
    built = build_notebooks.build(name)
    assert [(c.cell_type, c.source) for c in nb.cells] == [
        (c.cell_type, c.source) for c in built.cells
    ], REGEN.format(name=name)


def test_outputs_were_made_from_these_sources_by_the_embedded_model(committed):
    name, nb = committed
    stamp = nb.metadata.get(build_notebooks.STAMP)
    assert stamp, f"{name} is committed without outputs: " + REGEN.format(name=name)
    assert stamp["sources_sha256"] == build_notebooks.sources_hash(nb), (
        f"{name}'s outputs are older than its sources: " + REGEN.format(name=name)
    )
    assert "SmolLM2" in stamp["backend"]


def test_every_code_cell_ran_cleanly_and_reads_without_javascript(committed):
    name, nb = committed
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), f"{name}: a cell was not executed"
    counts = [c.execution_count for c in code]
    assert counts == sorted(counts) and len(set(counts)) == len(counts)  # top to bottom, one run
    outputs = [o for c in code for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    # The live widgets were replaced by static frames: nothing needs a widget manager to show.
    assert not [
        o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    frames = [
        o["data"]["text/html"]
        for o in outputs
        if "vf-progress" in o.get("data", {}).get("text/html", "")
    ]
    evals = sum(c.source.count("evaluate_sync(client") for c in code)
    assert len(frames) >= evals > 0
    assert all("stop reasons:" in f and "mean reward" in f for f in frames)
    assert [o for o in outputs if "image/png" in o.get("data", {})], f"{name}: no plots"
