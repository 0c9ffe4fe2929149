"""How to re-score a saved run from where the user is, when a resume finds that only its rubric
changed: the Python call always (it works in the process that holds the environment: a
notebook, a script); the ``vf-lite rescore`` line only when that command would rebuild the
same environment with the same rubric from its id."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from verifiers_lite.core.registry import load_environment, loadable_by_id
from verifiers_lite.results.fingerprint import rubric_fingerprint

if TYPE_CHECKING:
    from verifiers_lite.core.runnable import RunnableEnvironment


def rescore_advice(path: str | os.PathLike[str], env: RunnableEnvironment) -> str:
    """The ways out of a resume refused because the rubric changed, naming ``path``."""
    run = str(path)
    python = (
        f"vf.rescore({run!r}, env) (env: this {type(env).__qualname__} environment, or its rubric)"
    )
    writes = f"writes {run + '-rescored'!r}, a run that resumes under the current rubric"
    why_not = _why_no_cli(env)
    if why_not is None:
        ways = f"from Python: {python}, or from a shell: `vf-lite rescore {run}`; each {writes}."
    else:
        ways = f"from Python: {python}, which {writes}. (Not from the command line: {why_not}.)"
    return (
        f"Its rows were scored by another rubric. Either re-score them with the current rubric, without "
        f"model requests, {ways} Or start a fresh run: pass another results_path (or delete this one)."
    )


def _why_no_cli(env: RunnableEnvironment) -> str | None:
    """Why ``vf-lite rescore`` (which loads the run's env id with its saved arguments) would not
    score with this environment's rubric; None when it would."""
    members = dict(env.group_members) or {str(env.env_id): env}
    if env.group_members and str(env.env_id) != "+".join(str(e.env_id) for e in members.values()):
        return f"this group's env_id {env.env_id!r} is not its members' ids joined by '+'"
    for member in members.values():
        if not loadable_by_id(member):
            return _not_loadable(member)
        try:
            loaded = load_environment(str(member.env_id), **member.env_args)
            same = rubric_fingerprint(loaded.rubric) == rubric_fingerprint(member.rubric)
        except Exception as exc:  # advice must never hide the refusal it explains
            return f"loading {member.env_id!r} by id failed ({type(exc).__name__}: {exc})"
        if not same:
            return f"loaded by id, {member.env_id!r} has another rubric than the one this environment holds"
    return None


def _not_loadable(env: RunnableEnvironment) -> str:
    name = repr(env.env_id or type(env).__qualname__)
    if type(env).__module__ == "__main__":
        return f"{name} is defined in __main__ (a notebook or a script), not loadable by id"
    return f"{name} was built by hand, not by vf.load_environment, so it is not loadable by id"
