"""Running the viewer: in the foreground for ``vf-lite view``, or on a background thread kept
for a notebook kernel's life (``vf.view``)."""

from __future__ import annotations

import atexit
import contextlib
import ipaddress
import os
import secrets
import shutil
import socket
import tempfile
import threading
import webbrowser
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from verifiers_lite.extras import require
from verifiers_lite.viewer.runs import RunRegistry

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


def run_viewer(paths: list[Path], host: str = "127.0.0.1", port: int = DEFAULT_PORT,
               token: str | None = None, open_browser: bool = True) -> int:
    """Serve ``paths`` until interrupted (the ``vf-lite view`` command). A non-loopback
    ``host`` needs a token; pass ``token=""`` to have a random one made and printed."""
    _require_server_deps()
    import uvicorn

    from verifiers_lite.viewer.app import create_viewer_app

    if token == "":
        token = secrets.token_urlsafe(24)
    if not is_loopback(host) and not token:
        raise ValueError(f"--host {host} serves other machines: add --token (a random token is printed "
                         "and required on every request)")
    registry = RunRegistry(paths)
    runs = registry.refresh()
    sock = bind_socket(host, port)
    url = _url(host, sock.getsockname()[1], token)
    print(f"vf-lite view: {len(runs)} run(s) under {', '.join(map(str, registry.roots))}", flush=True)
    print(f"vf-lite view: serving at {url}  (Ctrl+C to stop)", flush=True)
    if open_browser:
        webbrowser.open(url)
    config = uvicorn.Config(create_viewer_app(registry, token), log_level="warning", access_log=False)
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

        from verifiers_lite.viewer.app import create_viewer_app

        self.registry = RunRegistry([])
        self._sock = bind_socket("127.0.0.1", 0)
        self.port = self._sock.getsockname()[1]
        config = uvicorn.Config(create_viewer_app(self.registry), log_level="warning", access_log=False)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]},
                                        name="vf-lite-viewer", daemon=True)
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


class ViewerFrame:
    """The viewer inline in a notebook (an iframe); in a script, its repr is the URL."""

    def __init__(self, url: str, height: int = 720) -> None:
        self.url = url
        self.height = height

    def _repr_html_(self) -> str:
        from html import escape

        return (f'<iframe src="{escape(self.url)}" style="width:100%;height:{int(self.height)}px;'
                f'border:1px solid #ddd" loading="lazy"></iframe>'
                f'<div style="font-size:11px;color:#777">vf-lite view: <a href="{escape(self.url)}" '
                f'target="_blank">{escape(self.url)}</a></div>')

    def __repr__(self) -> str:
        return f"ViewerFrame({self.url!r})"


def view(target: str | os.PathLike[str] | GenerateOutputs, height: int = 720) -> ViewerFrame:
    """Show a run (a directory written by ``results_path``/``vf-lite eval``, a folder of runs,
    or a ``GenerateOutputs``) in the viewer, inline in a notebook. Outputs not yet on disk are
    saved to a temporary directory first."""
    from verifiers_lite.results.outputs import GenerateOutputs
    from verifiers_lite.viewer.standalone import run_slug

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
    return ViewerFrame(server.url + fragment, height)

