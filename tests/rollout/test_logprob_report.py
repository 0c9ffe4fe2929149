"""logprob_report: statistics against hand-computed values; a real transformers scorer in .venv-vllm."""

from __future__ import annotations

import importlib.util
import math

import pytest

from verifiers_lite.rollout import IGNORE_INDEX, logprob_report

X = IGNORE_INDEX


def test_report_statistics_by_hand() -> None:
    batch = {
        "input_ids": [[5, 6, 7, 8, 0], [5, 9, 0, 0, 0]],
        "labels": [[X, X, 7, 8, X], [X, 9, X, X, X]],
        "logprobs": [[0.0, 0.0, -1.0, -0.5, 0.0], [0.0, -2.0, 0.0, 0.0, 0.0]],
        "lengths": [4, 2],
    }
    trainer = {7: -1.1, 8: -0.5, 9: -1.5}  # log p of each sampled id under the "trainer"
    seen: list[list[int]] = []

    def scorer(ids: list[int]) -> list[float]:
        seen.append(ids)
        return [0.0] + [trainer.get(t, -3.0) for t in ids[1:]]

    rep = logprob_report(batch, scorer, name="toy")
    assert seen == [[5, 6, 7, 8], [5, 9]]  # padding never reaches the scorer
    assert rep.sampler_logprobs == [-1.0, -0.5, -2.0]
    assert rep.trainer_logprobs == [-1.1, -0.5, -1.5]
    st = rep.stats()
    d = [-0.1, 0.0, 0.5]  # trainer - sampler
    r = [math.exp(x) for x in d]
    assert st["tokens"] == 3 and st["sequences"] == 2
    assert st["mean_abs_diff"] == pytest.approx(0.2)
    assert st["max_abs_diff"] == pytest.approx(0.5)
    assert st["kl_k1"] == pytest.approx(-sum(d) / 3)
    assert st["kl_k3"] == pytest.approx(sum(x - 1 - y for x, y in zip(r, d, strict=True)) / 3)
    assert st["ratio_mean"] == pytest.approx(sum(r) / 3)
    assert st["ratio_max"] == pytest.approx(math.exp(0.5))
    assert st["ratio_outside"] == pytest.approx(1 / 3)  # only exp(0.5) = 1.65 is outside
    assert "toy: 3 tokens in 2 sequences" in str(rep)


def test_report_refuses_shifted_batches_and_takes_rows() -> None:
    shifted = {"input_ids": [[1, 2]], "labels": [[2, X]], "logprobs": [[-0.1, 0.0]]}
    with pytest.raises(ValueError, match="unshifted"):
        logprob_report(shifted, lambda ids: [0.0] * len(ids))
    rows = [
        {
            "prompt_ids": [1],
            "completion_ids": [2, 3],
            "completion_mask": [1, 1],
            "completion_logprobs": [-0.2, -0.3],
        }
    ]
    rep = logprob_report(rows, lambda ids: [0.0, -0.2, -0.3])
    assert rep.stats()["max_abs_diff"] == 0.0 and rep.stats()["ratio_outside"] == 0.0


@pytest.mark.vllm
@pytest.mark.skipif(
    importlib.util.find_spec("transformers") is None or importlib.util.find_spec("torch") is None,
    reason="needs transformers + torch (.venv-vllm: .ci/install_vllm.sh)",
)
def test_hf_scorer_matches_a_manual_forward() -> None:
    import torch
    from transformers import AutoModelForCausalLM

    from verifiers_lite.rollout import hf_scorer, smollm2_hf_checkpoint

    path = str(smollm2_hf_checkpoint())
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    ids = [1, 504, 3458, 282, 4649, 314, 216, 34, 30]
    got = hf_scorer(model)(ids)
    # Independent: one position at a time, softmax by hand.
    for i in range(1, len(ids)):
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids[:i]])).logits[0, -1].double()
        want = float(logits[ids[i]] - torch.logsumexp(logits, 0))
        assert got[i] == pytest.approx(want, abs=1e-3)


def test_exports_are_the_functions_whatever_the_import_order() -> None:
    import subprocess
    import sys

    code = (
        "from verifiers_lite.rollout import hf_scorer, logprob_report, LogprobReport\n"
        "assert callable(logprob_report) and logprob_report.__name__ == 'logprob_report'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_plot_draws_one_point_per_token() -> None:
    import matplotlib

    matplotlib.use("Agg")
    rows = [
        {
            "prompt_ids": [1],
            "completion_ids": [2, 3],
            "completion_mask": [1, 1],
            "completion_logprobs": [-0.2, -0.3],
        }
    ]
    rep = logprob_report(rows, lambda ids: [0.0, -0.25, -0.3], name="toy")
    ax = rep.plot()
    (points,) = ax.collections
    assert points.get_offsets().tolist() == [[-0.2, -0.25], [-0.3, -0.3]]
    assert ax.get_title() == "toy"


def test_committed_mismatch_notebook_ran_from_its_current_sources() -> None:
    import nbformat

    from tests.helpers.notebooks import notebook_script
    from tests.helpers.paths import NOTEBOOKS

    builder = notebook_script("build_logprob_notebook")
    nb = nbformat.read(NOTEBOOKS / builder.NAME, as_version=4)
    built = builder.build()
    assert [(c.cell_type, c.source) for c in nb.cells] == [
        (c.cell_type, c.source) for c in built.cells
    ], "run `.venv-vllm/bin/python notebooks/build_logprob_notebook.py --execute`"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code)
    outputs = [o for c in code for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs)
    assert any("tokens in" in o.get("text", "") for o in outputs)
