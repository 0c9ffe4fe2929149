"""evaluate_sync in a script, inside a running loop, twice with one client, under uvloop, off-thread."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading

import pytest

import verifiers_lite as vf
from tests.helpers.envs import make_env


def test_twice_in_a_row_with_the_same_client(fake_server):
    env, c = make_env(3), vf.ChatClient(fake_server.base_url)
    a = env.evaluate_sync(c, "fake-arith", progress=False)
    b = env.evaluate_sync(c, "fake-arith", progress=False)
    assert len(a) == len(b) == 3 and all(r["error"] is None for r in a.rows + b.rows)


def test_same_async_openai_client_across_calls(fake_server):
    openai = pytest.importorskip("openai")
    env, c = make_env(2), openai.AsyncOpenAI(base_url=fake_server.base_url, api_key="x")
    for _ in range(2):
        out = env.evaluate_sync(c, "fake-arith", progress=False)
        assert all(r["error"] is None for r in out.rows)


def test_inside_a_running_event_loop_like_a_jupyter_cell(fake_server):
    env, c = make_env(3), vf.ChatClient(fake_server.base_url)

    async def cell():
        first = env.evaluate_sync(
            c, "fake-arith", progress=False
        )  # sync call, loop already running
        second = env.evaluate_sync(c, "fake-arith", progress=False)
        return first, second

    first, second = asyncio.run(cell())
    assert len(first) == len(second) == 3
    assert all(r["error"] is None for r in first.rows + second.rows)


def test_under_uvloop(fake_server):
    uvloop = pytest.importorskip("uvloop")
    env, c = make_env(3), vf.ChatClient(fake_server.base_url)

    async def main():
        return [env.evaluate_sync(c, "fake-arith", progress=False) for _ in range(2)]

    results = uvloop.run(main())
    assert [len(r) for r in results] == [3, 3]
    assert all(r["error"] is None for out in results for r in out.rows)


def test_off_the_main_thread(fake_server):
    env, c = make_env(2), vf.ChatClient(fake_server.base_url)
    box: list = []
    t = threading.Thread(
        target=lambda: box.append(env.evaluate_sync(c, "fake-arith", progress=False))
    )
    t.start()
    t.join(30)
    assert len(box[0]) == 2


def test_building_an_environment_installs_no_signal_handlers():
    code = textwrap.dedent("""
        import signal, verifiers_lite as vf
        before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        env = vf.SingleTurnEnv(dataset=[{"question": "q", "answer": "a"}])
        env.get_dataset()
        assert before == {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        import sys; assert "nest_asyncio2" not in sys.modules and "nest_asyncio" not in sys.modules
        print("ok")
    """)
    assert (
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
        ).stdout.strip()
        == "ok"
    )


def test_import_is_lazy():
    modules = ("pandas", "datasets", "openai", "aiohttp", "torch", "vllm", "ray")
    code = f"import sys, verifiers_lite; print(sorted(m for m in {modules!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


def test_one_chat_client_across_several_asyncio_run_calls(fake_server):
    env, c = make_env(2), vf.ChatClient(fake_server.base_url)
    for _ in range(3):  # each asyncio.run makes and closes its own loop
        out = asyncio.run(env.evaluate(c, "fake-arith", progress=False))
        assert [r["error"] for r in out.rows] == [None, None]
    assert len(c._sessions) == 1  # sessions of closed loops were let go


def test_ctrl_c_taken_by_another_thread_ends_a_script_run_waiting_on_a_far_timer():
    """The kernel may hand SIGINT to any thread; the run's loop, asleep in select() until a timer
    two minutes away, must still wake and raise in the main thread."""
    code = textwrap.dedent("""
        import asyncio, signal, sys, threading, time
        from verifiers_lite._util.sync import run_sync

        # As at a terminal: a shell starts background jobs with SIGINT ignored, inherited here.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        main = threading.main_thread().ident

        def in_select():
            frame = sys._current_frames().get(main)
            while frame is not None:
                if frame.f_code.co_name == "select":
                    return True
                frame = frame.f_back
            return False

        def interrupt_from_this_thread():
            deadline = time.monotonic() + 30
            while not in_select() and time.monotonic() < deadline:
                time.sleep(0.01)  # polling the main thread's stack, with a deadline
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)

        threading.Thread(target=interrupt_from_this_thread, daemon=True).start()
        t0 = time.monotonic()
        try:
            run_sync(asyncio.sleep(120))
        except KeyboardInterrupt as exc:
            print(type(exc).__name__, round(time.monotonic() - t0, 1))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=90)
    name, seconds = done.stdout.split()
    assert name in ("KeyboardInterrupt", "RunInterrupted"), done.stderr
    assert float(seconds) < 60, "the loop slept through the interrupt until its timer"
