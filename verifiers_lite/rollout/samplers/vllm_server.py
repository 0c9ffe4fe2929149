"""``VLLMServerSampler``: token-in/token-out sampling from a vLLM OpenAI-compatible server.

Prompts go to ``POST {base_url}/completions`` as token ids (no re-tokenisation: a multi-turn
prompt is exactly the ids so far), and vLLM's ``return_token_ids`` gives the sampled ids back
verbatim with their logprobs, so ``MultiTurnRollout`` and ``TokenClient`` work over HTTP exactly
as with an in-process sampler.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from verifiers_lite.clients.http import status_error
from verifiers_lite.core.errors import ModelAPIError
from verifiers_lite.rollout.sampling import SampleResult, SamplingParams, params_list

__all__ = ["VLLMServerSampler"]


class VLLMServerSampler:
    """Samples token prompts from a running vLLM server (``/v1/completions``), one request each,
    ``concurrency`` at a time (the server batches them).

    ``base_url`` is the server's OpenAI root (``http://127.0.0.1:8000/v1``); ``model`` its
    served model name. Returned ids are the sampled ids with the stop token kept; logprobs are
    the sampled tokens' (vLLM's raw model logprobs), top-``k`` alternatives when asked.
    ``max_context_tokens`` is read from the server's ``/models`` (``max_model_len``).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 300.0,
        concurrency: int = 64,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self.concurrency = concurrency
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._max_context: int | None = None

    @property
    def max_context_tokens(self) -> int | None:
        """The served model's ``max_model_len`` (None if the server does not say)."""
        if self._max_context is None:
            models = self._request("GET", "/models", None).get("data") or []
            for m in models:
                if m.get("id") == self.model and m.get("max_model_len"):
                    self._max_context = int(m["max_model_len"])
        return self._max_context

    def body(self, prompt: Sequence[int], p: SamplingParams) -> dict[str, Any]:
        """The ``/completions`` request for one token prompt."""
        body: dict[str, Any] = {
            "model": self.model,
            "prompt": list(prompt),
            "max_tokens": p.max_tokens,
            "temperature": p.temperature,
            "top_p": p.top_p,
            "top_k": p.top_k if p.top_k > 0 else -1,
            "repetition_penalty": p.repetition_penalty,
            "return_token_ids": True,
            "return_tokens_as_token_ids": True,
            # Stop strings must not cut ids, and special tokens must not vanish from the text.
            "include_stop_str_in_output": True,
            "skip_special_tokens": False,
        }
        if p.stop:
            body["stop"] = list(p.stop)
        if p.stop_token_ids:
            body["stop_token_ids"] = list(p.stop_token_ids)
        if p.seed is not None:
            body["seed"] = p.seed
        if p.logprobs is not None:
            body["logprobs"] = p.logprobs
        body.update(p.extra)
        return body

    def sample(
        self, prompts: Sequence[Sequence[int]], params: SamplingParams | Sequence[SamplingParams]
    ) -> list[SampleResult]:
        plist = params_list(params, len(prompts))
        if not prompts:
            return []
        workers = min(self.concurrency, len(prompts))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="vllm-http") as pool:
            return list(pool.map(self._one, prompts, plist))

    def _one(self, prompt: Sequence[int], p: SamplingParams) -> SampleResult:
        payload = self._request("POST", "/completions", self.body(prompt, p))
        return parse_completion(payload, p.logprobs)

    def _request(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        url = self.base_url + path
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(url, data=data, headers=self._headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                result: dict[str, Any] = json.loads(resp.read())
                return result
        except urllib.error.HTTPError as e:
            detail = e.read().decode("utf-8", errors="replace")
            raise status_error(e.code, detail, None, url) from e
        except urllib.error.URLError as e:  # refused, reset, unreachable
            raise ModelAPIError(f"{url}: {e.reason}", category="model_connection") from e


def parse_completion(payload: dict[str, Any], logprobs_k: int | None) -> SampleResult:
    """A vLLM ``text_completion`` answer (with ``token_ids``) as a :class:`SampleResult`."""
    try:
        choice = payload["choices"][0]
    except (KeyError, IndexError, TypeError) as e:
        raise _bad_response(f"not a completion: {str(payload)[:200]}") from e
    ids = choice.get("token_ids")
    if not isinstance(ids, list):
        raise _bad_response(
            "the server returned no token_ids: it must be vLLM >= 0.10.2 (return_token_ids)"
        )
    ids = [int(t) for t in ids]
    logprobs = top = None
    if logprobs_k is not None:
        lp = choice.get("logprobs") or {}
        values = lp.get("token_logprobs") or []
        if len(values) != len(ids):
            raise _bad_response(f"server returned {len(values)} logprobs for {len(ids)} tokens")
        logprobs = [float(x) for x in values]
        if logprobs_k > 0:
            top = [_top(step, logprobs_k) for step in lp.get("top_logprobs") or []]
    finish = "length" if choice.get("finish_reason") == "length" else "stop"
    return SampleResult(ids, finish, logprobs, choice.get("text"), top)  # type: ignore[arg-type]


def _top(step: dict[str, float] | None, k: int) -> dict[int, float]:
    """``{"token_id:12": -0.1, ...}`` as ``{12: -0.1}``, the ``k`` most likely first."""
    items = sorted((step or {}).items(), key=lambda kv: -kv[1])[:k]
    return {int(str(t).rsplit(":", 1)[-1]): float(v) for t, v in items}


def _bad_response(message: str) -> ModelAPIError:
    """An answer that is not a usable completion: the model's failure (``model_bad_response``)."""
    return ModelAPIError(message, category="model_bad_response")
