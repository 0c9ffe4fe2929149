"""ProgramEnv: an environment whose rollout is a program that speaks the OpenAI API."""

from __future__ import annotations

import contextvars
import os
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from verifiers_lite._util.errors import VerifiersError
from verifiers_lite.core.dataset import DatasetLike, RolloutInput
from verifiers_lite.core.errors import ModelAPIError
from verifiers_lite.core.limits import Limits, rollout_budget
from verifiers_lite.core.messages import Message
from verifiers_lite.core.model_client import ModelClient
from verifiers_lite.core.records import StopReason
from verifiers_lite.core.state import State
from verifiers_lite.envs.environment import Environment
from verifiers_lite.programs.capture import CallLog
from verifiers_lite.programs.delivery import (
    Command,
    StdinMode,
    argv_for,
    child_env,
    command_argv,
    snapshot_files,
    stdin_for,
    task_fields,
    write_files,
    write_task,
)
from verifiers_lite.programs.interception import interception_server
from verifiers_lite.programs.process import ProgramResult, run_program
from verifiers_lite.programs.session import RolloutSession

__all__ = ["DEFAULT_TIME_S", "ProgramEnv", "ProgramError", "ProgramState"]

DEFAULT_TIME_S = 300.0
"""The wall time of a program rollout whose limits set none (``time_s``), in seconds."""


class ProgramState(State, total=False):
    """A program rollout's State: what the program left, and every call it made."""

    program: dict[str, Any]  #: exit_code, stdout, stderr_tail, answer, files, stopped, ...
    program_calls: list[dict[str, Any]]  #: every captured call, in order (with its branch)


class ProgramError(VerifiersError, RuntimeError):
    """The program crashed or exited non-zero (an ``env_error`` row): its exit code and the
    tail of its stderr."""


class ProgramEnv(Environment):
    """An environment whose rollout is a program: any command that calls an OpenAI-compatible
    API (the ``openai`` SDK, the OpenAI Agents SDK, a shell loop with curl).

    Each rollout runs ``command`` once in a working directory of its own (a fresh temporary
    directory, or a copy of ``workdir_template``), with ``OPENAI_BASE_URL``/``OPENAI_API_KEY``
    pointing at the run's interception endpoint, which forwards every call to the run's model
    client and captures it; an example's ``info["files"]`` (relative path -> text) are written
    there before the program starts. ``command`` is an argv list (placeholders ``{question}``,
    ``{task_file}``, ``{workdir}``, ``{example_id}``, ``{info[key]}``) or a top-level Python
    function, called in a subprocess with the task's fields. ``stdin`` gives the program the
    question (default), the task as JSON, or nothing; ``env`` adds variables; the driver's
    variables that look like secrets (``*_KEY``, ``*TOKEN*``, ``OPENAI_*``, ...) are withheld
    unless named in ``pass_env``.

    What the program left is scored: the answer (its stdout, stripped, or the text of
    ``answer_file`` in its working directory) is the completion's last assistant message,
    after the captured conversation it ended on; ``state["program"]`` holds ``exit_code``,
    ``stdout``, ``stderr_tail``, ``answer``, ``files`` (the text of the files it left),
    ``stopped`` and ``program_models`` (the model names it asked for), and
    ``state["program_calls"]`` every captured call. A crash or a non-zero exit is an
    ``env_error`` row.

    ``limits`` is a :class:`~verifiers_lite.core.limits.Limits`, as for any environment (a run's
    own override it field by field): the call past ``turns``, ``total_tokens``, ``cost_usd`` or
    ``tool_calls`` is answered with an HTTP 400 error naming the limit, and the program is
    stopped; at ``time_s`` (default :data:`DEFAULT_TIME_S`) it is stopped too; the rollout ends
    with the limit's stop reason and is scored. A stopped program gets SIGTERM, then SIGKILL
    ``kill_grace`` seconds later (stopped for a refused call, it first has ``kill_grace``
    seconds to end by itself). Its stdout is kept up to ``max_output_bytes`` (the rest is cut,
    with a note). Other keywords are :class:`~verifiers_lite.envs.Environment`'s (``rubric``,
    ``sampling_args`` — enforced on every call —, ``max_concurrent``, ...).

    Args:
        command: the program: an argv list with placeholders, or a top-level Python function
            (above).
        dataset: the rows to run on, as for any environment.
        eval_dataset: the rows ``evaluate`` runs on, when not ``dataset``.
        stdin: what the program reads on stdin: ``question`` (default), ``task`` (as JSON) or
            ``none``.
        env: more environment variables for the program.
        pass_env: the driver's variables passed on although they look like secrets.
        workdir_template: a folder copied as each rollout's working directory (default: an empty
            one).
        answer_file: the file in the working directory whose text is the answer (default: stdout).
        limits: what one rollout may spend (above).
        max_output_bytes: stdout kept per rollout, in bytes.
        kill_grace: seconds between SIGTERM and SIGKILL of a stopped program.
    """

    def __init__(
        self,
        command: Command,
        dataset: DatasetLike = None,
        eval_dataset: DatasetLike = None,
        *,
        stdin: StdinMode = "question",
        env: Mapping[str, str] | None = None,
        pass_env: Sequence[str] = (),
        workdir_template: str | os.PathLike[str] | None = None,
        answer_file: str | None = None,
        limits: Limits | None = None,
        max_output_bytes: int = 1 << 20,
        kill_grace: float = 2.0,
        **kwargs: Any,
    ) -> None:
        self.argv = command_argv(command)
        if stdin not in ("question", "task", "none"):
            raise ValueError(f"stdin must be 'question', 'task' or 'none', got {stdin!r}")
        if workdir_template is not None and not Path(workdir_template).is_dir():
            raise ValueError(f"workdir_template {str(workdir_template)!r} is not a directory")
        if env is not None and not all(isinstance(v, str) for v in env.values()):
            raise ValueError("env values must be strings")
        if isinstance(max_output_bytes, bool) or not isinstance(max_output_bytes, int):
            raise TypeError(f"max_output_bytes must be an int, got {max_output_bytes!r}")
        if max_output_bytes < 1 or not kill_grace >= 0:
            raise ValueError("max_output_bytes must be >= 1 and kill_grace >= 0 seconds")
        super().__init__(dataset, eval_dataset, limits=limits, **kwargs)
        self.command = command
        self.stdin = stdin
        self.env = dict(env or {})
        self.pass_env = tuple(pass_env)
        self.workdir_template = Path(workdir_template) if workdir_template is not None else None
        self.answer_file = answer_file
        self.max_output_bytes = max_output_bytes
        self.kill_grace = float(kill_grace)
        self.env_args.setdefault("command", self.argv)

    async def rollout(
        self,
        input: RolloutInput,
        client: ModelClient,
        model: str,
        sampling_args: dict[str, Any] | None = None,
    ) -> State:
        state = cast(ProgramState, self.init_state(input, model, sampling_args))
        server = await interception_server()
        limits, price = rollout_budget(self.rollout_limits)
        args = {**self.sampling_args, **state["sampling_args"]}
        session = RolloutSession(
            client,
            model,
            args,
            limits,
            contextvars.copy_context(),
            price=price,
            started_at=state["timing"]["start"],
        )
        server.add(session)
        workdir = Path(tempfile.mkdtemp(prefix="vf-program-"))
        result: ProgramResult | None = None
        try:
            if self.workdir_template is not None:
                shutil.copytree(self.workdir_template, workdir, dirs_exist_ok=True)
            time_s = limits.time_s if limits is not None and limits.time_s else DEFAULT_TIME_S
            left = max(0.0, time_s - (time.time() - state["timing"]["start"]))
            result = await self._run(state, session, workdir, server.base_url, left)
            files = snapshot_files(workdir)
        finally:
            server.remove(session)
            session.end("done")
            session.cancel_calls()
            _record_calls(state, session)
            shutil.rmtree(workdir, ignore_errors=True)
        self._record_result(state, session, result, files)
        return state

    async def _run(
        self,
        state: State,
        session: RolloutSession,
        workdir: Path,
        base_url: str,
        timeout: float,
    ) -> ProgramResult:
        fields = task_fields(state)
        write_task(workdir, fields)
        write_files(workdir, state["info"].get("files"))
        endpoint = {
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": session.token,
            "VF_TASK_FILE": str(workdir / "task.json"),
            "VF_QUESTION": str(fields["question"]),
            "VF_EXAMPLE_ID": str(fields["example_id"]),
            "VF_WORKDIR": str(workdir),
            "VF_MODEL": session.model,
        }
        return await run_program(
            argv_for(self.argv, fields, workdir),
            cwd=workdir,
            env=child_env(os.environ, pass_env=self.pass_env, own=self.env, endpoint=endpoint),
            stdin=stdin_for(self.stdin, fields),
            timeout=timeout,
            stop=session.stop,
            max_output_bytes=self.max_output_bytes,
            kill_grace=self.kill_grace,
        )

    def _record_result(
        self,
        state: ProgramState,
        session: RolloutSession,
        result: ProgramResult | None,
        files: dict[str, str],
    ) -> None:
        assert result is not None
        answer = self._answer(result, files)
        state["program"] = {
            "exit_code": result.exit_code,
            "stdout": result.stdout,
            "stderr_tail": result.stderr_tail,
            "answer": answer,
            "files": files,
            "stopped": result.stopped,
            "seconds": round(result.seconds, 3),
            "output_cut": result.stdout_cut,
            "program_models": list(session.program_models),
        }
        state["completion"] = _completion(session.log, answer)
        cost = session.cost_usd()
        if cost is not None:
            state["cost_usd"] = cost
        # A refused call stops the rollout even when the program ended by itself on the error.
        stopped = result.stopped or session.refused
        if stopped is not None:
            state["program"]["stopped"] = stopped
            state["stop_reason"] = cast(StopReason, stopped)
            return
        state["stop_reason"] = "stop"
        if result.exit_code != 0:
            message = (
                f"the program exited with code {result.exit_code}; its stderr ends: "
                f"{result.stderr_tail[-1500:].strip() or '(empty)'}"
            )
            if session.model_error is not None:  # the model failed first: that is the cause
                raise ModelAPIError(
                    f"{session.model_error}; then {message}",
                    category=session.model_error.category,
                    retryable=False,
                )
            raise ProgramError(message)

    def _answer(self, result: ProgramResult, files: dict[str, str]) -> str:
        if self.answer_file is not None:
            return files.get(self.answer_file, "").strip()
        return result.stdout.strip()


def _record_calls(state: ProgramState, session: RolloutSession) -> None:
    """The captured calls on the state: all of them (``program_calls``), the branch the program
    ended on as the trajectory (with its token ids when the backend gave them), usage, turns."""
    log = session.log
    state["program_calls"] = log.steps
    state["turns"] = len(log.steps)
    state["usage"]["prompt_tokens"] = log.prompt_tokens
    state["usage"]["completion_tokens"] = log.completion_tokens
    generation = sum(float(s["timing"]["latency_ms"]) for s in log.steps)
    state["timing"]["generation_ms"] = generation
    main = log.main_branch()
    if main is None:
        return
    state["trajectory"] = [s for s in log.steps if s["branch"] == main]
    tokens = log.branch_tokens(main)
    if tokens is not None:
        state.update(tokens)


def _completion(log: CallLog, answer: str) -> list[Message]:
    """The conversation the program ended on, after its opening system/user messages, then its
    answer as an assistant message (unless its last reply already says it)."""
    main = log.main_branch()
    conversation = log.branch_conversation(main) if main is not None else []
    start = 0
    while start < len(conversation) and conversation[start].get("role") in ("system", "user"):
        start += 1
    transcript = [dict(m) for m in conversation[start:]]
    last = transcript[-1] if transcript else None
    said = (
        last is not None
        and last.get("role") == "assistant"
        and (last.get("content") or "").strip() == answer
    )
    if not said:
        transcript.append({"role": "assistant", "content": answer})
    return transcript
