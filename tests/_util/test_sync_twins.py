"""Sync twins mirror their async methods; clients survive event-loop changes; Ctrl-C from a
callback is a clean KeyboardInterrupt."""

from __future__ import annotations

import asyncio
import inspect
import subprocess
import sys
import textwrap

import pytest

import verifiers_lite as vf
from tests.helpers.envs import make_env


def test_sync_twins_take_exactly_the_async_signature():
    for name in ("evaluate", "generate"):
        a, s = (
            inspect.signature(getattr(vf.Environment, name)),
            inspect.signature(getattr(vf.Environment, f"{name}_sync")),
        )
        assert list(a.parameters.values()) == list(s.parameters.values()), name


def test_evaluate_sync_takes_num_examples_positionally(fake_server):
    env = make_env(5)
    out = env.evaluate_sync(vf.ChatClient(fake_server.base_url), "fake-arith", 2, progress=False)
    assert len(out) == 2 and sorted(r["example_id"] for r in out.rows) == [0, 1]
    out = env.evaluate_sync(fake_server.base_url, "fake-arith", 1, 3, progress=False)
    assert len(out) == 3 and {r["example_id"] for r in out.rows} == {0}


@pytest.mark.parametrize("method", ["evaluate_sync", "generate_sync", "evaluate", "generate"])
def test_unknown_option_names_the_method_called(fake_server, method):
    env = make_env(2)
    args = (
        (fake_server.base_url, "fake-arith")
        if method.startswith("evaluate")
        else ([{"question": "1 + 1"}], fake_server.base_url, "fake-arith")
    )
    with pytest.raises(
        TypeError, match=rf"^{method}\(\) got unexpected keyword argument\(s\) 'max_concurency'"
    ):
        result = getattr(env, method)(*args, max_concurency=4)
        if inspect.iscoroutine(result):
            asyncio.run(result)
    assert fake_server.stats()["requests"] == 0


def test_one_async_openai_client_in_evaluate_sync_then_asyncio_run(fake_server):
    openai = pytest.importorskip("openai")
    env, c = (
        make_env(3),
        openai.AsyncOpenAI(base_url=fake_server.base_url, api_key="x", max_retries=0),
    )
    first = env.evaluate_sync(c, "fake-arith", progress=False)
    second = asyncio.run(env.evaluate(c, "fake-arith", progress=False))
    third = env.evaluate_sync(c, "fake-arith", progress=False)
    fourth = asyncio.run(env.evaluate(c, "fake-arith", progress=False))
    for out in (first, second, third, fourth):
        assert [r["error"] for r in out.rows] == [None] * 3
    assert fake_server.stats()["requests"] == 12


def test_one_async_openai_client_first_in_asyncio_run_then_evaluate_sync(fake_server):
    openai = pytest.importorskip("openai")
    env, c = (
        make_env(2),
        openai.AsyncOpenAI(base_url=fake_server.base_url, api_key="x", max_retries=0),
    )

    async def user_code():  # the user touches the client on a loop of their own first
        await c.chat.completions.create(
            model="fake-arith", messages=[{"role": "user", "content": "1 + 1"}]
        )

    asyncio.run(user_code())
    out = env.evaluate_sync(c, "fake-arith", progress=False)
    assert [r["error"] for r in out.rows] == [None] * 2


@pytest.mark.parametrize("where", ["main_thread", "worker_thread"])
def test_keyboard_interrupt_from_a_callback_is_clean(fake_server, tmp_path, where):
    script = tmp_path / "interrupt.py"
    script.write_text(
        textwrap.dedent(f"""
        import gc, threading
        import verifiers_lite as vf
        env = vf.SingleTurnEnv(dataset=[{{"question": f"{{i}} + 1"}} for i in range(20)],
                               rubric=vf.Rubric([lambda: 1.0]))
        def on_progress(stats, rows):
            raise KeyboardInterrupt
        def run():
            try:
                env.evaluate_sync({fake_server.base_url!r}, "fake-arith", on_progress=on_progress,
                                  max_concurrent=2, progress=False)
            except KeyboardInterrupt:
                print("KeyboardInterrupt reached the caller", flush=True)
        if {where!r} == "main_thread":
            run()
        else:  # the background-loop path (also used under uvloop): its thread must survive
            t = threading.Thread(target=run)
            t.start()
            t.join(30)
            assert not t.is_alive(), "evaluate_sync hung"
        gc.collect()
    """)
    )
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "KeyboardInterrupt reached the caller" in proc.stdout
    assert "Task exception was never retrieved" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
