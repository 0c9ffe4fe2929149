"""Opening a run's books: ``metadata.json`` as the run starts, and every refusal a run directory
can give before anything on disk changes — another run's fingerprint, another model client, rows
made from other inputs, a model name the endpoints do not serve."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from verifiers_lite.core.errors import ResumeMismatchError
from verifiers_lite.core.records import Row
from verifiers_lite.ledger.rescore_advice import rescore_advice
from verifiers_lite.ledger.resume import SavedRows, rewrite_saved, scan_saved
from verifiers_lite.results.fingerprint import (
    FINGERPRINT_KEY,
    fingerprint_diff,
    only_rubric_changed,
    run_fingerprint,
)
from verifiers_lite.results.run_metadata import FORMAT_VERSION, RunMetadata
from verifiers_lite.results.store import ResultsStore

if TYPE_CHECKING:
    from verifiers_lite.core.runnable import RunnableEnvironment

FRESH_RUN_HINT = (
    "To start a fresh run, pass another results_path (or delete this one); "
    "to resume it, call again with the saved arguments (metadata.json)."
)


@dataclass(frozen=True)
class RunFacts:
    """What a run is, as its metadata and fingerprint record it (the scheduler settles each)."""

    model: str
    sampling_args: dict[str, Any]  #: the environment's with the call's over them
    rollouts_per_example: int
    num_examples: int
    num_rollouts: int
    independent_scoring: bool
    score_rollouts: bool
    max_concurrent: int | str | None  #: "auto": an adaptive limit per endpoint
    seed: int | None
    #: the rollouts' limits, the run's over the environment's (``Limits.to_dict()``; None: none)
    limits: dict[str, Any] | None
    results_path: str | None
    task_facts: dict[str, Any] | None


def run_metadata(env: RunnableEnvironment, facts: RunFacts) -> RunMetadata:
    """metadata.json as the run starts: what ran, with what, and the fingerprint a resume checks."""
    metadata = RunMetadata(
        format_version=FORMAT_VERSION,
        env_id=env.env_id,
        env_args=env.env_args,
        model=facts.model,
        rollouts_per_example=facts.rollouts_per_example,
        num_examples=facts.num_examples,
        num_rollouts=facts.num_rollouts,
        sampling_args=facts.sampling_args,
        independent_scoring=facts.independent_scoring,
        score_rollouts=facts.score_rollouts,
        pass_criterion=env.pass_criterion.to_dict(),
        prompt_template=env.prompt_template,
    )
    if facts.task_facts is not None:
        metadata["tasks"] = facts.task_facts
    metadata["max_concurrent"], metadata["seed"] = facts.max_concurrent, facts.seed
    if facts.limits:
        metadata["limits"] = facts.limits
    if facts.results_path:
        metadata["results_path"] = facts.results_path
    metadata["library_version"] = _version()
    metadata[FINGERPRINT_KEY] = run_fingerprint(
        env,
        facts.model,
        facts.sampling_args,
        facts.rollouts_per_example,
        facts.independent_scoring,
        facts.score_rollouts,
        metadata["library_version"],
    )
    if facts.seed is not None:  # the seed decides the samples: a resume must use the same one
        metadata[FINGERPRINT_KEY]["seed"] = facts.seed
    if facts.limits:  # a limit decides where rollouts end: a resume must keep the same ones
        metadata[FINGERPRINT_KEY]["limits"] = facts.limits
    return metadata


def check_same_run(
    saved: RunMetadata, metadata: RunMetadata, path: Any, env: RunnableEnvironment
) -> None:
    """Refuse to resume a results directory that holds another run, naming what differs."""
    diff = fingerprint_diff(saved.get(FINGERPRINT_KEY), metadata[FINGERPRINT_KEY])
    if diff:
        hint = rescore_advice(path, env) if only_rubric_changed(diff) else FRESH_RUN_HINT
        raise ResumeMismatchError(
            f"results_path {str(path)!r} holds a different run:\n  "
            + "\n  ".join(diff)
            + f"\n{hint}"
        )


def client_change_refusal(path: Any, change: str) -> str:
    return (
        f"results_path {str(path)!r} was made by another model client: {change}. Rows this call runs "
        "would come from another model than the saved ones. To go on with this client anyway, pass "
        "allow_client_change=True (vf-lite eval: --allow-client-change): each row then records the session "
        "that made it (row['session'], an index into metadata['sessions']). Or start a fresh run: pass "
        "another results_path."
    )


def keep_saved(
    store: ResultsStore,
    sizes: Mapping[Any, int],
    input_hash_of: Callable[[Any], str],
    independent: bool,
    rerun_errors: bool,
    on_kept: Callable[[Row], None],
) -> tuple[SavedRows, dict[tuple[Any, int], int]]:
    """Keep the saved rows still wanted (refusing rows made from other inputs) and rewrite the
    file with them; returns what is kept and the attempts so far of what runs again."""
    found = scan_saved(store, sizes, input_hash_of, independent, rerun_errors)
    if found.changed:
        raise ResumeMismatchError(
            f"results_path {str(store.path)!r} holds rows made from other inputs for "
            f"{len(found.changed)} of {len(sizes)} examples (first: example_id {found.changed[0]!r}: its prompt, "
            f"answer, info or task differ). {FRESH_RUN_HINT}"
        )
    return found, rewrite_saved(store, sizes, found, on_kept)


def _version() -> str:
    from verifiers_lite.version import __version__

    return __version__
