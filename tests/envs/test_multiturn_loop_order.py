"""The MultiTurnEnv loop runs in the order the docs document (tutorial, step 5), and user code needs only `vf`."""

from __future__ import annotations

import pytest

import verifiers_lite as vf


class Recorder(vf.MultiTurnEnv):
    """Logs each hook; ends when told (is_completed at turn `complete_at`, done at `done_at`)."""

    def __init__(self, complete_at: int = 0, done_at: int = 0, **kw):
        super().__init__(dataset=[{"question": "go"}], **kw)
        self.complete_at, self.done_at = complete_at, done_at

    async def setup_state(self, state: vf.State) -> None:
        state["log"] = ["setup"]

    async def is_completed(self, messages: vf.Messages, state: vf.State) -> bool:
        state["log"].append(f"is_completed@{state['turns']}")
        return state["turns"] == self.complete_at

    async def env_response(self, messages: vf.Messages, state: vf.State) -> vf.Messages:
        state["log"].append(f"env_response@{state['turns']}")
        if state["turns"] == self.done_at:
            state["done"] = True
        return [{"role": "user", "content": "again"}]


def _log(env: Recorder, client: vf.ScriptedClient) -> tuple[list[str], str]:
    """The hooks called during one rollout, in order, and its stop reason."""
    logs: list[list[str]] = []

    def keep(state) -> float:
        logs.append(list(state["log"]))
        return 1.0

    env.rubric = vf.Rubric([keep])
    out = env.evaluate_sync(client, "m", progress=False)
    return logs[0], out.rows[0]["stop_reason"]


def test_max_turns_comes_after_is_completed_and_before_env_response():
    log, stop = _log(Recorder(max_turns=2), vf.ScriptedClient("x"))
    assert (
        log == ["setup", "is_completed@1", "env_response@1", "is_completed@2"]
        and stop == "max_turns"
    )


def test_is_completed_ends_the_rollout_before_env_response():
    log, stop = _log(Recorder(complete_at=2, max_turns=5), vf.ScriptedClient("x"))
    assert (
        log == ["setup", "is_completed@1", "env_response@1", "is_completed@2"]
        and stop == "env_done"
    )


def test_state_done_in_env_response_ends_after_its_messages():
    env = Recorder(done_at=1, max_turns=5)
    log, stop = _log(env, vf.ScriptedClient("x"))
    assert log == ["setup", "is_completed@1", "env_response@1"] and stop == "env_done"


def test_length_wins_but_is_completed_still_sees_the_turn():
    client = vf.ScriptedClient(["x", {"content": "cut", "finish_reason": "length"}])
    log, stop = _log(Recorder(complete_at=2, max_turns=5), client)
    assert (
        log == ["setup", "is_completed@1", "env_response@1", "is_completed@2"] and stop == "length"
    )


@pytest.mark.parametrize(
    "name", ["State", "Messages", "MultiTurnEnv", "ScriptedClient", "RunInterrupted"]
)
def test_user_code_names_are_at_top_level(name):
    """Each name is the library's own object (the one its defining module holds), not a stand-in."""
    import importlib

    from verifiers_lite import _LAZY

    assert name in vf.__all__
    assert getattr(vf, name) is getattr(importlib.import_module(_LAZY[name]), name)
