"""Running the viewer: in the foreground for ``vf-lite view``, or on a background thread kept
for a notebook kernel's life (``vf.view``)."""

from __future__ import annotations

import atexit
import contextlib
import ipaddress
import json
import os
import secrets
import shlex
import shutil
import socket
import string
import tempfile
import threading
import webbrowser
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from verifiers_lite._util.extras import require
from verifiers_lite.ui.viewer.runs import RunRegistry

if TYPE_CHECKING:
    from verifiers_lite.results.outputs import GenerateOutputs

DEFAULT_PORT = 8765


def _require_server_deps() -> None:
    require("fastapi", "the viewer", "view")
    require("uvicorn", "the viewer", "view")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket (port 0: any free port), bound before uvicorn starts so the URL
    printed is the one served."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def _url(host: str, port: int, token: str | None, fragment: str = "") -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    shown = f"[{shown}]" if ":" in shown and not shown.startswith("[") else shown
    query = f"?token={quote(token)}" if token else ""
    return f"http://{shown}:{port}/{query}{fragment}"


def run_viewer(
    paths: list[Path],
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    token: str | None = None,
    open_browser: bool = True,
) -> int:
    """Serve ``paths`` until interrupted (the ``vf-lite view`` command). A non-loopback
    ``host`` needs a token; pass ``token=""`` to have a random one made and printed."""
    _require_server_deps()
    import uvicorn

    from verifiers_lite.ui.viewer.app import create_viewer_app

    if token == "":
        token = secrets.token_urlsafe(24)
    if not is_loopback(host) and not token:
        raise ValueError(
            f"--host {host} serves other machines: add --token (a random token is printed "
            "and required on every request)"
        )
    registry = RunRegistry(paths)
    runs = registry.refresh()
    sock = bind_socket(host, port)
    url = _url(host, sock.getsockname()[1], token)
    print(
        f"vf-lite view: {len(runs)} run(s) under {', '.join(map(str, registry.roots))}", flush=True
    )
    print(f"vf-lite view: serving at {url}  (Ctrl+C to stop)", flush=True)
    if open_browser:
        webbrowser.open(url)
    config = uvicorn.Config(
        create_viewer_app(registry, token), log_level="warning", access_log=False
    )
    server = uvicorn.Server(config)
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn already stopped gracefully
        server.run(sockets=[sock])
    return 0


class ViewerServer:
    """The viewer on a daemon thread (loopback, free port): one per process, kept for a
    notebook kernel's life, serving every path handed to :func:`view`."""

    _instance: ViewerServer | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        _require_server_deps()
        import uvicorn

        from verifiers_lite.ui.viewer.app import create_viewer_app

        self.registry = RunRegistry([])
        self._sock = bind_socket("127.0.0.1", 0)
        self.port = self._sock.getsockname()[1]
        config = uvicorn.Config(
            create_viewer_app(self.registry), log_level="warning", access_log=False
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [self._sock]},
            name="vf-lite-viewer",
            daemon=True,
        )
        self._thread.start()

    @classmethod
    def shared(cls) -> ViewerServer:
        with cls._lock:
            if cls._instance is None or not cls._instance._thread.is_alive():
                cls._instance = cls()
            return cls._instance

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


_LIVE_FRAME_JS = string.Template(
    "(function(){var box=document.getElementById($box);if(!box||!window.fetch)return;"
    "fetch($probe,{mode:'no-cors',cache:'no-store'}).then(function(){"
    "var f=document.createElement('iframe');f.src=$url;"
    "f.style.cssText='width:100%;height:${height}px;border:1px solid #ddd';box.appendChild(f);"
    "box.setAttribute('data-live','1');},function(){box.setAttribute('data-live','0');});})();"
)


class ViewerFrame:
    """The viewer inline in a notebook. Its HTML is a static snapshot of what is shown (kept by
    a saved notebook, read anywhere) and a small script that, where an output may run one (a
    live notebook), adds the viewer in an iframe once its server answers: a saved notebook never
    shows a blank frame onto a server that is gone. In a script, its repr is the URL."""

    def __init__(self, url: str, height: int = 720, snapshot: str = "", source: str = "") -> None:
        self.url = url
        self.height = height
        self.snapshot = snapshot  # static HTML (escaped by whoever made it)
        self.source = source  # the path `vf-lite view` serves again once this server is gone

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/html": self._html(), "text/plain": self._text()}

    def _repr_html_(self) -> str:
        return self._html()

    def _text(self) -> str:
        again = f"; afterwards: vf-lite view {shlex.quote(self.source)}" if self.source else ""
        return f"vf-lite view: {self.url} (live while this kernel runs{again})"

    def _html(self) -> str:
        from html import escape

        box = f"vf-view-{secrets.token_hex(6)}"
        again = (
            f"; afterwards <code>vf-lite view {escape(shlex.quote(self.source))}</code> serves it again"
            if self.source
            else ""
        )
        # The probe's answer is opaque (another origin): resolving at all means the server lives.
        script = _LIVE_FRAME_JS.substitute(
            box=json.dumps(box),
            height=int(self.height),
            url=json.dumps(self.url),
            probe=json.dumps(self.url.split("#", 1)[0] + "api/runs"),
        )
        script = script.replace("</", "<\\/")  # nothing in it may close the script element
        return (
            f'<div id="{box}" class="vf-view" style="font-family:sans-serif;font-size:13px">{self.snapshot}'
            f'<div style="font-size:11px;color:#777;margin:2px 0">vf-lite view: <a href="{escape(self.url)}" '
            f'target="_blank">{escape(self.url)}</a> (live while this kernel runs{again})</div></div>'
            f"<script>{script}</script>"
        )

    def __repr__(self) -> str:
        return f"ViewerFrame({self.url!r})"


def _snapshot(run_ids: list[str], registry: RunRegistry) -> str:
    """Static HTML of what the frame shows: the run's figures, or the runs under a folder."""
    from html import escape

    lines = []
    for run_id in run_ids[:20]:
        run = registry.get(run_id)
        if run is None:
            continue
        s = run.summary()
        reward = s.get("reward_mean")
        figures = (
            f"mean reward <b>{reward:.3f}</b> ± {s.get('reward_stderr') or 0:.3f}"
            if isinstance(reward, (int, float))
            else "no scored rollouts"
        )
        lines.append(
            f"<li><b>{escape(str(s.get('env_id') or run_id))}</b> · {escape(str(s.get('model') or '?'))}"
            f" · {s.get('num_rollouts', 0)} rollouts · {figures} · errors {s.get('num_errors', 0)}"
            f" · {escape(str(s.get('status')))}</li>"
        )
    more = f"<li>… and {len(run_ids) - 20} more</li>" if len(run_ids) > 20 else ""
    return (
        f'<div class="vf-view-snapshot" style="border:1px solid #ddd;padding:4px 8px;background:#fafafa">'
        f'<div style="color:#555">{len(run_ids)} run(s) in the viewer</div>'
        f'<ul style="margin:2px 0;padding-left:18px">{"".join(lines)}{more}</ul></div>'
    )


def view(target: str | os.PathLike[str] | GenerateOutputs, height: int = 720) -> ViewerFrame:
    """Show a run (a directory written by ``results_path``/``vf-lite eval``, a folder of runs,
    or a ``GenerateOutputs``) in the viewer, inline in a notebook. Outputs not yet on disk are
    saved to a temporary directory first."""
    from verifiers_lite.results.outputs import GenerateOutputs
    from verifiers_lite.ui.viewer.standalone import run_slug

    saved = not isinstance(target, GenerateOutputs)
    if isinstance(target, GenerateOutputs):
        tmp = tempfile.mkdtemp(prefix="vf-view-")
        atexit.register(shutil.rmtree, tmp, True)  # served for the kernel's life, then gone
        path = Path(tmp) / run_slug(target)
        target.save(path)
    else:
        path = Path(target)
    server = ViewerServer.shared()
    ids = server.registry.add_root(path)
    fragment = f"#/runs/{quote(ids[0], safe='')}" if len(ids) == 1 else "#/"
    return ViewerFrame(
        server.url + fragment, height, _snapshot(ids, server.registry), str(path) if saved else ""
    )
