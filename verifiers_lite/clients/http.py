"""A lean OpenAI-compatible chat client on aiohttp.

Why not ``openai.AsyncOpenAI`` on the hot path: on these machines its httpx2 stack costs ~1.8 ms CPU
per request at 128 in flight against ~0.12 ms for aiohttp (see benchmarks/scheduler.py). A stock
``AsyncOpenAI`` passed to evaluate/generate runs on this client when its settings allow (see
:mod:`verifiers_lite.clients.resolve`); the SDK path stays available through
:class:`~verifiers_lite.clients.openai_adapter.OpenAIClientAdapter`.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from verifiers_lite.clients.adaptive import report_headers, report_refusal
from verifiers_lite.clients.openai_settings import openai_settings
from verifiers_lite.clients.openai_wire import read_usage
from verifiers_lite.clients.retry import (
    RepeatedAnswer,
    RetryPolicy,
    call_with_retries,
    parse_retry_after,
)
from verifiers_lite.core.content import text_only
from verifiers_lite.core.errors import ModelAPIError
from verifiers_lite.core.messages import Message
from verifiers_lite.core.model_client import ChatResponse, text_only_model
from verifiers_lite.core.pricing import ModelPrice
from verifiers_lite.core.reasoning import assistant_message

if TYPE_CHECKING:
    from verifiers_lite.clients.cache import CachedClient
    from verifiers_lite.clients.openai_settings import OpenAISDKClient

# ``chat.completions.create`` options that shape the HTTP request rather than the body.
_REQUEST_OPTIONS = ("extra_headers", "extra_query", "timeout")
_NON_RETRYABLE_HINT = {400: "bad request", 401: "unauthorized", 403: "forbidden", 404: "not found"}
# How long a dropped connection waits for the serving process's exit status (the socket closes
# a moment before the process is reaped).
_CRASH_WAIT_S = 2.0


class ChatClient:
    """Async client for ``POST {base_url}/chat/completions``.

    One aiohttp session per event loop (a session is bound to the loop that created it), so the
    same client object can be reused across ``evaluate_sync`` calls and loops.

    ``process_check`` (given by a supervisor of the server process, e.g. the embedded model's)
    returns None while the server runs and a description once it has died, waiting up to the
    seconds it is given: after a connection error the client asks it, and a dead server fails
    this and every later request at once with category ``model_crashed`` (no retries against a
    closed port).

    ``text_only`` says the model behind the endpoint reads text only (True, or its name for
    messages, e.g. "the embedded SmolLM2-135M-Instruct"): a list of text parts goes as one
    string, and a message with an image is refused before it is sent
    (:class:`~verifiers_lite.core.content.ContentNotSupportedError`; a run refuses such prompts
    before its first request). Otherwise content parts go as they are (the OpenAI format).

    ``price`` is what the endpoint's tokens cost whatever the model (the embedded model's
    servers say :data:`~verifiers_lite.core.pricing.FREE`); a run's own price table wins over it.

    Args:
        base_url: the endpoint's URL up to ``/chat/completions``, e.g. ``http://127.0.0.1:8000/v1``.
        api_key: sent as ``Authorization: Bearer``; None sends none.
        timeout: seconds one request may take (positive).
        retry: which failures are retried, how often and how long apart (default
            :class:`RetryPolicy`).
        headers: more HTTP headers for every request.
        max_connections: connections kept open to the endpoint at most.
        process_check: the server process's supervisor's check (above).
        trust_env: use the proxy settings of the environment (``HTTP_PROXY``, ...).
        cache: ``True``, a file path or a ``ResponseCache``: answers come from the response cache
            when it has them; None: no cache.
        cache_identity: what names the endpoint in cache keys across processes (default its
            ``base_url``).
        text_only: the model reads text only (above).
        slots: requests the endpoint serves at once (None: unknown); a run sends it no more at once,
            the rest wait here.
        price: what the endpoint's tokens cost (above).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float = 300.0,
        retry: RetryPolicy | None = None,
        headers: dict[str, str] | None = None,
        max_connections: int = 1024,
        process_check: Callable[[float], str | None] | None = None,
        trust_env: bool = False,
        cache: Any = None,
        cache_identity: str | None = None,
        text_only: bool | str = False,
        slots: int | None = None,
        price: ModelPrice | None = None,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        if slots is not None and (
            isinstance(slots, bool) or not isinstance(slots, int) or slots < 1
        ):
            raise ValueError(
                f"slots must be a positive number of requests the endpoint serves at once, got {slots!r}"
            )
        # Requests the endpoint serves at once (None: unknown). A run sends no more to it at once,
        # so the rest wait here, timed as waiting for a slot, instead of inside the server, where
        # their wait would read as the model's time.
        self.slots = slots
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout!r}")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.max_connections = max_connections
        self.trust_env = trust_env
        self.text_only = text_only
        self.price = price
        self._headers = {"Content-Type": "application/json", **(headers or {})}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._sessions: dict[int, Any] = {}
        self.process_check = process_check
        self.crashed: str | None = None
        # ``cache=True``/a path: answers come from the response cache when it has them.
        self.cache_identity = cache_identity
        self.response_cache: CachedClient | None = None
        if cache is not None and cache is not False:
            from verifiers_lite.clients.cache import CachedClient

            self.response_cache = CachedClient(self, cache, call=self._chat)
        # Sessions left open when the program ends are closed quietly (no "Unclosed client
        # session" noise at exit for clients the user never closed).
        weakref.finalize(self, _close_quietly, self._sessions)

    @classmethod
    def from_openai(cls, client: OpenAISDKClient, **kwargs: Any) -> ChatClient:
        """The lean client for the same endpoint as an ``openai.AsyncOpenAI`` (base URL, key,
        organization/project, custom headers, timeout, ``max_retries``, proxy environment):
        ~10x less CPU per request than the OpenAI client itself. ``kwargs`` override."""
        return cls(**{**openai_settings(client), **kwargs})

    def __repr__(self) -> str:
        return f"ChatClient({self.base_url!r})"

    def _session(self) -> Any:
        import aiohttp

        loop = asyncio.get_running_loop()
        session = self._sessions.get(id(loop))
        if session is None or session.closed:
            self._drop_dead_sessions()
            connector = aiohttp.TCPConnector(limit=self.max_connections, ttl_dns_cache=300)
            session = aiohttp.ClientSession(
                connector=connector,
                headers=self._headers,
                timeout=aiohttp.ClientTimeout(total=self.timeout),
                json_serialize=json.dumps,
                trust_env=self.trust_env,
            )
            self._sessions[id(loop)] = session
        return session

    def _drop_dead_sessions(self) -> None:
        """Forget sessions of loops that have closed (``asyncio.run`` called again and again)."""
        dead = {
            k: v
            for k, v in self._sessions.items()
            if v.closed or getattr(getattr(v, "_loop", None), "is_closed", lambda: False)()
        }
        for k in dead:
            del self._sessions[k]
        _close_quietly(dead)

    async def chat(
        self,
        model: str,
        messages: list[Message],
        sampling_args: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> ChatResponse:
        if self.response_cache is not None:
            response: ChatResponse = await self.response_cache.chat(
                model, messages, sampling_args, tools
            )
            return response
        return await self._chat(model, messages, sampling_args, tools)

    async def _chat(
        self,
        model: str,
        messages: list[Message],
        sampling_args: dict[str, Any] | None,
        tools: list[dict[str, Any]] | None,
    ) -> ChatResponse:
        name = text_only_model(self)
        if name is not None:
            messages = text_only(messages, "request", name)
        body: dict[str, Any] = {"model": model, "messages": messages}
        request = _add_sampling(body, sampling_args)
        if tools:
            body["tools"] = tools
        return await self._send(body, request, "/chat/completions", parse_chat_completion)

    async def complete_text(
        self, model: str, prompt: str, sampling_args: dict[str, Any] | None = None
    ) -> ChatResponse:
        """One text completion (``POST {base_url}/completions`` with a string prompt), its text
        as an assistant message: for environments whose prompts are plain strings."""
        body: dict[str, Any] = {"model": model, "prompt": prompt}
        request = _add_sampling(body, sampling_args)
        return await self._send(body, request, "/completions", parse_text_completion)

    async def _send(
        self,
        body: dict[str, Any],
        request: dict[str, Any],
        path: str,
        parse: Callable[[str, str], ChatResponse],
    ) -> ChatResponse:
        attempts, same = 0, RepeatedAnswer()

        async def attempt() -> ChatResponse:
            nonlocal attempts
            attempts += 1
            if self.crashed is not None:
                raise self._crash_error()
            try:
                return await self._post_once(body, path, parse, **request)
            except ModelAPIError as exc:
                report_refusal(exc.status, exc.category, exc.retry_after)  # to an adaptive limit
                if exc.category == "model_connection" and await self._server_died():
                    raise self._crash_error() from exc
                if exc.retryable and same.repeated(exc.status, str(exc)):
                    exc.retryable = False  # deterministic: the schedule is for transient failures
                raise

        try:
            return await call_with_retries(attempt, self.retry, _retryable)
        except ModelAPIError as exc:
            if attempts > 1:
                why = (
                    "; the same answer twice, so not retried as a transient failure"
                    if same.last and not exc.retryable
                    else ""
                )
                exc.args = (f"{exc.args[0]} (after {attempts} attempts{why})",)
            raise

    async def _server_died(self) -> bool:
        if self.process_check is None:
            return False
        if self.crashed is None:
            self.crashed = await asyncio.to_thread(self.process_check, _CRASH_WAIT_S)
        return self.crashed is not None

    def _crash_error(self) -> ModelAPIError:
        return ModelAPIError(
            f"model server crashed: {self.crashed}",
            category="model_crashed",
            retryable=False,
            endpoint=self.base_url,
        )

    async def _post_once(
        self,
        body: dict[str, Any],
        path: str,
        parse: Callable[[str, str], ChatResponse],
        extra_headers: dict[str, str] | None = None,
        extra_query: dict[str, Any] | None = None,
        timeout: Any = None,
    ) -> ChatResponse:
        import aiohttp

        url = f"{self.base_url}{path}"
        options: dict[str, Any] = {}
        if extra_headers:
            options["headers"] = {k: str(v) for k, v in extra_headers.items()}
        if extra_query:
            options["params"] = {k: str(v) for k, v in extra_query.items()}
        limit = getattr(timeout, "read", timeout)
        if isinstance(limit, (int, float)) and limit > 0:
            options["timeout"] = aiohttp.ClientTimeout(total=float(limit))
        else:
            limit = self.timeout
        try:
            async with self._session().post(url, json=body, **options) as resp:
                text = await resp.text()
                report_headers(resp.headers)
                if resp.status >= 400:
                    raise status_error(resp.status, text, _asked_wait(resp.headers), url)
        except ModelAPIError:
            raise
        except TimeoutError as exc:
            raise ModelAPIError(
                f"no answer from {url} within {limit:g}s",
                category="model_timeout",
                retryable=True,
                endpoint=self.base_url,
            ) from exc
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, ConnectionError) as exc:
            raise ModelAPIError(
                f"connection to {url} failed: {type(exc).__name__}: {exc}",
                category="model_connection",
                retryable=True,
                endpoint=self.base_url,
            ) from exc
        return parse(text, url)

    async def aclose(self) -> None:
        """Close the session of the running loop (others close with their loops)."""
        try:
            loop_id = id(asyncio.get_running_loop())
        except RuntimeError:
            return
        session = self._sessions.pop(loop_id, None)
        if session is not None:
            await session.close()


def _add_sampling(body: dict[str, Any], sampling_args: dict[str, Any] | None) -> dict[str, Any]:
    """Put the sampling args into ``body`` (``extra_body`` merged in); return the openai SDK's
    per-request options among them, which are request settings, never body fields."""
    if not sampling_args:
        return {}
    args = dict(sampling_args)
    body.update(args.pop("extra_body", None) or {})
    request = {k: args.pop(k) for k in _REQUEST_OPTIONS if k in args}
    body.update(args)
    return request


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, ModelAPIError) and exc.retryable


def _close_quietly(sessions: dict[int, Any]) -> None:
    for session in list(sessions.values()):
        try:
            connector = session.connector
            session.detach()
            if connector is not None:
                connector._close()  # sync part of close(); the loop may already be gone
        except Exception:
            pass
    sessions.clear()


def _asked_wait(headers: Any) -> float | None:
    """Seconds the server asked to wait: OpenAI's finer ``retry-after-ms`` (which the openai SDK
    reads first), else ``Retry-After``."""
    ms = parse_retry_after(headers.get("retry-after-ms"))
    return parse_retry_after(headers.get("Retry-After"), None if ms is None else ms / 1000)


def status_error(status: int, text: str, retry_after: float | None, url: str) -> ModelAPIError:
    """An HTTP error answer as a :class:`ModelAPIError`: 429 is ``model_rate_limited``, others
    ``model_http_error`` (retryable when 5xx or 408), with the body's error message."""
    detail = text.strip()
    try:
        payload = json.loads(text)
        err = payload.get("error", payload) if isinstance(payload, dict) else payload
        detail = (err.get("message") if isinstance(err, dict) else None) or detail
    except (ValueError, AttributeError):
        pass
    detail = str(detail)[:500]
    if status == 429:
        return ModelAPIError(
            f"HTTP 429 from {url}: {detail}",
            category="model_rate_limited",
            status=429,
            retryable=True,
            retry_after=retry_after,
        )
    retryable = status >= 500 or status == 408
    hint = _NON_RETRYABLE_HINT.get(status)
    msg = f"HTTP {status}{f' ({hint})' if hint else ''} from {url}: {detail}"
    return ModelAPIError(
        msg,
        category="model_http_error",
        status=status,
        retryable=retryable,
        retry_after=retry_after if retryable else None,
    )


def parse_chat_completion(text: str, url: str = "") -> ChatResponse:
    """Parse an OpenAI chat.completion JSON body into a :class:`ChatResponse`."""
    try:
        payload = json.loads(text)
        choice = payload["choices"][0]
        message = dict(choice["message"])
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise ModelAPIError(
            f"not a chat completion from {url}: {text[:200]!r}",
            category="model_bad_response",
            retryable=False,
        ) from exc
    message.setdefault("role", "assistant")
    message = assistant_message(
        {k: v for k, v in message.items() if v is not None or k == "content"}
    )
    usage = payload.get("usage") or {}
    logprobs = None
    lp = choice.get("logprobs")
    if isinstance(lp, dict) and lp.get("content"):
        logprobs = [float(t.get("logprob", 0.0)) for t in lp["content"]]
    # vLLM returns the exact ids when asked (``return_token_ids``): kept for training data.
    prompt_ids, completion_ids = (
        _ids(payload.get("prompt_token_ids")),
        _ids(choice.get("token_ids")),
    )
    return ChatResponse(
        message=message,
        finish_reason=choice.get("finish_reason"),
        usage=read_usage(usage),
        prompt_ids=prompt_ids if completion_ids is not None else None,
        completion_ids=completion_ids,
        completion_logprobs=logprobs,
        system_fingerprint=fingerprint
        if isinstance(fingerprint := payload.get("system_fingerprint"), str)
        else None,
        response_id=rid if isinstance(rid := payload.get("id"), str) else None,
        created=created if isinstance(created := payload.get("created"), int) else None,
        model=served if isinstance(served := payload.get("model"), str) and served else None,
    )


def parse_text_completion(text: str, url: str = "") -> ChatResponse:
    """Parse an OpenAI text_completion JSON body: its text as an assistant message."""
    try:
        payload = json.loads(text)
        choice = payload["choices"][0]
        content = str(choice["text"])
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise ModelAPIError(
            f"not a text completion from {url}: {text[:200]!r}",
            category="model_bad_response",
            retryable=False,
        ) from exc
    return ChatResponse(
        message={"role": "assistant", "content": content},
        finish_reason=choice.get("finish_reason"),
        usage=read_usage(payload.get("usage")),
        model=served if isinstance(served := payload.get("model"), str) and served else None,
    )


def _ids(value: Any) -> list[int] | None:
    """A list of token ids from a response field, or None when absent or not ids."""
    if not isinstance(value, list) or not all(isinstance(t, int) for t in value):
        return None
    return list(value)
