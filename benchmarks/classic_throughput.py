"""Throughput of a classic verifiers environment: verifiers_lite against verifiers 0.3.1.

The same corpus environment (``tests/classic/corpus``, unchanged), the same deterministic model
(``verifiers_lite.testing.conversation_model`` on 127.0.0.1, in its own process), the same
examples, rollouts per example and sampling arguments. Each framework runs in a process of its
own — verifiers 0.3.1 in ``.venv-verifiers031`` (``bash .ci/install_verifiers_oracle.sh``),
verifiers_lite in this Python — loads the environment, warms up on one example, then evaluates;
the figures are that evaluation's wall time and its process CPU (all threads; the model
server's CPU is not counted).

    python benchmarks/classic_throughput.py [--env vf_word_guess] [--rollouts-per-example 20] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ORACLE_PYTHON = ROOT / ".venv-verifiers031" / "bin" / "python"


def _load(framework: str, name: str, base_url: str) -> tuple[Any, Any]:
    """The environment and a client for it, in ``framework``'s own way."""
    from tests.classic.corpus_specs import env_args

    if framework == "verifiers":
        import verifiers as vf

        env = vf.load_environment(name, **env_args(name, base_url))
        kind = (
            "openai_completions" if env.message_type == "completion" else "openai_chat_completions"
        )
        return env, vf.ClientConfig(
            api_base_url=base_url,
            api_key_var="CLASSIC_STUB_API_KEY",
            client_type=kind,
            max_retries=0,
        )
    import openai

    import verifiers_lite

    env = verifiers_lite.load_environment(name, **env_args(name, base_url))
    return env, openai.AsyncOpenAI(base_url=base_url, api_key="stub", max_retries=0)


def _evaluate(framework: str, env: Any, client: Any, examples: int, rollouts: int) -> int:
    from tests.classic.corpus_specs import MODEL_NAME, SAMPLING_ARGS

    if framework == "verifiers":
        out = env.evaluate_sync(
            client,
            MODEL_NAME,
            sampling_args=dict(SAMPLING_ARGS),
            num_examples=examples,
            rollouts_per_example=rollouts,
        )
        return len(out["outputs"])
    rows = env.evaluate_sync(
        client,
        MODEL_NAME,
        num_examples=examples,
        rollouts_per_example=rollouts,
        sampling_args=dict(SAMPLING_ARGS),
        progress=False,
    ).rows
    return len(rows)


def worker(
    framework: str, name: str, base_url: str, examples: int, rollouts: int
) -> dict[str, Any]:
    """One framework's timed evaluation, in this process."""
    import os

    sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "classic" / "corpus")]
    random.seed(0)  # as the differential test does
    os.environ.setdefault("CLASSIC_STUB_API_KEY", "stub")
    from tests.classic import local_datasets

    local_datasets.install()
    started = time.perf_counter()
    env, client = _load(framework, name, base_url)
    loaded = time.perf_counter() - started
    _evaluate(framework, env, client, 1, 1)  # imports, pools and caches warmed outside the timing
    wall, cpu = time.perf_counter(), time.process_time()
    done = _evaluate(framework, env, client, examples, rollouts)
    return {
        "rollouts": done,
        "wall_s": time.perf_counter() - wall,
        "cpu_s": time.process_time() - cpu,
        "load_s": loaded,
    }


def _run_worker(
    python: Path | str, framework: str, args: argparse.Namespace, base_url: str
) -> dict[str, Any]:
    cmd = [
        str(python),
        __file__,
        "--worker",
        framework,
        "--env",
        args.env,
        "--base-url",
        base_url,
        "--examples",
        str(args.examples),
        "--rollouts-per-example",
        str(args.rollouts_per_example),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"{framework} worker failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _row(label: str, runs: list[dict[str, Any]]) -> tuple[str, float, float]:
    best = min(runs, key=lambda r: r["wall_s"])
    rate = best["rollouts"] / best["wall_s"]
    cpu_ms = 1000 * min(r["cpu_s"] / r["rollouts"] for r in runs)
    return label, rate, cpu_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", default="vf_word_guess")
    parser.add_argument(
        "--examples", type=int, default=-1, help="examples of the environment's eval set (-1: all)"
    )
    parser.add_argument("--rollouts-per-example", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--worker", choices=["verifiers", "verifiers_lite"])
    parser.add_argument("--base-url")
    args = parser.parse_args()
    if args.worker:
        print(
            json.dumps(
                worker(
                    args.worker, args.env, args.base_url, args.examples, args.rollouts_per_example
                )
            )
        )
        return
    if not ORACLE_PYTHON.exists():
        raise SystemExit(f"{ORACLE_PYTHON} is missing: run bash .ci/install_verifiers_oracle.sh")
    from verifiers_lite.testing.conversation_server import ConversationServerProcess

    with ConversationServerProcess() as server:
        runs: dict[str, list[dict[str, Any]]] = {"verifiers 0.3.1": [], "verifiers_lite": []}
        for _ in range(args.repeats):  # interleaved, so drifting machine load hits both alike
            runs["verifiers 0.3.1"].append(
                _run_worker(ORACLE_PYTHON, "verifiers", args, server.base_url)
            )
            runs["verifiers_lite"].append(
                _run_worker(sys.executable, "verifiers_lite", args, server.base_url)
            )
    rows = [_row(label, r) for label, r in runs.items()]
    n = runs["verifiers_lite"][0]["rollouts"]
    print(
        f"{args.env}: {n} rollouts ({args.rollouts_per_example} per example), best of {args.repeats}"
    )
    print(f"{'framework':<18}{'rollouts/s':>12}{'CPU ms/rollout':>16}")
    for label, rate, cpu_ms in rows:
        print(f"{label:<18}{rate:>12.1f}{cpu_ms:>16.2f}")
    (_, ref_rate, ref_cpu), (_, rate, cpu) = rows
    print(
        f"verifiers_lite / verifiers 0.3.1: {rate / ref_rate:.2f}x rollouts/s, {cpu / ref_cpu:.2f}x CPU per rollout"
    )


if __name__ == "__main__":
    main()
