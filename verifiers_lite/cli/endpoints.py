"""Where ``vf-lite eval``'s model runs: the servers given with ``-b`` (or a hosted API), or the
embedded llama.cpp model, started for the run and stopped after it."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from verifiers_lite.cli.errors import CLIError
from verifiers_lite.cli.parser import OPENAI_BASE_URL


@contextlib.contextmanager
def model_endpoints(
    args: argparse.Namespace, saved_model: str | None
) -> Iterator[tuple[Any, str, str]]:
    """Yield (client or clients, model name, description of where the model runs)."""
    api_key = os.environ.get(args.api_key_var) or None
    urls = list(args.base_url or [])
    if args.model is None and saved_model is not None and args.gguf is None:
        # a resume goes on with the run's model (on the embedded one unless -b says otherwise)
        args.model = None if saved_model == _embedded_name() and not urls else saved_model
    if not urls and args.model not in (None, _embedded_name()) and args.gguf is None:
        urls = [OPENAI_BASE_URL]  # a model name alone means a hosted API, as in vf-eval
    if urls == [OPENAI_BASE_URL] and not api_key:
        raise CLIError(
            f"--model {args.model!r} without --base-url means {OPENAI_BASE_URL}, which needs an API "
            f"key: set ${args.api_key_var} (or name another variable with -k), or give -b URL"
        )
    if urls:
        yield _served(urls, args, api_key)
        return
    with _embedded(args) as endpoints:
        yield endpoints


def _served(urls: list[str], args: argparse.Namespace, api_key: str | None) -> tuple[Any, str, str]:
    """Clients of servers already running (``-b``), and the model they serve."""
    from verifiers_lite.clients.http import ChatClient

    model = args.model or _discover_model(urls[0], api_key)
    clients = [ChatClient(u, api_key, timeout=args.timeout, slots=args.slots) for u in urls]
    return (clients if len(clients) > 1 else clients[0]), model, ", ".join(urls)


@contextlib.contextmanager
def _embedded(args: argparse.Namespace) -> Iterator[tuple[Any, str, str]]:
    """The embedded model's llama.cpp server processes, running while the context lasts."""
    from verifiers_lite.local.supervisor import (
        LocalModel,
        LocalModelError,
        default_model_path,
        default_parallel,
        start_servers,
    )

    parallel = args.parallel or default_parallel()
    try:
        path = Path(args.gguf) if args.gguf else default_model_path()
        if not path.is_file():
            raise FileNotFoundError(f"GGUF model not found: {path}")
        LocalModel.check_available()
    except (ImportError, FileNotFoundError) as exc:
        raise CLIError(f"cannot start the embedded model: {exc}") from exc
    print(
        f"vf-lite: starting {parallel} llama.cpp server process(es) for {path.name} on 127.0.0.1 ...",
        file=sys.stderr,
    )
    try:
        servers = start_servers(
            parallel,
            args.gguf,
            n_threads=args.threads,
            n_ctx=args.n_ctx,
            request_timeout=args.timeout,
        )
    except (LocalModelError, ValueError) as exc:
        raise CLIError(str(exc)) from exc
    try:
        clients = [s.client() for s in servers]
        where = (
            f"embedded llama.cpp, {parallel} process(es) x {servers[0].n_threads} thread(s): "
            + ", ".join(s.base_url for s in servers)
        )
        yield (clients[0] if len(clients) == 1 else clients), servers[0].model_name, where
    finally:
        for s in servers:
            s.stop()


def _discover_model(base_url: str, api_key: str | None) -> str:
    """The one model a server lists at ``GET /models`` (vLLM and llama.cpp serve one); several
    are a usage error naming them (the first is not a guess worth making)."""
    from verifiers_lite._util.sync import run_sync
    from verifiers_lite.clients.models import list_models, only_model

    url = base_url.rstrip("/")
    try:
        models = run_sync(list_models(url, api_key))
    except Exception as exc:
        raise CLIError(
            f"no --model given and {url}/models did not name one ({exc}); pass -m MODEL"
        ) from exc
    try:
        model = only_model(models, url, "pass -m MODEL")
    except ValueError as exc:
        raise CLIError(f"no --model given: {exc}") from exc
    print(
        f"vf-lite: no -m given; using {model!r}, the one model {url}/models lists", file=sys.stderr
    )
    return model


def _embedded_name() -> str:
    from verifiers_lite.local.supervisor import DEFAULT_MODEL_NAME

    return DEFAULT_MODEL_NAME
