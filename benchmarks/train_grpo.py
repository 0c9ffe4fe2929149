"""GRPO on a laptop CPU with TRL, on the library's own rollouts: SmolLM2-135M-Instruct learns
two-digit addition (the bundled ``arithmetic`` environment, ``digits=2, operations="+"``, two
two-digit worked examples; the base model gets about a quarter right), sampling its own
rollouts with its current weights (``TransformersSampler``: on-policy, exact logprobs).

Learning must generalize: every step trains on 4 questions never seen before, the next ones of
the environment's ``train`` split (3,300 distinct questions, a hash of the question's text puts
each in one of ``train``/``validation``/``test``), handed to TRL in order
(``shuffle_dataset=False``), so no question repeats within a run of up to ``MAX_STEPS`` steps and
none is a validation or held-out question (tested over a whole default run's stream). Three
fixed sets are never trained on: the validation probe (``PROBE_QUESTIONS`` of ``validation``,
scored every ``--probe-every`` steps, ``vf.train.ValidationProbe``; training stops early when it
stops improving, ``vf.train.PlateauStop``), the validation set the settings were chosen on
(``--split validation``: the next ``HELD_OUT_QUESTIONS`` of ``validation``) and the held-out set
(``HELD_OUT_QUESTIONS`` of ``test``), evaluated exactly twice, before and after training,
through ``evaluate()`` in float32 (the trained adapter merged into the weights), as run
directories ``vf-lite view`` shows, and compared paired over questions with ``vf.compare_runs``.
Its size gives 80% power for a +0.10 gain (docs/guides/training.md, "How many held-out
questions"; a test simulates it).

The whole command fits ``--total-minutes`` (30) of wall time: training ends when the time left
is what the second evaluation needs. Torch uses every CPU this process may run on
(``os.sched_getaffinity``; ``--threads N`` overrides; ``--time-threads PAIRS`` first times
steps alternating those threads and one, in one run). ``--timing`` first times a few steps of
the previous loop (every prompt prefilled and trained on its own, all weights trained, TRL's
gradient checkpointing, the ratio check every step) beside the current one (a group's prompt
prefilled once, a LoRA adapter, the ratio check every 4th step), with the per-phase breakdown
(``vf.train.StepProfiler``); that time counts in the budget. ``--cpu-isa avx2`` makes torch use
AVX2 kernels only (``ATEN_CPU_CAPABILITY``, ``ONEDNN_MAX_CPU_ISA``): a CPU without AVX-512,
emulated. bfloat16 autocast only on CPUs with AMX (``bf16_is_fast``). Per step it keeps the
reward with its interval, TRL's entropy (and KL when ``beta`` > 0), and every few steps the
importance ratios and the KL to the base model; PNGs of the curves are written beside
``summary.json``. Needs torch, transformers, trl and peft (``.venv-vllm``):
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

ENV_ARGS = {"digits": 2, "operations": "+"}
SEEDS = {"train": 0, "validation": 99, "held_out": 1234}
ENV_SPLITS = {"train": "train", "validation": "validation", "held_out": "test"}
EVAL_SEED = 7
MARGIN_S = 60.0  # of the run's total, for merging the adapter and writing the figures
MAX_STEPS = 800  # at most; 800 x 4 questions fit the train split's ~3,300 without a repeat
HELD_OUT_QUESTIONS = 240  # x EVAL_ROLLOUTS: 80% power for +0.10 (docs, a test simulates it)
EVAL_ROLLOUTS = 4
PROBE_QUESTIONS = 48  # the validation probe: the first 48 of the validation split


@dataclass
class Settings:
    """One training configuration (``loop="before"``: the previous loop, for the timing)."""

    steps: int = MAX_STEPS  # at most; the run stops when its time is spent or the probe stalls
    train_minutes: float = 60.0  # at most; the run's training ends early enough for total_minutes
    total_minutes: float = 30.0  # the whole command: timing, both evaluations and the training
    questions_per_step: int = 4
    num_generations: int = 8
    learning_rate: float = 5e-4
    lora_rank: int = 16  # 0: all weights
    beta: float = 0.0  # no KL term: no reference forward pass; the KL to the base is measured
    max_tokens: int = 16  # "ab + cd = efg" and the end of turn need 12-13
    ratio_every: int = 4  # the ratio check and the KL to the base, every 4th step
    share_prefill: bool = True
    share_prompt: bool = True  # the trainer's passes run a group's prompt once
    sampler_batch: int = 64
    bf16: bool | None = None  # bfloat16 autocast of the trainer's passes; None: bf16_is_fast()
    gradient_checkpointing: bool = False  # TRL's default (True) runs each forward twice
    threads: int = 0  # torch threads; 0: the CPUs this process may run on
    probe_every: int = 10  # steps between validation probes (0: no probe, no early stop)
    probe_rollouts: int = 2
    patience: int = 5  # probes without a new best before training stops (0: never)
    seed: int = 0  # the training questions' order, torch's sampling, TRL's seed (not the eval sets)
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
    probe_every=0,
)


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask: ``taskset``, cgroups' cpusets)."""
    return len(os.sched_getaffinity(0))


def machine() -> dict[str, Any]:
    """The CPU's flags that decide the kernels: AVX-512, AMX, and the ISA torch dispatches to."""
    import torch

    flags: set[str] = set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    except OSError:
        pass
    return {
        "avx512": "avx512f" in flags,
        "amx": "amx_tile" in flags,
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "onednn_max_cpu_isa": os.environ.get("ONEDNN_MAX_CPU_ISA", ""),
        "cpus_available": available_cpus(),
        "cpu_count": os.cpu_count(),
    }


def load_avg() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def environment(split: str, num_examples: int, skip: int = 0, run_seed: int = 0) -> Any:
    """``num_examples`` distinct questions of ``split`` (the environment's ``train``/
    ``validation``/``test`` thirds of all questions, which share none), in the order of its seed
    (``SEEDS[split] + run_seed``), the first ``skip`` left out."""
    import verifiers_lite as vf

    return vf.load_environment(
        "arithmetic",
        num_examples=num_examples,
        seed=SEEDS[split] + run_seed,
        split=ENV_SPLITS[split],
        skip=skip,
        **ENV_ARGS,
    )


def training_env(steps: int = MAX_STEPS, questions_per_step: int = 4, seed: int = 0) -> Any:
    """The training questions of a run of ``steps`` steps with run seed ``seed``: step k trains
    on questions ``k * questions_per_step`` to ``(k + 1) * questions_per_step - 1``, all
    distinct; another seed draws them from the ``train`` split in another order."""
    env = environment("train", steps * questions_per_step, run_seed=seed)
    have = len(env.get_dataset())
    if have < steps * questions_per_step:
        raise ValueError(
            f"{steps} steps x {questions_per_step} questions need {steps * questions_per_step} "
            f"distinct training questions; the train split has {have}: questions would repeat"
        )
    return env


def probe_env() -> Any:
    """The validation probe's fixed questions (never trained on)."""
    return environment("validation", PROBE_QUESTIONS)


def eval_env(split: str, num_examples: int = HELD_OUT_QUESTIONS) -> Any:
    """The set evaluated before and after: ``test`` (held out), or the ``validation`` questions
    after the probe's."""
    skip = PROBE_QUESTIONS if split == "validation" else 0
    return environment(split, num_examples, skip)


def questions(env: Any) -> list[str]:
    """The question texts of ``env``'s dataset, in order."""
    return [row["prompt"][-1]["content"] for row in env.get_dataset()]


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
    s: Settings, model: Any, template: Any, out: Path, deadline: float | None = None
) -> tuple[Any, Any, Any]:
    """A ``vf.train.grpo_trainer`` for ``s`` with a ``StepProfiler`` and, when
    ``s.probe_every``, a ``ValidationProbe`` attached; training stops before ``deadline``
    (``time.perf_counter()``)."""
    import trl

    import verifiers_lite as vf
    from verifiers_lite.rollout import SamplingParams, TransformersSampler
    from verifiers_lite.train import PlateauStop, StepProfiler, ValidationProbe

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
        seed=SEEDS["train"] + s.seed,
        max_completion_length=s.max_tokens,
        beta=s.beta,
        temperature=1.0,
        dataloader_num_workers=0,
        lr_scheduler_type="constant",
        gradient_checkpointing=s.gradient_checkpointing,
        # The dataset is the run's question stream in order: fresh questions every step.
        shuffle_dataset=False,
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
        training_env(s.steps, s.questions_per_step, s.seed),
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
    probe = None
    if s.probe_every:
        probe = ValidationProbe(
            probe_env(),
            template,
            every=s.probe_every,
            rollouts_per_example=s.probe_rollouts,
            rule=PlateauStop(patience=s.patience),
            max_tokens=s.max_tokens,
            seed=EVAL_SEED,
            max_batch_size=s.sampler_batch,
        )
        trainer.add_callback(probe.callback())
    budget_end = time.perf_counter() + 60 * s.train_minutes
    trainer.add_callback(_time_budget(min(budget_end, deadline or budget_end)))
    return trainer, StepProfiler.attach(trainer), probe


def _time_budget(deadline: float) -> Any:
    """A callback that ends training at a step end when the next step (as long as the longest
    one so far, a probe included) would end past ``deadline`` (``time.perf_counter()``)."""
    from transformers import TrainerCallback

    class TimeBudget(TrainerCallback):  # type: ignore[misc]
        def on_train_begin(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            self.last = time.perf_counter()
            self.longest = 0.0

        def on_step_end(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            now = time.perf_counter()
            self.longest = max(self.longest, now - self.last)
            self.last = now
            if now + self.longest > deadline:
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

    if not torch.backends.cpu.get_cpu_capability().startswith("AVX512"):
        return False  # AVX2 kernels (a CPU without AVX-512, or --cpu-isa avx2): no AMX path
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
    for name, changes in (("before", BEFORE), ("after", {"probe_every": 0})):
        s = Settings(steps=steps, train_minutes=60.0, **changes)  # type: ignore[arg-type]
        torch.manual_seed(0)
        trainer, profiler, _ = trainer_for(s, fresh_model(path), template, out / f"timing_{name}")
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


def time_threads(path: str, template: Any, pairs: int, out: Path) -> dict[str, Any]:
    """Seconds per step of the current loop with every CPU of the affinity as torch threads and
    with one, alternating step by step in one run (drift and the questions' lengths fall on both
    alike); the first pair, which warms caches, left out. Nothing of this run is kept."""
    import torch
    from transformers import TrainerCallback

    counts = (available_cpus(), 1)
    if counts[0] == 1:
        return {"skipped": "one CPU available: nothing to compare"}

    class Alternate(TrainerCallback):  # type: ignore[misc]
        def on_step_begin(self, args: Any, state: Any, control: Any, **_: Any) -> None:
            torch.set_num_threads(counts[state.global_step % 2])

    s = Settings(steps=2 * pairs, train_minutes=60.0, probe_every=0)
    torch.manual_seed(0)
    trainer, profiler, _ = trainer_for(s, fresh_model(path), template, out / "timing_threads")
    trainer.add_callback(Alternate())
    trainer.train()
    torch.set_num_threads(counts[0])
    steps = profiler.steps[2:]
    per_count = {
        str(n): [t.total for i, t in enumerate(steps) if i % 2 == k] for k, n in enumerate(counts)
    }
    mean = {n: sum(v) / len(v) for n, v in per_count.items() if v}
    result = {"threads": list(counts), "s_per_step": mean, "steps": per_count}
    print(f"--- threads (alternating, {pairs - 1} steps each): {mean}", flush=True)
    return result


def trained_questions(step_stats: list[dict[str, Any]], env: Any) -> list[str]:
    """The questions the run trained on, step after step, as the rollout hook recorded them."""
    texts = questions(env)
    return [texts[eid] for st in step_stats for eid in st["example_ids"]]


def train_and_evaluate(
    s: Settings,
    path: str,
    template: Any,
    out: Path,
    split: str,
    eval_examples: int,
    eval_rollouts: int,
    deadline: float,
) -> dict[str, Any]:
    """Evaluate on ``split``, train with ``s`` until ``deadline`` leaves time for the second
    evaluation, evaluate again; the figures of the run."""
    import verifiers_lite as vf

    t_start = time.perf_counter()
    target = eval_env(split, eval_examples)
    model = fresh_model(path)
    t0 = time.perf_counter()
    evaluate(model, template, target, "base", out, eval_rollouts, s.max_tokens)
    eval_s = time.perf_counter() - t0
    # The second evaluation takes as long as the first: training gets what is left of the run.
    train_deadline = deadline - eval_s - MARGIN_S
    trainer, profiler, probe = trainer_for(s, model, template, out, train_deadline)
    t0 = time.perf_counter()
    trainer.train()
    train_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    evaluate(trained_model(trainer), template, target, "grpo", out, eval_rollouts, s.max_tokens)
    eval_s += time.perf_counter() - t0
    cmp = vf.compare_runs(out / "eval_base", out / "eval_grpo", labels=("base", "grpo"))
    stats = trainer.vf_rollouts.step_stats
    trained = trained_questions(stats, trainer.vf_rollouts.env)
    # What TRL handed the hook is the planned stream, none repeated, none evaluated on.
    never_evaluated = set(questions(target)) | set(questions(probe_env()))
    stream = questions(training_env(s.steps, s.questions_per_step, s.seed))
    fresh = (
        trained == stream[: len(trained)]
        and len(set(trained)) == len(trained)
        and not never_evaluated & set(trained)
    )
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
        "step_stats": stats,
        "trl_log": [h for h in trainer.state.log_history if "reward" in h],
        "probe": probe.history if probe else [],
        "stopped_early_at": probe.stopped_at if probe else None,
        "questions_trained": len(trained),
        "fresh_questions_checked": fresh,
        "phases": profiler.mean(),
        "steps_done": trainer.state.global_step,
        "steps_per_min": 60 * trainer.state.global_step / train_s,
        "wall_s": {"run": time.perf_counter() - t_start, "train": train_s, "eval": eval_s},
    }


def run(
    out: str | Path = "outputs/train_grpo",
    steps: int = MAX_STEPS,
    split: str = "held_out",
    eval_examples: int = HELD_OUT_QUESTIONS,
    eval_rollouts: int = EVAL_ROLLOUTS,
    timing_steps: int = 0,
    started: float | None = None,
    thread_pairs: int = 0,
    **changes: Any,
) -> dict[str, Any]:
    """Time the loops (``timing_steps`` > 0) and the threads (``thread_pairs`` > 0), then train
    and evaluate once, all within ``total_minutes`` of ``started`` (a ``time.perf_counter()``;
    default: now); later calls read ``out/summary.json`` back."""
    started = time.perf_counter() if started is None else started
    out = Path(out)
    if (out / "summary.json").exists():
        return json.loads((out / "summary.json").read_text())
    import torch

    from verifiers_lite.rollout import Template, smollm2_hf_checkpoint

    s = Settings(steps=steps, **changes)
    torch.set_num_threads(s.threads or available_cpus())
    deadline = started + 60 * s.total_minutes
    load_start = load_avg()
    path = str(smollm2_hf_checkpoint())
    template = Template.from_pretrained(path)
    timing = time_loops(path, template, timing_steps, out) if timing_steps else {}
    threads_timing = time_threads(path, template, thread_pairs, out) if thread_pairs else {}
    torch.manual_seed(s.seed)
    summary = train_and_evaluate(
        s, path, template, out, split, eval_examples, eval_rollouts, deadline
    )
    summary.update(
        env={"name": "arithmetic", **ENV_ARGS, "seeds": SEEDS},
        steps=summary["steps_done"],
        timing=timing,
        threads_timing=threads_timing,
        load_avg_start=load_start,
        load_avg_end=load_avg(),
        machine=machine(),
        torch_threads=torch.get_num_threads(),
    )
    plot(summary, out)
    summary["wall_s"]["total"] = time.perf_counter() - started
    _write(out, summary)
    return summary


def _write(out: Path, summary: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "summary.json.tmp"
    tmp.write_text(json.dumps(summary, indent=1))
    tmp.replace(out / "summary.json")


def plot(s: dict[str, Any], out: Path) -> list[Path]:
    """The run's curves as PNGs: training reward per step with its interval and the validation
    probe; KL and entropy; importance ratios."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    steps = s["step_stats"]
    x = [st["step"] + 1 for st in steps]
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    ax.plot(
        x, [st["reward_mean"] for st in steps], lw=1, label="training rollouts (fresh questions)"
    )
    ci = [st.get("reward_ci95") or [st["reward_mean"]] * 2 for st in steps]
    ax.fill_between(x, [c[0] for c in ci], [c[1] for c in ci], alpha=0.2, label="95% interval")
    probe = s.get("probe") or []
    if probe:
        px = [p["step"] for p in probe]
        ax.errorbar(
            px,
            [p["reward"] for p in probe],
            yerr=[
                [max(0.0, p["reward"] - p["reward_ci95"][0]) for p in probe],
                [max(0.0, p["reward_ci95"][1] - p["reward"]) for p in probe],
            ],
            fmt="s-",
            ms=4,
            color="tab:green",
            capsize=2,
            label="validation probe",
        )
    if s.get("stopped_early_at") is not None:
        ax.axvline(s["stopped_early_at"], color="tab:red", ls=":", lw=1, label="early stop")
    for y, label, style in (
        (s["reward_before"], f"{s['split']} before", "--"),
        (s["reward_after"], f"{s['split']} after", "-"),
    ):
        ax.axhline(y, color="k", ls=style, lw=1, label=label)
    ax.set(xlabel="step", ylabel="reward", ylim=(0, 1))
    ax.legend(fontsize=7)
    paths = [_save(fig, out / "reward.png")]
    log = s["trl_log"]
    kl = [st for st in steps if "kl_to_base" in st]
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.2))
    a.plot(
        [st["step"] + 1 for st in kl], [st["kl_to_base"] for st in kl], "o-", ms=3, label="re-score"
    )
    trl_kl = [h for h in log if "kl" in h]
    if trl_kl:
        a.plot([h["step"] for h in trl_kl], [h["kl"] for h in trl_kl], lw=1, label="TRL (beta > 0)")
    a.set(xlabel="step", ylabel="KL(policy || base), per token")
    a.legend(fontsize=7)
    b.plot([h["step"] for h in log], [h.get("entropy", float("nan")) for h in log], "o-", ms=3)
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
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
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
    for p in s.get("probe") or []:
        lo, hi = p["reward_ci95"]
        lines.append(f"probe at step {p['step']:3d}: {p['reward']:.3f} [{lo:.3f}, {hi:.3f}]")
    lo, hi = s["ci95"]
    w = s["wall_s"]
    t = s.get("timing") or {}
    m = s.get("machine")  # None in a summary written before it was recorded
    flags = (
        f"AVX-512 {'yes' if m['avx512'] else 'no'}, AMX {'yes' if m['amx'] else 'no'}, "
        f"torch kernels {m['torch_cpu_capability']}; {m['cpus_available']} of "
        f"{m['cpu_count']} cores available"
        if m
        else f"not recorded, {s.get('cpu_count')} cores"
    )
    wall = w.get("total", w.get("run", 0.0))
    speed = (
        f"steps/min before {t['before']['steps_per_min']:.2f}, after {t['after']['steps_per_min']:.2f} "
        f"(side by side, {t['after']['settings']['steps']} steps each); "
        if t
        else ""
    )
    tt = s.get("threads_timing") or {}
    if tt.get("s_per_step"):
        (n, many), (_, one) = tt["s_per_step"].items()
        speed += (
            f"threads {n}: {many:.1f} s/step, 1: {one:.1f} s/step ({one / many:.2f}x, "
            f"alternating); "
        )
    stop = s.get("stopped_early_at")
    lines += [
        f"seed {s.get('settings', {}).get('seed', 0)}: {s['split']} reward before "
        f"{s['reward_before']:.3f}, after {s['reward_after']:.3f} "
        f"({s['eval_examples']} questions x {s['eval_rollouts']} rollouts)",
        f"paired difference {s['diff']:+.3f}, 95% interval [{lo:+.3f}, {hi:+.3f}], p={s['p_value']:.3g} "
        f"(wins/ties/losses {s['wins_ties_losses']})",
        f"steps {s['steps']} ({s.get('questions_trained', '?')} questions, each once, none "
        f"evaluated: {'checked' if s.get('fresh_questions_checked') else 'NOT CHECKED'}); "
        + (
            f"early stop at step {stop} (validation probe)" if stop is not None else "no early stop"
        ),
        f"wall {wall / 60:.1f} min (train {w['train'] / 60:.1f}, eval {w['eval'] / 60:.1f}); "
        f"{speed}training run {s['steps_per_min']:.2f} steps/min",
        f"machine: {flags}, torch threads {s['torch_threads']}; load average start "
        f"{s['load_avg_start']}, end {s['load_avg_end']}",
    ]
    return lines


def main() -> None:
    started = time.perf_counter()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="outputs/train_grpo")
    ap.add_argument(
        "--steps", type=int, default=MAX_STEPS, help="at most (time or early stop end the run)"
    )
    ap.add_argument("--train-minutes", type=float, default=Settings.train_minutes, help="at most")
    ap.add_argument(
        "--total-minutes",
        type=float,
        default=Settings.total_minutes,
        help="the whole command: timing, both evaluations and training",
    )
    ap.add_argument("--split", choices=["validation", "held_out"], default="held_out")
    ap.add_argument("--eval-examples", type=int, default=HELD_OUT_QUESTIONS)
    ap.add_argument("--eval-rollouts", type=int, default=EVAL_ROLLOUTS)
    ap.add_argument(
        "--timing",
        type=int,
        default=0,
        metavar="STEPS",
        help="time STEPS steps of the previous and the current loop side by side first "
        "(counted in --total-minutes; 0: not)",
    )
    ap.add_argument(
        "--time-threads",
        type=int,
        default=0,
        metavar="PAIRS",
        help="first time PAIRS pairs of steps alternating all CPUs' threads and one "
        "(counted in --total-minutes; 0: not)",
    )
    ap.add_argument(
        "--seed",
        type=int,
        default=Settings.seed,
        help="the run's seed: training questions' order, sampling, TRL (not the evaluated sets)",
    )
    ap.add_argument("--lr", type=float, default=Settings.learning_rate)
    ap.add_argument("--lora-rank", type=int, default=Settings.lora_rank)
    ap.add_argument(
        "--threads", type=int, default=0, help="torch threads (0: the CPUs of this process)"
    )
    ap.add_argument("--probe-every", type=int, default=Settings.probe_every)
    ap.add_argument("--patience", type=int, default=Settings.patience)
    ap.add_argument(
        "--cpu-isa",
        choices=["native", "avx2"],
        default="native",
        help="avx2: torch's AVX2 kernels only (a CPU without AVX-512, emulated)",
    )
    args = ap.parse_args()
    if args.cpu_isa == "avx2":
        # Read when torch loads (imported below, in run): set before any import of torch.
        os.environ["ATEN_CPU_CAPABILITY"] = "avx2"
        os.environ["ONEDNN_MAX_CPU_ISA"] = "AVX2"
    print(f"load average at start: {load_avg()} ({available_cpus()} CPUs)", flush=True)
    s = run(
        args.out,
        args.steps,
        args.split,
        args.eval_examples,
        args.eval_rollouts,
        args.timing,
        started,
        thread_pairs=args.time_threads,
        learning_rate=args.lr,
        lora_rank=args.lora_rank,
        threads=args.threads,
        probe_every=args.probe_every,
        patience=args.patience,
        seed=args.seed,
        train_minutes=args.train_minutes,
        total_minutes=args.total_minutes,
    )
    print("\n".join(report(s)))


if __name__ == "__main__":
    main()
