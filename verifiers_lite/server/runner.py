"""Run a rollout server under uvicorn with the draining shutdown."""

from __future__ import annotations

import asyncio
import logging
from types import FrameType
from typing import Any

from verifiers_lite.extras import missing_server_dependency

try:
    import uvicorn
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise missing_server_dependency(exc) from exc

log = logging.getLogger(__name__)


class DrainingServer(uvicorn.Server):
    """A uvicorn server that runs the app's shutdown phases *before* closing its sockets.

    Plain uvicorn stops accepting connections at SIGTERM, so results finishing during the drain
    could not be fetched. Here the first SIGTERM/SIGINT stops admission and runs the phases while
    result polls are still served; uvicorn exits once they are done. A second signal falls back
    to uvicorn's own handling.
    """

    def __init__(self, config: uvicorn.Config, app: Any) -> None:
        super().__init__(config)
        self._lifecycle = app.state.rollout_lifecycle
        app.state.managed_shutdown = True
        self._draining = False
        self._loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets: Any = None) -> None:
        self._loop = asyncio.get_running_loop()  # signal handlers run outside the loop's call
        await super().startup(sockets=sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self._draining or self.should_exit or self._loop is None:
            super().handle_exit(sig, frame)
            return
        self._draining = True
        log.warning("signal %s: draining rollouts before exit", sig)
        self._loop.call_soon_threadsafe(self._start_drain)

    def _start_drain(self) -> None:
        task = asyncio.get_running_loop().create_task(self._lifecycle.shutdown())
        task.add_done_callback(lambda _t: setattr(self, "should_exit", True))


def run_rollout_server(
    app: Any, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning", **kwargs: Any
) -> None:
    """Serve ``app`` (from :func:`create_rollout_server`) until SIGTERM/SIGINT, then drain."""
    kwargs.setdefault("timeout_keep_alive", 30)  # long-poll clients reuse their connections
    kwargs.setdefault("backlog", 4096)  # a thousand pollers may connect at once
    kwargs.setdefault("access_log", False)  # one log call per request, filtered out anyway
    config = uvicorn.Config(
        app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=None, **kwargs
    )
    DrainingServer(config, app).run()
