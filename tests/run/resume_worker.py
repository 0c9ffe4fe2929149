"""Child process for the resume tests: runs a generate with results_path until done or killed."""

import signal
import sys

import verifiers_lite as vf
from tests.helpers.envs import make_env

if __name__ == "__main__":
    # Ctrl-C as in a terminal: a suite started as a background job passes SIGINT on ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    base_url, results_path, independent = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
    use_ray = len(sys.argv) > 4 and sys.argv[4] == "ray"
    executor = None
    if use_ray:
        import ray

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        executor = vf.executors.RayExecutor(num_workers=2)
    env = make_env(12)
    out = env.evaluate_sync(
        vf.ChatClient(base_url),
        "fake-arith",
        rollouts_per_example=3,
        max_concurrent=4,
        results_path=results_path,
        independent_scoring=independent,
        progress=False,
        executor=executor,
    )
    print(len(out))
