"""The model is what answered: a name the endpoint's ``/v1/models`` does not list is refused
before any chat request, naming what it serves (the fake server 404s such a name, as vLLM
does); the id a server says answered, when it is another, is kept per call, per row, in the
run's metadata and in the run's label."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

import verifiers_lite as vf
from verifiers_lite.results.labels import run_facts, run_labels
from verifiers_lite.testing.fake_server import MODELS

ROWS = [{"question": f"What is {i} + 2?", "answer": str(i + 2)} for i in range(3)]


def test_the_fake_server_answers_an_unknown_model_404_as_vllm_does(fake_server):
    body = {"model": "fake-arithh", "messages": [{"role": "user", "content": "1 + 1"}]}
    req = urllib.request.Request(
        fake_server.base_url + "/chat/completions",
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(req, timeout=10)
    assert caught.value.code == 404
    assert json.loads(caught.value.read())["error"]["message"] == (
        "The model `fake-arithh` does not exist."
    )


def test_a_model_name_the_endpoint_does_not_serve_is_refused_before_any_request(
    fake_server, tmp_path
):
    env = vf.SingleTurnEnv(dataset=ROWS)
    with pytest.raises(ValueError) as caught:
        env.evaluate_sync(
            vf.ChatClient(fake_server.base_url),
            "fake-arithh",
            results_path=str(tmp_path / "run"),
            progress=False,
        )
    message = str(caught.value)
    assert "'fake-arithh' is not served by " + fake_server.base_url in message
    assert all(m in message for m in MODELS)
    assert fake_server.stats()["requests"] == 0 and not (tmp_path / "run").exists()


def test_another_served_model_is_recorded_and_labelled(fake_server, tmp_path):
    fake_server.configure(served_as="fake-arith-2026-01")
    out = vf.SingleTurnEnv(dataset=ROWS).evaluate_sync(
        vf.ChatClient(fake_server.base_url),
        "fake-arith",
        results_path=str(tmp_path / "run"),
        progress=False,
    )
    assert [r["served_models"] for r in out.rows] == [["fake-arith-2026-01"]] * 3
    assert out.metadata["served_models"] == ["fake-arith-2026-01"]
    saved = vf.load_results(str(tmp_path / "run"))
    assert saved.metadata["served_models"] == ["fake-arith-2026-01"]
    (label,) = run_labels([run_facts(saved.metadata)])
    assert label == "fake-arith (served: fake-arith-2026-01)"
    # a server that names the model asked records nothing more
    fake_server.configure(served_as=None)
    again = vf.SingleTurnEnv(dataset=ROWS).evaluate_sync(
        vf.ChatClient(fake_server.base_url), "fake-arith", progress=False
    )
    assert "served_models" not in again.metadata
    assert all("served_models" not in r for r in again.rows)
