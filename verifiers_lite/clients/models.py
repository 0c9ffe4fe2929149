"""``GET {base_url}/models``: what an OpenAI-compatible endpoint says it serves."""

from __future__ import annotations

from typing import Any


async def list_models(
    base_url: str, api_key: str | None = None, timeout: float = 10.0
) -> list[dict[str, Any]]:
    """The entries of the endpoint's ``/models`` list (``data``), as the server sent them.
    Raises what the request raised (aiohttp errors, TimeoutError, ValueError on a non-list)."""
    import aiohttp

    url = base_url.rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as http,
        http.get(url, headers=headers) as resp,
    ):
        resp.raise_for_status()
        payload = await resp.json(content_type=None)
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
        raise ValueError(f"{url} answered without a list of models: {str(payload)[:200]!r}")
    return data


def only_model(models: list[dict[str, Any]], url: str, how_to_name: str) -> str:
    """The id of the one model in an endpoint's list; when it lists none or several (which
    one to use is then ambiguous: the first is no guess worth making), a ValueError naming
    them and ``how_to_name`` one (e.g. "pass -m MODEL")."""
    ids = [str(m.get("id")) for m in models if m.get("id") is not None]
    if len(ids) == 1:
        return ids[0]
    if not ids:
        raise ValueError(f"{url}/models lists no model; {how_to_name}")
    raise ValueError(
        f"{url}/models lists {len(ids)} models ({', '.join(ids)}), so which one to use is "
        f"ambiguous; {how_to_name}"
    )
