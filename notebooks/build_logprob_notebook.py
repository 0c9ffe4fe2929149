"""Build (and with ``--execute`` run) ``05_logprob_mismatch.ipynb``: train/inference mismatch.

It needs transformers + torch + llama-cpp-python + ipykernel in one venv, so it runs in
``.venv-vllm`` (not in the main venv the other notebooks use):
    .venv-vllm/bin/python notebooks/build_logprob_notebook.py --execute
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from notebook_cli import build_main

HERE = Path(__file__).parent
NAME = "05_logprob_mismatch.ipynb"

CELLS = [
    new_markdown_cell(
        "# Train/inference logprob mismatch\n\n"
        "An RL trainer weights each sampled token by `exp(logp_trainer - logp_sampler)`. When the "
        "inference engine and the trainer compute different probabilities for the same tokens "
        "(quantisation, kernels, precision) those importance ratios drift from 1. Here the "
        "embedded SmolLM2 samples through llama.cpp (its Q4_1 GGUF) and a Hugging Face "
        "transformers model in float32 on CPU re-scores every sampled token."
    ),
    new_code_cell(
        "import os\n\n"
        "SMALL = os.environ.get('VF_NOTEBOOK_SMALL', '0') == '1'\n"
        "N, MAX_TOKENS = (3, 16) if SMALL else (12, 48)"
    ),
    new_code_cell(
        "from verifiers_lite.rollout import (LlamaCppSampler, MultiTurnRollout, SamplingParams,\n"
        "                                   Template, hf_scorer, logprob_report,\n"
        "                                   smollm2_hf_checkpoint)\n"
        "from verifiers_lite.rollout.samplers.llama_cpp import load_llama\n\n"
        "llama = load_llama(n_ctx=1024, n_threads=1)\n"
        "sampler, template = LlamaCppSampler(llama), Template.from_llama(llama)\n"
        "from transformers.utils import logging as hf_logging\n\n"
        "hf_logging.disable_progress_bar()\n"
        "trainer = hf_scorer(str(smollm2_hf_checkpoint()))   # transformers, float32, CPU"
    ),
    new_code_cell(
        "questions = [f'What is {3 * i + 2} + {7 * i + 1}? Explain briefly.' for i in range(N)]\n"
        "rows = [\n"
        "    MultiTurnRollout(sampler, template, sampling_params=SamplingParams(\n"
        "        temperature=1.0, max_tokens=MAX_TOKENS, seed=i, logprobs=0))(\n"
        "        [[{'role': 'user', 'content': q}]])[0]\n"
        "    for i, q in enumerate(questions)\n"
        "]\n"
        "report = logprob_report(rows, trainer, name='llama.cpp Q4_1 vs transformers fp32')\n"
        "print(report)\n"
        "report.stats()"
    ),
    new_markdown_cell(
        "Left: each sampled token's logprob under the sampler vs the trainer (the diagonal is "
        "agreement). Right: the per-token importance ratios, with the [0.8, 1.25] band RL "
        "papers on training/inference mismatch use."
    ),
    new_code_cell(
        "import matplotlib.pyplot as plt\n"
        "import numpy as np\n\n"
        "fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))\n"
        "report.plot(ax=a)\n"
        "ratios = np.exp(np.array(report.trainer_logprobs) - np.array(report.sampler_logprobs))\n"
        "b.hist(ratios, bins=40)\n"
        "for x in report.ratio_bounds:\n"
        "    b.axvline(x, color='grey', ls='--', lw=0.8)\n"
        "b.set_xlabel('importance ratio exp(trainer - sampler)')\n"
        "b.set_ylabel('tokens')\n"
        "fig.tight_layout()"
    ),
]


def build() -> nbformat.NotebookNode:
    nb = new_notebook(cells=[nbformat.from_dict(dict(c)) for c in CELLS])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


def main() -> None:
    build_main(build, HERE / NAME, __doc__.split("\n")[0], timeout=1800)


if __name__ == "__main__":
    main()
