"""Reward code is part of the resume fingerprint: a reward function, group reward or parser whose
code changed under the same name is refused, naming it, before anything on disk changes; the
same code (or the same code with other comments and whitespace) resumes with no request."""

from __future__ import annotations

import functools
import importlib.util
import inspect
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import verifiers_lite as vf
from tests.helpers.envs import arithmetic_rows
from verifiers_lite.results.code_identity import _class_source, code_hash


def _notebook_function(source: str, name: str = "correct"):
    """A function (or class) as a notebook cell defines it when its source cannot be read back:
    exec'd from a string in ``__main__``, with no file behind it."""
    namespace: dict = {"vf": vf, "__name__": "__main__"}
    exec(compile(textwrap.dedent(source), "<cell>", "exec"), namespace)
    defined = namespace[name]
    with pytest.raises((OSError, TypeError)):
        # A class's source is looked up by line in __main__'s file on Python 3.13: the library
        # refuses that text, as it must refuse here.
        _class_source(defined) if isinstance(defined, type) else inspect.getsource(defined)
    return defined


CORRECT_V1 = """
def correct(completion, answer):
    return 1.0 if vf.extract_boxed_answer(completion[-1]["content"] or "") == answer else 0.0
"""
CORRECT_V2 = """
def correct(completion, answer):
    return 0.5 if vf.extract_boxed_answer(completion[-1]["content"] or "") == answer else 0.0
"""
CORRECT_V1_RESTYLED = '''
def correct(completion, answer):
    """Now with a docstring."""
    # and a comment, and other spacing
    return 1.0 if vf.extract_boxed_answer( completion[-1]["content"] or "" ) == answer else 0.0
'''


def _env(*funcs, parser=None):
    return vf.SingleTurnEnv(
        dataset=arithmetic_rows(3), rubric=vf.Rubric(list(funcs), parser=parser)
    )


def _eval(env, server, path):
    return env.evaluate_sync(
        vf.ChatClient(server.base_url),
        "fake-arith",
        rollouts_per_example=2,
        results_path=str(path),
        progress=False,
    )


def _snapshot(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir()) if p.is_file()}


def _refused(env, server, path) -> str:
    before, files = server.stats()["requests"], _snapshot(path)
    with pytest.raises(vf.ResumeMismatchError) as info:
        _eval(env, server, path)
    assert server.stats()["requests"] == before, "a refused resume sent requests"
    assert _snapshot(path) == files, "a refused resume changed the run on disk"
    return str(info.value)


def test_a_notebook_function_whose_code_changed_is_refused_naming_it(fake_server, tmp_path):
    _eval(_env(_notebook_function(CORRECT_V1)), fake_server, tmp_path)
    msg = _refused(_env(_notebook_function(CORRECT_V2)), fake_server, tmp_path)
    assert "reward code changed since the saved run: correct" in msg
    # Built in place, not loadable by id: the way out is the Python call, never the command line.
    assert f"vf.rescore({str(tmp_path)!r}, env)" in msg and "vf-lite rescore" not in msg
    assert "another results_path" in msg


def test_the_same_code_resumes_with_no_request_whatever_its_comments_and_spacing(
    fake_server, tmp_path
):
    first = _eval(_env(_notebook_function(CORRECT_V1)), fake_server, tmp_path)
    n = fake_server.stats()["requests"]
    again = _eval(_env(_notebook_function(CORRECT_V1_RESTYLED)), fake_server, tmp_path)
    assert fake_server.stats()["requests"] == n
    assert [r["trajectory_id"] for r in again.rows] == [r["trajectory_id"] for r in first.rows]


def _module_function(tmp_path: Path, module: str, source: str):
    path = tmp_path / f"{module}.py"
    path.write_text("import verifiers_lite as vf\n" + textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(module, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module] = mod
    spec.loader.exec_module(mod)
    return mod.correct


def test_functions_with_source_compare_by_code_not_by_text(fake_server, tmp_path):
    run = tmp_path / "run"
    v1 = _module_function(tmp_path, "rewards_v1", CORRECT_V1)
    restyled = _module_function(tmp_path, "rewards_v1_restyled", CORRECT_V1_RESTYLED)
    v2 = _module_function(tmp_path, "rewards_v2", CORRECT_V2)
    _eval(_env(v1), fake_server, run)
    n = fake_server.stats()["requests"]
    _eval(_env(restyled), fake_server, run)  # comments, spacing and docstring do not count
    assert fake_server.stats()["requests"] == n
    assert "reward code changed since the saved run: correct" in _refused(
        _env(v2), fake_server, run
    )


def test_closure_values_and_group_rewards_count(fake_server, tmp_path):
    def at_least(threshold):
        @vf.group_reward
        def long_enough(completion, **_):
            return [1.0 if len(c[-1]["content"] or "") >= threshold else 0.0 for c in completion]

        return long_enough

    _eval(_env(at_least(10)), fake_server, tmp_path)
    assert "reward code changed since the saved run: long_enough" in _refused(
        _env(at_least(20)), fake_server, tmp_path
    )


def test_a_parser_whose_code_changed_is_refused(fake_server, tmp_path):
    first = _notebook_function(
        """
class Boxed(vf.Parser):
    def parse(self, text):
        return vf.extract_boxed_answer(text) or ""
""",
        "Boxed",
    )
    second = _notebook_function(
        """
class Boxed(vf.Parser):
    def parse(self, text):
        return (vf.extract_boxed_answer(text) or "").strip("0")
""",
        "Boxed",
    )
    reward = _notebook_function(CORRECT_V1)
    _eval(_env(reward, parser=first()), fake_server, tmp_path)
    assert "reward code changed since the saved run: parser Boxed" in _refused(
        _env(reward, parser=second()), fake_server, tmp_path
    )


def test_a_run_saved_before_reward_code_was_fingerprinted_is_refused_with_the_ways_out(
    fake_server, tmp_path
):
    env = _env(_notebook_function(CORRECT_V1))
    _eval(env, fake_server, tmp_path)
    meta = json.loads((tmp_path / "metadata.json").read_text())
    # An older version saved the rubric as [[name, qualname, weight], ...] with no code.
    meta["fingerprint"]["rubric"] = [
        [n, q, w] for n, q, w, _ in meta["fingerprint"]["rubric"]["funcs"]
    ]
    (tmp_path / "metadata.json").write_text(json.dumps(meta))
    msg = _refused(env, fake_server, tmp_path)
    assert (
        "predates reward-code fingerprints" in msg and f"vf.rescore({str(tmp_path)!r}, env)" in msg
    )
    # The way out: re-score (no request), then the new directory resumes under this rubric.
    n = fake_server.stats()["requests"]
    out = vf.rescore(tmp_path, env.rubric)
    again = _eval(env, fake_server, out.metadata["results_path"])
    assert fake_server.stats()["requests"] == n and len(again.rows) == 6


class _Threshold:
    def __init__(self, n: int) -> None:
        self.n = n

    def __call__(self, completion) -> float:
        return float(len(completion) >= self.n)

    def method(self, completion) -> float:
        return float(len(completion) >= self.n)


def _scale(completion, factor):
    return factor * len(completion)


def test_partials_callable_objects_bound_methods_and_lambdas_are_told_apart():
    assert code_hash(functools.partial(_scale, factor=2)) == code_hash(
        functools.partial(_scale, factor=2)
    )
    assert code_hash(functools.partial(_scale, factor=2)) != code_hash(
        functools.partial(_scale, factor=3)
    )
    assert code_hash(_Threshold(1)) == code_hash(_Threshold(1)) != code_hash(_Threshold(2))
    assert (
        code_hash(_Threshold(1).method)
        == code_hash(_Threshold(1).method)
        != code_hash(_Threshold(2).method)
    )
    one, two = (
        (lambda completion: 1.0),
        (lambda completion: 2.0),
    )  # one line: their source is the same
    assert code_hash(one) != code_hash(two)
    assert code_hash(one) == code_hash(lambda completion: 1.0)


def test_hashes_agree_across_processes_with_other_hash_seeds(tmp_path):
    script = tmp_path / "h.py"
    script.write_text(
        textwrap.dedent("""
        from verifiers_lite.results.code_identity import code_hash
        def reward(completion, answer, _ok=frozenset({"a", "b", "c"})):
            return float(answer in {"x", "y", "z"} and completion in _ok)
        ns = {}
        exec("def g(completion):\\n    return completion in {'p', 'q', 'r'}", ns)
        print(code_hash(reward), code_hash(ns["g"]))
    """)
    )
    outs = {
        subprocess.run(
            [sys.executable, str(script)],
            capture_output=True,
            text=True,
            check=True,
            env={**_env_vars(), "PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in (1, 2, 3)
    }
    assert len(outs) == 1 and len(outs.pop().split()) == 2


def _env_vars() -> dict[str, str]:
    import os

    return dict(os.environ)


def test_the_rescore_way_out_is_offered_only_when_the_rubric_alone_changed(fake_server, tmp_path):
    reward = _notebook_function(CORRECT_V1)
    _eval(_env(reward), fake_server, tmp_path)
    weighted = vf.SingleTurnEnv(
        dataset=arithmetic_rows(3), rubric=vf.Rubric([reward], weights=[2.0])
    )
    msg = _refused(weighted, fake_server, tmp_path)
    assert "rubric: saved" in msg and f"vf.rescore({str(tmp_path)!r}, env)" in msg
    before, files = fake_server.stats()["requests"], _snapshot(tmp_path)
    with pytest.raises(
        vf.ResumeMismatchError
    ) as info:  # the model differs too: rows must be generated
        weighted.evaluate_sync(
            vf.ChatClient(fake_server.base_url),
            "fake-echo",
            rollouts_per_example=2,
            results_path=str(tmp_path),
            progress=False,
        )
    assert "model: saved 'fake-arith', now 'fake-echo'" in str(info.value)
    assert "vf.rescore(" not in str(info.value) and "another results_path" in str(info.value)
    assert fake_server.stats()["requests"] == before and _snapshot(tmp_path) == files
