"""A rollout backend whose timing and outcome each request scripts via ``metadata["script"]``."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from verifiers_lite.server.backend import RolloutContext
from verifiers_lite.server.errors import RolloutFailure
from verifiers_lite.server.protocol import RolloutRequest


class ScriptedBackend:
    """Script keys (``metadata.script``, or ``metadata.input.info.script``): run_sec, grade_sec,
    cleanup_sec, ignore_cancel, fail ("agent_error"|"crash"), reward. Events
    (execute/cancel/shutdown) go to ``events_path`` as JSON lines."""

    def __init__(
        self,
        *,
        max_concurrent: int = 4,
        max_admitted: int | None = None,
        retry_after_sec: float = 0.05,
        events_path: str | None = None,
    ) -> None:
        self.max_admitted = max_admitted
        self.retry_after_sec = retry_after_sec
        self.max_concurrent = max_concurrent
        self._sem = asyncio.Semaphore(max_concurrent)
        self._events_path = events_path
        self.running = 0
        self.executed = 0
        self.shutdown_calls = 0

    def _event(self, kind: str, **fields: Any) -> None:
        if self._events_path:
            with open(self._events_path, "a") as f:
                f.write(json.dumps({"event": kind, "t": time.time(), **fields}) + "\n")

    async def execute(self, request: RolloutRequest, ctx: RolloutContext) -> dict[str, Any]:
        meta = request.metadata or {}
        # A forwarded rollout (RolloutClient.run_state) carries its script in its row's info.
        script = meta.get("script") or ((meta.get("input") or {}).get("info") or {}).get(
            "script", {}
        )
        async with self._sem:
            ctx.set_status("running")
            self.running += 1
            self._event("start", id=request.rollout_id)
            try:
                async with asyncio.timeout(request.agent_timeout_sec):
                    await self._work(float(script.get("run_sec", 0)), ctx, script)
                if script.get("fail") == "agent_error":
                    raise RolloutFailure("agent_error", "scripted agent failure")
                if script.get("fail") == "crash":
                    raise RuntimeError("scripted crash")
                if request.grade:
                    ctx.set_status("grading")
                    await self._work(float(script.get("grade_sec", 0)), ctx, script)
            finally:
                self.running -= 1
                self.executed += 1
                self._event("end", id=request.rollout_id)
        reward = script.get("reward", 1.0 if request.label == "42" else 0.0)
        return {
            "rollout_id": request.rollout_id,
            "reward": reward if request.grade else None,
            "metrics": {},
            "completion": [{"role": "assistant", "content": "42"}],
            "label": request.label,
            "echo_metadata": request.metadata,
            "trajectory_messages": [{"role": "assistant", "content": "secret trajectory"}],
            "error": None,
        }

    async def _work(self, seconds: float, ctx: RolloutContext, script: dict[str, Any]) -> None:
        if seconds <= 0:
            return
        if script.get("ignore_cancel"):
            await asyncio.sleep(seconds)
            return
        cancelled = asyncio.ensure_future(ctx.cancel_requested.wait())
        try:
            await asyncio.wait({cancelled}, timeout=seconds)
        finally:
            cancelled.cancel()
        if ctx.cancel_requested.is_set():
            await asyncio.sleep(float(script.get("cleanup_sec", 0)))
            raise asyncio.CancelledError()

    async def cancel(self, rollout_id: str) -> None:
        self._event("cancel", id=rollout_id)

    def health(self) -> dict[str, Any]:
        return {"backend": "scripted", "running": self.running, "executed": self.executed}

    async def shutdown(self) -> None:
        self.shutdown_calls += 1
        self._event("shutdown", calls=self.shutdown_calls)
        await asyncio.sleep(0.05)


def main() -> None:
    """Serve a ScriptedBackend: used as a subprocess by the tests."""
    import argparse
    import logging

    from verifiers_lite.server import create_rollout_server, run_rollout_server
    from verifiers_lite.server.lifecycle import ShutdownTimeouts

    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--api-key")
    p.add_argument("--max-concurrent", type=int, default=4)
    p.add_argument("--max-admitted", type=int)
    p.add_argument("--retry-after", type=float, default=0.05)
    p.add_argument("--wait", type=float, default=30)
    p.add_argument("--lease", type=float, default=120)
    p.add_argument("--retention", type=float, default=900)
    p.add_argument("--drain", type=float, default=10)
    p.add_argument("--cleanup", type=float, default=120)
    p.add_argument("--final", type=float, default=10)
    p.add_argument("--events")
    p.add_argument("--plain", type=int, default=0, help="run under plain uvicorn.run")
    p.add_argument("--max-body-bytes", type=int, default=16 * 1024 * 1024)
    a = p.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(name)s %(message)s")
    backend = ScriptedBackend(
        max_concurrent=a.max_concurrent,
        max_admitted=a.max_admitted,
        retry_after_sec=a.retry_after,
        events_path=a.events,
    )
    app = create_rollout_server(
        backend,
        api_key=a.api_key,
        result_wait_timeout_sec=a.wait,
        polling_lease_timeout_sec=a.lease,
        result_retention_sec=a.retention,
        shutdown_timeouts=ShutdownTimeouts(a.drain, a.cleanup, a.final),
        max_body_bytes=a.max_body_bytes,
    )
    if a.plain:
        import uvicorn

        uvicorn.run(app, host="127.0.0.1", port=a.port, log_level="warning")
    else:
        run_rollout_server(app, host="127.0.0.1", port=a.port)


if __name__ == "__main__":
    main()
