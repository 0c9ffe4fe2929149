"""``vf-lite serve``: serve a bundled (or importable) environment as a rollout server.

Every option is checked before the environment loads: a bad value is a usage error (exit 2)
that names the flag, never a traceback or a server that refuses every request.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Sequence

from verifiers_lite.server.bodies import DEFAULT_MAX_BODY_BYTES
from verifiers_lite.server.protocol import (
    DEFAULT_POLLING_LEASE_TIMEOUT_SEC,
    DEFAULT_RESULT_RETENTION_SEC,
    DEFAULT_RESULT_WAIT_TIMEOUT_SEC,
)

LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


def _int_at_least(low: int, high: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low or (high is not None and value > high):
            bound = f"from {low} to {high}" if high is not None else f"{low} or more"
            raise argparse.ArgumentTypeError(f"must be {bound}, got {value}")
        return value

    return parse


def _seconds(*, zero_ok: bool) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a number of seconds, got {text!r}"
            ) from None
        if not math.isfinite(value) or value < 0 or (value == 0 and not zero_ok):
            raise argparse.ArgumentTypeError(
                f"must be finite and {'0 or more' if zero_ok else 'above 0'}, got {text}"
            )
        return value

    return parse


def build_parser(prog: str = "vf-lite serve") -> argparse.ArgumentParser:
    """The options of ``vf-lite serve`` with their defaults and valid ranges."""
    p = argparse.ArgumentParser(prog=prog, description="Serve an environment as a rollout server.")
    p.add_argument("env_id", metavar="ENV_ID", help="environment id (see `vf-lite list`)")
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.add_argument(
        "--port", type=_int_at_least(1, 65535), default=8000, help="port, 1-65535 (default 8000)"
    )
    p.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="name of the environment variable holding the server's bearer key (auth off if unset)",
    )
    p.add_argument(
        "--max-concurrent",
        type=_int_at_least(1),
        default=32,
        help="rollouts run at once, 1 or more (default 32)",
    )
    p.add_argument(
        "--max-queued",
        type=_int_at_least(0),
        default=None,
        help="rollouts admitted beyond --max-concurrent before 429, 0 or more "
        "(default: --max-concurrent)",
    )
    p.add_argument(
        "--env-args", default="{}", help="JSON object of load_environment kwargs (default {})"
    )
    p.add_argument(
        "--model",
        default=None,
        help="model when a request's metadata has none (default: the one model the "
        "request's chat_completions_url lists at GET /models)",
    )
    _add_result_options(p)
    return p


def _add_result_options(p: argparse.ArgumentParser) -> None:
    """Where finished rows go, how long results wait and stay, request size, logging."""
    p.add_argument(
        "--artifacts-dir", default=None, help="write each finished row here as JSON (default: off)"
    )
    p.add_argument(
        "--result-wait-timeout",
        type=_seconds(zero_ok=False),
        default=DEFAULT_RESULT_WAIT_TIMEOUT_SEC,
        help="longest result long poll, seconds, above 0 and below --polling-lease-timeout "
        f"(default {DEFAULT_RESULT_WAIT_TIMEOUT_SEC:g})",
    )
    p.add_argument(
        "--polling-lease-timeout",
        type=_seconds(zero_ok=False),
        default=DEFAULT_POLLING_LEASE_TIMEOUT_SEC,
        help="a rollout nobody polls for this long fails (lease_expired) and is cancelled, "
        f"seconds, above 0 (default {DEFAULT_POLLING_LEASE_TIMEOUT_SEC:g})",
    )
    p.add_argument(
        "--result-retention",
        type=_seconds(zero_ok=True),
        default=DEFAULT_RESULT_RETENTION_SEC,
        help="how long a finished result stays readable (and its id taken), seconds, "
        f"0 or more (default {DEFAULT_RESULT_RETENTION_SEC:g})",
    )
    p.add_argument(
        "--max-body-bytes",
        type=_int_at_least(1),
        default=DEFAULT_MAX_BODY_BYTES,
        help=f"largest request body; above it 413, 1 or more (default {DEFAULT_MAX_BODY_BYTES}, 16 MiB)",
    )
    p.add_argument(
        "--log-level",
        default="warning",
        choices=LOG_LEVELS,
        help="uvicorn log level (default warning)",
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse and cross-check the options; exits 2 with a usage error naming the flag."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.result_wait_timeout >= args.polling_lease_timeout:
        parser.error(
            f"argument --result-wait-timeout: must be below --polling-lease-timeout "
            f"({args.result_wait_timeout:g} >= {args.polling_lease_timeout:g}): a long poll "
            "must end before its lease does"
        )
    try:
        args.env_args = json.loads(args.env_args)
    except json.JSONDecodeError as exc:
        parser.error(f"argument --env-args: not JSON: {exc}")
    if not isinstance(args.env_args, dict):
        parser.error(
            f"argument --env-args: must be a JSON object, got {type(args.env_args).__name__}"
        )
    if args.api_key_env:
        key = os.environ.get(args.api_key_env)
        if not key or not key.strip():
            parser.error(
                f"argument --api-key-env: environment variable {args.api_key_env} is unset or blank"
            )
        args.api_key = key
    else:
        args.api_key = None
    return args


def serve_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``vf-lite serve``; blocks until SIGTERM/SIGINT, then drains."""
    args = parse_args(argv)
    from verifiers_lite.core.registry import load_environment
    from verifiers_lite.server.app import create_rollout_server
    from verifiers_lite.server.backends.local import LocalBackend
    from verifiers_lite.server.runner import run_rollout_server

    try:
        env = load_environment(args.env_id, **args.env_args)
    except (ValueError, TypeError) as exc:
        print(
            f"vf-lite serve: error: argument ENV_ID: cannot load {args.env_id!r}: {exc}",
            file=sys.stderr,
        )
        return 2
    try:
        backend = LocalBackend(
            env,
            max_concurrent=args.max_concurrent,
            artifacts_dir=args.artifacts_dir,
            max_queued=args.max_queued,
            model=args.model,
        )
    except OSError as exc:
        print(f"vf-lite serve: error: argument --artifacts-dir: {exc}", file=sys.stderr)
        return 2
    app = create_rollout_server(
        backend,
        api_key=args.api_key,
        result_wait_timeout_sec=args.result_wait_timeout,
        polling_lease_timeout_sec=args.polling_lease_timeout,
        result_retention_sec=args.result_retention,
        max_body_bytes=args.max_body_bytes,
    )
    print(f"rollout server for {args.env_id} on http://{args.host}:{args.port}", file=sys.stderr)
    run_rollout_server(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


if __name__ == "__main__":
    raise SystemExit(serve_main(sys.argv[1:]))
