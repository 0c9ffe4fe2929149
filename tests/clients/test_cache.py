"""Response cache: re-scoring without the model, per-rollout-index samples, no sharing across
sampling arguments, errors never cached, `vf-lite cache stats|clear`."""

from __future__ import annotations

import pytest

import verifiers_lite as vf
from tests.helpers.envs import arithmetic_rows, boxed_correct, boxed_off_by
from verifiers_lite.cli import main as cli_main

HOT = {"temperature": 0.7}


def env_with(reward, n: int = 6, **kwargs) -> vf.SingleTurnEnv:
    return vf.SingleTurnEnv(dataset=arithmetic_rows(n), rubric=vf.Rubric([reward]), **kwargs)


def run(env, server, cache, **kwargs):
    kwargs.setdefault("rollouts_per_example", 3)
    kwargs.setdefault("sampling_args", HOT)
    return env.evaluate_sync(
        vf.ChatClient(server.base_url), "fake-arith", progress=False, cache=cache, **kwargs
    )


def test_rerun_with_a_changed_rubric_is_all_hits_and_scores_like_a_fresh_run(fake_server, tmp_path):
    cache = tmp_path / "c.sqlite"
    first = run(env_with(boxed_correct), fake_server, cache)
    assert first.metadata["cache"] == {
        "path": str(cache),
        "hits": 0,
        "misses": 18,
        "hit_ratio": 0.0,
    }
    assert fake_server.stats()["requests"] == 18
    second = run(env_with(boxed_off_by), fake_server, cache)
    assert fake_server.stats()["requests"] == 18  # the model was not called again
    assert second.summary["cache"]["hit_ratio"] == 1.0 and second.summary["cache"]["hits"] == 18
    assert [r["completion"] for r in second.rows] == [r["completion"] for r in first.rows]
    # The new rubric's rewards, computed by hand on the first run's completions.
    assert [r["reward"] for r in second.rows] == [
        boxed_off_by(r["completion"], r["answer"]) for r in first.rows
    ]
    assert "cache: 18 hits / 0 misses" in repr(second)


def test_each_rollout_index_keeps_its_own_sample(fake_server, tmp_path):
    cache = tmp_path / "c.sqlite"
    fake_server.configure(correct_rate=0.5)
    first = run(env_with(boxed_correct, 8), fake_server, cache, rollouts_per_example=4)
    # temperature > 0: the rollouts of one example are distinct samples (4 misses per example) ...
    assert first.metadata["cache"]["misses"] == 32
    by_example: dict = {}
    for r in first.rows:
        by_example.setdefault(r["example_id"], set()).add(r["completion"][0]["content"])
    assert any(len(v) > 1 for v in by_example.values()), (
        "the fake server should vary answers at temperature > 0"
    )
    # ... and a rerun gives every (example, rollout index) back its own answer.
    again = run(env_with(boxed_correct, 8), fake_server, cache, rollouts_per_example=4)
    assert again.metadata["cache"]["hits"] == 32
    key = lambda r: (r["example_id"], r["rollout_index"])  # noqa: E731
    assert {key(r): r["completion"] for r in again.rows} == {
        key(r): r["completion"] for r in first.rows
    }


@pytest.mark.parametrize(
    "other",
    [{"temperature": 0.8}, {"temperature": 0.7, "seed": 1}, {"temperature": 0.7, "max_tokens": 5}],
)
def test_entries_are_never_shared_across_sampling_args(fake_server, tmp_path, other):
    cache = tmp_path / "c.sqlite"
    run(env_with(boxed_correct), fake_server, cache)
    out = run(env_with(boxed_correct), fake_server, cache, sampling_args=other)
    assert out.metadata["cache"]["hits"] == 0 and out.metadata["cache"]["misses"] == 18
    assert fake_server.stats()["requests"] == 36
    # The same call with the same args hits again: the store holds both.
    out = run(env_with(boxed_correct), fake_server, cache, sampling_args=other)
    assert out.metadata["cache"]["hit_ratio"] == 1.0


def test_multi_turn_rollouts_are_replayed_turn_by_turn(fake_server, tmp_path):
    env = vf.load_environment("guess_number", num_examples=4)
    client = vf.ChatClient(fake_server.base_url)
    first = env.evaluate_sync(
        client, "fake-guess", rollouts_per_example=2, progress=False, cache=tmp_path / "c"
    )
    calls = fake_server.stats()["requests"]
    assert first.metadata["cache"]["misses"] == calls > 8  # several turns per game
    again = env.evaluate_sync(
        client, "fake-guess", rollouts_per_example=2, progress=False, cache=tmp_path / "c"
    )
    assert fake_server.stats()["requests"] == calls and again.metadata["cache"]["hits"] == calls
    assert [r["completion"] for r in again.rows] == [r["completion"] for r in first.rows]


def test_failed_calls_are_not_cached(fake_server, tmp_path):
    client = vf.ChatClient(fake_server.base_url, retry=vf.RetryPolicy(max_attempts=1))
    fake_server.configure(faults=[{"status": 500}] * 2)
    env = env_with(boxed_correct, 2)
    first = env.evaluate_sync(
        client,
        "fake-arith",
        rollouts_per_example=2,
        sampling_args=HOT,
        progress=False,
        cache=tmp_path / "c",
    )
    assert sum(1 for r in first.rows if r["error"]) == 2
    assert first.metadata["cache"]["misses"] == 2  # only answers are counted and stored
    again = env.evaluate_sync(
        client,
        "fake-arith",
        rollouts_per_example=2,
        sampling_args=HOT,
        progress=False,
        cache=tmp_path / "c",
    )
    assert all(r["error"] is None for r in again.rows)
    assert again.metadata["cache"] == {
        "path": str(tmp_path / "c"),
        "hits": 2,
        "misses": 2,
        "hit_ratio": 0.5,
    }


def test_chat_client_with_its_own_cache(fake_server, tmp_path):
    client = vf.ChatClient(fake_server.base_url, cache=tmp_path / "own.sqlite")
    env = env_with(boxed_correct, 3)
    env.evaluate_sync(
        client, "fake-arith", rollouts_per_example=2, sampling_args=HOT, progress=False
    )
    out = env.evaluate_sync(
        client, "fake-arith", rollouts_per_example=2, sampling_args=HOT, progress=False
    )
    assert (
        out.metadata["cache"]["hits"] == 6 and out.metadata["cache"]["misses"] == 0
    )  # this run's counts
    assert fake_server.stats()["requests"] == 6


def test_bad_cache_arguments_fail_before_any_request(fake_server, tmp_path):
    with pytest.raises(ValueError, match="cache must be True, a file path or a ResponseCache"):
        run(env_with(boxed_correct), fake_server, cache=42)
    with pytest.raises(ValueError, match="is a directory"):
        run(env_with(boxed_correct), fake_server, cache=tmp_path)
    assert fake_server.stats()["requests"] == 0


def test_cli_cache_stats_and_clear(fake_server, tmp_path, capsys):
    path = tmp_path / "c.sqlite"
    run(env_with(boxed_correct), fake_server, path)
    assert cli_main(["cache", "stats", "--path", str(path)]) == 0
    out = capsys.readouterr().out
    assert "18 entries" in out and "fake-arith" in out
    assert cli_main(["cache", "clear", "--path", str(path)]) == 0
    assert "deleted 18 entries" in capsys.readouterr().out
    assert vf.ResponseCache(path).stats()["entries"] == 0
    assert cli_main(["cache", "stats", "--path", str(tmp_path / "missing.sqlite")]) == 2
    assert "no response cache" in capsys.readouterr().err


def test_hits_and_misses_reach_the_progress_display_live(fake_server, tmp_path):
    from verifiers_lite.ui.notebook.summary_html import stats_line

    seen: list[tuple] = []
    lines: list[str] = []

    def on_progress(stats, rows):
        seen.append((stats.cache_hits, stats.cache_misses))
        lines.append(stats_line(stats))

    env = env_with(boxed_correct, 6)
    client = vf.ChatClient(fake_server.base_url)
    env.evaluate_sync(
        client,
        "fake-arith",
        rollouts_per_example=2,
        sampling_args=HOT,
        progress=False,
        cache=tmp_path / "c",
        on_progress=on_progress,
        max_concurrent=1,
    )
    assert (
        seen[-1] == (0, 12)
        and [m for _, m in seen] == sorted(m for _, m in seen)
        and seen[0][1] < 12
    )
    seen.clear()
    env.evaluate_sync(
        client,
        "fake-arith",
        rollouts_per_example=2,
        sampling_args=HOT,
        progress=False,
        cache=tmp_path / "c",
        on_progress=on_progress,
        max_concurrent=1,
    )
    assert seen[-1] == (12, 0) and all(m == 0 for _, m in seen) and seen[0][0] < 12
    assert "cache 12 hits / 0 misses" in lines[-1]


def test_cache_with_an_out_of_process_executor_is_refused(fake_server, tmp_path):
    class Elsewhere:  # any executor that is not the in-process one
        async def start(self, ctx, group_size):
            raise AssertionError("must not start")

    with pytest.raises(ValueError, match="cache= works with the in-process executor only"):
        run(env_with(boxed_correct), fake_server, cache=tmp_path / "c", executor=Elsewhere())
    assert fake_server.stats()["requests"] == 0


class _DeclaredInProcess:
    """An executor of the user's own, not a subclass of the in-process one: it declares
    ``in_process`` and runs units through one it holds."""

    in_process = True

    def __init__(self) -> None:
        self.inner = vf.executors.LocalExecutor()
        self.units = 0

    async def start(self, ctx, group_size):
        return await self.inner.start(ctx, group_size)

    async def run(self, unit):
        self.units += 1
        return await self.inner.run(unit)

    def summary(self):
        return self.inner.summary()

    async def close(self):
        await self.inner.close()


def test_an_executor_declaring_in_process_gets_the_cache(fake_server, tmp_path):
    cache = tmp_path / "c"
    first = run(env_with(boxed_correct), fake_server, cache, executor=_DeclaredInProcess())
    assert first.metadata["cache"]["misses"] == 18 and fake_server.stats()["requests"] == 18
    executor = _DeclaredInProcess()
    second = run(env_with(boxed_correct), fake_server, cache, executor=executor)
    assert executor.units == 6 and second.metadata["cache"]["hits"] == 18
    assert fake_server.stats()["requests"] == 18  # answered from the cache, not the model
