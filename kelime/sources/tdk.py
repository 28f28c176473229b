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
    reading of the site's list, ``short``: why the crawl's last reading of the list is
    known to be short (a sitemap listing no word while others did), and ``complete``:
    nothing pending, every import finished, the list not read short, and no more than
    `DISALLOWED` of the words (or `HANDFUL`) disallowed by robots.txt."""
    words = stats["words"]
    short = (stats.get("short_reading") or {}).get("short")
    imports = [{"file": i["file"], "sha256": i["sha256"], "entries": i["entries"],
                "finished": i["finished_at"] is not None} for i in stats.get("imports", [])]
    last = stats.get("enumeration")
    return {"enumerated": words["queued"], "done": words["done"], "pending": words["pending"],
            "disallowed": words.get("disallowed", 0), "gone": words.get("gone", 0),
            "failed": stats["replies"]["failed"], "imports": imports,
            "last_enumeration": ({"date": last["ended"], "words": last["words"]}
                                 if last else None),
            "short": short,
            "complete": (not words["pending"] and all(i["finished"] for i in imports)
                         and not short
                         and not _too_many_disallowed(words.get("disallowed", 0),
                                                      words["queued"]))}


#: The share of the crawl's enumerated words that may lack a good reply in a build.
INCOMPLETE = 0.01
#: The share of them robots.txt may disallow in a complete cache, or HANDFUL words when
#: more: a site's robots.txt forbids a handful of pages (1 of 14 words on the tests' fake,
#: its `gizli`), not 126 of 200.
DISALLOWED, HANDFUL = 0.01, 10


def _too_many_disallowed(disallowed: int, enumerated: int) -> bool:
    return disallowed > max(DISALLOWED * enumerated, HANDFUL)


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
    if force:
        return
    disallowed = cover.get("disallowed", 0)
    if cover.get("short"):
        raise BuildError(f"the crawl's reading of the site's list was short: {cover['short']}. "
                         f"The cache has {enumerated:,} words, maybe a part of the "
                         "dictionary. Rerun `kelime crawl run` (or `kelime crawl refresh`) "
                         "with this cache once the site answers whole, or pass --force to "
                         "build from what it has")
    if enumerated and _too_many_disallowed(disallowed, enumerated):
        raise BuildError(f"robots.txt disallows {disallowed:,} of the cache's {enumerated:,} "
                         f"words ({disallowed / enumerated:.0%}, over {DISALLOWED:.0%}): a "
                         "build would leave them out. Check the site's robots.txt and rerun "
                         "the crawl once they are allowed, or pass --force to build from "
                         "what it has")
    if not enumerated or pending <= INCOMPLETE * enumerated:
        return
    raise BuildError(f"the crawl cache is incomplete: {pending:,} of its {enumerated:,} "
                     f"enumerated words ({pending / enumerated:.0%}) have no good reply yet "
                     f"({cover.get('failed', 0):,} failed): finish the crawl (rerun `kelime "
                     "crawl` with this cache: it resumes) or pass --force to build from what "
                     "it has")


def cache_causes(path: str | Path, added: list[str], removed: list[str]) -> dict[str, str]:
    """Why each word a build `removed` against the last accepted one left it, as the cache
    tells: ``retired`` (the site's list no longer names it), ``not_found`` (its reply says
    so now), ``disallowed`` (robots.txt), ``failed_or_pending`` (no good reply); a word
    without a query of its own (an entry another query listed) is left to the caller.
    Words `added` are the cache's entries: left to the caller too."""
    db = store.open_readonly(path)
    try:
        with store.reading(db):
            return dict(_removed_causes(db, removed))
    finally:
        db.close()


def _removed_causes(db: Any, words: list[str]) -> Iterator[tuple[str, str]]:
    gone = "w.gone_at IS NOT NULL" if "gone_at" in db["words"].columns_dict else "0"
    for start in range(0, len(words), 500):  # SQLite's bound on parameters
        part = words[start:start + 500]
        rows = db.execute(f"SELECT w.word, {gone}, r.outcome FROM words w LEFT JOIN replies r "
                          f"ON r.query = w.word WHERE w.word IN ({','.join('?' * len(part))})",
                          part)
        for word, retired, outcome in rows:
            if retired:
                yield word, "retired"
            elif outcome in ("not_found", "disallowed"):
                yield word, outcome
            elif outcome != "ok":
                yield word, "failed_or_pending"
