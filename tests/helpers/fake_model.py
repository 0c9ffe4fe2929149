"""What the fake model server's models take and give, made or written out here independently of
the library: a PNG for the vision model, the thinking model's calculator tool and its reasoning."""

from __future__ import annotations

import io
import re

import pytest


def png(colour: tuple[int, int, int], size: tuple[int, int] = (7, 5), noise: bool = True) -> bytes:
    """A PNG written by Pillow (an encoder independent of the fake model's decoder), its
    pixels varied a little so its filters are not all zero."""
    Image = pytest.importorskip("PIL.Image")
    img = Image.new("RGB", size, colour)
    if noise:
        for x in range(size[0]):
            img.putpixel((x, x % size[1]), tuple(max(0, c - 9 * (x % 3)) for c in colour))
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def calculator(expression: str) -> str:
    """Evaluate ``A op B``."""
    a, op, b = re.fullmatch(r"\s*(-?\d+)\s*([+\-*])\s*(-?\d+)\s*", expression).groups()
    return str({"+": int(a) + int(b), "-": int(a) - int(b), "*": int(a) * int(b)}[op])


def expected_reasoning(a: int, op: str, b: int) -> list[str]:
    """What fake-think thinks, written out here: a wrong first guess, then the tool's result."""
    truth = a + b if op == "+" else a * b
    return [
        f"At a glance the answer is \\boxed{{{truth + 1}}}, but I will check with the calculator.",
        f"The calculator returned {truth}, so my first guess was wrong.",
    ]
