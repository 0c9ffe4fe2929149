"""Terminal progress for runs outside a notebook: a tqdm bar on stderr (the package root offers
it to :func:`verifiers_lite.core.progress.default_progress` as the fallback display)."""

from __future__ import annotations

import math
import sys
import threading
import time
from typing import Any

from verifiers_lite.core.progress import RunStats
from verifiers_lite.core.records import Row
from verifiers_lite.ui.notebook.cells import note_shown


class TqdmProgress:
    """Terminal progress: tqdm bar counting rollouts as they finish, with in-flight count,
    reward ± stderr, errors and stop reasons in the postfix; redrawn on every clock tick."""

    def __init__(self, desc: str = "rollouts", warn: bool = True) -> None:
        self.desc = desc
        self.warn = warn  # False where a summary that carries the warning follows (vf-lite eval)
        self.bar: Any = None
        self._lock = threading.Lock()
        self._last = 0.0

    def on_start(self, stats: RunStats) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(
            total=stats.total,
            initial=stats.finished,
            desc=self.desc,
            file=sys.stderr,
            mininterval=0.25,
            dynamic_ncols=True,
        )

    def on_progress(self, stats: RunStats, rows: list[Row]) -> None:
        self.on_update(stats)

    def on_update(self, stats: RunStats) -> None:
        now = time.monotonic()
        with self._lock:
            # Events may come hundreds a second; the clock tick redraws what this skips.
            if self.bar is None or now - self._last < 0.2:
                return
            self._last = now
            self.bar.n = stats.finished
            self.bar.set_postfix_str(postfix(stats), refresh=False)
            self.bar.refresh()

    def on_log(self, message: str) -> None:
        if self.bar is not None:
            self.bar.write(message, file=sys.stderr)
        else:
            print(message, file=sys.stderr)

    def on_end(self, stats: RunStats) -> None:
        with self._lock:
            if self.bar is None:
                return
            self.bar.n = stats.finished
            self.bar.set_postfix_str(postfix(stats, final=True), refresh=False)
            self.bar.close()
            self.bar = None
        warning = stats.length_warning() if self.warn else None
        if warning:
            print(f"warning: {warning}", file=sys.stderr)
            note_shown(warning)


def postfix(stats: RunStats, final: bool = False) -> str:
    """The figures beside a text bar: in flight, reward ± clustered stderr, errors, stop reasons."""
    limit = stats.in_flight_limit
    running = "" if final else f"running={stats.in_flight} " + (f"limit={limit} " if limit else "")
    reward = "—"
    if stats.scored:
        se = stats.stderr
        reward = f"{stats.mean_reward:.3f}" + (f"±{se:.3f}" if math.isfinite(se) else "")
    stops = ",".join(
        f"{k}={v}" for k, v in sorted(stats.stop_reasons.items(), key=lambda kv: -kv[1])
    )
    return f"{running}reward={reward} errors={stats.error_count}" + (
        f" stop[{stops}]" if stops else ""
    )
