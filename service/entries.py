"""TDK entries for a word from the crawl cache (`kelime.tdk.store`), read off the event loop.

Without a configured cache, or when its file is absent, a word simply has no entries
(`[]`) and the reply says `"cache": null`.

A cache locked by another process (a crawl in the middle of a write, `sqlite3` holding a
transaction) must not hold the service's threads: a read waits for the lock at most
`LOCK_WAIT` seconds (not the crawl's 30 s) and then answers 503 `cache_busy` with
Retry-After; reads run on `READ_THREADS` threads of their own (`gate.Gate`), never the
ones other routes use, and a read that would wait longer than `MOST_WAIT` for one is
refused at once. (A locked cache used to hold a thread for 30 s per /v1/words request, and
40 of them starved /v1/anagram for 28 s.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from starlette.requests import Request

from kelime.errors import CacheBusy, CacheError

from .errors import Unavailable
from .gate import Gate

#: Seconds a read waits for another process's lock on the cache before giving up.
LOCK_WAIT = 0.2
#: Threads reading the cache at once, per worker (their own: see the module's docstring).
READ_THREADS = 4
#: Reads waiting for a thread, per worker, and the longest wait (503 `busy` beyond).
MOST_WAITING, MOST_WAIT = 64, 1.0
#: What one read is guessed to take before any was timed.
FIRST_GUESS = 0.005


def cache_reads(request: Request) -> Gate:
    state = request.app.state
    if getattr(state, "cache_reads", None) is None:
        state.cache_reads = Gate("reads of the TDK cache", threads=READ_THREADS,
                                 most_waiting=MOST_WAITING, most_wait=MOST_WAIT,
                                 guess=FIRST_GUESS)
    return state.cache_reads


async def tdk_entries(request: Request, cache: Path | None,
                      normalized: str) -> tuple[list[dict], dict | None]:
    """(entries, cache description) for a normalised word; SQLite runs in a thread of the
    cache reads' own."""
    if cache is None:
        return [], None
    return await cache_reads(request).run(lambda: read_entries(cache, normalized))


def read_entries(path: Path, normalized: str) -> tuple[list[dict], dict | None]:
    """Open the cache, read the word's raw TDK entries, close it (one connection per thread)."""
    if not path.is_file():
        return [], None
    from kelime.tdk import store as tdk_cache  # sqlite-utils is only needed with a cache
    try:
        db = tdk_cache.open_readonly(path, timeout=LOCK_WAIT)
        try:
            with tdk_cache.reading(db):
                entries = tdk_cache.entries_for_word(db, normalized)
        finally:
            db.close()
    except CacheBusy:
        raise Unavailable("cache_busy", f"the TDK cache {path.name} is locked by another "
                          f"process (a crawl writing to it?) for over {LOCK_WAIT:g} s; try "
                          "again in a moment", headers={"Retry-After": "1"}) from None
    except CacheError as e:
        raise Unavailable("cache_unavailable", f"the TDK cache cannot be read: {e}") from None
    except sqlite3.Error as e:
        raise Unavailable("cache_unavailable", f"the TDK cache {path.name} could not be read "
                          f"({e}); move it aside and recrawl with `kelime crawl`") from None
    return entries, {"name": path.name, "entries": len(entries)}
