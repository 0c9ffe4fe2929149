"""``vf-lite cache stats|clear``: look into or empty the response cache."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from verifiers_lite.clients.cache import ResponseCache, default_cache_path


def add_cache_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """The ``cache`` subcommand and its two actions."""
    cp = sub.add_parser(
        "cache",
        help="response cache: stats | clear",
        description="Show or empty the response cache that cache=True / --cache use.",
    )
    cp.add_argument("action", choices=["stats", "clear"])
    cp.add_argument("--path", default=None, help=f"cache file (default: {default_cache_path()})")
    cp.add_argument("--model", default=None, help="with clear: delete only this model's entries")


def run_cache(args: argparse.Namespace) -> int:
    """Print the cache's entries per endpoint and model, or delete them. Exit 2 when no cache file exists."""
    path = Path(args.path) if args.path else default_cache_path()
    if not path.is_file():
        print(f"vf-lite: error: no response cache at {path}", file=sys.stderr)
        return 2
    cache = ResponseCache(path)
    try:
        if args.action == "clear":
            n = cache.clear(args.model)
            print(
                f"deleted {n} entries"
                + (f" of model {args.model!r}" if args.model else "")
                + f" from {path}"
            )
            return 0
        s = cache.stats()
        print(f"{path}: {s['entries']} entries, {s['bytes'] / 1e6:.2f} MB")
        for item in s["by_model"]:
            print(f"  {item['entries']:>8}  {item['model']}  @ {item['endpoint']}")
        return 0
    finally:
        cache.close()
