"""MultiTurnRollout as a Ray actor on a local 2-CPU cluster: same results as in-process."""

from __future__ import annotations

import importlib.util
import json

import pytest

from verifiers_lite.rollout import MultiTurnRollout, SamplingParams, ToolManager, remote_rollout
from verifiers_lite.rollout.testing import ScriptedSampler, toy_template

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="ray not importable: pip install 'verifiers_lite[ray]'",
)


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def respond(prompt: str) -> str:
    if "<|im_start|>tool" not in prompt:
        return '<tool_call>{"name": "add", "arguments": {"a": 4, "b": 5}}</tool_call>'
    return "nine"


def make_rollout() -> MultiTurnRollout:
    template = toy_template()
    return MultiTurnRollout(
        ScriptedSampler(template, respond),
        template,
        ToolManager([add]),
        SamplingParams(max_tokens=300, logprobs=0),
        max_turns=3,
    )


@pytest.fixture(scope="module")
def ray_cluster():
    import sys

    import ray
    import ray.cloudpickle

    # Workers cannot import this test module: ship its functions by value.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()


def test_actor_gives_same_results_as_in_process(ray_cluster) -> None:
    ray = ray_cluster
    trajs = [{"messages": [{"role": "user", "content": f"q{i}"}], "i": i} for i in range(4)]
    local = make_rollout()(trajs)
    template = toy_template()
    actor = MultiTurnRollout.remote(
        ScriptedSampler(template, respond),
        template,
        ToolManager([add]),
        SamplingParams(max_tokens=300, logprobs=0),
        max_turns=3,
    )
    remote = ray.get(actor.__call__.remote(trajs))
    assert json.dumps(remote, sort_keys=True) == json.dumps(local, sort_keys=True)
    factory_actor = remote_rollout(make_rollout)
    assert ray.get(factory_actor.run.remote(trajs)) == local
    ray.kill(actor)
    ray.kill(factory_actor)
