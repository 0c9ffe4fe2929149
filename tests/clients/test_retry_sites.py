"""Every backoff of the library is computed by ``clients/retry.py``: no other module both sleeps
and computes a growing or random wait (``**``, ``random``, a name saying backoff or jitter)."""

from __future__ import annotations

import ast

from tests.helpers.paths import REPO

PACKAGE = REPO / "verifiers_lite"
POLICY = PACKAGE / "clients" / "retry.py"
# random's draws a jittered wait is made of (not random.Random(seed).shuffle of a dataset).
_RANDOM_WAITS = {
    "random",
    "uniform",
    "expovariate",
    "gauss",
    "triangular",
    "randint",
    "betavariate",
}


def _calls_sleep(node: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Call)
        and (
            (isinstance(n.func, ast.Attribute) and n.func.attr == "sleep")
            or (isinstance(n.func, ast.Name) and n.func.id == "sleep")
        )
        for n in ast.walk(node)
    )


def _computes_backoff(node: ast.AST) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow):
            return True
        if (
            isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name)
            and n.value.id == "random"
            and n.attr in _RANDOM_WAITS
        ):
            return True
        if isinstance(n, (ast.Name, ast.Attribute)):
            name = n.id if isinstance(n, ast.Name) else n.attr
            if "backoff" in name.lower() or "jitter" in name.lower():
                return True
    return False


def hand_rolled_backoff(source: str) -> bool:
    """Whether a module sleeps and computes a backoff (in the same function or not: a loop
    calling a helper for its delay counts)."""
    tree = ast.parse(source)
    return _calls_sleep(tree) and _computes_backoff(tree)


def test_the_finder_finds_a_hand_rolled_backoff() -> None:
    rolled = """
async def fetch(url):
    for attempt in range(5):
        try:
            return await get(url)
        except OSError:
            await asyncio.sleep(0.1 * 2 ** attempt)
"""
    jitter = "def poll():\n    time.sleep(random.uniform(0, 1))\n"
    split = (
        "def wait(n):\n    return 2 ** n\n\nasync def go(n):\n    await asyncio.sleep(wait(n))\n"
    )
    policy = "async def go(r):\n    delay = r.next_delay()\n    await asyncio.sleep(delay)\n"
    assert (
        hand_rolled_backoff(rolled) and hand_rolled_backoff(jitter) and hand_rolled_backoff(split)
    )
    assert not hand_rolled_backoff(policy)
    assert hand_rolled_backoff(POLICY.read_text(encoding="utf-8"))  # the policy module itself


def test_no_backoff_outside_the_retry_policy() -> None:
    found = [
        str(path.relative_to(PACKAGE))
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != POLICY and hand_rolled_backoff(path.read_text(encoding="utf-8"))
    ]
    assert found == [], f"ask clients/retry.py's Retries for the wait instead: {found}"
