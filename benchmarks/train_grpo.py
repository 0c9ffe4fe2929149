"""GRPO on a laptop CPU with TRL, on the library's own rollouts: SmolLM2-135M-Instruct learns
one-digit subtraction (the bundled ``arithmetic`` environment, ``operations="-"``: half the
answers are negative, and the base model gets about a third right), sampling its own rollouts
with its current weights (``TransformersSampler``: on-policy, exact logprobs).

Three question sets, the environment's ``train``, ``validation`` and ``test`` splits: thirds of
the 100 questions that share none (a hash of the question decides), each question once. The
settings were chosen on the validation questions (``--split validation``); the held-out ones
(``test``) are evaluated exactly twice, before and after training, through ``evaluate()`` in
float32 (the trained adapter merged into the weights: the same model class and precision both
times), as run directories ``vf-lite view`` shows, and compared paired over questions with
``vf.compare_runs``. The whole run, both evaluations included, fits ``--total-minutes`` (30):
training ends when the time left is what the second evaluation needs.

After the run the benchmark times the loop: a few steps of the previous loop (every prompt
prefilled and trained on its own, all weights trained, TRL's gradient checkpointing, the ratio
check every step) beside the current one (a group's prompt prefilled once in sampling and run
once in the trainer's forward/backward, a LoRA adapter through TRL's ``peft_config``, the ratio
check every 4th step), same questions, same batch, with the per-phase breakdown
(``vf.train.StepProfiler``). bfloat16 autocast only on CPUs with AMX (``bf16_is_fast``). Per
step it keeps the reward with its interval, TRL's entropy, and every few steps the importance
ratios and the KL to the base model; PNGs of the curves are written beside ``summary.json``.
Needs torch, transformers, trl and peft (``.venv-vllm``):
    .venv-vllm/bin/python benchmarks/train_grpo.py [--total-minutes 30] [--out outputs/train_grpo]
A finished run is not redone: ``run()`` reads ``summary.json`` back (delete the directory to
train again). ``notebooks/06_train_grpo.ipynb`` shows the figures; docs: guides/training.md.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ENV_ARGS = {"digits": 1, "operations": "-"}
SEEDS = {"train": 0, "validation": 99, "held_out": 1234}
ENV_SPLITS = {"train": "train", "validation": "validation", "held_out": "test"}
EVAL_SEED = 7
MARGIN_S = 60.0  # of the run's total, for building the trainer and merging the adapter


@dataclass
class Settings:
    """One training configuration (``loop="before"``: the previous loop, for the timing)."""

    steps: int = 1000  # at most; the run stops when train_minutes are spent
    train_minutes: float = 60.0  # at most; the run's training ends early enough for total_minutes
    total_minutes: float = 30.0  # the whole run: both evaluations and the training
    questions_per_step: int = 4
    num_generations: int = 8
    learning_rate: float = 5e-4
    lora_rank: int = 16  # 0: all weights
    beta: float = 0.0  # no KL term: no reference forward pass; the KL to the base is measured
    max_tokens: int = 12  # "a - b = c" and the end of turn need 8-9
    ratio_every: int = 4  # the ratio check and the KL to the base, every 4th step
    share_prefill: bool = True
    share_prompt: bool = True  # the trainer's passes run a group's prompt once
    sampler_batch: int = 64
    bf16: bool | None = None  # bfloat16 autocast of the trainer's passes; None: bf16_is_fast()
    gradient_checkpointing: bool = False  # TRL's default (True) runs each forward twice
    threads: int = 1
    extra: dict[str, Any] = field(default_factory=dict)


BEFORE = dict(
    lora_rank=0,
    learning_rate=1e-5,
    share_prefill=False,
    share_prompt=False,
    ratio_every=1,
    sampler_batch=16,
    bf16=False,
    gradient_checkpointing=True,
)


def load_avg() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def environment(split: str, num_examples: int = 1000) -> Any:
    """The distinct questions of ``split`` (the environment's ``train``/``validation``/``test``
    thirds of all questions, which share none), in its seed's order."""
    import verifiers_lite as vf

    return vf.load_environment(
        "arithmetic",
        num_examples=num_examples,
        seed=SEEDS[split],
        split=ENV_SPLITS[split],
        **ENV_ARGS,
    )


def evaluate(
    model: Any, template: Any, env: Any, name: str, out: Path, rollouts: int, max_tokens: int
) -> Any:
    """Reward of ``model`` on ``env`` through ``evaluate()`` (saved to ``out/eval_<name>``)."""
    from verifiers_lite.rollout import SamplingParams, TokenClient, TransformersSampler

    client = TokenClient(
        TransformersSampler(model), template, SamplingParams(max_tokens=max_tokens, logprobs=0)
    )
    return env.evaluate_sync(
        client,
        f"smollm2-{name}",
        rollouts_per_example=rollouts,
        seed=EVAL_SEED,
        results_path=str(out / f"eval_{name}"),
        progress=False,
    )


def trainer_for(
    s: Settings, model: Any, template: Any, train_env: Any, out: Path
) -> tuple[Any, Any]:
    """A ``vf.train.grpo_trainer`` for ``s`` with a ``StepProfiler`` attached."""
    import trl

    import verifiers_lite as vf
    from verifiers_lite.rollout import SamplingParams, TransformersSampler
    from verifiers_lite.train import StepProfiler

    batch = s.questions_per_step * s.num_generations
    args = trl.GRPOConfig(
        output_dir=str(out / "trainer"),
        max_steps=s.steps,
        learning_rate=s.learning_rate,
        per_device_train_batch_size=batch,
        num_generations=s.num_generations,
        gradient_accumulation_steps=1,
        logging_steps=1,
        report_to="none",
        use_cpu=True,
        bf16=bf16_is_fast() if s.bf16 is None else s.bf16,
        save_strategy="no",
        seed=SEEDS["train"],
        max_completion_length=s.max_tokens,
        beta=s.beta,
        temperature=1.0,
        dataloader_num_workers=0,
        lr_scheduler_type="constant",
        gradient_checkpointing=s.gradient_checkpointing,
        **s.extra,
    )
    kwargs: dict[str, Any] = {}
    if s.lora_rank:
        import peft

        kwargs["peft_config"] = peft.LoraConfig(
            r=s.lora_rank,
            lora_alpha=2 * s.lora_rank,
            lora_dropout=0.0,
            target_modules="all-linear",
            task_type="CAUSAL_LM",
        )
    trainer = vf.train.grpo_trainer(
        train_env,
        model,
        args,
        template=template,
        ratio_every=s.ratio_every,
        share_prompt=s.share_prompt,
        sampling_params=SamplingParams(max_tokens=s.max_tokens, logprobs=0),
        **kwargs,
    )
    # The sampler over the trained weights (through the adapter, when there is one).
    trainer.vf_rollouts.sampler = TransformersSampler(
        trainer.accelerator.unwrap_model(trainer.model),
        share_prefill=s.share_prefill,
        max_batch_size=s.sampler_batch,
    )
    trainer.add_callback(_time_budget(60 * s.train_minutes))
    return trainer, StepProfiler.attach(trainer)


def _time_budget(seconds: float) -> Any:
    """A callback that ends training at the first step end past ``seconds`` of training."""
    from transformers import TrainerCallback

    class TimeBudget(TrainerCallback):  # type: ignore[misc]
        def on_train_begin(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            self.start = time.perf_counter()

        def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            if time.perf_counter() - self.start > seconds:
                control.should_training_stop = True

    return TimeBudget()


def trained_model(trainer: Any) -> Any:
    """The trained policy as the base model was evaluated: a plain float32 model (the LoRA
    adapter merged into its weights), outside accelerate's autocast wrapper."""
    model = trainer.accelerator.unwrap_model(trainer.model, keep_fp32_wrapper=False)
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    return model.float().eval()


def bf16_is_fast() -> bool:
    """Whether bfloat16 autocast pays on this CPU: with AMX tiles. Without them (AVX-512 alone,
    AVX2) a step measured no faster in bfloat16, and a bfloat16 trainer is off-policy against its
    float32 sampler (TRL's importance-sampling correction: one more forward pass a step)."""
    import torch

    probe = getattr(torch.cpu, "_is_amx_tile_supported", None)
    return bool(probe and probe())


def fresh_model(path: str) -> Any:
    import torch
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)


def time_loops(path: str, template: Any, steps: int, out: Path) -> dict[str, Any]:
    """Steps/minute and the per-phase breakdown of the previous loop and the current one, run one
    after the other on the same questions (nothing of these runs is kept)."""
    import torch

    result: dict[str, Any] = {}
    for name, changes in (("before", BEFORE), ("after", {})):
        s = Settings(steps=steps, train_minutes=60.0, **changes)
        torch.manual_seed(0)
        trainer, profiler = trainer_for(
            s, fresh_model(path), template, environment("train", 200), out / f"timing_{name}"
        )
        t0 = time.perf_counter()
        trainer.train()
        wall = time.perf_counter() - t0
        result[name] = {
            "settings": s.__dict__,
            "wall_s": wall,
            "steps_per_min": 60 * steps / wall,
            "phases": profiler.mean(),
            "table": profiler.table(),
            "load_avg": load_avg(),
        }
        print(
            f"--- {name}: {60 * steps / wall:.2f} steps/min ({steps} steps, {wall:.0f} s, "
            f"load {load_avg()})\n{profiler.table()}",
            flush=True,
        )
    return result


def train_and_evaluate(
    s: Settings,
    path: str,
    template: Any,
    out: Path,
    split: str,
    eval_examples: int,
    eval_rollouts: int,
) -> dict[str, Any]:
    """Evaluate on ``split``, train with ``s``, evaluate again; the figures of the run."""
    import verifiers_lite as vf

    t_start = time.perf_counter()
    target = environment(split, eval_examples)
    model = fresh_model(path)
    t0 = time.perf_counter()
    evaluate(model, template, target, "base", out, eval_rollouts, s.max_tokens)
    eval_s = time.perf_counter() - t0
    # The second evaluation takes as long as the first: training gets what is left of the run.
    left = 60 * s.total_minutes - (time.perf_counter() - t_start) - eval_s - MARGIN_S
    s.train_minutes = min(s.train_minutes, left / 60)
    trainer, profiler = trainer_for(s, model, template, environment("train", 400), out)
    t0 = time.perf_counter()
    trainer.train()
    train_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    evaluate(trained_model(trainer), template, target, "grpo", out, eval_rollouts, s.max_tokens)
    eval_s += time.perf_counter() - t0
    cmp = vf.compare_runs(out / "eval_base", out / "eval_grpo", labels=("base", "grpo"))
    return {
        "split": split,
        "settings": s.__dict__,
        "reward_before": cmp.mean_a,
        "reward_after": cmp.mean_b,
        "diff": cmp.diff,
        "ci95": list(cmp.ci),
        "p_value": cmp.p_value,
        "wins_ties_losses": [cmp.wins, cmp.ties, cmp.losses],
        "eval_examples": len(target.get_dataset()),
        "eval_rollouts": eval_rollouts,
        "step_stats": trainer.vf_rollouts.step_stats,
        "trl_log": [h for h in trainer.state.log_history if "reward" in h],
        "phases": profiler.mean(),
        "steps_done": trainer.state.global_step,
        "steps_per_min": 60 * trainer.state.global_step / train_s,
        "wall_s": {"total": time.perf_counter() - t_start, "train": train_s, "eval": eval_s},
    }


def run(
    out: str | Path = "outputs/train_grpo",
    steps: int = 1000,
    split: str = "held_out",
    eval_examples: int = 1000,
    eval_rollouts: int = 16,
    timing_steps: int = 1,
    **changes: Any,
) -> dict[str, Any]:
    """Train and evaluate once, then time the loops; later calls read ``out/summary.json`` back."""
    out = Path(out)
    if (out / "summary.json").exists():
        return json.loads((out / "summary.json").read_text())
    import torch

    from verifiers_lite.rollout import Template, smollm2_hf_checkpoint

    s = Settings(steps=steps, **changes)
    torch.set_num_threads(s.threads)
    load_start = load_avg()
    path = str(smollm2_hf_checkpoint())
    template = Template.from_pretrained(path)
    torch.manual_seed(0)
    summary = train_and_evaluate(s, path, template, out, split, eval_examples, eval_rollouts)
    summary.update(
        env={"name": "arithmetic", **ENV_ARGS, "seeds": SEEDS},
        steps=summary["steps_done"],
        timing={},
        load_avg_start=load_start,
        load_avg_end=load_avg(),
        cpu_count=os.cpu_count(),
        torch_threads=torch.get_num_threads(),
    )
    _write(out, summary)  # the training run's figures are kept even if the timing fails
    plot(summary, out)
    if timing_steps:
        summary["timing"] = time_loops(path, template, timing_steps, out)
        _write(out, summary)
    return summary


def _write(out: Path, summary: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "summary.json.tmp"
    tmp.write_text(json.dumps(summary, indent=1))
    tmp.replace(out / "summary.json")


def plot(s: dict[str, Any], out: Path) -> list[Path]:
    """The run's curves as PNGs: reward per step with its interval, KL and entropy, ratios."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = s["step_stats"]
    x = [st["step"] + 1 for st in steps]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(x, [st["reward_mean"] for st in steps], marker="o", ms=3, label="training rollouts")
    ci = [st.get("reward_ci95") or [st["reward_mean"]] * 2 for st in steps]
    ax.fill_between(x, [c[0] for c in ci], [c[1] for c in ci], alpha=0.25, label="95% interval")
    for y, label, style in (
        (s["reward_before"], "held-out before", "--"),
        (s["reward_after"], "held-out after", "-"),
    ):
        ax.axhline(y, color="k", ls=style, lw=1, label=label)
    ax.set(xlabel="step", ylabel="reward", ylim=(0, 1))
    ax.legend(fontsize=7)
    paths = [_save(fig, out / "reward.png")]
    log = s["trl_log"]
    kl = [st for st in steps if "kl_to_base" in st]
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.2))
    a.plot([st["step"] + 1 for st in kl], [st["kl_to_base"] for st in kl], marker="o", ms=3)
    a.set(xlabel="step", ylabel="KL(policy || base), per token")
    b.plot(
        [h["step"] for h in log], [h.get("entropy", float("nan")) for h in log], marker="o", ms=3
    )
    b.set(xlabel="step", ylabel="mean token entropy (TRL)")
    paths.append(_save(fig, out / "kl_entropy.png"))
    rs = [st for st in steps if "ratio_mean" in st]
    fig, ax = plt.subplots(figsize=(6, 3.2))
    trl_key = "sampling/importance_sampling_ratio/"
    for key in ("min", "mean", "max"):
        if any(trl_key + key in h for h in log):
            ax.plot(
                [h["step"] for h in log],
                [h.get(trl_key + key) for h in log],
                lw=1,
                label=f"TRL {key}",
            )
        ax.plot(
            [st["step"] + 1 for st in rs],
            [st[f"ratio_{key}"] for st in rs],
            "o",
            ms=4,
            label=f"re-score check {key}",
        )
    ax.set(xlabel="step", ylabel="exp(trainer - sampler logprob)")
    ax.legend(fontsize=6, ncol=2)
    paths.append(_save(fig, out / "ratios.png"))
    return paths


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


def report(s: dict[str, Any]) -> list[str]:
    """The benchmark's last lines."""
    lines = []
    for st in s["step_stats"]:
        ci = st.get("reward_ci95") or [float("nan")] * 2
        lines.append(
            f"step {st['step'] + 1:3d} reward {st['reward_mean']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"
            + (f" ratio mean {st['ratio_mean']:.5f}" if "ratio_mean" in st else "")
        )
    lo, hi = s["ci95"]
    w = s["wall_s"]
    t = s.get("timing") or {}
    speed = (
        f"steps/min before {t['before']['steps_per_min']:.2f}, after {t['after']['steps_per_min']:.2f} "
        f"(side by side, {t['after']['settings']['steps']} steps each); "
        if t
        else ""
    )
    lines += [
        f"{s['split']} reward before {s['reward_before']:.3f}, after {s['reward_after']:.3f} "
        f"({s['eval_examples']} questions x {s['eval_rollouts']} rollouts)",
        f"paired difference {s['diff']:+.3f}, 95% interval [{lo:+.3f}, {hi:+.3f}], p={s['p_value']:.3g} "
        f"(wins/ties/losses {s['wins_ties_losses']})",
        f"steps {s['steps']}, wall {w['total'] / 60:.1f} min (train {w['train'] / 60:.1f}, eval {w['eval'] / 60:.1f}); "
        f"{speed}training run {s['steps_per_min']:.2f} steps/min",
        f"load average start {s['load_avg_start']}, end {s['load_avg_end']}; {s['cpu_count']} cores, "
        f"torch threads {s['torch_threads']}",
    ]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="outputs/train_grpo")
    ap.add_argument(
        "--steps", type=int, default=1000, help="at most (the time budget ends the run)"
    )
    ap.add_argument("--train-minutes", type=float, default=Settings.train_minutes, help="at most")
    ap.add_argument(
        "--total-minutes",
        type=float,
        default=Settings.total_minutes,
        help="the whole run, both evaluations included",
    )
    ap.add_argument("--split", choices=["validation", "held_out"], default="held_out")
    ap.add_argument(
        "--eval-examples", type=int, default=1000, help="at most (the split's distinct questions)"
    )
    ap.add_argument("--eval-rollouts", type=int, default=16)
    ap.add_argument(
        "--timing-steps",
        type=int,
        default=1,
        help="steps of each loop timed side by side (0: none)",
    )
    ap.add_argument("--lr", type=float, default=Settings.learning_rate)
    ap.add_argument(
        "--threads", type=int, default=1, help="torch threads (1: measured faster on shared cores)"
    )
    args = ap.parse_args()
    print(f"load average at start: {load_avg()} ({os.cpu_count()} cores)", flush=True)
    s = run(
        args.out,
        args.steps,
        args.split,
        args.eval_examples,
        args.eval_rollouts,
        args.timing_steps,
        learning_rate=args.lr,
        threads=args.threads,
        train_minutes=args.train_minutes,
        total_minutes=args.total_minutes,
    )
    print("\n".join(report(s)))


if __name__ == "__main__":
    main()
