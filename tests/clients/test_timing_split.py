"""Where a rollout's time went, split honestly: waiting for a request slot (the run's
``max_concurrent``, an endpoint's ``slots``), in the model request, in the environment, waiting
for its group, scoring. Checked against a slow single-slot model server on 127.0.0.1 that logs
when it served each request (an independent clock of the model's time), an environment whose
turns take a known time, and a reward function that does."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from aiohttp import web

import verifiers_lite as vf
from verifiers_lite.cli.report import format_table, run_summary

SERVICE_S = 0.15  # the stub serves one request at a time, each taking this long
ENV_S = 0.08  # each environment turn
SCORE_S = 0.05  # the reward function
SLACK_MS = 250  # a sanity bound for HTTP and loop overhead on a loaded 2-core machine


class SingleSlotServer:
    """An OpenAI-style chat server answering one request at a time (like llama-cpp-python's),
    logging for each request when it arrived and when it was served."""

    def __init__(self) -> None:
        self.log: list[dict[str, Any]] = []
        self.in_service = 0
        self.max_in_service = 0
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        self.loop = asyncio.new_event_loop()
        lock = asyncio.Lock()

        async def chat(request: web.Request) -> web.Response:
            body = await request.json()
            arrived = time.perf_counter()
            async with lock:
                self.in_service += 1
                self.max_in_service = max(self.max_in_service, self.in_service)
                start = time.perf_counter()
                await asyncio.sleep(SERVICE_S)
                end = time.perf_counter()
                self.in_service -= 1
            key = (body["messages"][-1]["content"], len(body["messages"]))
            self.log.append({"key": key, "arrived": arrived, "start": start, "end": end})
            return web.json_response(
                {
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": "7"},
                        }
                    ],
                    "usage": {"prompt_tokens": 3, "completion_tokens": 1},
                }
            )

        app = web.Application()
        app.router.add_post("/v1/chat/completions", chat)
        self.runner = web.AppRunner(app)
        self.loop.run_until_complete(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._started.set()
        self.loop.run_forever()

    def __enter__(self) -> SingleSlotServer:
        self._thread.start()
        assert self._started.wait(10), "stub server did not start"
        return self

    def __exit__(self, *exc: Any) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def service_ms(self, key: tuple[str, int]) -> float:
        (entry,) = [e for e in self.log if e["key"] == key]
        return (entry["end"] - entry["start"]) * 1000


class TwoTurns(vf.MultiTurnEnv):
    """Two model turns with an environment turn of ENV_S between them."""

    async def env_response(self, messages, state):
        await asyncio.sleep(ENV_S)
        return [{"role": "user", "content": f"again: {state['prompt'][-1]['content']}"}]


def slow_reward(completion) -> float:
    time.sleep(SCORE_S)
    return 1.0


def _env(n: int) -> TwoTurns:
    rows = [{"question": f"question {i}", "answer": "7"} for i in range(n)]
    return TwoTurns(dataset=rows, rubric=vf.Rubric([slow_reward]), max_turns=2, env_id="two-turns")


def test_without_slots_the_server_queue_reads_as_model_time():
    """The misleading figure, reproduced: many rollouts in flight against a single-slot server
    whose client does not say it has one slot. The server queues them; the client can only see
    time in the request."""
    n = 6
    with SingleSlotServer() as server:
        out = _env(n).evaluate_sync(
            vf.ChatClient(server.url), "stub", max_concurrent=64, progress=False
        )
    served = sum(e["end"] - e["start"] for e in server.log) * 1000
    generation = sum(r["timing"]["generation_ms"] for r in out.rows)
    assert server.max_in_service == 1 and len(server.log) == 2 * n
    assert generation > 2 * served  # most of that "model time" was queueing inside the server


def test_with_the_endpoint_slot_declared_the_split_adds_up():
    n = 6
    with SingleSlotServer() as server:
        out = _env(n).evaluate_sync(
            vf.ChatClient(server.url, slots=1), "stub", max_concurrent=64, progress=False
        )
        log = list(server.log)
    assert len(log) == 2 * n and all(
        e["start"] - e["arrived"] < 0.05 for e in log
    )  # nothing queued in the server
    for r in out.rows:
        t = r["timing"]
        question = r["prompt"][-1]["content"]
        served = server.service_ms((question, 1)) + server.service_ms((f"again: {question}", 3))
        # in the model request: the server's own service time plus transport, not the queue
        assert served - 1 <= t["generation_ms"] <= served + SLACK_MS, (t, served)
        assert ENV_S * 1000 - 1 <= t["env_ms"] <= ENV_S * 1000 + SLACK_MS, t
        assert t["queue_ms"] + t["generation_ms"] + t["env_ms"] == pytest.approx(
            t["rollout_ms"], abs=1e-6
        )
        assert t["scoring_ms"] >= SCORE_S * 1000 - 1
        parts = t["rollout_ms"] + t["group_wait_ms"] + t["scoring_ms"]
        assert parts - 1 <= t["total_ms"] <= parts + SLACK_MS, t
    queue = sum(r["timing"]["queue_ms"] for r in out.rows)
    generation = sum(r["timing"]["generation_ms"] for r in out.rows)
    # 6 rollouts share one slot: each waits for the others' requests, which dominates
    assert queue > generation
    s = out.summary["timing_ms"]
    assert s["generation_ms"] == pytest.approx(generation / n) and s["queue_ms"] == pytest.approx(
        queue / n
    )
    table = format_table(run_summary(list(out.rows), 1, 1.0), "t", {})
    line = next(x for x in table.splitlines() if x.startswith("time / rollout"))
    for name in (
        "waiting for a request slot",
        "in the model request",
        "in the environment",
        "waiting for its group",
        "scoring",
    ):
        assert name in line, line
    assert {"queue_ms", "generation_ms", "env_ms", "group_wait_ms"} <= set(out.to_pandas().columns)


def test_waiting_for_max_concurrent_is_slot_time_not_model_time():
    delay = 0.1
    env = vf.SingleTurnEnv(
        dataset=[{"question": "q", "answer": "1"}],
        rubric=vf.Rubric([lambda completion: 1.0]),
        env_id="one-at-a-time",
    )
    # one group of 4 rollouts, all started at once, one request in flight at a time
    out = env.evaluate_sync(
        vf.ScriptedClient("1", delay=delay),
        "scripted",
        rollouts_per_example=4,
        max_concurrent=1,
        progress=False,
    )
    for r in out.rows:
        assert delay * 1000 - 1 <= r["timing"]["generation_ms"] <= delay * 1000 + SLACK_MS, r[
            "timing"
        ]
    # one request at a time: the k-th waited for the k before it (0 + 1 + 2 + 3 delays in all)
    queue = sum(r["timing"]["queue_ms"] for r in out.rows)
    assert 6 * delay * 1000 * 0.9 <= queue <= 6 * delay * 1000 + 4 * SLACK_MS, queue


def test_slots_must_be_a_positive_count():
    with pytest.raises(ValueError, match="slots must be a positive number"):
        vf.ChatClient("http://127.0.0.1:1/v1", slots=0)
