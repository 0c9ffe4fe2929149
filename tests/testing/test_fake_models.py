"""The fake server's thinking and vision models answer usefully wherever they are used: the
thinking ones on an environment without a calculator tool, the vision one names the colour a
person would (the figure's, not the background's)."""

from __future__ import annotations

import io

import pytest

import verifiers_lite as vf
from tests.helpers.fake_model import png
from verifiers_lite.testing.fake_server import MODELS


@pytest.mark.parametrize("model", ["fake-think", "fake-think-reasoning", "fake-think-inline"])
def test_thinking_fakes_answer_arithmetic_without_tools(fake_server, model):
    env = vf.load_environment("arithmetic", num_examples=6, operations="+*")
    out = env.evaluate_sync(vf.ChatClient(fake_server.base_url), model, progress=False)
    for row in out.rows:
        reply = row["completion"][-1]
        assert reply["content"].strip(), reply  # an answer, not only reasoning
        # the reasoning kept apart, whatever its field (inline: in the content, before the answer)
        assert reply.get("reasoning_content") or reply["content"].startswith("<think>")
    assert out.summary["reward_mean"] == 1.0  # the parsed answer is the truth every time


def _names(completion, answer) -> float:
    return float(completion[-1]["content"] == f"The image is {answer}.")


def _circle(fg: tuple[int, int, int], bg: tuple[int, int, int], size: int = 40) -> bytes:
    """A filled circle of ``fg`` on ``bg``, drawn by Pillow: the circle covers ~20% of it."""
    Image = pytest.importorskip("PIL.Image")
    ImageDraw = pytest.importorskip("PIL.ImageDraw")
    img = Image.new("RGB", (size, size), bg)
    ImageDraw.Draw(img).ellipse((size // 4, size // 4, size * 3 // 4, size * 3 // 4), fill=fg)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


@pytest.mark.parametrize(
    ("image", "name"),
    [
        (lambda: _circle((220, 30, 30), (255, 255, 255)), "red"),
        (lambda: _circle((30, 60, 220), (240, 220, 40)), "blue"),
        (lambda: png((30, 160, 50)), "green"),  # one colour all over
    ],
)
def test_vision_fake_names_the_dominant_colour(fake_server, image, name):
    prompt = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What colour is the shape?"},
                vf.image_part(image()),
            ],
        }
    ]
    env = vf.SingleTurnEnv(dataset=[{"prompt": prompt, "answer": name}], rubric=vf.Rubric([_names]))
    out = env.evaluate_sync(vf.ChatClient(fake_server.base_url), "fake-vision", progress=False)
    assert out.rows[0]["completion"][-1]["content"] == f"The image is {name}."


def test_models_lists_what_the_server_serves(fake_server):
    import json
    import urllib.request

    with urllib.request.urlopen(fake_server.base_url + "/models") as res:
        listed = [m["id"] for m in json.load(res)["data"]]
    assert listed == list(MODELS) and len(listed) == 10
