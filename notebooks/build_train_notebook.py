"""Build (and with ``--execute`` run) ``06_train_grpo.ipynb``: GRPO with TRL on CPU.

It needs torch, transformers and trl, so it runs in ``.venv-vllm``:
    .venv-vllm/bin/python notebooks/build_train_notebook.py --execute
The training itself is ``benchmarks/train_grpo.py``'s ``run()``: a finished run directory
(``outputs/train_grpo``) is read back, otherwise the notebook trains (about 20 min on 2 cores).
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from notebook_cli import build_main

HERE = Path(__file__).parent
NAME = "06_train_grpo.ipynb"

CELLS = [
    new_markdown_cell(
        "# GRPO on a laptop CPU: TRL trained on the library's own rollouts\n\n"
        "SmolLM2-135M-Instruct (the embedded model, as a Hugging Face checkpoint) is trained with "
        "TRL's `GRPOTrainer` on the bundled `arithmetic` environment (two-digit additions). "
        "`vf.grpo_trainer` hands TRL the environment's rollouts through TRL's `rollout_func`: "
        "token ids and sampler logprobs verbatim, the rubric as the reward. The policy samples "
        "its own rollouts with its current weights (`TransformersSampler`), so the rollouts are "
        "on-policy and the importance ratios should sit at 1.\n\n"
        "Held-out questions (another seed than the training ones) are evaluated before and after "
        "training through `evaluate()`, and compared paired over examples with `vf.compare_runs`."
    ),
    new_code_cell(
        "import sys\n"
        "from pathlib import Path\n\n"
        "sys.path.insert(0, '../benchmarks')\n"
        "from train_grpo import run   # trains once; a finished run directory is read back\n\n"
        "OUT = Path('../outputs/train_grpo')\n"
        "s = run(OUT)\n"
        "w = s['wall_s']\n"
        "print(f\"{s['steps']} GRPO steps x {s['rollouts_per_step']} rollouts, lr {s['learning_rate']}\")\n"
        "print(f\"wall {w['total'] / 60:.1f} min (training {w['train'] / 60:.1f}, evaluation {w['eval'] / 60:.1f}) \"\n"
        "      f\"on {s['cpu_count']} cores, load average at the end {s['load_avg_end']}\")"
    ),
    new_markdown_cell("## Held-out reward, before vs after (paired over examples)"),
    new_code_cell(
        "import verifiers_lite as vf\n\n"
        "cmp = vf.compare_runs(OUT / 'eval_base', OUT / 'eval_grpo', labels=('base', 'grpo'))\n"
        "lo, hi = cmp.ci\n"
        "print(f'{cmp.mean_a:.3f} -> {cmp.mean_b:.3f}: difference {cmp.diff:+.3f}, '\n"
        "      f'95% interval [{lo:+.3f}, {hi:+.3f}], p = {cmp.p_value:.3g}')\n"
        "print('significant increase' if lo > 0 else 'significant DECREASE: training made it worse' if hi < 0\n"
        "      else 'not significant: the interval contains 0')\n"
        "cmp"
    ),
    new_markdown_cell(
        "## Per training step: reward, and importance ratios of sampler vs trainer\n\n"
        "`step_stats` come from `vf.logprob_report` on each step's rollouts, re-scored with the "
        "weights about to be updated."
    ),
    new_code_cell(
        "import matplotlib.pyplot as plt\n"
        "import pandas as pd\n\n"
        "steps = pd.DataFrame(s['step_stats'])\n"
        "fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.5))\n"
        "a.plot(steps['step'], steps['reward_mean'], marker='o')\n"
        "a.set_xlabel('training step'); a.set_ylabel('mean reward of the step\\'s rollouts')\n"
        "b.plot(steps['step'], steps['ratio_min'], label='min')\n"
        "b.plot(steps['step'], steps['ratio_mean'], label='mean')\n"
        "b.plot(steps['step'], steps['ratio_max'], label='max')\n"
        "b.set_xlabel('training step'); b.set_ylabel('exp(trainer - sampler logprob)'); b.legend()\n"
        "fig.tight_layout()\n"
        "steps[['step', 'reward_mean', 'tokens', 'ratio_mean', 'ratio_min', 'ratio_max', 'max_abs_diff', 'kl_k3']]"
    ),
    new_markdown_cell(
        "The runs are ordinary run directories: `vf-lite view outputs/train_grpo/eval_base "
        "outputs/train_grpo/eval_grpo` shows every rollout, and the Compare page pairs them by "
        "example."
    ),
]


def build() -> nbformat.NotebookNode:
    nb = new_notebook(cells=[nbformat.from_dict(dict(c)) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def main() -> None:
    build_main(build, HERE / NAME, __doc__.split("\n")[0], timeout=3600)


if __name__ == "__main__":
    main()
