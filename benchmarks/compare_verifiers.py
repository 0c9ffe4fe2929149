"""verifiers_lite vs verifiers==0.3.1 (the last release with the classic Environment API).

Workload: 250 examples x 4 rollouts (N=1000), single-turn and 3-turn (a MultiTurnEnv whose
env_response returns one user message, max_turns=3), 128 requests in flight, against the fake
server (verifiers_lite.testing.fake_server, model "fake-arith") at 0 ms latency on 127.0.0.1.
verifiers runs from its own virtualenv, .venv-verifiers031 (``bash .ci/install_verifiers_oracle.sh``,
which the classic-environment tests use too; gitignored, its code never committed), and each
library/case runs in its own subprocess, so CPU time, peak RSS and
import time are its own. verifiers' semaphore counts groups: 128 in flight is max_concurrent=32.

    python benchmarks/compare_verifiers.py             # set up the peer venv if needed, run all
    python benchmarks/compare_verifiers.py --turns 1   # single-turn only
    python benchmarks/compare_verifiers.py --sdk       # also AsyncOpenAI through OpenAIClientAdapter

Target: verifiers_lite >= 3x verifiers' throughput.

Last measured (2026-11-30, single-turn, load average ~10 on the 2 cores, so the CPU column is
the steadier figure): a stock AsyncOpenAI now runs on the lean transport.
    turns library                        rollouts/s CPU ms/rollout peak RSS MB import s
        1 verifiers_lite (ChatClient)           242           0.80          47     0.45
        1 verifiers_lite (AsyncOpenAI)          242           0.90          71     0.53
        1 verifiers_lite (SDK adapter)           31           7.87          75     0.75
        1 verifiers 0.3.1 (AsyncOpenAI)          44           6.93         249    25.34
          lite(AsyncOpenAI)/verifiers: throughput 5.53x, CPU/rollout 0.13 (an earlier run at load
          ~11: 11.76x, 0.10); lite(SDK adapter)/verifiers: 0.72x, CPU/rollout 1.14.
    3-turn (same day, load ~9.6, a test run beside the AsyncOpenAI case):
        3 verifiers_lite (ChatClient)           182           1.23          49     0.45
        3 verifiers_lite (AsyncOpenAI)           90           1.56          72     0.71
        3 verifiers 0.3.1 (AsyncOpenAI)          26          14.32         254    31.00
          lite(ChatClient)/verifiers: 7.06x, CPU/rollout 0.09; lite(AsyncOpenAI)/verifiers:
          3.50x, CPU/rollout 0.11.

Before that (2026-11-29, AsyncOpenAI still on the SDK's transport; 2 shared cores, load ~9; Python 3.11;
both sides on openai 3.57 / httpx2):
    turns library                        rollouts/s CPU ms/rollout peak RSS MB import s
        1 verifiers_lite (ChatClient)          1373           0.24          40     0.05
        1 verifiers_lite (AsyncOpenAI)          199           2.69          73     0.08
        1 verifiers 0.3.1 (AsyncOpenAI)         148           3.09         252     5.24
          lite(ChatClient)/verifiers: throughput 9.25x, CPU/rollout 0.08, RSS 0.16, import 0.01
          lite(AsyncOpenAI)/verifiers: throughput 1.34x, CPU/rollout 0.87, RSS 0.29
        3 verifiers_lite (ChatClient)           410           0.63          42     0.06
        3 verifiers_lite (AsyncOpenAI)           48           8.44          75     0.06
        3 verifiers 0.3.1 (AsyncOpenAI)          65           8.79         255     6.37
          lite(ChatClient)/verifiers: throughput 6.33x, CPU/rollout 0.07, RSS 0.16, import 0.01
          lite(AsyncOpenAI)/verifiers: throughput 0.75x, CPU/rollout 0.96, RSS 0.29
    Reruns of 3-turn: ChatClient 7.24x; AsyncOpenAI 0.71x in one, 1.44x (11.2 s vs 16.1 s) in
    another: with AsyncOpenAI both spend ~8.3 ms CPU per 3-turn rollout, nearly all in the
    openai/httpx2 stack (its connection pool scan), so that ratio is parity plus load noise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _rss import peak_rss_mb  # benchmarks/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]
PEER_VERSION = "0.3.1"
PEER_VENV = ROOT / ".venv-verifiers031"
PEER_PYTHON = PEER_VENV / "bin" / "python"
N_EXAMPLES, PER_EXAMPLE, IN_FLIGHT = 250, 4, 128
MODEL = "fake-arith"


def _rows() -> list[dict[str, str]]:
    return [
        {"question": f"What is {i} + {i % 9}?", "answer": str(i + i % 9)} for i in range(N_EXAMPLES)
    ]


def _peak_rss() -> float:
    return peak_rss_mb()


# --- the cases (each runs in a child process) -------------------------------------------------


def _case_lite(base_url: str, turns: int, transport: str) -> dict[str, Any]:
    """verifiers_lite with its lean ChatClient, a stock openai.AsyncOpenAI (which it runs on the
    lean transport), or that client wrapped in OpenAIClientAdapter (the SDK path)."""
    t0 = time.perf_counter()
    import verifiers_lite as vf

    vf.SingleTurnEnv, vf.MultiTurnEnv, vf.Rubric  # noqa: B018 (touch the surface used)
    import_s = time.perf_counter() - t0

    def correct(completion: list[dict[str, Any]], answer: str) -> float:
        return float(vf.extract_boxed_answer(completion[-1]["content"] or "") == answer)

    class Repeat(vf.MultiTurnEnv):
        async def env_response(
            self, messages: list[dict[str, Any]], state: Any
        ) -> list[dict[str, Any]]:
            return [{"role": "user", "content": "Check again."}]

    rubric = vf.Rubric([correct])
    env = (
        vf.SingleTurnEnv(dataset=_rows(), rubric=rubric)
        if turns == 1
        else Repeat(dataset=_rows(), rubric=rubric, max_turns=turns)
    )
    if transport in ("openai", "sdk"):
        import openai

        client: Any = openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0)
        if transport == "sdk":
            client = vf.OpenAIClientAdapter(client)
    else:
        client = vf.ChatClient(base_url)
    env.evaluate_sync(client, MODEL, num_examples=4, progress=False)  # warm up
    t0, c0 = time.perf_counter(), time.process_time()
    out = env.evaluate_sync(
        client, MODEL, rollouts_per_example=PER_EXAMPLE, max_concurrent=IN_FLIGHT, progress=False
    )
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    assert len(out) == N_EXAMPLES * PER_EXAMPLE and not out.summary["errors"], out.summary
    return {"wall": wall, "cpu": cpu, "n": len(out), "import_s": import_s}


def _case_peer(base_url: str, turns: int, transport: str) -> dict[str, Any]:
    """verifiers 0.3.1 (run by the peer venv's python) through its OpenAIChatCompletionsClient."""
    t0 = time.perf_counter()
    import verifiers as vf  # type: ignore[import-not-found]

    vf.SingleTurnEnv, vf.MultiTurnEnv, vf.Rubric  # noqa: B018 (its root is lazy: load the v0 surface)
    import_s = time.perf_counter() - t0
    from datasets import Dataset
    from openai import AsyncOpenAI

    vf.quiet_verifiers()

    def correct(completion: list[Any], answer: str, **kwargs: Any) -> float:
        return float(vf.extract_boxed_answer(completion[-1].content or "") == answer)

    class Repeat(vf.MultiTurnEnv):  # type: ignore[misc]
        async def env_response(self, messages: list[Any], state: Any, **kwargs: Any) -> list[Any]:
            return [vf.UserMessage(content="Check again.")]  # its fast path (no re-validation)

    rubric = vf.Rubric(funcs=[correct])
    dataset = Dataset.from_list(_rows())
    env = (
        vf.SingleTurnEnv(dataset=dataset, rubric=rubric)
        if turns == 1
        else Repeat(dataset=dataset, rubric=rubric, max_turns=turns)
    )
    client = vf.OpenAIChatCompletionsClient(
        AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0)
    )

    def quiet(*args: Any) -> None:  # replaces its default tqdm bar (on_start makes it)
        return None

    async def run() -> tuple[Any, float, float]:
        # one loop for warm-up and run (its generate_sync makes a new loop per call, which the
        # AsyncOpenAI pool does not survive); the same work as its evaluate(), minus the tqdm bar
        await env.generate(
            env._get_eval_inputs(4, 1), client, MODEL, on_start=quiet, on_progress=quiet
        )
        t0, c0 = time.perf_counter(), time.process_time()
        # its semaphore is taken per group of PER_EXAMPLE requests
        out = await env.generate(
            env._get_eval_inputs(-1, PER_EXAMPLE),
            client,
            MODEL,
            max_concurrent=IN_FLIGHT // PER_EXAMPLE,
            on_start=quiet,
            on_progress=quiet,
        )
        return out, time.perf_counter() - t0, time.process_time() - c0

    out, wall, cpu = asyncio.run(run())
    outputs = out["outputs"]
    errors = [o["error"] for o in outputs if o.get("error")]
    assert len(outputs) == N_EXAMPLES * PER_EXAMPLE and not errors, errors[:3]
    return {"wall": wall, "cpu": cpu, "n": len(outputs), "import_s": import_s}


def _child(args: argparse.Namespace) -> None:
    fn = _case_peer if args.impl == "peer" else _case_lite
    result = fn(args.base_url, args.turns, args.transport)
    result["peak_rss_mb"] = _peak_rss()
    print(json.dumps(result))


# --- the driver ---------------------------------------------------------------------------------


def ensure_peer_venv() -> Path:
    """.venv-verifiers031 with verifiers 0.3.1, built by its install script when missing."""
    check = [
        str(PEER_PYTHON),
        "-c",
        f"import importlib.metadata as m; assert m.version('verifiers') == '{PEER_VERSION}'",
    ]
    if PEER_PYTHON.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return PEER_PYTHON
    subprocess.run(["bash", str(ROOT / ".ci" / "install_verifiers_oracle.sh")], check=True)
    subprocess.run(check, check=True)
    return PEER_PYTHON


def _run_case(python: Path, impl: str, transport: str, turns: int, base_url: str) -> dict[str, Any]:
    cmd = [
        str(python),
        __file__,
        "--child",
        "--impl",
        impl,
        "--transport",
        transport,
        "--turns",
        str(turns),
        "--base-url",
        base_url,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode:
        print(proc.stderr[-3000:])
        raise SystemExit(f"{impl}/{transport}/{turns}-turn failed")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--turns", type=int, choices=(1, 3), action="append", help="1 and/or 3 (default both)"
    )
    parser.add_argument(
        "--sdk",
        action="store_true",
        help="also run AsyncOpenAI through vf.OpenAIClientAdapter (the SDK's own transport)",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--impl", default="lite", help=argparse.SUPPRESS)
    parser.add_argument("--transport", default="chat", help=argparse.SUPPRESS)
    parser.add_argument("--base-url", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        args.turns = args.turns[0] if isinstance(args.turns, list) else args.turns
        return _child(args)

    peer_python = ensure_peer_venv()
    sys.path.insert(0, str(ROOT))
    from verifiers_lite.testing.fake_server import FakeServerProcess

    cases = [
        ("lite", "chat", "verifiers_lite (ChatClient)", Path(sys.executable)),
        ("lite", "openai", "verifiers_lite (AsyncOpenAI)", Path(sys.executable)),
        ("peer", "openai", f"verifiers {PEER_VERSION} (AsyncOpenAI)", peer_python),
    ]
    if args.sdk:
        cases.insert(2, ("lite", "sdk", "verifiers_lite (SDK adapter)", Path(sys.executable)))
    print(
        f"{N_EXAMPLES} examples x {PER_EXAMPLE} rollouts, {IN_FLIGHT} requests in flight, fake server 0 ms; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    print(
        f"{'turns':>5} {'library':<30} {'rollouts/s':>10} {'CPU ms/rollout':>14} {'peak RSS MB':>11} {'import s':>8}"
    )
    with FakeServerProcess(latency_ms=0) as server:
        for turns in args.turns or [1, 3]:
            res: dict[str, dict[str, Any]] = {}
            for impl, transport, label, python in cases:
                r = _run_case(python, impl, transport, turns, server.base_url)
                res[f"{impl}/{transport}"] = r
                print(
                    f"{turns:>5} {label:<30} {r['n'] / r['wall']:>10.0f} {r['cpu'] * 1000 / r['n']:>14.2f} "
                    f"{r['peak_rss_mb']:>11.0f} {r['import_s']:>8.2f}",
                    flush=True,
                )
            peer = res["peer/openai"]
            for key, name in (
                ("lite/chat", "ChatClient"),
                ("lite/openai", "AsyncOpenAI"),
                ("lite/sdk", "SDK adapter"),
            ):
                if key not in res:
                    continue
                r = res[key]
                print(
                    f"      ratio lite({name})/verifiers: throughput {peer['wall'] / r['wall']:.2f}x "
                    f"(target >= 3x), CPU/rollout {r['cpu'] / peer['cpu']:.2f}, "
                    f"peak RSS {r['peak_rss_mb'] / peer['peak_rss_mb']:.2f}, "
                    f"import {r['import_s'] / peer['import_s']:.2f}"
                )


if __name__ == "__main__":
    main()
