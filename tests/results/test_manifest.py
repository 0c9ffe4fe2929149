"""The reproducibility manifest in metadata.json, checked against independent sources: the
interpreter, importlib.metadata, the environment's file on disk, the server's own /v1/models."""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import platform
import sys
import textwrap
import urllib.request

import verifiers_lite as vf
from tests.helpers.envs import arithmetic_rows, make_env
from verifiers_lite.core.model_client import ChatResponse


def test_manifest_names_versions_endpoint_entry_and_system_fingerprints(fake_server, tmp_path):
    fake_server.configure(system_fingerprint="fp_build_42")
    env = vf.load_environment("arithmetic", num_examples=3)
    env.evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        rollouts_per_example=2,
        results_path=str(tmp_path),
        progress=False,
    )
    (session,) = json.loads((tmp_path / "metadata.json").read_text())["sessions"]
    manifest = session["manifest"]
    assert manifest["library_version"] == importlib.metadata.version("verifiers_lite")
    assert manifest["python"] == sys.version and manifest["platform"] == platform.platform()
    for dist in ("openai", "vllm", "llama-cpp-python", "transformers", "math-verify"):
        try:
            expected = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            expected = None
        assert manifest["packages"].get(dist) == expected, dist
    assert (
        "openai" in manifest["packages"]
    )  # installed in this venv: the check above is not vacuous
    listed = json.loads(urllib.request.urlopen(f"{fake_server.base_url}/models", timeout=5).read())[
        "data"
    ]
    assert manifest["endpoints"] == [
        {
            "client": "ChatClient",
            "endpoint": fake_server.base_url,
            "model": next(m for m in listed if m["id"] == "fake-arith"),
        }
    ]
    assert manifest["system_fingerprints"] == ["fp_build_42"]
    origin = importlib.util.find_spec(env.source_module).origin
    with open(origin, "rb") as f:
        assert manifest["environment"]["source_sha256"] == hashlib.sha256(f.read()).hexdigest()
    assert manifest["environment"]["file"] == origin


def test_scripted_client_and_an_unreachable_endpoint_are_recorded_not_fatal(tmp_path):
    scripted = vf.ScriptedClient([ChatResponse({"role": "assistant", "content": "\\boxed{0}"})] * 2)
    out = make_env(2).evaluate_sync(scripted, "m", progress=False)
    (entry,) = out.metadata["sessions"][0]["manifest"]["endpoints"]
    assert entry["client"] == "ScriptedClient" and entry["endpoint"] is None
    assert out.metadata["sessions"][0]["manifest"]["system_fingerprints"] == []

    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    out = make_env(2).evaluate_sync(
        vf.ChatClient(dead, retry=vf.RetryPolicy(max_attempts=1)), "m", progress=False
    )
    (entry,) = out.metadata["sessions"][0]["manifest"]["endpoints"]
    assert entry["endpoint"] == dead and "error" in entry
    assert all(r["error"]["category"] == "model_connection" for r in out.rows)


def _notebook_env_class(body: str):
    namespace = {"vf": vf, "__name__": "__main__"}
    exec(compile(textwrap.dedent(body), "<cell>", "exec"), namespace)
    return namespace["Echo"]


ECHO_V1 = """
class Echo(vf.SingleTurnEnv):
    async def rollout(self, input, client, model, sampling_args=None):
        return await super().rollout(input, client, model, sampling_args)
"""
ECHO_V2 = """
class Echo(vf.SingleTurnEnv):
    async def rollout(self, input, client, model, sampling_args=None):
        state = await super().rollout(input, client, model, sampling_args)
        state["echoed"] = True
        return state
"""


def test_environment_code_of_a_notebook_class_and_a_library_class(fake_server):
    c = vf.ChatClient(fake_server.base_url)
    hashes = []
    for body in (ECHO_V1, ECHO_V1, ECHO_V2):
        env = _notebook_env_class(body)(
            dataset=arithmetic_rows(1), rubric=vf.Rubric([lambda completion: 1.0])
        )
        source = env.evaluate_sync(c, "fake-arith", progress=False).metadata["sessions"][0][
            "manifest"
        ]["environment"]
        assert (
            source["module"] == "__main__"
            and source["class"] == "Echo"
            and "source_sha256" not in source
        )
        hashes.append(source["code_hash"])
    assert hashes[0] == hashes[1] != hashes[2]
    source = (
        make_env(1)
        .evaluate_sync(c, "fake-arith", progress=False)
        .metadata["sessions"][0]["manifest"]["environment"]
    )
    assert (
        source["module"] == "verifiers_lite.envs.single_turn_env"
        and "library class" in source["note"]
    )


def test_an_environment_group_lists_each_member_s_code(fake_server, tmp_path):
    """Each task's entry is what that environment alone records (its loader's file, hashed)."""
    group = vf.EnvGroup(
        [vf.load_environment("arithmetic", num_examples=2), make_env(2)], names=["sums", "inline"]
    )
    out = group.evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-arith", num_examples=1, progress=False
    )
    source = out.metadata["sessions"][0]["manifest"]["environment"]
    assert source["class"] == "EnvGroup" and set(source["members"]) == {"sums", "inline"}
    sums = source["members"]["sums"]
    origin = importlib.util.find_spec(group.envs["sums"].source_module).origin
    with open(origin, "rb") as f:
        assert (
            sums["source_sha256"] == hashlib.sha256(f.read()).hexdigest() and sums["file"] == origin
        )
    assert source["members"]["inline"]["module"] == "verifiers_lite.envs.single_turn_env"
