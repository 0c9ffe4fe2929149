import verifiers_lite as vf
from tests.helpers.envs import make_env


def test_evaluate_against_fake_server_gives_scored_rows(fake_server):
    env = make_env(8)
    out = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-arith", rollouts_per_example=2, progress=False
    )
    assert len(out) == 16
    df = out.to_pandas()
    assert set(df["reward"]) <= {0.0, 1.0}
    assert 0 < df["reward"].mean() < 1  # the fake model is right about half the time
    assert list(df["example_id"]) == sorted(df["example_id"])
    assert "boxed_correct" in df.columns
    assert fake_server.stats()["requests"] == 16
