"""GenerateOutputs: the rows of a run (in memory, or on disk read on demand) plus its metadata."""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifiers_lite.core.records import Row
from verifiers_lite.core.summary import RunSummary
from verifiers_lite.results.disk_rows import DiskRows
from verifiers_lite.results.export import read_run, save_results, to_hf_dataset, to_parquet
from verifiers_lite.results.frame import rows_frame
from verifiers_lite.results.metrics import (
    PassCriterion,
    is_scored,
    pass_at_k_from_counts,
    scored_reward,
)
from verifiers_lite.results.rescore import rescore_run
from verifiers_lite.results.run_metadata import RunMetadata

if TYPE_CHECKING:
    import pandas as pd


class GenerateOutputs:
    """Everything a run produced: one row per rollout and the run's metadata.

    ``rows`` is a list (a run without ``results_path``: every row in memory) or a
    :class:`DiskRows` (a run with one, or a loaded run: rows stay in ``results.jsonl`` and are
    read when asked for). Everything here streams the rows, so both behave the same and a
    million-row run costs a few numbers per row until its rows themselves are asked for.

    Args:
        rows: one row per rollout (:class:`~verifiers_lite.core.records.Row`), in memory or
            on disk (:class:`DiskRows`); none: an empty run.
        metadata: the run's ``metadata.json`` (model, environment, sampling, summary, ...);
            none: empty.
    """

    def __init__(
        self, rows: Sequence[Row] | None = None, metadata: RunMetadata | None = None
    ) -> None:
        self.rows: Sequence[Row] = [] if rows is None else rows
        self.metadata: RunMetadata = {} if metadata is None else metadata
        self._aggregates: dict[PassCriterion, RunSummary] = {}

    @property
    def lazy(self) -> bool:
        """Whether the rows stay on disk (read on demand) rather than in memory."""
        return isinstance(self.rows, DiskRows)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GenerateOutputs):
            return NotImplemented
        return (
            self.metadata == other.metadata and len(self) == len(other) and self.rows == other.rows
        )

    __hash__ = None  # type: ignore[assignment]

    @property
    def rewards(self) -> list[float]:
        """Rewards of the scored rollouts (errored rollouts have none and are left out)."""
        return [reward for r in self.rows if (reward := scored_reward(r)) is not None]

    @property
    def pass_criterion(self) -> PassCriterion:
        """The environment's pass criterion, as recorded in the run metadata (default reward >= 1)."""
        return PassCriterion.coerce(self.metadata.get("pass_criterion"))

    def aggregate(self, criterion: PassCriterion | None = None) -> RunSummary:
        """One pass over the rows (:class:`RunSummary`), kept for rows on disk, which do
        not change; rows in memory may, and are read again."""
        crit = criterion or self.pass_criterion
        agg = self._aggregates.get(crit)
        if agg is None:
            agg = RunSummary(crit).add_all(self.rows)
            if self.lazy:
                self._aggregates[crit] = agg
        return agg

    def pass_at_k(self, k: int) -> float:
        """pass@k over scored rollouts under :attr:`pass_criterion`."""
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        return pass_at_k_from_counts(self.aggregate().pass_counts(), k)

    @property
    def summary(self) -> dict[str, Any]:
        """:meth:`RunSummary.summary`, plus the response cache's hits and misses when it was used."""
        s = self.aggregate().summary()
        if self.metadata.get("cache"):
            s["cache"] = dict(self.metadata["cache"])
        return s

    def by_task(self) -> dict[str, GenerateOutputs]:
        """The rows split by their ``task`` (an environment group's runs), in first-seen order;
        each part keeps the run metadata, with that task's pass criterion when it is recorded."""
        parts: dict[str, list[int]] = {}
        for i, r in enumerate(self.rows):
            parts.setdefault(str(r.get("task") or "default"), []).append(i)
        tasks = self.metadata.get("tasks") or {}
        return {
            name: GenerateOutputs(
                self._take(positions),
                {
                    **self.metadata,
                    "task": name,
                    **(
                        {"pass_criterion": tasks[name]["pass_criterion"]}
                        if "pass_criterion" in tasks.get(name, {})
                        else {}
                    ),
                },
            )
            for name, positions in parts.items()
        }

    def _take(self, positions: list[int]) -> Sequence[Row]:
        if isinstance(self.rows, DiskRows):
            return self.rows.take(positions)
        return [self.rows[i] for i in positions]

    def to_pandas(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """One row per rollout; each metric, timing and token count as its own column.
        ``columns`` picks some (rows are read one at a time and only those columns kept; flat
        columns are built through Arrow, a few bytes a cell)."""
        return rows_frame(self.rows, columns)

    @property
    def df(self) -> pd.DataFrame:
        return self.to_pandas()

    def _repr_html_(self) -> str:
        """The notebook's summary table (registered by the package root); escaped ``repr`` text
        where none is registered."""
        render = _VIEWER.get("repr_html")
        return render(self) if render is not None else f"<pre>{html.escape(repr(self))}</pre>"

    def to_hf_dataset(self) -> Any:
        """A ``datasets.Dataset``, one row per rollout (messages as JSON text)."""
        return to_hf_dataset(self)

    def to_parquet(self, path: str | os.PathLike[str]) -> Path:
        """Write Parquet (messages as JSON text, run metadata in the schema)."""
        return to_parquet(self, path)

    def to_training_batch(
        self, pad_to_longest: bool = False, pad_token_id: int = 0, **options: Any
    ) -> dict[str, Any]:
        """GRPO-ready ``input_ids``, ``labels`` (-100 off the sampled tokens), ``logprobs``,
        ``advantages``, ``attention_mask``, ``position_ids`` and ``lengths`` from rows recorded
        by a token-level client (``vf.rollout.TokenClient``, or ``vf.ChatClient`` against a
        server that returns token ids). Errored or unscored rows are left out (they have no
        reward, so no advantage); the batch's ``row_indices`` say which rows it holds. Scored
        rows without token ids raise ValueError. ``options`` (``max_length``, ``truncation``,
        ``shift_labels``) are ``vf.rollout.build_training_batch``'s, which documents labels.
        Rows are read one at a time and only their token fields kept."""
        from verifiers_lite.rollout.training import build_training_batch, training_fields

        kept: list[int] = []
        missing: list[int] = []
        token_rows: list[Row] = []
        for i, r in enumerate(self.rows):
            if not is_scored(r) or r.get("error"):
                continue
            kept.append(i)
            if "completion_ids" not in r:
                missing.append(i)
            elif not missing:
                token_rows.append(training_fields(r))
        if missing:
            raise ValueError(
                f"rows {missing[:5]} carry no token ids: run with a token-level client "
                "(verifiers_lite.rollout.TokenClient) to export a training batch"
            )
        batch = build_training_batch(
            token_rows, pad_to_longest=pad_to_longest, pad_token_id=pad_token_id, **options
        )
        batch["row_indices"] = kept
        return batch

    def view(self, height: int = 720) -> Any:
        """This run in the results viewer, inline in a notebook (an iframe onto a loopback server
        kept for the kernel's life); needs the ``view`` extra (FastAPI, uvicorn)."""
        return _viewer("view")(self, height=height)

    def to_html(self, path: str | os.PathLike[str]) -> Path:
        """Write the viewer's page for this run as one self-contained HTML file (no server, no
        network) to share; returns its path."""
        return Path(_viewer("write_html")(self, path))

    def rescore(
        self,
        rubric: Any,
        *,
        results_path: str | os.PathLike[str] | None = None,
        overwrite: bool = False,
    ) -> GenerateOutputs:
        """These rollouts scored by ``rubric`` (a Rubric or an Environment), with no model
        request, as new results in memory: nothing is written unless ``results_path`` is given
        (a run loaded from a directory too; its rows are then read into memory). The new
        metadata's ``rescored_from`` names the run these came from. See :func:`verifiers_lite.rescore`."""
        return rescore(self, rubric, results_path=results_path, overwrite=overwrite)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Save to a directory; ``vf.load_results(path)`` reads it back."""
        return save_results(self, path)

    def __repr__(self) -> str:
        from verifiers_lite.stats.error_bars import format_estimate

        s = self.summary
        env, model = self.metadata.get("env_id"), self.metadata.get("model")
        errors = ", ".join(f"{k}={v}" for k, v in s["errors"].items()) or "none"
        stops = ", ".join(f"{k}={v}" for k, v in s["stop_reasons"].items()) or "none"
        return (
            f"GenerateOutputs(env={env!r}, model={model!r}, rollouts={s['num_rollouts']}, "
            f"reward={format_estimate(s['reward_mean'], s['reward_stderr'], s['reward_ci'])} "
            f"over {s['num_scored']} scored, "
            f"errors: {errors}, stop reasons: {stops}"
            + (
                f", cache: {s['cache']['hits']} hits / {s['cache']['misses']} misses"
                if s.get("cache")
                else ""
            )
            + ")"
        )


# Showing a run is the UI's job, a layer above results: the package root offers it here ("view",
# "write_html", "repr_html"), so results never import the UI.
_VIEWER: dict[str, Callable[..., Any]] = {}


def register_viewer(name: str, func: Callable[..., Any]) -> None:
    """Offer a viewer function (``view``, ``write_html`` or ``repr_html``) to :class:`GenerateOutputs`."""
    _VIEWER[name] = func


def _viewer(name: str) -> Callable[..., Any]:
    if name not in _VIEWER:
        raise RuntimeError(
            f"no results viewer registered for {name!r} (import verifiers_lite first)"
        )
    return _VIEWER[name]


# Runs written by other tools, read by a layer above results (an inspect_ai log): the package
# root offers each reader here by the file suffix it reads.
_RUN_READERS: dict[str, Callable[[Path], GenerateOutputs]] = {}


def register_run_reader(suffix: str, reader: Callable[[Path], GenerateOutputs]) -> None:
    """Offer ``reader`` for files ending in ``suffix`` (``.eval``) to :func:`load_results`."""
    _RUN_READERS[suffix] = reader


def run_reader(path: str | os.PathLike[str]) -> Callable[[Path], GenerateOutputs] | None:
    """The reader registered for the file ``path`` (by its suffix), or None."""
    return _RUN_READERS.get(Path(path).suffix)


def load_results(path: str | os.PathLike[str]) -> GenerateOutputs:
    """Load a saved run: a directory from ``save()`` or ``results_path`` (rows stay on disk, read
    on demand through the row index; rows with ids that are not integers are read into memory),
    a Parquet file, or an inspect_ai log (``.eval``, with the ``inspect`` extra)."""
    reader = run_reader(path)
    if reader is not None and Path(path).is_file():
        return reader(Path(path))
    rows, metadata = read_run(path)
    return GenerateOutputs(rows=rows, metadata=metadata)


async def rescore_async(
    run: GenerateOutputs | str | os.PathLike[str],
    rubric: Any,
    *,
    results_path: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
) -> GenerateOutputs:
    """Apply ``rubric`` to the saved rollouts of ``run`` (a :class:`GenerateOutputs` or a run
    directory); see :func:`rescore`."""
    rows, metadata = await rescore_run(run, rubric, results_path=results_path, overwrite=overwrite)
    return GenerateOutputs(rows=rows, metadata=metadata)


def rescore(
    run: GenerateOutputs | str | os.PathLike[str],
    rubric: Any,
    *,
    results_path: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
) -> GenerateOutputs:
    """Score the saved rollouts of ``run`` (a :class:`GenerateOutputs` or a run directory) with
    ``rubric`` (a Rubric, or an Environment: its rubric and tools), sending no model request.

    Group rewards and advantages are recomputed per example; errored rollouts stay unscored.
    The result is written to ``results_path`` (default for a run directory given as a path:
    ``<dir>-rescored``; for a GenerateOutputs, loaded from a directory or not: not written, the
    rows come back in memory); an existing run there is refused unless ``overwrite``.
    Works in scripts, notebooks and running event loops (``rescore_async`` is the coroutine).
    See :mod:`verifiers_lite.results.rescore`.
    """
    from verifiers_lite._util.sync import run_sync

    return run_sync(rescore_async(run, rubric, results_path=results_path, overwrite=overwrite))
