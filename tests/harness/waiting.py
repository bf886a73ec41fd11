"""Waiting in a test for something another task or process does: :func:`until` polls a
condition under a guard, so a hang fails the test instead of stalling it (the guard is not a
timing assertion: machines here are noisy)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

#: Seconds a wait may take before the test fails as hung.
GUARD = 30.0


async def until(condition: Callable[[], bool], guard: float = GUARD) -> None:
    """Return once ``condition()`` holds; TimeoutError after ``guard`` seconds."""
    async with asyncio.timeout(guard):
        while True:
            if condition():
                return
            await asyncio.sleep(0.01)
