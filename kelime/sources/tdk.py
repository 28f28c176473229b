"""The TDK crawl cache (`kelime crawl`) as a build source, filtered by the policy."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

from ..lexicon.compile import Candidate
from ..policy import Policy
from ..tdk import store
from ..tdk.entries import SOURCE_LICENCE, SOURCE_NAME, classify_entries


def cache_candidates(path: str | Path, policy: Policy,
                     progress: Callable[[Iterator[dict], int], Iterator[dict]] | None = None,
                     ) -> Iterator[Candidate]:
    """Candidates from every entry of a crawl cache, read-only, filtered by `policy`.

    The cache is opened now (a bad path fails at once); `progress(entries, total)` may wrap
    the entry stream, e.g. with a progress bar.
    """
    db = store.open_readonly(path)
    entries = store.iter_entries(db)
    if progress is not None:
        entries = progress(entries, store.cache_stats(db)["entries"])
    return classify_entries(entries, policy)


def cache_source(path: str | Path) -> dict:
    """The manifest's `source` for a build from the cache: what, when crawled, and whose."""
    db = store.open_readonly(path)
    try:
        stats = store.cache_stats(db)
    finally:
        db.close()
    if not stats["entries"]:
        raise store.CacheError(f"cache {path} holds no TDK entries yet: run `kelime crawl "
                               f"--cache {path}` first")
    crawled = (stats["newest_fetch"] or "unknown date")[:10]
    return {"kind": "tdk-cache", "name": f"{SOURCE_NAME}, crawled {crawled}",
            "licence": SOURCE_LICENCE, "entries": stats["entries"], "date": stats["newest_fetch"]}
