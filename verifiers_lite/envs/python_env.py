"""PythonEnv: a ToolEnv whose ``python`` tool runs code in a sandbox, state kept per rollout."""

from __future__ import annotations

import contextvars
from typing import Any, cast

from verifiers_lite.core.dataset import RolloutInput
from verifiers_lite.core.model_client import ModelClient
from verifiers_lite.core.state import State
from verifiers_lite.envs.tool_env import ToolEnv
from verifiers_lite.sandbox import Sandbox, SandboxLimits, SandboxSession

# The session of the rollout being run: tool calls are made from tasks that copy this context.
_SESSION: contextvars.ContextVar[_RolloutSession | None] = contextvars.ContextVar(
    "vf_python_session", default=None
)


class PythonState(State, total=False):
    """A PythonEnv rollout's state: the core fields and how often the model ran code."""

    python_calls: int  #: calls of the ``python`` tool in this rollout


class _RolloutSession:
    """Opens the rollout's interpreter on its first tool call, so rollouts that never call the
    tool cost nothing."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.session: SandboxSession | None = None
        self.calls = 0

    def get(self) -> SandboxSession:
        if self.session is None:
            self.session = self.sandbox.session()
        return self.session


class PythonEnv(ToolEnv):
    """The model gets one tool, ``python(code)``, that runs code in a sandboxed interpreter.

    Variables, imports and files persist across the calls of one rollout (each rollout has its
    own interpreter, killed when the rollout ends) and never leak into another rollout. The tool
    answers with stdout, stderr and the exit status (the value of a last bare expression is
    printed, as in a REPL). ``sandbox`` may be shared between environments; by default one is
    made with ``limits``. ``env_id`` names it in results (default: the class name).

    Args:
        sandbox: the sandbox the code runs in (may be shared); default: one made with ``limits``.
        limits: the limits of the sandbox made when ``sandbox`` is not given.
        tools: more tools the model may call beside ``python``.
    """

    def __init__(
        self,
        *args: Any,
        sandbox: Sandbox | None = None,
        limits: SandboxLimits | None = None,
        tools: list[Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if sandbox is not None and limits is not None:
            raise ValueError(
                "pass either sandbox= or limits=, not both (a sandbox has its own limits)"
            )
        self.sandbox = sandbox if sandbox is not None else Sandbox(limits)
        # The tool enforces its own wall-clock limit; the ToolEnv timeout only backs it up.
        kwargs.setdefault("tool_timeout", self.sandbox.limits.timeout + 30.0)
        super().__init__([python, *(tools or [])], *args, **kwargs)

    async def rollout(
        self,
        input: RolloutInput,
        client: ModelClient,
        model: str,
        sampling_args: dict[str, Any] | None = None,
    ) -> State:
        holder = _RolloutSession(self.sandbox)
        token = _SESSION.set(holder)
        try:
            state = cast(PythonState, await super().rollout(input, client, model, sampling_args))
            state["python_calls"] = holder.calls
            return state
        finally:
            _SESSION.reset(token)
            if holder.session is not None:
                await holder.session.aclose()


async def python(code: str) -> str:
    """Run Python code in a sandboxed interpreter and return its output. Variables persist
    between calls; print what you need to see (a final bare expression is printed too).

    Args:
        code: Python source to execute.
    """
    holder = _SESSION.get()
    if holder is None:
        return "Error: the python tool is only available inside a PythonEnv rollout"
    holder.calls += 1
    result = await holder.get().run(code)
    return result.describe()
