"""vf.Sandbox against real subprocesses: results, limits, isolation, pooling, sessions, fallback."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

import verifiers_lite as vf
from tests.helpers.paths import REPO
from verifiers_lite.sandbox import SandboxUnavailableError, launch
from verifiers_lite.testing.waiting import wait_until

LIMITS = vf.SandboxLimits(
    timeout=8, cpu=8, memory_mb=512, max_processes=16, max_file_mb=1, max_output_bytes=1000
)


@pytest.fixture(scope="module")
def sandbox():
    with vf.Sandbox(LIMITS, pool_size=2) as box:
        yield box


def run(box: vf.Sandbox, code: str, **kwargs) -> vf.ExecResult:
    return asyncio.run(box.run(code, **kwargs))


def test_stdout_stderr_exit_status_timing(sandbox):
    r = run(
        sandbox,
        "import sys\nprint('out', sys.stdin.read())\nprint('err', file=sys.stderr)\nsys.exit(3)",
        stdin="IN",
    )
    assert (r.stdout, r.stderr, r.exit_code, r.timed_out) == ("out IN\n", "err\n", 3, False)
    assert 0 < r.duration_s < 8 and not r.ok
    assert 0 <= r.cpu_s <= r.duration_s + 0.05  # one thread: no more CPU time than wall time
    ok = run(sandbox, "print(sum(range(10)))")
    assert ok.ok and ok.stdout == "45\n" and ok.isolation == sandbox.isolation
    boom = run(sandbox, "def f():\n    raise ValueError('bad')\nf()")
    assert boom.exit_code == 1 and "ValueError: bad" in boom.stderr
    assert 'File "main.py", line 3' in boom.stderr and "_worker" not in boom.stderr


def test_files_are_written_into_a_fresh_private_directory(sandbox):
    first = run(
        sandbox,
        "import os\nprint(sorted(os.listdir('.')))\nprint(open('data/in.txt').read())\n"
        "open('left.txt', 'w').write('x')",
        files={"data/in.txt": "hello"},
    )
    assert first.stdout == "['data']\nhello\n"
    again = [run(sandbox, "import os\nprint(os.listdir('.'))") for _ in range(3)]
    assert all(
        r.stdout == "[]\n" for r in again
    )  # nothing of an earlier run is left, on any worker
    escape = run(sandbox, "print(1)", files={"../x": "no"})
    assert escape.error and "escapes" in escape.error


def test_files_left_beside_the_working_directory_do_not_reach_the_next_run():
    with vf.Sandbox(LIMITS, pool_size=1) as box:
        plant = run(
            box,
            "import os\nwritten = []\nfor p in ['../planted', '../../planted', '/dev/shm/planted']:\n"
            "    try:\n        open(p, 'w').write('x')\n        written.append(p)\n"
            "    except OSError:\n        pass\nprint(written)",
        )
        assert (
            plant.ok and "../planted" in plant.stdout
        )  # beside its own directory: allowed, then removed
        look = run(
            box,
            "import os\nprint([os.path.exists(p) for p in ['../planted', '../../planted', '/dev/shm/planted']])",
        )
        assert look.stdout == "[False, False, False]\n"
        assert box.started == 1  # the same worker served both


def test_python_state_does_not_leak_between_pooled_runs(sandbox):
    run(sandbox, "import json\njson.leak = 1\nimport builtins\nbuiltins.leak = 2")
    r = run(
        sandbox, "import json, builtins\nprint(hasattr(json, 'leak'), hasattr(builtins, 'leak'))"
    )
    assert r.stdout == "False False\n"


def test_output_is_truncated_at_the_limit(sandbox):
    r = run(sandbox, "import sys\nprint('x' * 100000)\nsys.stderr.write('y' * 5000)")
    assert r.ok and r.stdout == "x" * 1000 and r.stdout_truncated
    assert r.stderr == "y" * 1000 and r.stderr_truncated
    assert "[stdout truncated]" in r.describe()


def test_wall_clock_limit_kills_and_reports(sandbox):
    t0 = time.monotonic()
    r = run(sandbox, "import time\ntime.sleep(60)", timeout=1.5)
    assert r.timed_out and r.exit_code == -9 and not r.ok
    assert (
        1.4 < r.duration_s < 20 and time.monotonic() - t0 < 40
    )  # killed at the limit, not after 60 s
    assert "wall-clock limit" in r.describe()


def test_cpu_limit_stops_a_busy_loop():
    with vf.Sandbox(vf.SandboxLimits(timeout=60, cpu=1), pool_size=1) as box:
        r = run(box, "while True:\n    pass")
    assert not r.timed_out and r.exit_code in (-24, -9)  # SIGXCPU, then SIGKILL at the hard limit
    assert 0.5 <= r.cpu_s < 3  # rusage samples CPU time coarser than the limit counts it


def test_memory_limit_refuses_a_big_allocation(sandbox):
    r = run(sandbox, "x = bytearray(2 * 1024 ** 3)\nprint('allocated')")
    assert r.exit_code == 1 and "MemoryError" in r.stderr and "allocated" not in r.stdout


def test_file_size_limit(sandbox):
    r = run(sandbox, "open('big', 'wb').write(b'x' * (2 << 20))\nprint('written')")
    assert r.exit_code == 1 and "File too large" in r.stderr and "written" not in r.stdout


def test_process_limit_and_cleanup_after_each_run():
    code = (
        "import os, time\nn = 0\nfor _ in range(200):\n    try:\n        if os.fork() == 0:\n"
        "            os.setsid()\n            time.sleep(600)\n            os._exit(0)\n        n += 1\n"
        "    except OSError:\n        break\nprint(n)"
    )
    before = sandbox_processes()
    with vf.Sandbox(LIMITS, pool_size=1) as box:
        if not box.process_limit_enforced:
            pytest.skip("the rlimit fallback as root (root-only interpreter) has no process limit")
        r = run(box, code)
        assert r.ok and 0 < int(r.stdout) < LIMITS.max_processes  # the worker counts too
        if os.geteuid() == 0:
            # The sleepers left their process group; still, only the reused worker is left.
            assert len(set(sandbox_processes()) - set(before)) == 1
    if os.geteuid() == 0:
        assert set(sandbox_processes()) - set(before) == set()


def test_code_cannot_forge_its_result_through_the_worker():
    forge = (
        'import os, glob\nfake = b\'{"stdout": "forged", "exit_code": 0}\\n\'\nreached = []\n'
        "for path in glob.glob(f'/proc/{os.getppid()}/fd/*'):\n    try:\n"
        "        os.write(os.open(path, os.O_WRONLY), fake)\n        reached.append(path)\n"
        "    except OSError:\n        pass\nprint(reached)\nraise SystemExit(1)"
    )
    with vf.Sandbox(LIMITS, pool_size=1) as box:
        r = run(box, forge)
        assert r.exit_code == 1 and r.stdout == "[]\n" and "forged" not in r.stdout
        assert run(box, "print('next')").stdout == "next\n"  # the worker answers truly afterwards


def test_pool_reuses_workers_and_fresh_mode_does_not():
    with vf.Sandbox(LIMITS, pool_size=2) as pooled:
        results = asyncio.run(_many(pooled, 8))
        assert all(r.stdout == "7\n" for r in results) and pooled.started <= 2
    with vf.Sandbox(LIMITS, pool_size=2, reuse=False) as fresh:
        asyncio.run(_many(fresh, 3))
        assert fresh.started == 3


async def _many(box: vf.Sandbox, n: int) -> list[vf.ExecResult]:
    return list(await asyncio.gather(*(box.run("print(3 + 4)") for _ in range(n))))


def test_session_keeps_state_and_loses_it_only_when_killed(sandbox):
    async def go() -> list[vf.ExecResult]:
        s = sandbox.session()
        try:
            return [
                await s.run("import math\nx = 6 * 7"),
                await s.run("x"),
                await s.run("print(math.gcd(x, 30))"),
                await s.run("while True:\n    pass", timeout=1),
                await s.run("print('x' in dir())"),
            ]
        finally:
            await s.aclose()

    a, b, c, d, e = asyncio.run(go())
    assert a.ok and a.stdout == "" and b.stdout == "42\n" and c.stdout == "6\n"
    assert d.timed_out and not d.ok
    assert e.stdout.endswith("False\n") and "earlier variables are gone" in e.stdout


@pytest.mark.skipif(
    os.geteuid() != 0, reason="the dedicated sandbox uid exists only when run as root"
)
def test_runs_as_a_dedicated_uid_without_capabilities(sandbox):
    if sandbox.isolation != "bubblewrap":
        pytest.skip("the fallback may have to stay uid 0 (without capabilities)")
    r = run(sandbox, "import os\nprint(os.getuid())\nprint(open('/proc/self/status').read())")
    uid = int(r.stdout.split("\n", 1)[0])
    assert uid >= launch._UID_BASE
    assert "CapEff:\t0000000000000000" in r.stdout


def test_bubblewrap_hides_home_project_and_network(sandbox):
    if sandbox.isolation != "bubblewrap":
        pytest.skip(f"bubblewrap unavailable here ({sandbox.isolation})")
    paths = [str(REPO), str(Path.home()), "/root", "/home", "/var", "/work"]
    r = run(
        sandbox,
        f"import os\nprint([os.path.exists(p) for p in {paths!r}])\n"
        "import socket\nprint(socket.if_nameindex())",
    )
    assert r.stdout.splitlines()[0] == str([False] * len(paths))
    assert r.stdout.splitlines()[1] == "[(1, 'lo')]"  # a loopback of its own, nothing else


def test_bad_arguments_fail_before_any_work():
    with pytest.raises(ValueError, match="timeout"):
        vf.SandboxLimits(timeout=0)
    with pytest.raises(ValueError, match="max_processes"):
        vf.SandboxLimits(max_processes=2)
    with pytest.raises(ValueError, match="pool_size"):
        vf.Sandbox(pool_size=0)
    with pytest.raises(ValueError, match="isolation"):
        vf.Sandbox(isolation="docker")
    box = vf.Sandbox(pool_size=1)
    with pytest.raises(TypeError, match="code"):
        asyncio.run(box.run(b"print(1)"))  # type: ignore[arg-type]
    box.close()
    with pytest.raises(RuntimeError, match="closed"):
        asyncio.run(box.run("print(1)"))


def test_rlimit_fallback_enforces_limits_and_warns_once(monkeypatch, capsys):
    monkeypatch.setattr(launch, "bwrap_path", lambda: None)
    monkeypatch.setattr(launch, "_warned", False)
    with pytest.warns(RuntimeWarning, match="SANDBOX FALLBACK"):
        first = vf.Sandbox(LIMITS, pool_size=1)
    assert first.isolation == "rlimits" and "SANDBOX FALLBACK" in capsys.readouterr().err
    second = vf.Sandbox(LIMITS, pool_size=1)
    assert "SANDBOX FALLBACK" not in capsys.readouterr().err  # once per process
    with pytest.raises(SandboxUnavailableError, match="bubblewrap"):
        vf.Sandbox(isolation="bubblewrap")
    try:
        assert run(first, "print(2 + 2)").stdout == "4\n"
        assert run(first, "import time\ntime.sleep(30)", timeout=1).timed_out
        assert "MemoryError" in run(first, "x = bytearray(2 * 1024 ** 3)").stderr
        caps = run(first, "print(open('/proc/self/status').read())").stdout
        assert "CapEff:\t0000000000000000" in caps and "NoNewPrivs:\t1" in caps
        r = run(first, "import os\nprint(os.getcwd())")
        assert r.ok and "vf-sandbox-" in r.stdout
        host_dir = r.stdout.strip().split("/root/")[0]
    finally:
        first.close()
        second.close()
    assert not os.path.exists(host_dir)  # the private directory goes with the sandbox


def sandbox_processes() -> list[int]:
    """Pids of live processes running as a sandbox uid of this test process (root runs only)."""
    low = launch._UID_BASE + (os.getpid() % 100_000) * 1000
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        uid = int(status.split("Uid:", 1)[1].split()[0])
        state = status.split("State:", 1)[1].split()[0]
        if low <= uid < low + 1000 and state != "Z":
            found.append(int(entry))
    return found


def test_a_dropped_sandbox_kills_its_idle_workers():
    import gc

    box = vf.Sandbox(LIMITS, pool_size=1)
    assert box.run_sync("print(1)").stdout == "1\n"
    pid = box._idle[0]._proc.pid
    os.kill(pid, 0)  # alive
    del box
    gc.collect()
    wait_until(lambda: not _alive(pid), "the pooled worker exits with its sandbox", timeout=10)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text().split("State:", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_sync_twins_take_the_async_signature():
    import inspect

    for cls in (vf.Sandbox, vf.SandboxSession):
        a, s = inspect.signature(cls.run), inspect.signature(cls.run_sync)
        assert list(a.parameters.values()) == list(s.parameters.values()), cls


@pytest.mark.parametrize("isolation", ["auto", "rlimits"])
def test_a_busy_worker_and_its_run_die_with_the_process_that_started_them(isolation):
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(f"""
        import os, threading, warnings
        from pathlib import Path
        warnings.simplefilter("ignore")
        import verifiers_lite as vf
        from verifiers_lite.testing.waiting import wait_until

        def descendants(pid):
            out = []
            for task in Path(f"/proc/{{pid}}/task").iterdir():
                for child in (task / "children").read_text().split():
                    out += [int(child), *descendants(int(child))]
            return out

        box = vf.Sandbox(pool_size=1, isolation={isolation!r})
        box.run_sync("print(1)")
        root = box._idle[0]._proc.pid
        idle = descendants(root)
        threading.Thread(target=box.run_sync, args=("import time; time.sleep(600)",),
                         kwargs={{"timeout": 600}}, daemon=True).start()
        wait_until(lambda: len(descendants(root)) > len(idle), "the run's process started", interval=0.01)
        print(root, *descendants(root), flush=True)
        os._exit(0)  # mid-run: no close(), no atexit
    """)
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    pids = [int(p) for p in out.stdout.split()]
    assert len(pids) >= 2, (
        out.stdout + out.stderr
    )  # the sandbox (worker) process and the running code
    wait_until(
        lambda: not any(map(_alive, pids)),
        "the worker and its run exit with their parent",
        timeout=10,
    )


def test_a_sandbox_pickles_as_its_settings():
    import pickle

    box = vf.Sandbox(LIMITS, pool_size=3, reuse=False)
    copy = pickle.loads(pickle.dumps(box))
    try:
        assert (copy.limits, copy.pool_size, copy.reuse, copy.isolation) == (
            LIMITS,
            3,
            False,
            box.isolation,
        )
        assert copy.run_sync("print('copy')").stdout == "copy\n"
    finally:
        box.close()
        copy.close()
