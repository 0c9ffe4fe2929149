"""Run corpus environments under verifiers_lite and write their rollouts (as ``run_oracle.py``).

Executed in its own process by verifiers_lite's Python: ``python tests/classic/run_lite.py
--base-url URL --out DIR NAME...``. Each NAME is loaded with
``verifiers_lite.load_environment(NAME, **args)`` — the classic module unchanged — and evaluated
against the deterministic model. ``DIR/_process.json`` says where ``import verifiers`` led
before the runs (looked up, not imported) and after them (imported): beside a real verifiers
distribution, the classic environments must leave it what other code in the process imports.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import random
import signal
import sys
import traceback
import warnings
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
local_datasets.install()


def verifiers_spec() -> str | None:
    """Where ``import verifiers`` would load from (None: nowhere), without importing it."""
    spec = (
        importlib.util.find_spec("verifiers")
        if "verifiers" not in sys.modules
        else sys.modules["verifiers"].__spec__
    )
    return None if spec is None else str(spec.origin)


def imported_verifiers() -> dict[str, str | None]:
    """What ``import verifiers`` gives code outside the classic environments."""
    try:
        module = importlib.import_module("verifiers")
    except ImportError as exc:
        return {"error": repr(exc)}
    return {
        "version": getattr(module, "__version__", None),
        "file": getattr(module, "__file__", None),
        "has_SingleTurnEnv": str(hasattr(module, "SingleTurnEnv")),
    }


def run_env(name: str, base_url: str) -> list[dict]:
    import openai

    import verifiers_lite

    spec = SPECS[name]
    random.seed(0)  # environments that draw from the global random at load time draw alike
    env = verifiers_lite.load_environment(module_name(name), **env_args(name, base_url))
    client = openai.AsyncOpenAI(base_url=base_url, api_key="stub", max_retries=0)
    out = env.evaluate_sync(
        client,
        MODEL_NAME,
        num_examples=spec["num_examples"],
        rollouts_per_example=spec["rollouts"],
        sampling_args=dict(SAMPLING_ARGS),
        progress=False,
    )
    return [
        rollout_record(
            r["example_id"], r.get("reward"), r.get("metrics"), r.get("completion"), r.get("error")
        )
        for r in out.rows
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
    args.out.mkdir(parents=True, exist_ok=True)
    before = verifiers_spec()
    signal.signal(signal.SIGALRM, _timed_out)
    left: dict[str, list[str]] = {}
    for name in args.names:
        signal.alarm(ENV_TIMEOUT_S)
        plain = {n: sys.modules.get(n) for n in top_level_names(name)}
        os.environ["VF_CLASSIC_MODE"] = SPECS[name].get("lite_mode", "0.3.1")
        try:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                rollouts = run_env(name, args.base_url)
            write(args.out / f"{name}.json", name, "verifiers_lite", rollouts)
            (args.out / f"{name}.warnings.json").write_text(
                json.dumps([f"{w.category.__name__}: {w.message}" for w in seen])
            )
        except Exception:
            (args.out / f"{name}.failure").write_text(traceback.format_exc())
        finally:
            signal.alarm(0)
        left[name] = [n for n, m in plain.items() if sys.modules.get(n) is not m]
    (args.out / "_process.json").write_text(
        json.dumps({"before": before, "after": imported_verifiers(), "left_in_sys_modules": left})
    )


def top_level_names(name: str) -> list[str]:
    """The environment module's name and its helpers' top-level names."""
    helpers = [h.split("/")[0].removesuffix(".py") for h in SPECS[name].get("helpers", [])]
    return list(dict.fromkeys([module_name(name), *helpers]))


if __name__ == "__main__":
    main()
