"""TDK entries for a word from the crawl cache (`kelime.tdk.store`), read off the event loop.

Without a configured cache, or when its file is absent, a word simply has no entries
(`[]`) and the reply says `"cache": null`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio

from .errors import Unavailable


async def tdk_entries(cache: Path | None, normalized: str) -> tuple[list[dict], dict | None]:
    """(entries, cache description) for a normalised word; SQLite runs in a worker thread."""
    if cache is None:
        return [], None
    return await anyio.to_thread.run_sync(read_entries, cache, normalized)


def read_entries(path: Path, normalized: str) -> tuple[list[dict], dict | None]:
    """Open the cache, read the word's raw TDK entries, close it (one connection per thread)."""
    if not path.is_file():
        return [], None
    from kelime.tdk import store as tdk_cache  # sqlite-utils is only needed with a cache
    try:
        db = tdk_cache.open_readonly(path)
        try:
            entries = tdk_cache.entries_for_word(db, normalized)
        finally:
            db.close()
    except tdk_cache.CacheError as e:
        raise Unavailable("cache_unavailable", f"the TDK cache cannot be read: {e}") from None
    except sqlite3.Error as e:
        raise Unavailable("cache_unavailable", f"the TDK cache {path.name} could not be read "
                          f"({e}); move it aside and recrawl with `kelime crawl`") from None
    return entries, {"name": path.name, "entries": len(entries)}
