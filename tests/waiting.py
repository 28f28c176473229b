"""Waiting for a condition, never for a fixed time.

A test that needs something to have happened (a request queued, a thread started, a line
logged) polls for exactly that, within a bound far beyond what it takes on an idle machine
(a loaded one never fails it), and fails saying what did not happen. A fixed sleep either
flakes under load or passes without the thing ever happening.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import anyio

T = TypeVar("T")

#: Seconds a condition may take to hold: generous, it is only ever reached on a failure.
PATIENCE = 30.0


def wait_until(condition: Callable[[], T], what: str, timeout: float = PATIENCE,
               every: float = 0.01) -> T:
    """Poll `condition()` until it is true and return it; AssertionError naming `what` (the
    condition, as a sentence) when `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"not within {timeout:g} s: {what}"
        time.sleep(every)
    return value


async def until(condition: Callable[[], T], what: str, timeout: float = PATIENCE,
                every: float = 0.005) -> T:
    """`wait_until` inside an event loop (asyncio or trio, through anyio): the loop runs on
    between two looks."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"not within {timeout:g} s: {what}"
        await anyio.sleep(every)
    return value
