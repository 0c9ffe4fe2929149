"""A run seed gives every rollout its own derived sampling seed: sent with each request,
recorded on the row, the same on a rerun, different within a group."""

from __future__ import annotations

import pytest

import verifiers_lite as vf
from verifiers_lite.core.model_client import ChatResponse


class SeedRecorder:
    """A model client that answers "= 0" and keeps the seed each request carried, by question."""

    def __init__(self) -> None:
        self.seeds: list[tuple[str, object]] = []

    async def chat(self, model, messages, sampling_args=None, tools=None) -> ChatResponse:
        self.seeds.append((messages[-1]["content"], (sampling_args or {}).get("seed")))
        return ChatResponse({"role": "assistant", "content": "= 0"})


def _run(seed, **kw):
    client = SeedRecorder()
    env = vf.load_environment("arithmetic", num_examples=3)
    out = env.evaluate_sync(client, "m", rollouts_per_example=4, seed=seed, progress=False, **kw)
    return out, client


def test_each_rollout_gets_its_own_seed_sent_and_recorded():
    out, client = _run(5)
    seeds = [r["seed"] for r in out.rows]
    assert (
        all(isinstance(s, int) for s in seeds) and len(set(seeds)) == 12
    )  # distinct, groups included
    sent = sorted(s for _, s in client.seeds)
    assert sent == sorted(seeds)  # what the server got is what the rows say
    assert out.metadata["seed"] == 5 and "seed" in out.to_pandas().columns


def test_same_seed_same_seeds_other_seed_other_seeds():
    a, _ = _run(5)
    b, _ = _run(5)
    c, _ = _run(6)
    key = lambda out: [(r["example_id"], r["rollout_index"], r["seed"]) for r in out.rows]  # noqa: E731
    assert key(a) == key(b)
    assert not {r["seed"] for r in a.rows} & {r["seed"] for r in c.rows}


def test_no_run_seed_sends_none_and_a_fixed_sampling_seed_wins():
    out, client = _run(None)
    assert {s for _, s in client.seeds} == {None} and all("seed" not in r for r in out.rows)
    out, client = _run(5, sampling_args={"seed": 42})
    assert {s for _, s in client.seeds} == {42} and out.metadata["seed"] is None


def test_resume_with_another_seed_is_refused(tmp_path):
    _run(5, results_path=str(tmp_path))
    with pytest.raises(vf.ResumeMismatchError, match="seed"):
        _run(6, results_path=str(tmp_path))
    out, client = _run(5, results_path=str(tmp_path))
    assert len(out) == 12 and client.seeds == []  # same seed: everything reused


def test_bad_seed_is_refused_before_any_request():
    client = SeedRecorder()
    env = vf.load_environment("arithmetic", num_examples=2)
    with pytest.raises(ValueError, match="seed must be an integer"):
        env.generate_sync(env.get_eval_inputs(2), client, "m", seed="7", progress=False)
    assert client.seeds == []


@pytest.mark.slow
@pytest.mark.local_model
def test_embedded_model_samples_reproducibly_and_groups_differ(local_llm):
    env = vf.load_environment("arithmetic", num_examples=2, max_tokens=12)
    args = {"temperature": 1.0, "top_p": 1.0}

    def texts(seed):
        out = env.evaluate_sync(
            local_llm.client(),
            local_llm.model_name,
            rollouts_per_example=4,
            seed=seed,
            sampling_args=args,
            progress=False,
            max_concurrent=1,
        )
        return [r["completion"][-1]["content"] for r in out.rows]

    first, again, other = texts(11), texts(11), texts(12)
    assert first == again  # reproducible on purpose
    assert (
        len(set(first[:4])) > 1 or len(set(first[4:])) > 1
    )  # a group's samples are not all the same
    assert first != other
