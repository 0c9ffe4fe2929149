"""``vf-lite serve`` as a user runs it: option checking, the model of a request, and rewards.

The servers are real ``vf-lite serve`` processes (LocalBackend) in front of the fake model server
on 127.0.0.1; requests are shaped as a plain HTTP client sends them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers.paths import REPO
from tests.server.helpers import SERVER_PYTHONPATH, ServerProc, start_serve
from verifiers_lite.remote import RolloutClient
from verifiers_lite.testing.fake_server import FakeServerProcess

# The request a user writes from the documentation: no metadata, no model.
PLAIN = {"initial_messages": [{"role": "user", "content": "What is 3 + 4?"}], "label": "7"}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeServerProcess]:
    with FakeServerProcess(models=["fake-arith"]) as f:  # one model, as vLLM and llama.cpp serve
        yield f


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    started: list[ServerProc] = []

    def _serve(*args: str, **kw: Any) -> ServerProc:
        srv = start_serve(tmp_path, *args, **kw)
        started.append(srv)
        return srv

    yield _serve
    for srv in started:
        srv.stop()


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SERVER_PYTHONPATH}
    env.pop("NO_SUCH_VARIABLE_SET", None)
    return subprocess.run(
        [sys.executable, "-m", "verifiers_lite.cli", "serve", *args, "--port", "1"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env=env,
    )


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--max-queued", "-5"], "--max-queued"),
        (["--max-concurrent", "0"], "--max-concurrent"),
        (["--result-wait-timeout", "-1"], "--result-wait-timeout"),
        (["--result-wait-timeout", "nan"], "--result-wait-timeout"),
        (["--result-wait-timeout", "120"], "--result-wait-timeout"),  # = the lease
        (["--result-wait-timeout", "5", "--polling-lease-timeout", "5"], "--result-wait-timeout"),
        (["--polling-lease-timeout", "0"], "--polling-lease-timeout"),
        (["--polling-lease-timeout", "inf"], "--polling-lease-timeout"),
        (["--result-retention", "-1"], "--result-retention"),
        (["--max-body-bytes", "0"], "--max-body-bytes"),
        (["--log-level", "loud"], "--log-level"),
        (["--env-args", "[1]"], "--env-args"),
        (["--env-args", "{"], "--env-args"),
        (["--api-key-env", "NO_SUCH_VARIABLE_SET"], "--api-key-env"),
    ],
)
def test_bad_options_are_usage_errors_naming_the_flag(args: list[str], flag: str) -> None:
    done = run_cli("arithmetic", *args)
    assert done.returncode == 2, done.stderr
    assert flag in done.stderr
    assert "Traceback" not in done.stderr


def test_port_and_environment_are_checked() -> None:
    out_of_range = subprocess.run(
        [sys.executable, "-m", "verifiers_lite.cli", "serve", "arithmetic", "--port", "70000"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert out_of_range.returncode == 2 and "--port" in out_of_range.stderr
    unknown = run_cli("no-such-env")
    assert (
        unknown.returncode == 2 and "ENV_ID" in unknown.stderr and "Traceback" not in unknown.stderr
    )
    bad_kwarg = run_cli("arithmetic", "--env-args", '{"no_such_kwarg": 1}')
    assert bad_kwarg.returncode == 2 and "no_such_kwarg" in bad_kwarg.stderr
    not_a_dir = run_cli("arithmetic", "--artifacts-dir", str(REPO / "README.md"))
    assert not_a_dir.returncode == 2 and "--artifacts-dir" in not_a_dir.stderr
    assert "Traceback" not in not_a_dir.stderr


def test_help_lists_every_flag_with_its_default() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "verifiers_lite.cli", "serve", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert done.returncode == 0
    flags = set(re.findall(r"(--[a-z-]+)", done.stdout)) - {"--help"}
    guide = (REPO / "docs" / "guides" / "rollout-server.md").read_text()
    section = guide[guide.index("## `vf-lite serve` options") :]
    section = re.split(r"\n#{1,2} ", section[3:])[0]
    documented = set(re.findall(r"`(--[a-z-]+)", section))
    assert flags == documented, flags ^ documented


async def test_zero_retention_is_allowed_and_a_waiting_poll_gets_the_result(
    fake: FakeServerProcess, serve: Any
) -> None:
    srv = serve(
        "arithmetic",
        "--result-retention",
        "0",
        "--result-wait-timeout",
        "5",
        "--polling-lease-timeout",
        "30",
    )
    async with RolloutClient(srv.url) as client:
        result = await client.run_rollout(
            chat_completions_url=fake.base_url, rollout_id="once", **PLAIN
        )
    assert result.status == "success"


async def test_model_comes_from_the_requests_endpoint(fake: FakeServerProcess, serve: Any) -> None:
    srv = serve("srv_graded_env")  # no --model, and the request names none
    async with httpx.AsyncClient(base_url=srv.url) as http, RolloutClient(srv.url) as client:
        result = await client.run_rollout(
            chat_completions_url=fake.base_url, rollout_id="m1", **PLAIN
        )
        # An endpoint that lists no model: a failure that says how to name one.
        nowhere = await client.run_rollout(
            chat_completions_url="http://127.0.0.1:9/v1", rollout_id="m2", **PLAIN
        )
        # An endpoint that lists several: ambiguous, never the first one picked silently.
        with FakeServerProcess() as several:
            ambiguous = await client.run_rollout(
                chat_completions_url=several.base_url, rollout_id="m3", **PLAIN
            )
            assert several.stats()["requests"] == 0
        assert (await http.get("/health")).status_code == 200
    assert result.status == "success" and result.sample is not None
    # fake-arith answers 3 + 4 in \boxed{}, right or wrong: the reward is what the box says.
    boxed = re.findall(r"\\boxed\{(-?\d+)\}", result.sample.completion[-1]["content"])
    assert result.sample.reward == (1.0 if boxed and boxed[-1] == "7" else 0.0)
    assert (nowhere.status, nowhere.err_category) == ("failure", "validation_error")
    assert "--model" in (nowhere.err_message or "") and "/models" in (nowhere.err_message or "")
    assert (ambiguous.status, ambiguous.err_category) == ("failure", "validation_error")
    assert "fake-arith, fake-echo, fake-tool, fake-guess, fake-length" in (
        ambiguous.err_message or ""
    )
    assert "--model" in (ambiguous.err_message or "")


async def test_rewards_null_unless_graded_and_failures_keep_their_sample(
    fake: FakeServerProcess, serve: Any
) -> None:
    srv = serve("srv_graded_env", "--model", "fake-arith")
    async with RolloutClient(srv.url) as client:
        ungraded = await client.run_rollout(
            chat_completions_url=fake.base_url, rollout_id="u", grade=False, **PLAIN
        )
        graded = await client.run_rollout(
            chat_completions_url=fake.base_url, rollout_id="g", **PLAIN
        )
        # The model endpoint refuses connections: the agent fails, its row comes back.
        failed = await client.run_rollout(
            chat_completions_url="http://127.0.0.1:9/v1", rollout_id="f", **PLAIN
        )
    assert ungraded.status == "success" and ungraded.sample is not None
    assert ungraded.sample.reward is None and ungraded.sample.remove_sample is False
    assert ungraded.sample.completion  # the rollout ran; only grading was skipped
    assert graded.sample is not None and graded.sample.reward in (0.0, 1.0)
    assert failed.status == "failure" and failed.sample is not None
    assert failed.sample.reward is None and failed.sample.remove_sample is True
    assert failed.sample.error and failed.sample.error["category"] == "model_connection"


async def test_grader_timeout_keeps_the_sample(fake: FakeServerProcess, serve: Any) -> None:
    srv = serve("srv_graded_env", "--model", "fake-arith", "--env-args", '{"grade_sec": 5}')
    async with RolloutClient(srv.url) as client:
        slow = await client.run_rollout(
            chat_completions_url=fake.base_url, rollout_id="slow", grader_timeout_sec=0.2, **PLAIN
        )
    assert (slow.status, slow.err_category) == ("failure", "timeout")
    assert "grader did not finish within 0.2s" in (slow.err_message or "")
    assert slow.sample is not None and slow.sample.completion  # the rollout's output survives
    assert slow.sample.reward is None and slow.sample.remove_sample is True


async def test_grader_can_remove_a_sample(fake: FakeServerProcess, serve: Any) -> None:
    srv = serve("srv_graded_env", "--model", "fake-arith", "--env-args", '{"remove": true}')
    async with RolloutClient(srv.url) as client:
        removed = await client.run_rollout(
            chat_completions_url=fake.base_url, rollout_id="rm", **PLAIN
        )
    assert removed.status == "success" and removed.sample is not None
    assert removed.sample.remove_sample is True and removed.sample.reward is None


async def test_extra_fields_reach_the_rollout_as_info(
    fake: FakeServerProcess, serve: Any, tmp_path: Path
) -> None:
    rows = tmp_path / "rows"
    srv = serve("srv_extra_fields_env", "--model", "fake-arith", "--artifacts-dir", str(rows))
    async with RolloutClient(srv.url) as client:
        given = await client.run_rollout(
            chat_completions_url=fake.base_url,
            rollout_id="x1",
            extra_fields={"echo": 7, "tags": ["a"]},
            **PLAIN,
        )
        none = await client.run_rollout(
            chat_completions_url=fake.base_url, rollout_id="x2", **PLAIN
        )
        # metadata.input keeps its own info; extra_fields join it.
        joined = await client.run_rollout(
            chat_completions_url=fake.base_url,
            rollout_id="x3",
            extra_fields={"echo": 2},
            metadata={"input": {"answer": "7", "info": {"source": "s"}}},
            **PLAIN,
        )
    assert joined.sample is not None and joined.sample.metrics["extra_echo"] == 2.0
    assert given.sample is not None and given.sample.metrics["extra_echo"] == 7.0
    assert none.sample is not None and none.sample.metrics["extra_echo"] == -1.0
    info = {
        rid: json.loads((rows / f"{rid}.json").read_text())["info"] for rid in ("x1", "x2", "x3")
    }
    assert info == {
        "x1": {"extra_fields": {"echo": 7, "tags": ["a"]}},
        "x2": {},
        "x3": {"source": "s", "extra_fields": {"echo": 2}},
    }
