"""The TDK crawl cache (`kelime crawl`) as a build source, filtered by the policy."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import BuildError
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
    words = stats["words"]
    return {"kind": "tdk-cache", "name": f"{SOURCE_NAME}, crawled {crawled}",
            "licence": SOURCE_LICENCE, "entries": stats["entries"], "date": stats["newest_fetch"],
            "coverage": {"enumerated": words["queued"], "done": words["done"],
                         "pending": words["pending"], "failed": stats["replies"]["failed"]}}


#: The share of the crawl's enumerated words that may lack a good reply in a build.
INCOMPLETE = 0.01


def check_coverage(source: dict, force: bool) -> None:
    """Refuse a build from a crawl that has not finished: 20 done words of 400 built a
    20-word lexicon, "without a word" about the rest. Over `INCOMPLETE` pending (failed
    included) refuses unless `force` (the manifest records the coverage either way)."""
    cover = source.get("coverage") or {}
    enumerated, pending = cover.get("enumerated", 0), cover.get("pending", 0)
    if force or not enumerated or pending <= INCOMPLETE * enumerated:
        return
    raise BuildError(f"the crawl cache is incomplete: {pending:,} of its {enumerated:,} "
                     f"enumerated words ({pending / enumerated:.0%}) have no good reply yet "
                     f"({cover.get('failed', 0):,} failed): finish the crawl (rerun `kelime "
                     "crawl` with this cache: it resumes) or pass --force to build from what "
                     "it has")
