"""Rollout servers as Ray actors: N uvicorn servers, one per actor, for a RemoteExecutor.

    ray.init(num_cpus=2)                      # or ray.init(address="auto") on a cluster
    servers = deploy_rollout_servers("arithmetic", {"num_examples": 50}, n=2)
    out = env.evaluate_sync(client, model, executor=vf.executors.RemoteExecutor(servers))
    ...
    servers.shutdown()

Each actor binds its own socket (port 0, so no race for a port) and serves
``create_rollout_server(LocalBackend(load_environment(env_id, **env_args)))`` on a thread.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

from verifiers_lite._util.extras import require


def _import_ray() -> Any:
    return require("ray", "deploy_rollout_servers", "ray")


class _RolloutServerActor:
    """The actor body: one rollout server on a background thread of the actor process."""

    def __init__(
        self,
        env_id: str,
        env_args: dict[str, Any],
        host: str,
        server_kwargs: dict[str, Any],
        backend_kwargs: dict[str, Any],
    ) -> None:
        import uvicorn

        from verifiers_lite.core.registry import load_environment

        from .app import create_rollout_server
        from .backends.local import LocalBackend
        from .runner import tune_gc_for_serving

        backend = LocalBackend(load_environment(env_id, **env_args), **backend_kwargs)
        app = create_rollout_server(backend, **server_kwargs)
        self.sock = socket.socket()
        self.sock.bind((host, 0))
        self.url = f"http://{host}:{self.sock.getsockname()[1]}"
        config = uvicorn.Config(app, log_level="warning", timeout_keep_alive=30, backlog=4096)
        self.server = uvicorn.Server(config)
        tune_gc_for_serving()  # this actor's process only serves rollouts
        # Not the main thread: uvicorn installs no signal handlers; shutdown() stops it instead.
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )
        self.thread.start()

    def start(self, timeout_sec: float) -> str:
        """Wait until the server accepts connections; return its URL."""
        deadline = time.monotonic() + timeout_sec
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"rollout server at {self.url} did not start")
            time.sleep(0.02)
        return self.url

    def shutdown(self, timeout_sec: float = 30.0) -> None:
        """Stop the server (its lifespan drains rollouts still running) and wait for the thread."""
        self.server.should_exit = True
        self.thread.join(timeout_sec)


class RolloutServers(list[str]):
    """The URLs of deployed rollout servers (a plain list), holding their actors alive."""

    def __init__(self, urls: list[str], actors: list[Any]) -> None:
        super().__init__(urls)
        self.actors = actors

    def shutdown(self, timeout_sec: float = 30.0) -> None:
        """Stop every server and kill its actor."""
        ray = _import_ray()
        try:
            ray.get([a.shutdown.remote(timeout_sec) for a in self.actors], timeout=timeout_sec + 5)
        finally:
            for actor in self.actors:
                ray.kill(actor)
            self.actors = []


def deploy_rollout_servers(
    env_id: str,
    env_args: dict[str, Any] | None = None,
    n: int = 2,
    *,
    max_concurrent: int = 32,
    api_key: str | None = None,
    host: str = "127.0.0.1",
    server_kwargs: dict[str, Any] | None = None,
    backend_kwargs: dict[str, Any] | None = None,
    actor_options: dict[str, Any] | None = None,
    startup_timeout_sec: float = 60.0,
) -> RolloutServers:
    """Start ``n`` rollout servers for environment ``env_id`` in Ray actors; return their URLs.

    Initialises Ray locally if it is not yet (call ``ray.init`` yourself for a cluster).
    ``host`` is the address each server binds and advertises; use the node's IP on a cluster.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    ray = _import_ray()
    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False)
    # Servers wait on I/O: they need no reserved CPU (like RayExecutor's workers).
    options = {"num_cpus": 0, **(actor_options or {})}
    actor_cls = ray.remote(_RolloutServerActor)
    srv_kw = {"api_key": api_key, **(server_kwargs or {})}
    be_kw = {"max_concurrent": max_concurrent, **(backend_kwargs or {})}
    actors = [
        actor_cls.options(**options).remote(env_id, dict(env_args or {}), host, srv_kw, be_kw)
        for _ in range(n)
    ]
    try:
        urls = ray.get(
            [a.start.remote(startup_timeout_sec) for a in actors], timeout=startup_timeout_sec + 30
        )
    except BaseException:
        for actor in actors:
            ray.kill(actor)
        raise
    return RolloutServers(list(urls), actors)
