"""What an ``openai.AsyncOpenAI`` was configured with, as :class:`ChatClient` arguments."""

from __future__ import annotations

import urllib.request
from typing import TYPE_CHECKING, Any, TypeAlias

from verifiers_lite.clients.retry import RetryPolicy

if TYPE_CHECKING:
    import openai

    OpenAISDKClient: TypeAlias = openai.AsyncOpenAI | openai.OpenAI
    """A client of the ``openai`` SDK (async, or blocking), as the user configured it."""


def openai_settings(client: OpenAISDKClient) -> dict[str, Any]:
    """:class:`ChatClient` arguments for an ``AsyncOpenAI``'s endpoint, key, organization and
    project, custom headers, (read) timeout and ``max_retries``; proxies from the environment."""
    headers: dict[str, str] = {}
    for name, value in (
        ("OpenAI-Organization", getattr(client, "organization", None)),
        ("OpenAI-Project", getattr(client, "project", None)),
    ):
        if isinstance(value, str) and value:
            headers[name] = value
    for name, value in dict(getattr(client, "_custom_headers", None) or {}).items():
        if isinstance(value, str):  # the SDK's Omit markers remove a header: nothing to send
            headers[str(name)] = value
    api_key = getattr(client, "api_key", None)
    max_retries = getattr(client, "max_retries", None)
    settings: dict[str, Any] = {
        "base_url": str(client.base_url),
        "api_key": api_key if isinstance(api_key, str) and api_key else None,
        "timeout": read_timeout(getattr(client, "timeout", None)) or 300.0,
        "headers": headers,
        "trust_env": _proxied(str(client.base_url)),
    }
    if isinstance(max_retries, int) and max_retries >= 0:
        settings["retry"] = RetryPolicy(max_attempts=max_retries + 1)
    return settings


def _proxied(url: str) -> bool:
    """Whether proxy environment variables (which the SDK follows) apply to ``url``. Checked once
    here: aiohttp's ``trust_env`` looks them up on every request, doubling its CPU cost."""
    scheme, _, rest = url.partition("://")
    host = rest.split("/", 1)[0]
    proxies = urllib.request.getproxies_environment()
    if not (proxies.get(scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass_environment(host, proxies)  # type: ignore[attr-defined]


def read_timeout(timeout: Any) -> float | None:
    """Seconds a request may wait for its answer: a number, or an httpx Timeout's read part."""
    seconds = getattr(timeout, "read", timeout)
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds > 0:
        return float(seconds)
    return None
