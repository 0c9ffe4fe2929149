"""RayExecutor: spread groups over Ray actors, each owning an Environment and its endpoints.

Results come back to the driver as each group finishes, so the driver's results store, resume,
progress and callbacks work unchanged. A worker that dies mid-run has its unfinished groups
re-run on the surviving workers, which take over its share of ``max_concurrent``: groups stay
whole, nothing is lost or duplicated. Why a worker died (e.g. a ``ModuleNotFoundError`` while
building the environment) is reported through ``on_log``, and reaches the rows and the caller
when no worker is left; a run none of whose workers can start fails at once with that cause.

    ray.init(num_cpus=2)              # a local cluster; or ray.init(address="auto") on a cluster
    env.evaluate_sync(client, model, executor=vf.executors.RayExecutor(num_workers=2))
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import re
from typing import TYPE_CHECKING, Any

from verifiers_lite._util.errors import VerifiersError
from verifiers_lite._util.extras import require
from verifiers_lite.core.records import RolloutInput, Row
from verifiers_lite.executors.base import RunContext, WorkUnit, endpoint_specs, fixed_limit

if TYPE_CHECKING:
    from verifiers_lite.core.runnable import RunnableEnvironment


def _import_ray() -> Any:
    return require("ray", "RayExecutor", "ray")


class WorkerStartError(VerifiersError, RuntimeError):
    """No Ray worker could start (the message carries the first worker's exception)."""


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_EXC_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b")


def failure_text(exc: BaseException) -> str:
    """The worker's own exception (``ModuleNotFoundError: No module named 'x'``), not Ray's
    wrapper: Ray puts the worker's traceback in its message, ending with that line."""
    lines = [ln.rstrip() for ln in _ANSI.sub("", str(exc)).splitlines() if ln.strip()]
    for line in reversed(lines):
        if _EXC_LINE.match(line) and not line.startswith("ray."):
            return line[:500]
    return f"{type(exc).__name__}: {lines[0][:500] if lines else 'no message'}"


class _EnvWorker:
    """The actor body: an Environment + a LocalExecutor over this worker's share of endpoints."""

    def __init__(
        self,
        env_spec: dict[str, Any],
        endpoints: list[tuple[str, str | None]],
        model: str,
        sampling_args: dict[str, Any] | None,
        max_concurrent: int,
        independent: bool,
        score: bool = True,
    ) -> None:
        from verifiers_lite.clients.http import ChatClient

        if "env" in env_spec:
            self.env = env_spec["env"]
        else:
            from verifiers_lite.core.registry import load_environment

            self.env = load_environment(env_spec["env_id"], **env_spec["env_args"])
        self.clients = [ChatClient(url, key) for url, key in endpoints]
        self.args = (model, sampling_args, independent, score)
        self.limit = max_concurrent
        self.executor: Any = None

    async def ready(self) -> bool:
        """Answered once the environment is built (a failed build raises on the caller's side)."""
        return True

    async def set_limit(self, limit: int) -> None:
        """Raise this worker's bound on requests in flight (it takes over a dead worker's share)."""
        self.limit = max(self.limit, limit)
        if self.executor is not None:
            self.executor.widen(self.limit)

    async def run_unit(
        self, example_id: Any, inputs: list[RolloutInput], indices: list[int]
    ) -> list[Row]:
        from verifiers_lite.executors.local import LocalExecutor

        if self.executor is None:
            model, sampling_args, independent, score = self.args
            self.executor = LocalExecutor()
            ctx = RunContext(
                self.env, self.clients, model, sampling_args, self.limit, independent, print, score
            )
            await self.executor.start(ctx, len(inputs))
        return await self.executor.run(WorkUnit(example_id, inputs, indices))

    def pid(self) -> int:
        import os

        return os.getpid()


class RayExecutor:
    """Runs units on ``num_workers`` Ray actors.

    The environment is rebuilt on each worker from its env id and args when it is a registered
    environment (``vf.load_environment``), else shipped pickled. Endpoints are split between
    workers (each group sticks to one endpoint of its worker); ``max_concurrent`` is split too,
    over the workers alive. ``start`` waits for the first worker to be up and raises
    :class:`WorkerStartError` when none can start.
    """

    in_process = False  # rollouts run on Ray actors

    def __init__(
        self,
        num_workers: int = 2,
        *,
        address: str | None = None,
        init_kwargs: dict[str, Any] | None = None,
        actor_options: dict[str, Any] | None = None,
        keep_alive: bool = True,
    ) -> None:
        if num_workers < 1:
            raise ValueError(f"num_workers must be >= 1, got {num_workers}")
        self.num_workers = num_workers
        self.address = address
        self.init_kwargs = dict(init_kwargs or {})
        self.actor_options = {"num_cpus": 0, **(actor_options or {})}
        self.workers: list[Any] = []
        self.alive: list[bool] = []
        self.in_flight: list[int] = []
        self.units_done: list[int] = []
        self.lost_units = 0
        self.failures: list[str] = []  # "worker i: <its exception>", in the order they died
        self.ctx: RunContext | None = None
        self._total_limit = 0
        # Workers outlive one generate() when the next run has the same configuration, so a
        # training loop calling generate each step does not pay actor start-up every step.
        self.keep_alive = keep_alive
        self._config: Any = None

    async def start(self, ctx: RunContext, group_size: int) -> int:
        limit = fixed_limit(ctx, "RayExecutor")
        ray = _import_ray()
        if not ray.is_initialized():
            ray.init(
                address=self.address,
                **{"log_to_driver": False, "include_dashboard": False, **self.init_kwargs},
            )
        self.ctx = ctx
        self._total_limit = limit or 1024
        endpoints = endpoint_specs(ctx.client, "RayExecutor")
        spec = _env_spec(ctx.env)
        per_worker = math.ceil((limit or 1024) / self.num_workers)
        config = (
            repr(spec.get("env_id")),
            repr(spec.get("env_args")),
            id(spec.get("env")),
            endpoints,
            ctx.model,
            repr(ctx.sampling_args),
            per_worker,
            ctx.independent,
            ctx.score,
        )
        if not (self.workers and config == self._config and all(self.alive)):
            self.shutdown()
            actor_cls = ray.remote(_EnvWorker)
            for i in range(self.num_workers):
                share = endpoints[i :: self.num_workers] or [endpoints[i % len(endpoints)]]
                self.workers.append(
                    actor_cls.options(**self.actor_options).remote(
                        spec,
                        share,
                        ctx.model,
                        ctx.sampling_args,
                        per_worker,
                        ctx.independent,
                        ctx.score,
                    )
                )
            self.alive = [True] * self.num_workers
            self._config = config
            self.failures = []
            await self._first_worker_up()
        self.in_flight = [0] * self.num_workers
        self.units_done = [0] * self.num_workers
        self.lost_units = 0
        return self.num_workers * (math.ceil(per_worker / max(1, group_size)) + 1)

    async def _first_worker_up(self) -> None:
        """Wait until one worker has built its environment; raise with the cause if none can.
        Workers still starting are left to come up (or fail) while the run goes on."""

        async def ready(i: int) -> bool:
            try:
                await self.workers[i].ready.remote()
            except Exception as exc:  # the actor died building the environment (or was killed)
                self._worker_failed(i, exc)
                return False
            return True

        pending = {asyncio.ensure_future(ready(i)) for i in range(self.num_workers)}
        try:
            while pending:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                if any(t.result() for t in done):
                    return
        finally:
            for t in pending:
                t.cancel()
        self.shutdown()
        raise WorkerStartError(
            f"no Ray worker could start ({self.num_workers} tried); first failure: {self.failures[0]}"
        )

    def _worker_failed(self, i: int, exc: BaseException) -> None:
        """Mark worker ``i`` dead once, say why, and give its share of max_concurrent to the others."""
        if not self.alive[i]:
            return
        self.alive[i] = False
        self.failures.append(f"worker {i}: {failure_text(exc)}")
        survivors = [k for k, ok in enumerate(self.alive) if ok]
        if self.ctx is not None:
            where = "re-running its groups elsewhere" if survivors else "no worker left"
            self.ctx.on_log(f"Ray worker {i} died ({self.failures[-1].split(': ', 1)[1]}); {where}")
        if survivors and self._total_limit:
            share = math.ceil(self._total_limit / len(survivors))
            for k in survivors:
                self.workers[k].set_limit.remote(share)  # fire and forget: a dead one just drops it

    async def run(self, unit: WorkUnit) -> list[Row]:
        ray = _import_ray()
        while True:
            candidates = [i for i, ok in enumerate(self.alive) if ok]
            if not candidates:
                raise RuntimeError(
                    "all Ray workers died; the remaining groups were not run (first failure: "
                    f"{self.failures[0] if self.failures else 'unknown'})"
                )
            i = min(candidates, key=lambda k: self.in_flight[k])
            self.in_flight[i] += 1
            try:
                rows = await self.workers[i].run_unit.remote(
                    unit.example_id, unit.inputs, unit.indices
                )
            except (ray.exceptions.RayActorError, ray.exceptions.ActorDiedError) as exc:
                self._worker_failed(i, exc)
                self.lost_units += 1
                continue
            finally:
                self.in_flight[i] -= 1
            self.units_done[i] += 1
            for r in rows:
                r["worker"] = i
            return rows

    def summary(self) -> dict[str, Any]:
        return {
            "executor": "ray",
            "workers": [
                {"worker": i, "alive": a, "units": n}
                for i, (a, n) in enumerate(zip(self.alive, self.units_done, strict=True))
            ],
            "rerun_units": self.lost_units,
            "worker_failures": list(self.failures),
        }

    async def close(self) -> None:
        """End of a run: workers stay up for the next run unless ``keep_alive=False``."""
        if not self.keep_alive:
            self.shutdown()
        await asyncio.sleep(0)

    def shutdown(self) -> None:
        """Kill the workers now (they are also gone with ``ray.shutdown()``)."""
        if not self.workers:
            return
        ray = _import_ray()
        for w in self.workers:
            with contextlib.suppress(Exception):
                ray.kill(w)
        self.workers = []
        self.alive = []
        self._config = None


def _env_spec(env: RunnableEnvironment) -> dict[str, Any]:
    from verifiers_lite.core.registry import loadable_by_id

    if loadable_by_id(env):  # else built by hand (a notebook's): shipped whole
        return {"env_id": env.env_id, "env_args": env.env_args}
    return {"env": env}  # e.g. a notebook-defined env: ship it (Ray pickles with cloudpickle)
