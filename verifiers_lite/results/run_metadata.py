"""``metadata.json``, typed: what a run was, how it went, and each of its sessions.

The run writes it as it starts (what ran, with what, the fingerprint a resume checks), and
again when each session ends (status, totals, durations). It stays a JSON object on disk and a
plain ``dict`` in memory (:class:`RunMetadata` is a ``TypedDict``), so keys a newer or older
version wrote are kept as they are; :func:`read_run_metadata` is how every reader loads it,
refusing a file that is not a metadata object, a key whose value has the wrong kind, and a
``format_version`` newer than :data:`FORMAT_VERSION` (:class:`RunFormatError`: a newer release
wrote it, and what it means may have changed). A file without one was written before versions
were recorded and reads as version 1.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict, cast

from verifiers_lite.clients.cache import CacheSummary
from verifiers_lite.core.errors import RunFormatError
from verifiers_lite.results.run_dir import METADATA_FILE

FORMAT_VERSION = 1
"""The version of the run directory's format this library writes and the newest it reads."""


class RescoredFrom(TypedDict):
    """Where a re-scored run's rows came from (``vf.rescore``)."""

    path: str | None  #: the source run's directory (absolute), None for rows held in memory
    rubric: Any  #: the source run's rubric fingerprint
    status: str | None  #: the source run's status
    reward_mean: float | None  #: the source run's mean reward
    time: float  #: when it was re-scored (epoch seconds)


class SessionRecord(TypedDict, total=False):
    """One session of a run: its first call, or a resume of the same ``results_path``."""

    start_time: float  #: when it started (epoch seconds)
    end_time: float  #: when it ended; estimated from the last write when it was killed
    end_estimated: bool  #: the session was killed: its end is the last write of results.jsonl
    duration_s: float  #: end_time - start_time
    rollouts: int  #: rollouts it ran (0 when everything asked for was saved already)
    #: what produced its rows: client, endpoints, versions (:mod:`verifiers_lite.ledger.manifest`)
    manifest: dict[str, Any]


class RunMetadata(TypedDict, total=False):
    """The keys of a run's ``metadata.json`` (all optional: older runs lack some)."""

    #: the run directory's format (:data:`FORMAT_VERSION`; absent: written before versions, 1)
    format_version: int
    #: the environment's id (its class name when built in place; None when it has none)
    env_id: str | None
    env_args: dict[str, Any]  #: the arguments the environment was loaded with
    model: str  #: the model name requests were sent for
    #: the ids the server said answered, when they differ from ``model`` (an alias, a default)
    served_models: list[str]
    rollouts_per_example: int  #: rollouts of each example (the group size)
    num_examples: int  #: examples the run asked for
    num_rollouts: int  #: rollouts the run asked for
    sampling_args: dict[str, Any]  #: the environment's sampling arguments with the call's over them
    independent_scoring: bool  #: each rollout scored alone (no groups)
    score_rollouts: bool  #: whether rows were scored
    pass_criterion: dict[str, Any]  #: what counts as a pass (``PassCriterion.to_dict()``)
    #: the system prompt and few-shot turns (``system_prompt``, ``few_shot``)
    prompt_template: dict[str, Any]
    tasks: dict[str, Any]  #: per task of an environment group: its facts (pass criterion, ...)
    max_concurrent: int | str | None  #: the bound on requests in flight (None: none; "auto")
    seed: int | None  #: the run's seed (None: unseeded)
    #: the rollouts' limits (``vf.Limits`` fields set: the run's over the environment's)
    limits: dict[str, Any]
    results_path: str  #: where the run was saved, as given
    library_version: str  #: the verifiers_lite version that wrote it
    #: what a resume must match (environment, model, sampling, rubric, ...)
    fingerprint: dict[str, Any]
    sessions: list[SessionRecord]  #: the first call and each resume, in order
    resumed: bool  #: the run took more than one session
    start_time: float  #: when its first session started (epoch seconds)
    end_time: float  #: when its last session ended
    #: its sessions' durations summed (time between a crash and its resume not counted)
    duration_s: float
    status: str  #: running, completed, completed_with_errors or interrupted
    executor: str  #: which executor ran the rollouts (local, ray, remote)
    endpoints: list[dict[str, Any]]  #: per endpoint: requests, failures, groups, most in flight
    workers: list[dict[str, Any]]  #: (ray) per worker: alive, units run
    rerun_units: int  #: (ray) units run again after their worker was lost
    worker_failures: list[Any]  #: (ray) what each lost worker failed with
    servers: list[dict[str, Any]]  #: (remote) per server: its URL and rollouts run there
    cache: CacheSummary  #: the response cache's hits and misses
    num_scored: int  #: rows with a reward
    num_errors: int  #: rows with an error
    reward_mean: float | None  #: the mean reward over scored rows
    reward_stderr: float | None  #: its standard error
    reward_ci: list[float] | None  #: its 95% interval (NaN ends when undefined)
    reward_ci_undefined: str | None  #: why the interval is undefined, when it is
    metrics_mean: dict[str, float | None]  #: per metric: its mean
    metrics_stderr: dict[str, float | None]  #: per metric: its standard error
    metrics_ci: dict[str, list[float] | None]  #: per metric: its 95% interval
    metrics_ci_undefined: dict[str, str | None]  #: per metric: why its interval is undefined
    errors: dict[str, int]  #: rows per error category
    stop_reasons: dict[str, int]  #: rows per stop reason
    prompt_tokens: int  #: prompt tokens over all rows
    completion_tokens: int  #: completion tokens over all rows
    reasoning_tokens: int  #: of those, tokens spent reasoning
    timing_ms: dict[str, float | None]  #: per part of a rollout's time: its mean (ms)
    cost_usd_total: float | None  #: USD over the priced rows (None: none priced, "unpriced")
    cost_usd_mean: float | None  #: USD per priced row
    cost_usd_stderr: float | None  #: its standard error, clustered by example
    cost_usd_ci: list[float] | None  #: its 95% interval
    num_unpriced: int  #: rows without a price (their cost unknown, never 0)
    #: how rows were priced: ``model``, ``price`` (USD per million tokens of each kind; None:
    #: unpriced) and ``source`` (``prices``: the caller's table, ``endpoint``: what the endpoint
    #: declares, ``bundled <date>``: the bundled table)
    pricing: dict[str, Any]
    #: a run with ``until``: the rule (``rule``, ``half_width``, ``confidence``,
    #: ``reward_range``), the examples fed to its interval, their ``mean``, the anytime-valid
    #: ``interval`` and why it ``stopped`` (``precision``, ``sign``, ``examples ran out``)
    until: dict[str, Any]
    #: a run with a budget (``max_cost_usd``, ``max_tokens_total``, ``max_wall_s``): each,
    #: what was spent (``spent``: ``cost_usd``, ``tokens``, ``wall_s``) and ``stopped``
    #: (``"budget (cost 4.98 of 5.00 USD)"``, None when no budget stopped it)
    budget: dict[str, Any]
    rescored_from: RescoredFrom  #: a re-scored run's source
    #: the task the rows are, in a part of a run split by task (``GenerateOutputs.by_task``)
    task: str
    #: the whole run's manifest, as runs wrote it before sessions had their own (read as the
    #: last session's)
    manifest: dict[str, Any]


_NUMBER = (int, float)
_KINDS: dict[str, tuple[type, ...]] = {
    **dict.fromkeys(
        (
            "env_id",
            "model",
            "results_path",
            "library_version",
            "status",
            "executor",
            "reward_ci_undefined",
            "task",
        ),
        (str,),
    ),
    **dict.fromkeys(
        (
            "env_args",
            "sampling_args",
            "pass_criterion",
            "prompt_template",
            "tasks",
            "fingerprint",
            "cache",
            "rescored_from",
            "manifest",
            "metrics_mean",
            "metrics_stderr",
            "metrics_ci",
            "metrics_ci_undefined",
            "errors",
            "stop_reasons",
            "timing_ms",
            "pricing",
            "until",
            "budget",
            "limits",
        ),
        (dict,),
    ),
    **dict.fromkeys(
        (
            "rollouts_per_example",
            "num_examples",
            "num_rollouts",
            "seed",
            "num_scored",
            "num_errors",
            "prompt_tokens",
            "completion_tokens",
            "reasoning_tokens",
            "num_unpriced",
            "rerun_units",
            "format_version",
        ),
        (int,),
    ),
    **dict.fromkeys(
        (
            "start_time",
            "end_time",
            "duration_s",
            "reward_mean",
            "reward_stderr",
            "cost_usd_total",
            "cost_usd_mean",
            "cost_usd_stderr",
        ),
        _NUMBER,
    ),
    "max_concurrent": (int, str),  # "auto": an adaptive limit per endpoint
    **dict.fromkeys(("independent_scoring", "score_rollouts", "resumed"), (bool,)),
    **dict.fromkeys(
        (
            "sessions",
            "endpoints",
            "reward_ci",
            "cost_usd_ci",
            "workers",
            "worker_failures",
            "servers",
            "served_models",
        ),
        (list,),
    ),
}
"""The JSON kind of each key's value (None is accepted for every key: a figure not known)."""

RUN_METADATA_KEYS: frozenset[str] = frozenset(RunMetadata.__annotations__)
assert frozenset(_KINDS) == RUN_METADATA_KEYS, "every RunMetadata key has its JSON kind"


def as_run_metadata(obj: object, source: str = METADATA_FILE) -> RunMetadata:
    """``obj`` (parsed JSON) as run metadata; ValueError naming ``source`` and the key when it is
    not an object or a known key holds the wrong kind of value. Unknown keys are kept."""
    if not isinstance(obj, Mapping):
        raise ValueError(f"{source}: run metadata must be a JSON object, got {type(obj).__name__}")
    for key, value in obj.items():
        kinds = _KINDS.get(key)
        if kinds is None or value is None:
            continue
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            names = " or ".join(kind.__name__ for kind in kinds)
            raise ValueError(
                f"{source}: {key!r} must be {names}, got {type(value).__name__} {value!r:.80}"
            )
    check_format_version(obj.get("format_version"), source)
    return cast(RunMetadata, dict(obj))


def check_format_version(found: Any, source: str = METADATA_FILE) -> None:
    """Refuse run metadata of a format newer than this library reads (None: before versions)."""
    if found is not None and found > FORMAT_VERSION:
        from verifiers_lite.version import __version__

        raise RunFormatError(
            f"{source} is in run format version {found}; verifiers_lite {__version__} reads "
            f"format version {FORMAT_VERSION} and older: upgrade verifiers_lite to read this run"
        )


def read_run_metadata(run_dir: Path) -> RunMetadata:
    """The run directory's ``metadata.json``, checked (FileNotFoundError when there is none)."""
    path = run_dir / METADATA_FILE
    try:
        obj: Any = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from exc
    return as_run_metadata(obj, str(path))


def add_summary(metadata: RunMetadata, summary: Mapping[str, Any]) -> None:
    """Merge a summary into ``metadata`` as the run ends: the executor's (``executor``,
    ``endpoints``, its own figures) and the rows' (reward, errors, tokens, timing). Their keys
    are the ones documented above; an executor may add its own, kept as they are, and each is
    checked when the file is read back."""
    metadata.update(cast(RunMetadata, summary))
