"""Child process for the EnvGroup kill test: evaluates a group with results_path until killed."""

import sys

import verifiers_lite as vf
from tests.helpers.envs import group

if __name__ == "__main__":
    base_url, results_path = sys.argv[1], sys.argv[2]
    out = group(8, 6).evaluate_sync(
        vf.ChatClient(base_url),
        "fake-arith",
        rollouts_per_example=3,
        max_concurrent=4,
        results_path=results_path,
        progress=False,
        sampling_args={"temperature": 0},
    )
    print(len(out))
