"""The interception endpoint: the same bytes as the model server, tokens captured verbatim."""

from __future__ import annotations

import subprocess
from pathlib import Path

import verifiers_lite as vf
from tests.programs.helpers import agent, child_env, program_env
from verifiers_lite.core.trajectory import model_calls
from verifiers_lite.rollout import TokenClient
from verifiers_lite.rollout.testing import ScriptedSampler, toy_template
from verifiers_lite.testing.fake_server import FakeServerProcess
from verifiers_lite.train.validate import validate_training_rows

_CREATED = 1_700_000_000


def test_responses_through_the_endpoint_are_byte_identical_to_the_server(
    fake_server: FakeServerProcess, tmp_path: Path
) -> None:
    """One program, run against the fake server itself and then as a rollout through the
    interception endpoint (whose client is that server): every response body, both dialects,
    whole and streamed, the same bytes."""
    direct, intercepted = tmp_path / "direct", tmp_path / "intercepted"
    direct.mkdir()
    intercepted.mkdir()
    fake_server.configure(created=_CREATED)
    env = {
        **child_env(),
        "OPENAI_BASE_URL": fake_server.base_url,
        "OPENAI_API_KEY": "k",
        "VF_MODEL": "fake-tool",
    }
    done = subprocess.run(agent("raw", str(direct)), env=env, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()

    fake_server.reset()
    fake_server.configure(created=_CREATED)
    program = program_env(agent("raw", str(intercepted)))
    row = program.evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-tool", progress=False
    ).rows[0]
    assert row["error"] is None, row["error"]

    names = sorted(p.name for p in direct.iterdir())
    assert names == [
        "chat-False-0",
        "chat-False-1",
        "chat-True-0",
        "responses-False-0",
        "responses-False-1",
        "responses-True-0",
    ]
    assert sorted(p.name for p in intercepted.iterdir()) == names
    for name in names:
        assert (intercepted / name).read_bytes() == (direct / name).read_bytes(), name
    # The calls were real ones: the tool call, then the answer with the tool's result.
    assert b"calculator" in (direct / "chat-False-0").read_bytes()
    assert b"\\\\boxed{42}" in (direct / "responses-False-1").read_bytes()
    assert len(model_calls(row)) == 6


def test_token_ids_captured_are_the_sampled_ids_and_rows_validate() -> None:
    template = toy_template()
    sampled: list[list[int]] = []
    prompted: list[list[int]] = []

    class Recording(ScriptedSampler):
        def sample(self, prompts, params):  # type: ignore[no-untyped-def]
            results = super().sample(prompts, params)
            prompted.extend(list(p) for p in prompts)
            sampled.extend(list(r.token_ids) for r in results)
            return results

    replies = iter(["a1", "a2", "s1", "a3"])
    sampler = Recording(template, lambda prompt: next(replies))
    env = program_env(agent("branches"), "start")
    out = env.evaluate_sync(TokenClient(sampler, template), "toy", progress=False)
    row = out.rows[0]
    assert row["error"] is None, row["error"]
    calls = model_calls(row)
    assert [c["tokens"]["completion_ids"] for c in calls] == sampled
    assert [c["tokens"]["prompt_ids"] for c in calls] == prompted  # stored as new ids, read whole
    assert [template.decode(ids) for ids in sampled][0].startswith("a1")
    # The row holds the branch the program ended on; one training row per branch.
    assert validate_training_rows([row]) == 1
    per_branch = vf.programs.branch_rows(out.rows)
    assert [r["branch"] for r in per_branch] == [0, 1]
    assert validate_training_rows(per_branch) == 2
    main = per_branch[0]
    sampled_main = [ids for ids, c in zip(sampled, calls, strict=True) if c["branch"] == 0]
    masked = [t for t, m in zip(main["completion_ids"], main["completion_mask"], strict=True) if m]
    assert masked == [t for ids in sampled_main for t in ids]
    assert main["reward"] == row["reward"]
