"""Run directories under the viewer's roots: discovery, stable ids, metadata and status.

Only directories found by walking the given roots (symlinks not followed, nothing resolving
outside a root) are ever opened, and a run is looked up by its id, never by a path taken from
a request: a URL cannot reach any other file.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifiers_lite.core import columns
from verifiers_lite.core.errors import RunFormatError
from verifiers_lite.core.pass_criterion import PassCriterion
from verifiers_lite.core.summary import cost_line
from verifiers_lite.results.row_index import RowIndex, StaleRowsError
from verifiers_lite.results.run_metadata import RunMetadata, read_run_metadata
from verifiers_lite.results.sessions import run_duration
from verifiers_lite.results.store import METADATA_FILE, RESULTS_FILE
from verifiers_lite.ui.viewer.query import RowFilter, run_stats, select
from verifiers_lite.ui.viewer.rows import content_text

MAX_DEPTH = 4  # root/env--model/timestamp is depth 2; leave room for a folder of folders
STALE_AFTER_S = 600.0  # no status and no write for this long: the writer is gone
_FINISHED = ("completed", "completed_with_errors", "interrupted")


@dataclass
class Run:
    """One run directory and its row index (built on first use, then followed)."""

    run_id: str
    path: Path
    index: RowIndex
    _stats: tuple[tuple[int, int], dict[str, Any]] | None = None
    _selections: OrderedDict[tuple[Any, ...], list[int]] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def metadata(self) -> RunMetadata:
        try:
            return read_run_metadata(self.path)
        except RunFormatError:
            raise  # written by a newer verifiers_lite: said, not shown as an empty run
        except (FileNotFoundError, ValueError):
            return {}  # absent, or replaced mid-read: the next poll sees the new one

    def status(self, meta: RunMetadata) -> str:
        """running / completed / completed_with_errors / interrupted, or ``stale`` for a run
        whose writer stopped without saying so (killed)."""
        status = meta.get("status")
        if status in _FINISHED:
            return str(status)
        try:
            mtime = max(
                os.stat(self.path / name).st_mtime
                for name in (RESULTS_FILE, METADATA_FILE)
                if (self.path / name).exists()
            )
        except ValueError:
            return "running"
        return "running" if time.time() - mtime < STALE_AFTER_S else "stale"

    def stats(self, meta: RunMetadata, budget_s: float | None = None) -> dict[str, Any]:
        """Run statistics over the rows on disk, cached until the index grows. With
        ``budget_s``, over the rows indexed within that time (``complete`` says whether that is
        all of them); whoever calls finishes the index in the background."""
        self.index.scan(budget_s=budget_s)
        key = (self.index.generation, len(self.index))
        if self._stats is None or self._stats[0] != key:
            self._stats = (
                key,
                run_stats(self.index, PassCriterion.coerce(meta.get("pass_criterion"))),
            )
        return {**self._stats[1], "complete": self.index.at_eof}

    def select(self, f: RowFilter) -> list[int]:
        """Matching positions; the last few selections are cached so paging a search is cheap."""
        key = (self.index.generation, len(self.index), f)
        with self._lock:
            hit = self._selections.get(key)
        if hit is None:
            hit = select(self.index, f)
            with self._lock:  # requests run on a thread pool
                self._selections[key] = hit
                while len(self._selections) > 8:
                    self._selections.popitem(last=False)
        return hit

    def detail(self, budget_s: float | None = None) -> dict[str, Any]:
        """The Run page: metadata (sampling and environment args), status and statistics."""
        meta = self.metadata()
        stats = self.stats(meta, budget_s)
        return {
            "run_id": self.run_id,
            "path": str(self.path),
            "status": self.status(meta),
            "metadata": meta,
            "stats": stats,
            "system_prompt": self.system_prompt(),
            # the rows' columns (``core.columns``): what the Rollouts page shows, sorts, filters
            "columns": [c.describe() for c in columns.current()],
        }

    def first_prompt(self) -> Any:
        """The first rollout's prompt (None before the first row, or while the file is rewritten)."""
        if not len(self.index):
            return None
        try:
            return self.index.read([0])[0].get("prompt")
        except (StaleRowsError, OSError, ValueError):
            return None  # being rewritten: the next poll shows it

    def system_prompt(self) -> str | None:
        """The system message the first rollout's prompt opens with (what the model was told),
        or None when it has none."""
        prompt = self.first_prompt()
        first = prompt[0] if isinstance(prompt, list) and prompt else None
        if isinstance(first, dict) and first.get("role") == "system":
            return content_text(first.get("content"))
        return None

    def summary(self, budget_s: float | None = None) -> dict[str, Any]:
        """A line of the Runs page. Finished runs answer from their metadata (no scan) when it
        holds the clustered figures (``reward_ci``; older runs' stderr was not clustered). A
        run this version cannot read is a line with status ``unreadable`` and the reason."""
        try:
            meta = self.metadata()
        except RunFormatError as exc:
            return {"run_id": self.run_id, "status": "unreadable", "error": str(exc)}
        status = self.status(meta)
        keys = (
            "num_rollouts",
            "num_scored",
            "num_errors",
            "reward_mean",
            "reward_stderr",
            "reward_ci",
            "reward_ci_undefined",
            "errors",
            "cost_usd_total",
            "cost_usd_mean",
            "cost_usd_ci",
            "num_unpriced",
        )
        # metadata written before the cost figures (no num_unpriced) is read from the rows
        if status in _FINISHED and "reward_ci" in meta and "num_unpriced" in meta:
            s = {k: meta.get(k) for k in keys}
        else:
            st = self.stats(meta, budget_s)
            s = {k: st[k] for k in keys}
        s["cost"] = cost_line(s, per_reward=True)
        planned = meta.get("num_rollouts")
        return {
            "run_id": self.run_id,
            "env_id": meta.get("env_id"),
            "model": meta.get("model"),
            "start_time": meta.get("start_time"),
            "end_time": meta.get("end_time"),
            "duration_s": run_duration(meta),
            "resumed": bool(meta.get("resumed")),
            "rescored": bool(meta.get("rescored_from")),
            "status": status,
            "planned_rollouts": planned,
            **s,
        }


class RunRegistry:
    """The runs under a set of root folders; rescanned on demand, ids stable across rescans."""

    def __init__(self, roots: list[Path]) -> None:
        self.roots: list[Path] = []
        self._runs: dict[str, Run] = {}
        self._by_path: dict[Path, Run] = {}
        self._lock = threading.Lock()
        for root in roots:
            self.add_root(root)

    def add_root(self, root: str | os.PathLike[str]) -> list[str]:
        """Serve the runs under ``root`` too; returns their ids."""
        path = Path(root).expanduser().resolve()
        if not path.exists():
            raise FileNotFoundError(f"{root}: no such file or directory")
        if not path.is_dir():
            raise NotADirectoryError(
                f"{root}: not a directory (give a run directory or a folder of runs)"
            )
        with self._lock:
            if path not in self.roots:
                self.roots.append(path)
        return [r.run_id for r in self.refresh() if r.path == path or path in r.path.parents]

    def refresh(self) -> list[Run]:
        """Walk the roots for run directories (holding metadata.json or results.jsonl)."""
        found: list[tuple[Path, Path]] = []
        for root in list(self.roots):
            found += [(root, d) for d in _walk(root)]
        with self._lock:
            for root, d in found:
                if d not in self._by_path:
                    run_id = self._new_id(root, d)
                    run = Run(run_id, d, RowIndex(d / RESULTS_FILE))
                    self._runs[run_id] = run
                    self._by_path[d] = run
            return [self._by_path[d] for _, d in found]

    def _new_id(self, root: Path, d: Path) -> str:
        rel = d.relative_to(root).parts
        parts = [root.name, *rel] if (len(self.roots) > 1 or not rel) else list(rel)
        base = "~".join(p for p in parts if p) or "run"
        run_id, k = base, 2
        while run_id in self._runs:
            run_id, k = f"{base}~{k}", k + 1
        return run_id

    def find(self, path: str | os.PathLike[str]) -> Run | None:
        """The run at ``path`` (a path a run's metadata names, e.g. where it was re-scored
        from), if it lies under the roots; never opens anything else."""
        try:
            target = Path(path).expanduser().resolve()
        except (OSError, RuntimeError):
            return None
        with self._lock:
            run = self._by_path.get(target)
        if run is None and any(target == r or r in target.parents for r in self.roots):
            self.refresh()
            with self._lock:
                run = self._by_path.get(target)
        return run

    def get(self, run_id: str) -> Run | None:
        with self._lock:
            run = self._runs.get(run_id)
        if run is None:  # perhaps written since the last scan
            self.refresh()
            with self._lock:
                run = self._runs.get(run_id)
        return run


def _walk(root: Path) -> list[Path]:
    """Run directories under ``root`` (itself included), sorted, within MAX_DEPTH, no symlinks
    followed and nothing whose real path leaves ``root``."""
    out: list[Path] = []
    base_depth = len(root.parts)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        d = Path(dirpath)
        dirnames[:] = sorted(n for n in dirnames if not n.startswith("."))
        if len(d.parts) - base_depth >= MAX_DEPTH:
            dirnames[:] = []
        if METADATA_FILE in filenames or RESULTS_FILE in filenames:
            files = [d / n for n in (METADATA_FILE, RESULTS_FILE) if n in filenames]
            if all(f.resolve().is_relative_to(root) for f in files):
                out.append(d)
            dirnames[:] = []  # a run directory holds no further runs
    return sorted(out)
