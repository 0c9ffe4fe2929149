"""Regenerate the example notebooks: ``python notebooks/build_notebooks.py [--execute] [NAME ...]``.

Kept as code so the notebooks share one parameters cell and stay reviewable in diffs. With
``--execute`` each notebook is run top to bottom in a fresh kernel against the embedded model
(full size, in a scratch directory) and written with its outputs: the live widget's static final
frame, tables and plots, so a reader on a code host sees results. The notebook's metadata
records a hash of its code cells; the test suite checks the committed outputs belong to the
current sources.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).parent
STAMP = "verifiers_lite"  # notebook metadata key of the execution stamp

PARAMS = """# Parameters (papermill-style; CI sets VF_NOTEBOOK_SMALL=1 to keep the run tiny).
import os

SMALL = os.environ.get("VF_NOTEBOOK_SMALL", "0") == "1"
# "local": the embedded SmolLM2-135M (llama.cpp on 127.0.0.1, needs the [local] extra);
# "fake": the deterministic test server shipped with the library (no model at all).
BACKEND = os.environ.get("VF_NOTEBOOK_MODEL", "local")"""

MODEL = """import verifiers_lite as vf

if BACKEND == "fake":
    from verifiers_lite.testing.fake_server import FakeServerProcess

    server = FakeServerProcess(latency_ms=60).start()
    client, model = vf.ChatClient(server.base_url), "fake-arith"
else:
    # One server for the life of the kernel: later cells (and re-runs) reuse it.
    client, model = vf.local_model_client()
model"""

CLEANUP = """if BACKEND == "fake":
    server.stop()"""


def code(src: str, tags: list[str] | None = None) -> nbformat.NotebookNode:
    cell = new_code_cell(src)
    if tags:
        cell.metadata["tags"] = tags
    return cell


def quickstart() -> nbformat.NotebookNode:
    return new_notebook(
        cells=[
            new_markdown_cell(
                "# Quickstart\n\nEvaluate a small model on one-digit arithmetic, watch the run live, "
                "then study the results as a DataFrame and a plot. No GPU, no API key, no network."
            ),
            code(
                PARAMS + "\nNUM_EXAMPLES = 6 if SMALL else 40\nROLLOUTS = 2 if SMALL else 4\n"
                "MAX_CONCURRENT = 2 if SMALL else 8",
                ["parameters"],
            ),
            new_markdown_cell(
                "## A model\n\nThe embedded model is served on 127.0.0.1 through the OpenAI-compatible API, "
                "like any vLLM or hosted endpoint."
            ),
            code(MODEL),
            new_markdown_cell(
                "## An environment\n\n`arithmetic` is bundled: seeded questions, a parser and a rubric."
            ),
            code('env = vf.load_environment("arithmetic", num_examples=NUM_EXAMPLES)\nenv'),
            new_markdown_cell(
                "## Evaluate\n\nThe progress display updates live: done/total, mean reward ± stderr, "
                "errors, rollouts/s, ETA and the reward histogram."
            ),
            code(
                "results = env.evaluate_sync(client, model, num_examples=NUM_EXAMPLES, rollouts_per_example=ROLLOUTS,\n"
                '                            max_concurrent=MAX_CONCURRENT, sampling_args={"temperature": 0.7})\n'
                "results"
            ),
            new_markdown_cell("## As a DataFrame"),
            code(
                'df = results.to_pandas()\ndf[["example_id", "rollout_index", "answer", '
                '"reward", "turns", "stop_reason"]].head()'
            ),
            code('df.groupby("example_id")["reward"].mean().describe()'),
            new_markdown_cell("## Plots"),
            code("vf.plot_rewards(results);"),
            code("vf.plot_pass_at_k(results);"),
            new_markdown_cell(
                "## Save and load\n\n`save` writes `results.jsonl` + `metadata.json`; "
                "`to_parquet` / `to_hf_dataset` export for other tools."
            ),
            code(
                'path = results.save("outputs/quickstart")\nloaded = vf.load_results(path)\n'
                "assert len(loaded) == len(results)\nloaded"
            ),
            code(CLEANUP),
        ]
    )


CHAIN_ENV = '''import re


class ChainSumEnv(vf.MultiTurnEnv):
    """Keep a running total: each turn asks for the next sum, starting from the true total.

    The environment says whether the last answer was right (and what the total really is),
    then asks the next step; the game ends after the last increment.
    """

    async def setup_state(self, state: vf.State) -> None:
        state["total"] = state["info"]["start"]
        state["step"] = 0
        state["step_correct"] = []

    async def is_completed(self, messages: vf.Messages, state: vf.State) -> bool:
        # Score the model's latest answer, then stop once every increment was asked.
        inc = state["info"]["increments"][state["step"]]
        state["total"] += inc
        state["step_correct"].append(read_number(messages[-1]["content"]) == state["total"])
        state["step"] += 1
        return state["step"] == len(state["info"]["increments"])

    async def env_response(self, messages: vf.Messages, state: vf.State) -> vf.Messages:
        verdict = "Correct." if state["step_correct"][-1] else f"Not quite: it is {state['total']}."
        nxt = state["info"]["increments"][state["step"]]
        return [{"role": "user", "content": f"{verdict} What is {state['total']} + {nxt}?"}]


def read_number(text: str | None) -> int | None:
    """The boxed answer if any, else the last integer in the reply."""
    boxed = vf.extract_boxed_answer(text or "")
    found = re.findall(r"-?\\d+", boxed if boxed else (text or ""))
    return int(found[-1]) if found else None'''

CHAIN_RUBRIC = '''def step_accuracy(state) -> float:
    """Share of the steps answered right."""
    steps = state.get("step_correct") or []
    return sum(steps) / len(steps) if steps else 0.0


def all_correct(state) -> float:
    """1.0 when every step was right."""
    steps = state.get("step_correct") or []
    return float(bool(steps) and all(steps))


rubric = vf.Rubric([step_accuracy, all_correct], weights=[1.0, 0.5])'''

CHAIN_DATA = """import random


def chain_rows(n: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        start = rng.randint(1, 9)
        increments = [rng.randint(1, 9) for _ in range(rng.randint(2, 4))]  # 2-4 turns
        rows.append({
            "example_id": i,
            "question": f"Let's keep a running total. What is {start} + {increments[0]}?",
            "answer": str(start + sum(increments)),
            "info": {"start": start, "increments": increments},
        })
    return rows


env = ChainSumEnv(
    dataset=chain_rows(NUM_EXAMPLES),
    system_prompt="Answer each question with the number only.",
    few_shot=[{"role": "user", "content": "What is 2 + 3?"}, {"role": "assistant", "content": "5"}],
    rubric=rubric,
    max_turns=6,
    sampling_args={"max_tokens": 24},
)
env"""


PERFECT = '''def perfect_player(messages: vf.Messages) -> str:
    """Answers the last question ("What is A + B?") right."""
    a, b = map(int, re.findall(r"What is (-?\\d+) \\+ (-?\\d+)\\?", messages[-1]["content"])[-1])
    return str(a + b)


check = env.evaluate_sync(vf.ScriptedClient(perfect_player), "scripted", rollouts_per_example=2, progress=False)
assert check.rewards == [1.5] * len(check), check.rewards
check.summary["reward_mean"], check.summary["stop_reasons"]'''


def custom_env() -> nbformat.NotebookNode:
    return new_notebook(
        cells=[
            new_markdown_cell(
                "# A custom multi-turn environment\n\nWrite a new task by subclassing `vf.MultiTurnEnv`: "
                "the environment replies to each model turn until the game is over, and a rubric scores "
                "the whole conversation."
            ),
            code(
                PARAMS + "\nNUM_EXAMPLES = 4 if SMALL else 30\nROLLOUTS = 2 if SMALL else 4",
                ["parameters"],
            ),
            code(MODEL),
            new_markdown_cell(
                "## The task: a running total\n\n`setup_state` prepares the per-rollout state, "
                "`is_completed` checks the latest answer and decides when to stop, `env_response` "
                "writes the environment's next message."
            ),
            code(CHAIN_ENV),
            new_markdown_cell(
                "## Its rubric\n\nReward functions take any of `prompt`, `completion`, `answer`, `state`, "
                "`info` by name; every function's value is kept as a metric."
            ),
            code(CHAIN_RUBRIC),
            code(CHAIN_DATA),
            new_markdown_cell(
                "## Check the environment first\n\nA small model scoring low says nothing about the task. "
                "A scripted player that always answers right (`vf.ScriptedClient`) must reach the "
                "maximal reward (1.5: `step_accuracy` 1 plus half of `all_correct` 1); if it does not, "
                "the environment is wrong, not the model."
            ),
            code(PERFECT),
            new_markdown_cell(
                "## Now the model\n\nThe widget counts rollouts as they end, shows how many are in "
                "flight and how they stopped (`stop`, `length`, `max_turns`, `env_done`)."
            ),
            code(
                "results = env.evaluate_sync(client, model, rollouts_per_example=ROLLOUTS, max_concurrent=4)\nresults"
            ),
            code(
                'df = results.to_pandas()\ndf[["example_id", "turns", "stop_reason", '
                '"step_accuracy", "all_correct", "reward"]].head(8)'
            ),
            code(
                'longest = max(results.rows, key=lambda r: r["turns"])  # one conversation, in full\n'
                'for m in longest["prompt"][-1:] + longest["completion"]:\n    '
                "print(f\"{m['role']:>9}: {m['content']}\")"
            ),
            code("vf.plot_reward_vs_turns(results);"),
            code("vf.plot_advantages(results);"),
            code(CLEANUP),
        ]
    )


def distributions() -> nbformat.NotebookNode:
    return new_notebook(
        cells=[
            new_markdown_cell(
                "# Reward distributions: two temperatures compared\n\nThe same environment sampled "
                "at a low and a high temperature; the plots put the runs side by side."
            ),
            code(
                PARAMS + "\nNUM_EXAMPLES = 4 if SMALL else 40\nROLLOUTS = 3 if SMALL else 8\n"
                "TEMPERATURES = [0.2, 1.2]",
                ["parameters"],
            ),
            code(MODEL),
            code(
                'env = vf.load_environment("arithmetic", num_examples=NUM_EXAMPLES)\nruns = {}\n'
                "for t in TEMPERATURES:\n"
                '    runs[f"T={t}"] = env.evaluate_sync(client, model, rollouts_per_example=ROLLOUTS,\n'
                '                                       sampling_args={"temperature": t}, max_concurrent=4)\n'
                "runs"
            ),
            new_markdown_cell(
                "`vf.compare` puts the runs side by side, one flat row each: reward ± stderr, metrics, "
                "pass@k, errors and stop reasons."
            ),
            code("vf.compare(runs)"),
            new_markdown_cell(
                "`vf.compare_runs` pairs the two runs over the examples both scored: the difference in "
                "mean reward with its standard error (clustered by example), 95% interval and paired "
                "t-test p-value, the examples each temperature did better on, and the difference such "
                "a study can detect. Pairing cancels each example's difficulty out of the difference."
            ),
            code('comparison = vf.compare_runs(runs["T=0.2"], runs["T=1.2"])\ncomparison'),
            code('comparison.per_example.sort_values("diff").head()'),
            code("vf.plot_rewards(runs);"),
            code('vf.plot_rewards(runs, kind="ecdf");'),
            code("vf.plot_pass_at_k(runs);"),
            code("vf.plot_advantages(runs);"),
            new_markdown_cell(
                "Any column can split a plot: here the DataFrame of both runs, by `temperature`."
            ),
            code(
                "from verifiers_lite.ui.notebook.plots import runs_frame\n\nboth = runs_frame(runs)\n"
                'vf.plot_rewards(both, by="temperature");'
            ),
            code(CLEANUP),
        ]
    )


JUDGE = """if BACKEND == "fake":
    # A second fake server plays the judge: it computes "answer - response", so its verdict
    # (\\boxed{0} means right) can be checked by hand.
    judge_server = FakeServerProcess(correct_rate=1.0).start()

    def zero_means_right(text: str) -> float:
        return 1.0 if vf.extract_boxed_answer(text) == "0" else 0.0

    judge = vf.JudgeRubric(vf.ChatClient(judge_server.base_url), "fake-arith", prompt="Compute {answer} - {response}",
                           parse=zero_means_right, parser=judged.parser, cache=CACHE)
else:
    # No client: the judge is the embedded model (no key needed), asked a yes/no question.
    judge = vf.JudgeRubric(parser=judged.parser, cache=CACHE)
judged.rubric = judge
judge"""


def judge_and_groups() -> nbformat.NotebookNode:
    return new_notebook(
        cells=[
            new_markdown_cell(
                "# Environment groups, an LLM judge and the response cache\n\nTwo bundled environments "
                "and a judge-scored task evaluated as one `vf.EnvGroup`, studied per task; then the "
                "same run re-scored with another rubric straight from the response cache."
            ),
            code(
                PARAMS + "\nN = 3 if SMALL else 20\nROLLOUTS = 2 if SMALL else 4\n"
                'CACHE = "outputs/04_cache.sqlite"  # the response cache: model answers on disk',
                ["parameters"],
            ),
            code(MODEL),
            new_markdown_cell(
                "## Three tasks\n\n`arithmetic` and `reasoning_gym` (its `chain_sum` family) are bundled; "
                "the third task asks the same kind of questions but is graded by an LLM judge "
                "(`vf.JudgeRubric`): its raw answer and parsed score are kept on each row."
            ),
            code(
                'arithmetic = vf.load_environment("arithmetic", num_examples=N)\n'
                'chain_sum = vf.load_environment("reasoning_gym", task="chain_sum", num_examples=N, min_terms=2,\n'
                "                                 max_terms=2, max_digits=1)\n"
                'judged = vf.load_environment("arithmetic", num_examples=N, seed=1)'
            ),
            code(JUDGE),
            code(
                'group = vf.EnvGroup([arithmetic, chain_sum, judged], names=["arithmetic", "chain_sum", "judged"])\n'
                "results = group.evaluate_sync(client, model, num_examples=N, rollouts_per_example=ROLLOUTS,\n"
                '                              max_concurrent=4, sampling_args={"temperature": 0.7}, cache=CACHE)\n'
                "results"
            ),
            new_markdown_cell(
                "## Per task\n\n`by_task()` splits the run; each part keeps its task's pass criterion."
            ),
            code(
                "import pandas as pd\n\n"
                'per_task = pd.DataFrame({t: {**o.summary, "pass@1": o.pass_at_k(1)} '
                "for t, o in results.by_task().items()}).T\n"
                'per_task[["num_rollouts", "reward_mean", "reward_stderr", "pass@1"]]'
            ),
            code('vf.plot_rewards(results, by="task");'),
            code('vf.plot_pass_at_k(results, by="task");'),
            new_markdown_cell("## What the judge said"),
            code(
                "df = results.to_pandas()\n"
                'df[df.task == "judged"][["answer", "judge_response", "judge_score", "reward"]].head()'
            ),
            new_markdown_cell(
                "## Re-score from the cache\n\nSwap `arithmetic`'s exact-match rubric for `vf.MathRubric` "
                "(math-verify) and run again: every model and judge answer comes from the cache, so only "
                "the scoring runs."
            ),
            code(
                'arithmetic_math = vf.load_environment("arithmetic", num_examples=N, scorer="math")\n'
                "regroup = vf.EnvGroup([arithmetic_math, chain_sum, judged], "
                'names=["arithmetic", "chain_sum", "judged"])\n'
                "rescored = regroup.evaluate_sync(client, model, num_examples=N, rollouts_per_example=ROLLOUTS,\n"
                '                                 max_concurrent=4, sampling_args={"temperature": 0.7}, cache=CACHE)\n'
                'print("cache:", rescored.metadata["cache"])\n'
                'assert rescored.metadata["cache"]["hit_ratio"] == 1.0\n'
                'assert [r["completion"] for r in rescored.rows] == [r["completion"] for r in results.rows]\n'
                'rescored.by_task()["arithmetic"]'
            ),
            code(CLEANUP + "\n    judge_server.stop()"),
        ]
    )


INSPECT_TASK = '''from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, system_message


@task
def sums(n: int = 20, epochs: int = 4, system: str = "Answer with the number only.") -> Task:
    """One-digit additions; the answer must appear in the reply."""
    return Task(
        dataset=[
            Sample(input=f"What is {a} + {b}?", target=str(a + b), id=f"{a}+{b}")
            for a, b in [((7 * i) % 10, (3 * i + 1 + i // 10) % 10) for i in range(n)]
        ],
        solver=[system_message(system), generate()],
        scorer=includes(),
        epochs=epochs,
    )
'''


def inspect_interop() -> nbformat.NotebookNode:
    return new_notebook(
        cells=[
            new_markdown_cell(
                "# An inspect_ai log against a verifiers_lite run, paired\n\nOne inspect task, two "
                "system prompts: inspect_ai itself runs the first (its own `.eval` log), this library "
                'runs the second through `vf.load_environment("inspect:...")`; the log is read '
                "back as a run and the two are compared example by example, with a paired interval."
            ),
            code(PARAMS + "\nN = 5 if SMALL else 20\nEPOCHS = 2 if SMALL else 3", ["parameters"]),
            code(
                MODEL.replace(
                    "vf.local_model_client()",
                    "vf.local_model_client(parallel=1)  # one URL for inspect",
                )
            ),
            new_markdown_cell(
                "## The task\n\nA plain inspect task file, as an inspect user writes it: samples, "
                "a system message, `generate()`, the `includes()` scorer, epochs."
            ),
            code(
                "from pathlib import Path\n\n"
                f"TASK = {INSPECT_TASK!r}\n"
                'Path("sums_task.py").write_text(TASK)\n'
                "print(TASK)"
            ),
            new_markdown_cell(
                "## Run A: inspect_ai itself\n\n`inspect eval` against the same model server, "
                "through inspect's `openai-api/<service>/<model>` provider; the log is read back "
                "with `vf.load_inspect_log`."
            ),
            code(
                "import os, subprocess, sys\n\n"
                'os.environ.update(LOCAL_BASE_URL=client.base_url, LOCAL_API_KEY="none")\n'
                'subprocess.run([sys.executable, "-m", "inspect_ai", "eval", '
                '"sums_task.py@sums", "--model", f"openai-api/local/{model}",\n'
                '                "-T", f"n={N}", "-T", f"epochs={EPOCHS}", '
                '"--log-dir", "inspect-logs", "--log-format", "eval",\n'
                '                "--temperature", "0.7", "--display", "none"], check=True)\n'
                'log_path = sorted(Path("inspect-logs").glob("*.eval"))[-1]\n'
                "a = vf.load_inspect_log(log_path)\n"
                "a"
            ),
            new_markdown_cell(
                "## Run B: the same task through verifiers_lite\n\nThe task file loads as an "
                "environment (inspect's solvers and scorer run, the model calls go through this "
                "library's client); only the system prompt differs."
            ),
            code(
                'env = vf.load_environment("inspect:sums_task.py@sums", n=N, epochs=EPOCHS,\n'
                '                          system="You are a calculator. Reply with the sum.")\n'
                "b = env.evaluate_sync(client, model, rollouts_per_example=env.epochs,\n"
                '                      sampling_args={"temperature": 0.7})\n'
                "b"
            ),
            new_markdown_cell(
                "## Paired\n\nPaired by sample id (the inputs are checked equal): the mean "
                "difference B − A with its 95% interval, p-value and wins/ties/losses per example."
            ),
            code('cmp = vf.compare_runs(a, b, labels=("inspect_ai", "verifiers_lite"))\ncmp'),
            code('vf.plot_pass_at_k({"inspect_ai": a, "verifiers_lite": b});'),
            code(CLEANUP),
        ]
    )


NOTEBOOKS = {
    "01_quickstart": quickstart,
    "02_custom_multiturn_env": custom_env,
    "03_reward_distributions": distributions,
    "04_judge_and_groups": judge_and_groups,
    "07_inspect_interop": inspect_interop,
}


def sources_hash(nb: nbformat.NotebookNode) -> str:
    """SHA-256 of the notebook's cells (type and source), what its outputs were made from."""
    cells = [[c.cell_type, c.source] for c in nb.cells]
    return hashlib.sha256(json.dumps(cells, ensure_ascii=False).encode()).hexdigest()


def build(name: str) -> nbformat.NotebookNode:
    nb = NOTEBOOKS[name]()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


def execute(nb: nbformat.NotebookNode, timeout: int = 1800) -> nbformat.NotebookNode:
    """Run ``nb`` in a fresh kernel of this interpreter against the embedded model."""
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "kernels" / "python3"
        spec.mkdir(parents=True)
        (spec / "kernel.json").write_text(
            json.dumps(
                {
                    "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                    "display_name": "Python 3",
                    "language": "python",
                }
            )
        )
        work = Path(tmp) / "work"
        work.mkdir()
        env = {
            "JUPYTER_PATH": tmp,
            "VF_NOTEBOOK_MODEL": "local",
            "VF_NOTEBOOK_SMALL": "0",
            "VF_PROGRESS": "",
        }
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            # No widget state is kept: each run's widget leaves a static HTML frame in its output.
            NotebookClient(
                nb,
                kernel_name="python3",
                timeout=timeout,
                store_widget_state=False,
                resources={"metadata": {"path": str(work)}},
            ).execute()
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    return nb


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "names",
        nargs="*",
        choices=[[], *NOTEBOOKS],
        metavar="NAME",
        help=f"notebooks to write (default: all): {', '.join(NOTEBOOKS)}",
    )
    ap.add_argument(
        "--execute",
        action="store_true",
        help="run each against the embedded model and keep outputs",
    )
    args = ap.parse_args(argv)
    for name in args.names or list(NOTEBOOKS):
        nb = build(name)
        if args.execute:
            from verifiers_lite import __version__

            t0 = time.monotonic()
            execute(nb)
            nb.metadata[STAMP] = {
                "sources_sha256": sources_hash(nb),
                "backend": "embedded SmolLM2-135M-Instruct",
                "library_version": __version__,
            }
            print(f"executed {name} in {time.monotonic() - t0:.0f} s")
        nbformat.write(nb, HERE / f"{name}.ipynb")
        print("wrote", name)


if __name__ == "__main__":
    main()
