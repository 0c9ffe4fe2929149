"""A thinking model's reasoning and a prompt's images in the viewer's transcript, in Debian's
headless Chromium under the page's own CSP: the reasoning collapsed above the answer, images as
loaded thumbnails (a data: URI and a URL), their base64 text nowhere on the page."""

from __future__ import annotations

import base64
import http.server
import threading
import urllib.parse

import pytest

import verifiers_lite as vf
from tests.helpers.browser import CHROMIUM, NO_CHROMIUM, NO_PLAYWRIGHT
from tests.helpers.fake_model import calculator, expected_reasoning, png
from tests.ui.viewer.viewer_proc import ViewerProcess
from verifiers_lite.core.content import image_part
from verifiers_lite.testing.waiting import wait_until

pytestmark = pytest.mark.slow
sync_api = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT)
if CHROMIUM is None:
    pytest.skip(NO_CHROMIUM, allow_module_level=True)


@pytest.fixture(scope="module")
def image_server():
    """A loopback HTTP server of one PNG, for an image given by URL."""
    body = png((30, 160, 50), (16, 12))

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/green.png"
    server.shutdown()
    server.server_close()


def test_reasoning_is_collapsed_and_images_are_thumbnails(fake_server, tmp_path, image_server):
    client = vf.ChatClient(fake_server.base_url)
    think = vf.ToolEnv(
        tools=[calculator], dataset=[{"question": "What is 3 + 4?", "answer": "7"}], env_id="think"
    )
    think.evaluate_sync(
        client, "fake-think", results_path=str(tmp_path / "evals" / "think"), progress=False
    )
    red = image_part(png((220, 30, 30), (40, 30)))
    prompt = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "What colours?"}, red, image_part(image_server)],
        }
    ]
    vision = vf.SingleTurnEnv(dataset=[{"prompt": prompt, "answer": "red"}], env_id="vision")
    (seen,) = vision.evaluate_sync(
        client, "fake-vision", results_path=str(tmp_path / "evals" / "vision"), progress=False
    ).rows
    assert (
        seen["completion"][-1]["content"] == "The images are red, unreadable."
    )  # a URL is not fetched
    payload = red["image_url"]["url"].split(",", 1)[1]
    assert base64.b64decode(payload).startswith(b"\x89PNG")
    with ViewerProcess(str(tmp_path)) as viewer, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        pg = browser.new_page()  # the page's own CSP applies: images must be allowed by it
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.set_default_timeout(30_000)
        pg.goto(viewer.url + "#/runs/" + urllib.parse.quote("evals~think") + "/rows/0/0")
        pg.wait_for_selector("#conversation details.reasoning")
        details = pg.locator("#conversation details.reasoning")
        assert details.count() == 2
        assert details.first.get_attribute("open") is None  # collapsed
        first = expected_reasoning(3, "+", 4)[0]
        assert not pg.locator("#conversation").get_by_text(first, exact=True).is_visible()
        details.first.locator("summary").click()
        assert pg.locator("#conversation").get_by_text(first, exact=True).is_visible()
        assert "The answer is \\boxed{7}." in pg.inner_text("#transcript")
        assert "tokens" in pg.inner_text("#transcript") and " reasoning)" in pg.inner_text(
            "#transcript"
        )

        pg.goto(viewer.url + "#/runs/" + urllib.parse.quote("evals~vision") + "/rows/0/0")
        pg.wait_for_selector("#conversation img.thumb")

        def sizes() -> list[
            list[int]
        ]:  # polled from here: the page's CSP forbids a page-side predicate
            return pg.eval_on_selector_all(
                "#conversation img.thumb",
                "imgs => imgs.map(i => [i.naturalWidth, i.naturalHeight])",
            )

        wait_until(
            lambda: all(w > 0 for w, _ in sizes()), timeout=30, what="the thumbnails to load"
        )
        assert sizes() == [[40, 30], [16, 12]]  # both loaded: the data URI and the URL
        text = pg.inner_text("body")
        assert payload[:40] not in text and "base64" not in text and "What colours?" in text
        assert payload[:40] not in pg.inner_html("#transcript").replace(red["image_url"]["url"], "")
        pg.screenshot(path=str(tmp_path / "media.png"), full_page=True)
        browser.close()
    assert not errors
