"""The TDK crawl cache (`kelime crawl`) as a build source, filtered by the policy."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..errors import BuildError, CacheError
from ..lexicon.compile import Candidate
from ..policy import Policy
from ..tdk import store
from ..tdk.entries import SOURCE_LICENCE, SOURCE_NAME, classify_entries

Entry = dict[str, Any]  # one TDK entry, as its JSON reply has it


def cache_candidates(path: str | Path, policy: Policy,
                     progress: Callable[[Iterator[Entry], int], Iterator[Entry]] | None = None,
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


def cache_source(path: str | Path) -> dict[str, Any]:
    """The manifest's `source` for a build from the cache: what, when crawled, and whose."""
    db = store.open_readonly(path)
    try:
        stats = store.cache_stats(db)
    finally:
        db.close()
    if not stats["entries"]:
        raise CacheError(f"cache {path} holds no TDK entries yet: run `kelime crawl "
                         f"run --cache {path}` first")
    crawled = (stats["newest_fetch"] or "unknown date")[:10]
    return {"kind": "tdk-cache", "name": f"{SOURCE_NAME}, crawled {crawled}",
            "licence": SOURCE_LICENCE, "entries": stats["entries"], "date": stats["newest_fetch"],
            "coverage": coverage(stats)}


def coverage(stats: dict[str, Any]) -> dict[str, Any]:
    """What the cache holds of the dictionary, for the manifest, whatever filled it (crawl,
    import, refresh): the words the site still lists (``enumerated``) by state (done,
    pending, disallowed by robots.txt), those it stopped listing (``gone``: out of the
    build), failed replies, every dump import and whether it finished, the last accepted
    reading of the site's list, and ``complete``: nothing pending, every import finished."""
    words = stats["words"]
    imports = [{"file": i["file"], "sha256": i["sha256"], "entries": i["entries"],
                "finished": i["finished_at"] is not None} for i in stats.get("imports", [])]
    last = stats.get("enumeration")
    return {"enumerated": words["queued"], "done": words["done"], "pending": words["pending"],
            "disallowed": words.get("disallowed", 0), "gone": words.get("gone", 0),
            "failed": stats["replies"]["failed"], "imports": imports,
            "last_enumeration": ({"date": last["ended"], "words": last["words"]}
                                 if last else None),
            "complete": not words["pending"] and all(i["finished"] for i in imports)}


#: The share of the crawl's enumerated words that may lack a good reply in a build.
INCOMPLETE = 0.01


def check_coverage(source: dict[str, Any], force: bool) -> None:
    """Refuse a build from a crawl or import that has not finished: 20 done words of 400
    built a 20-word lexicon, "without a word" about the rest, and an import killed at 22,500
    of 97,146 entries built as complete. An unfinished import, or over `INCOMPLETE` pending
    (failed included; disallowed by robots.txt is a state of its own, not pending), refuses
    unless `force` (the manifest records the coverage either way)."""
    cover = source.get("coverage") or {}
    enumerated, pending = cover.get("enumerated", 0), cover.get("pending", 0)
    unfinished = [i for i in cover.get("imports", []) if not i["finished"]]
    if unfinished and not force:
        dump = unfinished[0]
        raise BuildError(f"the crawl cache holds an import of {dump['file']} (sha256 "
                         f"{dump['sha256'][:16]}…) that never finished (it was stopped or "
                         "killed): part of the dictionary is missing. Import the dump again "
                         "(`kelime crawl import FILE`, it resumes) or pass --force to "
                         "build from what it has (the manifest's coverage says so)")
    if force or not enumerated or pending <= INCOMPLETE * enumerated:
        return
    raise BuildError(f"the crawl cache is incomplete: {pending:,} of its {enumerated:,} "
                     f"enumerated words ({pending / enumerated:.0%}) have no good reply yet "
                     f"({cover.get('failed', 0):,} failed): finish the crawl (rerun `kelime "
                     "crawl` with this cache: it resumes) or pass --force to build from what "
                     "it has")
