"""Run a coroutine to completion from synchronous code: scripts, Jupyter cells, uvloop programs.

Three cases, chosen per call:
- no running loop (a script): one persistent private loop, reused by every call, so clients
  (aiohttp sessions, AsyncOpenAI pools) created in one call still work in the next;
- a running standard asyncio loop (a Jupyter cell): nest-asyncio patches that loop, only then;
- a running loop that cannot be patched (uvloop): a persistent background-thread loop.
In every case Ctrl-C (or a kernel interrupt) cancels in-flight rollouts before re-raising.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

from verifiers_lite import interrupt

T = TypeVar("T")

_private_loop: asyncio.AbstractEventLoop | None = None
_thread_loop: asyncio.AbstractEventLoop | None = None
_thread_lock = threading.Lock()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` and return its result, wherever we are called from. An interrupted run
    raises :class:`~verifiers_lite.interrupt.RunInterrupted` saying what was saved."""
    since = interrupt.mark()
    try:
        return _dispatch(coro)
    except KeyboardInterrupt as exc:
        err = interrupt.as_run_interrupted(exc, since)
        if err is exc:
            raise
        raise err from err.__cause__


def _dispatch(coro: Coroutine[Any, Any, T]) -> T:
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is None:
        if threading.current_thread() is not threading.main_thread():
            return _run_in_thread_loop(coro)
        return _run_on_private_loop(coro)
    if _patchable(running):
        return _run_nested(running, coro)
    return _run_in_thread_loop(coro)


def _patchable(loop: asyncio.AbstractEventLoop) -> bool:
    return type(loop).__module__.startswith("asyncio")


def _run_on_private_loop(coro: Coroutine[Any, Any, T]) -> T:
    global _private_loop
    if _private_loop is None or _private_loop.is_closed():
        _private_loop = asyncio.new_event_loop()
    loop = _private_loop
    task = loop.create_task(coro)
    try:
        return loop.run_until_complete(task)
    except KeyboardInterrupt:
        _cancel_and_drain(loop, task)
        raise


def _run_nested(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T]) -> T:
    try:
        import nest_asyncio2 as nest_asyncio
    except ImportError:  # the archived original works the same for our use
        import nest_asyncio  # type: ignore[no-redef]
    if not getattr(loop, "_nest_patched", False):
        nest_asyncio.apply(loop)
    task = loop.create_task(coro)
    try:
        return loop.run_until_complete(task)
    except KeyboardInterrupt:
        _cancel_and_drain(loop, task)
        raise


def _cancel_and_drain(loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
    task.cancel()
    deadline = time.monotonic() + 10
    # A KeyboardInterrupt raised inside the run (e.g. by a progress callback) escapes the loop
    # again while we drain: keep draining until the task is done or the deadline passes.
    while not task.done() and time.monotonic() < deadline:
        with contextlib.suppress(BaseException):
            loop.run_until_complete(asyncio.wait([task], timeout=max(0.0, deadline - time.monotonic())))
    if task.done() and not task.cancelled():
        task.exception()  # retrieved: the caller gets the interrupt, not a "never retrieved" log


def _thread_loop_get() -> asyncio.AbstractEventLoop:
    global _thread_loop
    with _thread_lock:
        if _thread_loop is None or _thread_loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=_serve, args=(loop,), name="verifiers-lite-loop", daemon=True)
            thread.start()
            _thread_loop = loop
        return _thread_loop


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    """Run the background loop; a KeyboardInterrupt/SystemExit raised by a task (e.g. from a
    progress callback) must not kill the thread: the task holds it and its waiter re-raises it."""
    while True:
        try:
            loop.run_forever()
            return
        except (KeyboardInterrupt, SystemExit):
            continue


def _run_in_thread_loop(coro: Coroutine[Any, Any, T]) -> T:
    loop = _thread_loop_get()
    future = asyncio.run_coroutine_threadsafe(coro, loop)
    try:
        return future.result()
    except KeyboardInterrupt:
        future.cancel()
        with contextlib.suppress(BaseException):
            future.result(timeout=10)
        raise
    except concurrent.futures.CancelledError as exc:
        raise asyncio.CancelledError() from exc
