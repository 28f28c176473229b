"""The cache's politeness clock as every request to TDK takes it: the crawl's (Pacing, in
Scrapy's reactor) and a look-up's (`kelime define`, `kelime reports check`: httpx).

A request waits for its turn (`Clock.wait`: kelime.tdk.store.take_turn), holds the clock
while in flight (at most `lease` seconds: a process killed mid-request frees it), and at
its end leaves a gap (`gap_after`) before anyone else's next request. A cache that cannot
keep the clock (none yet, read-only, a full disk) paces no one: no crawl can be writing
it either, and the crawl's pipeline stops on a cache it cannot write. Imports no Scrapy
or httpx: both shells use it.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import sqlite_utils

from kelime.errors import CacheError
from kelime.tdk import store

#: How often a waiting request looks at the clock again (seconds).
POLL = 0.05
#: How a crawl names itself on the clock (`crawl_holder`).
CRAWL = "crawl pid "


def crawl_holder() -> str:
    """This process's name on the clock, as a crawl."""
    return f"{CRAWL}{os.getpid()}"


def gap_after(delay: float, took: float, cap: float) -> float:
    """The pause after a reply: at least `delay`, and as long as the reply took when that is
    longer (a slow server gets slower requests), up to `cap`."""
    return max(delay, min(took, cap))


class Clock:
    """One process's hold on the politeness clock of the cache at `path`, as `me`."""

    def __init__(self, path: str | Path | None, me: str, *, lease: float,
                 create: bool = False, timeout: float | None = None) -> None:
        self.path, self.me, self.lease = path, me, lease
        self.create, self.timeout = create, timeout
        self.db: sqlite_utils.Database | None = None

    def wait(self) -> float:
        """Seconds to wait before trying again; 0.0: the turn is ours (or no clock)."""
        return self._step(store.take_turn, self.lease)

    def ended(self, gap: float) -> None:
        """Our request ended now: no one else starts one for `gap` seconds."""
        self._step(store.end_turn, gap)

    def longer(self, gap: float) -> None:
        """Our last request, if no one else's came since, leaves `gap` seconds from now."""
        self._step(store.longer_turn, gap)

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None

    def _step(self, step: Callable[[sqlite_utils.Database, str, float, float], float | None],
              seconds: float) -> float:
        try:
            db = self._open()
            return (step(db, self.me, time.time(), seconds) or 0.0) if db is not None else 0.0
        except (CacheError, sqlite3.Error, OSError):
            return 0.0

    def _open(self) -> sqlite_utils.Database | None:
        if self.db is None and self.path and (self.create or Path(self.path).exists()):
            self.db = store.open_cache(self.path, create=self.create, timeout=self.timeout)
        return self.db
