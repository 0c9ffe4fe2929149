"""``vf-lite serve``: serve a bundled (or importable) environment as a rollout server."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence


def build_parser(prog: str = "vf-lite serve") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="Serve an environment as a rollout server.")
    p.add_argument("env_id", metavar="ENV_ID", help="environment id (see `vf-lite list`)")
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument(
        "--api-key-env", metavar="VAR",
        help="name of the environment variable holding the server's bearer key (auth off if unset)",
    )
    p.add_argument("--max-concurrent", type=int, default=32, help="rollouts run at once (default 32)")
    p.add_argument("--max-queued", type=int, default=None, help="admitted beyond max-concurrent before 429")
    p.add_argument("--env-args", default="{}", help="JSON kwargs for load_environment")
    p.add_argument("--model", default=None, help="model name when a request's metadata has none")
    p.add_argument("--artifacts-dir", default=None, help="write each finished row here as JSON")
    p.add_argument("--result-wait-timeout", type=float, default=30.0)
    p.add_argument("--polling-lease-timeout", type=float, default=120.0)
    p.add_argument("--result-retention", type=float, default=900.0)
    p.add_argument("--log-level", default="warning")
    return p


def serve_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``vf-lite serve``; blocks until SIGTERM/SIGINT, then drains."""
    args = build_parser().parse_args(argv)
    api_key = None
    if args.api_key_env:
        api_key = os.environ.get(args.api_key_env)
        if not api_key or not api_key.strip():
            print(f"error: environment variable {args.api_key_env} is unset or blank", file=sys.stderr)
            return 2
    try:
        env_args = json.loads(args.env_args)
    except json.JSONDecodeError as exc:
        print(f"error: --env-args is not JSON: {exc}", file=sys.stderr)
        return 2
    from verifiers_lite.registry import load_environment

    from .app import create_rollout_server
    from .backends.local import LocalBackend
    from .runner import run_rollout_server

    env = load_environment(args.env_id, **env_args)
    backend = LocalBackend(
        env, max_concurrent=args.max_concurrent, artifacts_dir=args.artifacts_dir,
        max_queued=args.max_queued, model=args.model,
    )
    app = create_rollout_server(
        backend, api_key=api_key, result_wait_timeout_sec=args.result_wait_timeout,
        polling_lease_timeout_sec=args.polling_lease_timeout,
        result_retention_sec=args.result_retention,
    )
    print(f"rollout server for {args.env_id} on http://{args.host}:{args.port}", file=sys.stderr)
    run_rollout_server(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


if __name__ == "__main__":
    raise SystemExit(serve_main(sys.argv[1:]))
