"""Child process of the resume property test: one generate() from a JSON config, until done or killed."""

import json
import sys

import verifiers_lite as vf
from tests.helpers.envs import boxed_correct


def build(cfg: dict):
    rows = [{"question": f"What is {a} + {b}?", "answer": str(a + b)} for a, b in cfg["pairs"]]
    env = vf.SingleTurnEnv(
        dataset=rows, rubric=vf.Rubric([boxed_correct]), env_args={"seed": cfg["seed"]}
    )
    kwargs = dict(
        num_examples=cfg["num_examples"],
        rollouts_per_example=cfg["rollouts"],
        independent_scoring=cfg["independent"],
        sampling_args={"temperature": 0, **cfg["sampling"]},
        max_concurrent=2,
        progress=False,
    )
    return env, kwargs


if __name__ == "__main__":
    base_url, results_path, cfg = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    env, kwargs = build(cfg)
    env.evaluate_sync(vf.ChatClient(base_url), cfg["model"], results_path=results_path, **kwargs)
