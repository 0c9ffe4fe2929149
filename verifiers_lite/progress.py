"""Run statistics and the callback interface that progress displays consume."""

from __future__ import annotations

import math
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class RunStats:
    """Live figures of a run, updated as each group finishes (O(1) per row). Reward figures are
    over the scored rollouts (``scored``); errored rollouts have no reward and count in ``errors``."""

    total: int
    done: int = 0
    resumed: int = 0
    scored: int = 0
    reward_sum: float = 0.0
    reward_sq_sum: float = 0.0
    errors: Counter[str] = field(default_factory=Counter)
    started: float = field(default_factory=time.monotonic)
    recent_rewards: list[float] = field(default_factory=list)
    cache_hits: int | None = None  # None: the run uses no response cache
    cache_misses: int = 0

    def add(self, rows: list[dict[str, Any]], resumed: bool = False) -> None:
        for r in rows:
            if r.get("error"):
                self.errors[r["error"].get("category", "unknown")] += 1
            if r.get("reward") is None:
                continue
            reward = float(r["reward"])
            self.scored += 1
            self.reward_sum += reward
            self.reward_sq_sum += reward * reward
            self.recent_rewards.append(reward)
        del self.recent_rewards[:-2000]  # a bounded window for live histograms
        self.done += len(rows)
        if resumed:
            self.resumed += len(rows)

    @property
    def mean_reward(self) -> float:
        return self.reward_sum / self.scored if self.scored else float("nan")

    @property
    def stderr(self) -> float:
        n = self.scored
        if n < 2:
            return 0.0
        var = max(0.0, (self.reward_sq_sum - n * self.mean_reward**2) / (n - 1))
        return math.sqrt(var / n)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def rate(self) -> float:
        """Rollouts per second run in this session (resumed rows excluded)."""
        fresh = self.done - self.resumed
        return fresh / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        remaining = self.total - self.done
        return remaining / self.rate if self.rate > 0 else None

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())


class ProgressCallback(Protocol):
    """What a progress display implements; every method is optional in practice."""

    def on_start(self, stats: RunStats) -> None: ...
    def on_progress(self, stats: RunStats, rows: list[dict[str, Any]]) -> None: ...
    def on_log(self, message: str) -> None: ...
    def on_end(self, stats: RunStats) -> None: ...


class TqdmProgress:
    """Terminal progress: tqdm bar with reward ± stderr and errors in the postfix."""

    def __init__(self, desc: str = "rollouts") -> None:
        self.desc = desc
        self.bar: Any = None

    def on_start(self, stats: RunStats) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(total=stats.total, initial=stats.done, desc=self.desc, file=sys.stderr,
                        mininterval=0.25, dynamic_ncols=True)

    def on_progress(self, stats: RunStats, rows: list[dict[str, Any]]) -> None:
        if self.bar is None:
            return
        self.bar.update(len(rows))
        self.bar.set_postfix_str(
            f"reward={stats.mean_reward:.3f}±{stats.stderr:.3f} errors={stats.error_count}", refresh=False
        )

    def on_log(self, message: str) -> None:
        if self.bar is not None:
            self.bar.write(message, file=sys.stderr)
        else:
            print(message, file=sys.stderr)

    def on_end(self, stats: RunStats) -> None:
        if self.bar is not None:
            self.bar.close()


def default_progress(desc: str = "rollouts") -> ProgressCallback:
    """The display for where we run: a live widget in Jupyter, tqdm in a terminal."""
    try:
        from verifiers_lite.notebook.display import notebook_progress  # added by the notebook layer
    except ImportError:
        return TqdmProgress(desc)
    return notebook_progress(desc) or TqdmProgress(desc)


class CallbackSet:
    """Fans events out to several callbacks; a failing callback is reported, never fatal."""

    def __init__(self, callbacks: list[Any]) -> None:
        self.callbacks = callbacks

    def _emit(self, method: str, *args: Any) -> None:
        for cb in self.callbacks:
            fn = getattr(cb, method, None)
            if fn is None:
                continue
            try:
                fn(*args)
            except Exception as exc:  # a broken display must not take the run down
                if method != "on_log":
                    self._emit("on_log", f"progress callback {type(cb).__name__}.{method} failed: {exc!r}")

    def on_start(self, stats: RunStats) -> None:
        self._emit("on_start", stats)

    def on_progress(self, stats: RunStats, rows: list[dict[str, Any]]) -> None:
        self._emit("on_progress", stats, rows)

    def on_log(self, message: str) -> None:
        self._emit("on_log", message)

    def on_end(self, stats: RunStats) -> None:
        self._emit("on_end", stats)


class FunctionCallbacks:
    """Adapts plain ``on_start``/``on_progress``/``on_log`` functions to the callback interface."""

    def __init__(self, on_start: Any = None, on_progress: Any = None, on_log: Any = None) -> None:
        if on_start is not None:
            self.on_start = on_start
        if on_progress is not None:
            self.on_progress = on_progress
        if on_log is not None:
            self.on_log = on_log
