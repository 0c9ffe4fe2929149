"""asyncio's process-wide state, to prove that code left it as it was.

A snapshot holds, by identity, everything a patch of asyncio changes: the module-level entry
points (``asyncio.run``, ``asyncio.Runner``, the running-loop and task hooks), the event loop
policy and its class, and every attribute of the loop classes (asyncio's, and uvloop's when it
is imported). Two snapshots are equal only if nothing was replaced in between.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import Any

_MODULE_NAMES = {
    "asyncio": (
        "run",
        "Runner",
        "get_event_loop",
        "get_running_loop",
        "_get_running_loop",
        "new_event_loop",
        "set_event_loop",
        "get_event_loop_policy",
        "set_event_loop_policy",
        "Task",
        "Future",
        "ensure_future",
        "gather",
        "wait_for",
    ),
    "asyncio.runners": ("run", "Runner"),
    "asyncio.events": (
        "get_event_loop",
        "get_running_loop",
        "_get_running_loop",
        "_set_running_loop",
        "new_event_loop",
    ),
    "asyncio.tasks": (
        "Task",
        "_enter_task",
        "_leave_task",
        "_register_task",
        "current_task",
        "ensure_future",
    ),
    "asyncio.futures": ("Future",),
}


def _policy() -> asyncio.AbstractEventLoopPolicy:
    # Python 3.14 deprecates the public getter and setter; the private ones are silent there.
    getter = (
        getattr(asyncio.events, "_get_event_loop_policy", None) or asyncio.get_event_loop_policy
    )
    return getter()


def _set_policy(policy: asyncio.AbstractEventLoopPolicy) -> None:
    setter = (
        getattr(asyncio.events, "_set_event_loop_policy", None) or asyncio.set_event_loop_policy
    )
    setter(policy)


def _loop_classes() -> list[type]:
    classes: list[type] = [
        asyncio.AbstractEventLoop,
        asyncio.BaseEventLoop,
        asyncio.SelectorEventLoop,
        type(_policy()),
    ]
    uvloop = sys.modules.get("uvloop")
    if uvloop is not None:
        classes += [uvloop.Loop, getattr(uvloop, "EventLoopPolicy", object)]
    return classes


def snapshot() -> dict[str, tuple[Any, str, Any]]:
    """Every patchable piece of asyncio's global state: ``where -> (owner, name, value)``."""
    policy = _policy()
    state: dict[str, tuple[Any, str, Any]] = {"event loop policy": (None, "policy", policy)}
    for module_name, names in _MODULE_NAMES.items():
        module = sys.modules[module_name]
        for name in names:
            state[f"{module_name}.{name}"] = (module, name, getattr(module, name, None))
    for cls in _loop_classes():
        for name, value in vars(cls).items():
            state[f"{cls.__module__}.{cls.__qualname__}.{name}"] = (cls, name, value)
    return state


def changes(
    before: dict[str, tuple[Any, str, Any]], after: dict[str, tuple[Any, str, Any]]
) -> list[str]:
    """Where two snapshots differ (by identity), sorted; empty when nothing was replaced. An
    attribute added to a class that ``before`` recorded counts; a class first imported later
    (uvloop) does not."""
    owners = {id(owner) for owner, _, _ in before.values()}
    differ = {k for k, (_, _, v) in before.items() if k not in after or after[k][2] is not v}
    added = {k for k, (owner, _, _) in after.items() if k not in before and id(owner) in owners}
    return sorted(differ | added)


def restore(before: dict[str, tuple[Any, str, Any]]) -> None:
    """Put back the policy and every attribute recorded in ``before`` (those that can be set)."""
    for owner, name, value in before.values():
        if owner is None:
            _set_policy(value)
        elif getattr(owner, name, None) is not value:
            with contextlib.suppress(AttributeError, TypeError):  # C types cannot be patched
                setattr(owner, name, value)
