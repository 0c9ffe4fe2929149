"""Run a coroutine to completion from synchronous code: scripts, Jupyter cells, uvloop programs.

The bridge never touches an event loop it does not own: no patch of asyncio, no change of the
event loop policy, no loop set for the thread. After any ``*_sync`` call, ``asyncio.run``,
``asyncio.Runner`` and ``uvloop.run`` behave as they do without the library. Three cases,
chosen per call:

- no running loop, main thread (a script): one persistent private loop, driven by this call
  with ``run_until_complete`` and reused by every such call, so clients (aiohttp sessions,
  AsyncOpenAI pools) made in one call still work in the next;
- a loop already running in this thread (a Jupyter cell, an ``asyncio.run`` or ``uvloop.run``
  program, whatever its loop class): the coroutine runs on one persistent daemon-thread loop and
  this thread blocks until it is done. Widget updates made from that thread reach the notebook
  while the cell blocks. A call made from inside that loop's own thread goes one loop deeper
  (a second daemon-thread loop), so nesting never deadlocks;
- no running loop, another thread: the same daemon-thread loop.

In every case Ctrl-C (or a kernel interrupt) cancels in-flight rollouts, waits for them to
settle (so what finished is saved), then re-raises as
:class:`~verifiers_lite._util.interrupt.RunInterrupted` saying what was saved.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import signal
import socket
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

from verifiers_lite._util import interrupt

T = TypeVar("T")

_DRAIN_S = 10.0  # how long an interrupted call waits for its cancelled rollouts to settle

_private_loop: asyncio.AbstractEventLoop | None = None
_thread_loops: list[asyncio.AbstractEventLoop] = []  # index i serves calls made from loop i-1
_thread_lock = threading.Lock()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` and return its result, wherever we are called from. An interrupted run
    raises :class:`~verifiers_lite._util.interrupt.RunInterrupted` saying what was saved."""
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
        running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is None and threading.current_thread() is threading.main_thread():
        return _run_on_private_loop(coro)
    return _run_in_thread_loop(_thread_loop_for(running), coro)


def _run_on_private_loop(coro: Coroutine[Any, Any, T]) -> T:
    global _private_loop
    if _private_loop is None or _private_loop.is_closed():
        _private_loop = asyncio.new_event_loop()
    loop = _private_loop
    task = loop.create_task(coro)
    try:
        with _woken_by_signals(loop):
            return loop.run_until_complete(task)
    except KeyboardInterrupt:
        _cancel_and_drain(loop, task)
        raise


@contextlib.contextmanager
def _woken_by_signals(loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """Make a signal wake ``loop``'s wait for I/O while it runs in the main thread.

    The kernel may hand Ctrl-C to any thread (asyncio's child watcher blocks in ``waitpid`` in
    one); Python then runs the handler only when the main thread next runs bytecode, and a loop
    waiting on a timer minutes away would sleep through it. A wakeup fd written by the C-level
    handler, whichever thread took the signal, ends that wait (as ``add_signal_handler`` does).
    """
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    loop.add_reader(reader.fileno(), _drain, reader)
    previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous)
        loop.remove_reader(reader.fileno())
        reader.close()
        writer.close()


def _drain(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while sock.recv(4096):
            pass


def _cancel_and_drain(loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
    task.cancel()
    deadline = time.monotonic() + _DRAIN_S
    # A KeyboardInterrupt raised inside the run (e.g. by a progress callback) escapes the loop
    # again while we drain: keep draining until the task is done or the deadline passes.
    while not task.done() and time.monotonic() < deadline:
        with contextlib.suppress(BaseException):
            loop.run_until_complete(
                asyncio.wait([task], timeout=max(0.0, deadline - time.monotonic()))
            )
    if task.done() and not task.cancelled():
        task.exception()  # retrieved: the caller gets the interrupt, not a "never retrieved" log


def _thread_loop_for(running: asyncio.AbstractEventLoop | None) -> asyncio.AbstractEventLoop:
    """The daemon-thread loop for a call made while ``running`` runs in this thread: the first
    one, or the next one down when the call comes from one of our own thread loops."""
    with _thread_lock:
        depth = next((i + 1 for i, loop in enumerate(_thread_loops) if loop is running), 0)
        while len(_thread_loops) <= depth:
            _thread_loops.append(_start_thread_loop(len(_thread_loops)))
        if _thread_loops[depth].is_closed():  # closed by someone else: replace it
            _thread_loops[depth] = _start_thread_loop(depth)
        return _thread_loops[depth]


def _start_thread_loop(depth: int) -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    name = "verifiers-lite-loop" if depth == 0 else f"verifiers-lite-loop-{depth}"
    threading.Thread(target=_serve, args=(loop,), name=name, daemon=True).start()
    return loop


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    """Run a background loop; a KeyboardInterrupt/SystemExit raised by a task (e.g. from a
    progress callback) must not kill the thread: the task holds it and its waiter re-raises it."""
    while True:
        try:
            loop.run_forever()
            return
        except (KeyboardInterrupt, SystemExit):
            continue


def _run_in_thread_loop(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T]) -> T:
    outcome, cancel = _submit(loop, coro)
    try:
        return outcome.result()
    except KeyboardInterrupt:
        cancel()  # no-op when the interrupt came from the task itself
        concurrent.futures.wait([outcome], timeout=_DRAIN_S)  # what finished is saved first
        if outcome.done() and not outcome.cancelled():
            outcome.exception()
        raise


def _submit(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T]
) -> tuple[concurrent.futures.Future[T], Callable[[], None]]:
    """Start ``coro`` as a task on ``loop`` (in the caller's context, so context variables such
    as a notebook's output routing carry over). Returns a future settled only once the task is
    done, even after a cancel, and a thread-safe way to cancel the task.

    ``run_coroutine_threadsafe`` is not used: cancelling its future settles it at once, before
    the task has unwound and saved what it finished."""
    outcome: concurrent.futures.Future[T] = concurrent.futures.Future()
    box: list[asyncio.Task[T]] = []

    def start() -> None:
        task = loop.create_task(coro)
        task.add_done_callback(lambda t: _settle(outcome, t))
        box.append(task)

    def cancel() -> None:
        loop.call_soon_threadsafe(lambda: box and box[0].cancel())

    loop.call_soon_threadsafe(start)
    return outcome, cancel


def _settle(outcome: concurrent.futures.Future[T], task: asyncio.Task[T]) -> None:
    if task.cancelled():
        outcome.set_exception(asyncio.CancelledError())
    elif (exc := task.exception()) is not None:
        outcome.set_exception(exc)
    else:
        outcome.set_result(task.result())
