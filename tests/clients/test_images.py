"""Images in prompts: content parts pass through unchanged to a model that takes them (the fake
vision model answers from the PNG it decoded), a text-only model gets text parts as a string and
an image refused before any request, and a deterministic server error is not retried as if
transient."""

from __future__ import annotations

import io
from urllib.parse import urlparse

import pytest

import verifiers_lite as vf
from tests.helpers.fake_model import png
from verifiers_lite.core.content import ContentNotSupportedError, image_part
from verifiers_lite.testing.fault_proxy import FaultProxy
from verifiers_lite.testing.png import decode_png

FAST = vf.RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.02)


def picture_rows(colours: dict[str, tuple[int, int, int]]) -> list[dict]:
    return [
        {
            "prompt": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "What colour is this?"},
                        image_part(png(rgb)),
                    ],
                }
            ],
            "answer": name,
        }
        for name, rgb in colours.items()
    ]


def names_colour(completion, answer) -> float:
    return float(completion[-1]["content"] == f"The image is {answer}.")


COLOURS = {"red": (220, 30, 30), "blue": (30, 60, 220), "yellow": (240, 220, 40)}


def test_the_png_decoder_reads_what_pillow_wrote():
    Image = pytest.importorskip("PIL.Image")
    data = png((10, 200, 30), (9, 4))
    width, height, pixels = decode_png(data)
    assert (width, height) == (9, 4)
    img = Image.open(io.BytesIO(data)).convert("RGB")
    assert pixels == [img.getpixel((x, y)) for y in range(4) for x in range(9)]


def test_image_parts_reach_a_vision_model_unchanged_and_its_answer_depends_on_them(fake_server):
    rows = picture_rows(COLOURS)
    env = vf.SingleTurnEnv(dataset=rows, rubric=vf.Rubric([names_colour]))
    out = env.evaluate_sync(vf.ChatClient(fake_server.base_url), "fake-vision", progress=False)
    assert [r["completion"][-1]["content"] for r in out.rows] == [
        f"The image is {c}." for c in COLOURS
    ]
    assert out.summary["reward_mean"] == 1.0
    sent = [r["messages"][-1]["content"] for r in fake_server.requests()]
    assert sent == [row["prompt"][0]["content"] for row in rows]  # part for part, byte for byte
    page = out._repr_html_()  # the notebook's table names the part, never prints its base64
    assert page.count("What colour is this? [image_url]") == 3 and "base64" not in page


def test_a_text_only_model_gets_text_parts_as_one_string(fake_server):
    parts = [{"type": "text", "text": "Say"}, {"type": "text", "text": "hello"}]
    env = vf.SingleTurnEnv(
        dataset=[{"prompt": [{"role": "user", "content": parts}], "answer": "x"}]
    )
    client = vf.ChatClient(fake_server.base_url, text_only=True)
    (row,) = env.evaluate_sync(client, "fake-text-only", progress=False).rows
    assert row["error"] is None and row["completion"][-1]["content"] == "Say\nhello"
    assert fake_server.requests()[-1]["messages"][0]["content"] == "Say\nhello"
    assert row["prompt"][0]["content"] == parts  # the row keeps the prompt as given


def test_an_image_for_a_text_only_model_is_refused_before_any_request(fake_server):
    rows = [{"question": "plain", "answer": "a"}, *picture_rows({"red": (220, 30, 30)})]
    env = vf.SingleTurnEnv(dataset=rows)
    client = vf.ChatClient(fake_server.base_url, text_only="the tiny text model")
    with pytest.raises(ContentNotSupportedError) as info:
        env.evaluate_sync(client, "fake-text-only", progress=False)
    message = str(info.value)
    assert "inputs row 1 (example 1), field 'prompt'" in message
    assert (
        "message 0 (user) content part 1 is 'image_url'" in message
        and "the tiny text model" in message
    )
    assert "base64" not in message and fake_server.stats()["requests"] == 0


def test_an_image_sent_mid_rollout_to_a_text_only_model_is_an_env_error_row(fake_server):
    class ShowsAPicture(vf.MultiTurnEnv):
        async def env_response(self, messages, state):
            return [{"role": "user", "content": [image_part(png((30, 60, 220)))]}]

    env = ShowsAPicture(dataset=[{"question": "hi", "answer": "a"}], max_turns=3)
    (row,) = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url, text_only=True), "fake-echo", progress=False
    ).rows
    assert (
        row["error"]["category"] == "env_error"
        and "content part 0 is 'image_url'" in row["error"]["message"]
    )
    assert fake_server.stats()["requests"] == 1  # the first turn only


def test_a_deterministic_server_error_is_not_retried_as_if_transient(fake_server):
    parts = [{"type": "text", "text": "hello"}]
    env = vf.SingleTurnEnv(
        dataset=[{"prompt": [{"role": "user", "content": parts}], "answer": "x"}]
    )
    (row,) = env.evaluate_sync(
        vf.ChatClient(fake_server.base_url, retry=FAST), "fake-text-only", progress=False
    ).rows
    assert fake_server.stats()["requests"] == 2  # the same 500 twice: no more attempts
    assert row["error"]["category"] == "model_http_error"
    assert 'can only concatenate str (not "list") to str' in row["error"]["message"]
    assert (
        "after 2 attempts; the same answer twice, so not retried as a transient failure"
        in row["error"]["message"]
    )


def test_transient_errors_keep_the_whole_schedule(fake_server):
    fake_server.configure(
        faults=[{"status": 503}] * 3
        + [{"status": 500, "message": "a"}, {"status": 500, "message": "b"}] * 4
    )
    with pytest.raises(vf.ModelAPIError, match="after 4 attempts\\)"):
        vf.run_sync(
            vf.ChatClient(fake_server.base_url, retry=FAST).chat(
                "fake-echo", [{"role": "user", "content": "x"}]
            )
        )
    assert fake_server.stats()["requests"] == 4
    fake_server.reset()
    fake_server.configure(
        faults=[
            {"status": 500, "message": "a"},
            {"status": 500, "message": "b"},
            {"status": 500, "message": "c"},
        ]
    )
    reply = vf.run_sync(
        vf.ChatClient(fake_server.base_url, retry=FAST).chat(
            "fake-echo", [{"role": "user", "content": "x"}]
        )
    )
    assert reply.content == "x" and fake_server.stats()["requests"] == 4


@pytest.mark.local_model
async def test_the_embedded_model_takes_text_parts_and_refuses_an_image_unsent(local_llm):
    declared = local_llm.client().text_only
    assert "SmolLM2" in declared
    proxy = await FaultProxy(urlparse(local_llm.base_url).port, rate=0.0).start()
    try:
        text = [
            {"type": "text", "text": "What is 2 + 3?"},
            {"type": "text", "text": "Answer with a number."},
        ]
        env = vf.SingleTurnEnv(
            dataset=[{"prompt": [{"role": "user", "content": text}], "answer": "5"}],
            sampling_args={"max_tokens": 8},
        )
        # A plain client sends the list as it is: llama.cpp's 500, the same twice, so two attempts.
        (plain,) = (
            await env.evaluate(
                vf.ChatClient(proxy.base_url, retry=FAST), local_llm.model_name, progress=False
            )
        ).rows
        assert plain["error"]["category"] == "model_http_error"
        assert (
            "can only concatenate str" in plain["error"]["message"]
            and proxy.paths["/v1/chat/completions"] == 2
        )
        client = vf.ChatClient(proxy.base_url, text_only=declared, retry=FAST)
        (row,) = (await env.evaluate(client, local_llm.model_name, progress=False)).rows
        assert row["error"] is None and row["completion"][-1]["content"].strip()
        assert proxy.paths["/v1/chat/completions"] == 3
        pictures = vf.SingleTurnEnv(dataset=picture_rows({"red": (220, 30, 30)}))
        with pytest.raises(
            ContentNotSupportedError,
            match="inputs row 0 .*content part 1 is 'image_url', but the embedded model SmolLM2",
        ):
            await pictures.evaluate(client, local_llm.model_name, progress=False)
        assert proxy.paths["/v1/chat/completions"] == 3  # nothing sent
    finally:
        await proxy.close()


def test_the_token_engine_takes_text_parts_and_refuses_an_image_before_sampling():
    from verifiers_lite.rollout.testing import ScriptedSampler, toy_template

    template = toy_template()
    sampler = ScriptedSampler(template, lambda prompt: "ok")
    text = [{"type": "text", "text": "Say"}, {"type": "text", "text": "ok"}]
    trajs = vf.rollout.MultiTurnRollout(sampler, template)(
        [{"messages": [{"role": "user", "content": text}]}]
    )
    assert trajs[0]["stop_reason"] == "stop" and "Say\nok" in template.decode(sampler.calls[0][0])
    rows = picture_rows({"red": (220, 30, 30)})
    with pytest.raises(
        ContentNotSupportedError,
        match="trajectory 0, field 'messages': message 0 .*part 1 is 'image_url'",
    ):
        vf.rollout.MultiTurnRollout(sampler, template)([{"messages": rows[0]["prompt"]}])
    with pytest.raises(
        ContentNotSupportedError, match="inputs row 0 .*the token engine's chat template"
    ):
        vf.SingleTurnEnv(dataset=rows).evaluate_sync(
            vf.rollout.TokenClient(sampler, template), "m", progress=False
        )
    assert len(sampler.calls) == 1  # only the text conversation was sampled
