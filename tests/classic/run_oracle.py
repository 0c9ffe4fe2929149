"""Run corpus environments under verifiers 0.3.1 (the reference) and write their rollouts.

Executed by ``.venv-verifiers031/bin/python tests/classic/run_oracle.py --base-url URL --out DIR
NAME...``: for each NAME, ``vf.load_environment(NAME, **args)`` and ``evaluate_sync`` against the
deterministic model, then ``DIR/NAME.json`` (see ``records.py``). A failing environment writes
its traceback under ``failure`` instead, and the others still run.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Run by path, possibly by another venv's Python (.venv-verifiers031 has no verifiers_lite and no
# pytest rootdir): the checkout goes on the path so that ``tests.classic`` imports.
sys.path.insert(0, str(HERE.parents[1]))

from tests.classic import local_datasets  # noqa: E402
from tests.classic.corpus_specs import (  # noqa: E402
    MODEL_NAME,
    SAMPLING_ARGS,
    SPECS,
    env_args,
    module_dirs,
    module_name,
)
from tests.classic.records import rollout_record, write  # noqa: E402

sys.path[1:1] = module_dirs()
local_datasets.install()  # before verifiers: its modules bind load_dataset when imported
os.environ.setdefault("CLASSIC_STUB_API_KEY", "stub")


def run_env(vf, name: str, base_url: str) -> list[dict]:
    spec = SPECS[name]
    random.seed(0)  # environments that draw from the global random at load time draw alike
    env = vf.load_environment(module_name(name), **env_args(name, base_url, oracle=True))
    kind = "openai_completions" if env.message_type == "completion" else "openai_chat_completions"
    client = vf.ClientConfig(
        api_base_url=base_url, api_key_var="CLASSIC_STUB_API_KEY", client_type=kind, max_retries=0
    )
    results = env.evaluate_sync(
        client,
        MODEL_NAME,
        sampling_args=dict(SAMPLING_ARGS),
        num_examples=spec["num_examples"],
        rollouts_per_example=spec["rollouts"],
    )
    return [
        rollout_record(
            o["example_id"], o.get("reward"), o.get("metrics"), o.get("completion"), o.get("error")
        )
        for o in results["outputs"]
    ]


ENV_TIMEOUT_S = 180  # one environment's load and evaluation; a hang becomes its failure


def _timed_out(signum: int, frame: object) -> None:
    raise TimeoutError(f"the environment did not finish within {ENV_TIMEOUT_S} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("names", nargs="+")
    args = parser.parse_args()
    import verifiers as vf

    args.out.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGALRM, _timed_out)
    for name in args.names:
        signal.alarm(ENV_TIMEOUT_S)
        try:
            write(
                args.out / f"{name}.json",
                name,
                f"verifiers {vf.__version__}",
                run_env(vf, name, args.base_url),
            )
        except Exception:
            (args.out / f"{name}.failure").write_text(traceback.format_exc())
        finally:
            signal.alarm(0)


if __name__ == "__main__":
    main()
