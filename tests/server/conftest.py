"""Fixtures of the rollout server tests (the server processes themselves are in tests/conftest.py:
tests/remote uses them too)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from tests.server.helpers import ServerProc


@pytest.fixture
async def http(server: ServerProc) -> AsyncIterator[httpx.AsyncClient]:
    """Plain HTTP to the module's shared scripted server."""
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as c:
        yield c
