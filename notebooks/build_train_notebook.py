"""Build (and with ``--execute`` run) ``06_train_grpo.ipynb``: GRPO with TRL on CPU.

It needs torch, transformers and trl, so it runs in ``.venv-vllm``:
    .venv-vllm/bin/python notebooks/build_train_notebook.py --execute
The training itself is ``benchmarks/train_grpo.py``'s ``run()``: a finished run directory
(``outputs/train_grpo``) is read back, otherwise the notebook trains (about 30 min on 2 cores) and then times the loops.
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
        "TRL's `GRPOTrainer` on the bundled `arithmetic` environment with two-digit additions "
        '(`digits=2, operations="+"`, two two-digit worked examples; the base model gets about a '
        "quarter right, so a group of 8 samples usually holds both right and wrong answers). "
        "`vf.train.grpo_trainer` hands TRL the environment's rollouts through TRL's `rollout_func`: "
        "token ids and sampler logprobs verbatim, the rubric as the reward. The policy (a LoRA "
        "adapter, TRL's `peft_config`) samples its own rollouts with its current weights "
        "(`TransformersSampler`, a group's prompt prefilled once), so the rollouts are on-policy "
        "and the importance ratios should sit at 1.\n\n"
        "Learning must generalize: every step trains on 4 questions never seen before (the "
        "environment's `train` split in the run seed's order, none repeated), and three fixed sets "
        "are never trained on: a validation probe (48 questions, scored every 10 steps; training "
        "stops when it stops improving), the validation set the settings were chosen on, and the "
        "held-out set (240 `test` questions x 4 rollouts), evaluated exactly twice, before and "
        "after training, through `evaluate()` in float32 (the adapter merged into the weights for "
        "the second), and compared paired over questions with `vf.compare_runs`. This notebook "
        "reads the benchmark's finished run (`benchmarks/train_grpo.py`, seed 0); with no run "
        "directory it trains (30 minutes on 2 cores)."
    ),
    new_code_cell(
        "import sys\n"
        "from pathlib import Path\n\n"
        "sys.path.insert(0, '../benchmarks')\n"
        "from train_grpo import plot, report, run   # trains once; a finished run directory is read back\n\n"
        "OUT = Path('../outputs/train_grpo')\n"
        "s = run(OUT)\n"
        "print('settings:', {k: v for k, v in s['settings'].items() if k != 'extra'})\n"
        "print('\\n'.join(report(s)[-5:]))"
    ),
    new_markdown_cell("## Held-out reward, before vs after (paired over questions)"),
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
        "## Per training step\n\n"
        "The reward of the step's rollouts (each step on fresh questions) with its 95% interval "
        "(clustered by question), the validation probe's reward every 10 steps (questions never "
        "trained on; the early stop, if any, marked) and the held-out means; TRL's mean token "
        "entropy; every 4th step the KL of the policy to the "
        "base model (the adapter switched off; no KL term in the loss, `beta=0`) and the "
        "importance ratios of sampler vs trainer logprobs (`vf.rollout.logprob_report`, re-scored with "
        "the weights about to be updated); with a bfloat16 trainer (CPUs with AMX) also TRL's own "
        "importance ratios every step (its bfloat16 forward against the sampler's logprobs: TRL "
        "corrects that mismatch)."
    ),
    new_code_cell(
        "from IPython.display import Image, display\n\n"
        "for png in plot(s, OUT):\n"
        "    display(Image(filename=str(png)))"
    ),
    new_code_cell(
        "import pandas as pd\n\n"
        "steps = pd.DataFrame(s['step_stats'])\n"
        "cols = [c for c in ['step', 'reward_mean', 'reward_ci95', 'kl_to_base', 'ratio_mean', 'ratio_min',\n"
        "                    'ratio_max', 'sampling_s', 'rollout_s'] if c in steps]\n"
        "steps[cols]"
    ),
    new_markdown_cell(
        "## Where a step's time goes, before and after the loop's speed-up\n\n"
        "The same questions and batch (4 questions x 8 rollouts) for a few steps each, one after "
        "the other in the benchmark's run: the previous loop (every prompt prefilled and trained "
        "on its own, all weights trained with TRL's gradient checkpointing, the ratio check every "
        "step) and the current one (a group's prompt prefilled once when sampling and run once in "
        "TRL's forward/backward, a LoRA adapter, the ratio check every 4th step). Seconds per "
        "step by phase "
        "(`vf.train.StepProfiler`), the first step left out."
    ),
    new_code_cell(
        "t = s['timing']\n"
        "if t:\n"
        "    table = pd.DataFrame({name: t[name]['phases'] for name in ('before', 'after')})\n"
        "    table.loc['steps/min'] = [t[name]['steps_per_min'] for name in ('before', 'after')]\n"
        "    display(table.round(2))\n"
        "else:\n"
        "    print('no timing in this run (the benchmark times the loops with --timing STEPS)')"
    ),
    new_markdown_cell(
        "The evaluations are ordinary run directories: `vf-lite view outputs/train_grpo/eval_base "
        "outputs/train_grpo/eval_grpo` shows every rollout, and the Compare page pairs them by "
        "question."
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
    build_main(build, HERE / NAME, __doc__.split("\n")[0], timeout=3600)


if __name__ == "__main__":
    main()
