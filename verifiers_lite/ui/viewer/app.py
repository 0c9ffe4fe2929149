"""The viewer's FastAPI app: who may ask, the page and its static assets, and the JSON API (api.py)."""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from importlib import resources

from fastapi import APIRouter, FastAPI, HTTPException, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse

from verifiers_lite.ui.viewer.api import BackgroundIndexer, compare_router, runs_router
from verifiers_lite.ui.viewer.runs import RunRegistry

TOKEN_COOKIE = "vf_view_token"
_ASSETS = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"}
_LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
# Scripts and styles only from this server: even a rendering bug could not run injected code.
# Images of rollouts (data: URIs, http(s) URLs) show as thumbnails, sent without a referrer.
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: http: https:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'"
)


def asset(name: str) -> str:
    """A static asset shipped in the package (``index.html``, ``app.js``, ``app.css``)."""
    return (resources.files("verifiers_lite.ui.viewer") / "static" / name).read_text(
        encoding="utf-8"
    )


def _host_name(host_header: str) -> str:
    if host_header.startswith("["):
        return host_header.split("]")[0] + "]"
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


def create_viewer_app(registry: RunRegistry, token: str | None = None) -> FastAPI:
    """The app over ``registry``'s runs. With ``token``, every request must carry it (query
    ``?token=``, ``Authorization: Bearer`` or the cookie set on the first visit); without one,
    only loopback Host names are answered (a web page elsewhere cannot rebind a name onto us)."""
    app = FastAPI(title="vf-lite view", docs_url=None, redoc_url=None, openapi_url=None)
    app.middleware("http")(_guard(token))
    app.include_router(_page_router())
    app.include_router(runs_router(registry, BackgroundIndexer()))
    app.include_router(compare_router(registry))
    return app


def _guard(
    token: str | None,
) -> Callable[[Request, Callable[[Request], Awaitable[Response]]], Awaitable[Response]]:
    """The middleware every request passes: the token (or a loopback Host), then headers that
    keep the page to this server's own scripts."""

    async def guard(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        refusal = _refusal(request, token)
        if refusal is not None:
            return refusal
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = _CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        if token is not None and request.query_params.get("token") == token:
            response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict")
        return response

    return guard


def _refusal(request: Request, token: str | None) -> JSONResponse | None:
    """Why ``request`` is not answered, or None."""
    given = request.query_params.get("token") or request.cookies.get(TOKEN_COOKIE) or ""
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        given = auth[7:].strip()
    if token is not None:
        if not hmac.compare_digest(given.encode(), token.encode()):
            return JSONResponse(
                {"detail": "token required: open the URL vf-lite view printed"}, status_code=401
            )
    elif _host_name(request.headers.get("host", "")) not in _LOOPBACK_HOSTS:
        return JSONResponse(
            {"detail": "this viewer only answers loopback host names"}, status_code=403
        )
    return None


def _page_router() -> APIRouter:
    """The page and its static assets, read from the package once."""
    router = APIRouter(include_in_schema=False)
    cache: dict[str, str] = {}

    @router.get("/")
    def page() -> HTMLResponse:
        if "index.html" not in cache:
            cache["index.html"] = asset("index.html")
        return HTMLResponse(cache["index.html"])

    @router.get("/static/{name}")
    def static(name: str) -> Response:
        if name not in _ASSETS:  # a fixed list: no path from a request reaches the disk
            raise HTTPException(404, "not found")
        if name not in cache:
            cache[name] = asset(name)
        return Response(cache[name], media_type=_ASSETS[name])

    return router
