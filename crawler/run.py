"""Start one crawl: queue the words, decide what is due, run Scrapy, summarise.

Everything that reads or writes the cache outside Scrapy happens here, before and after
the crawl; inside it, only crawler.pipelines writes."""

from __future__ import annotations

import logging
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from kelime.tdk import store as cache
from kelime.tdk.replies import query_for

from .clock import CRAWL, crawl_holder
from .middlewares import REQUESTS
from .pipelines import FAILED_WORDS
from .progress import snapshot

EXIT_OK, EXIT_STOPPED, EXIT_INTERRUPTED = 0, 1, 130
#: A crawl that finished but with words failed or still pending: "the work failed" (docs/cli.md)
EXIT_FAILED = 1


@dataclass(frozen=True)
class Ending:
    """How a crawl that finished for one Scrapy finish reason is summarised and exits."""

    head: str
    code: int


#: Every way a crawl ends: the summary's first words and the exit status, in one table.
ENDINGS = {
    "finished": Ending("Crawl finished", EXIT_OK),
    "shutdown": Ending("Crawl interrupted (Ctrl-C or SIGTERM)", EXIT_INTERRUPTED),
    "circuit_breaker": Ending("Crawl STOPPED by the circuit breaker", EXIT_STOPPED),
    "robots_unreadable": Ending("Crawl STOPPED: robots.txt could not be read", EXIT_STOPPED),
    "robots_disallow": Ending("Crawl STOPPED: robots.txt disallows /gts", EXIT_STOPPED),
    "sitemap_unreadable": Ending("Crawl STOPPED: a sitemap could not be read", EXIT_STOPPED),
    "no_words": Ending("Crawl STOPPED: the site's word list gave no words", EXIT_STOPPED),
    "cache_unwritable": Ending("Crawl STOPPED: a reply could not be stored", EXIT_STOPPED),
    "asked_to_wait": Ending("Crawl PAUSED: TDK asks to wait", EXIT_STOPPED),
}
STOPPED = frozenset(r for r, e in ENDINGS.items() if e.code == EXIT_STOPPED)


def ending(reason: str) -> Ending:
    """The Ending of a finish reason; one kelime does not know stops the run (exit 1)."""
    return ENDINGS.get(reason, Ending(f"Crawl ended ({reason})", EXIT_STOPPED))


def finish_reason(stats: dict) -> str:
    """Why the crawl ended: Scrapy's finish reason, except that a reply (or word list) the
    cache could not store makes it ``cache_unwritable`` (exit 1) unless the crawl had
    already stopped for a reason of its own, also when the failing save was the last
    batch's, written as the crawl closed (after Scrapy chose its reason)."""
    reason = stats.get("finish_reason", "finished")
    if stats.get("kelime/unsaved") and reason not in STOPPED:
        return "cache_unwritable"
    return reason


def read_words(path: Path) -> list[str]:
    """One word per line, `#` comments, blank lines skipped (UTF-8)."""
    with open(path, encoding="utf-8") as f:
        rows = (line.split("#", 1)[0].strip() for line in f)
        return [w for w in rows if w]


def plan(db, words: list[str] | None, max_age: float) -> tuple[list[str], set[str]]:
    """(queued words due for fetching, queries fresh enough to skip)."""
    due = cache.due_words(db, max_age)
    if words is not None:  # in the list's order
        due_set = set(due)
        due = [w for w in words if w in due_set]
    return due, cache.fresh_queries(db, max_age)


#: A refresh re-verifies the oldest 1/CYCLE of the cache's good replies (rounded up), so
#: every stored reply, and every entry in it, is re-verified within CYCLE refreshes (as long
#: as each refresh finishes its slice): each slice takes the oldest, and what it refetches
#: becomes the newest. 150 keeps a refresh under 1% of a full crawl's requests with the
#: site's list read and a few new words: 647 + ~5 of 97,000 words, 14 + 5 of 2,000.
#: (0.5% samples meant a changed entry could wait 200 refreshes.)
CYCLE = 150


def refresh_plan(db, sample: int | None) -> tuple[dict[str, str | None], set[str]]:
    """A weekly refresh's (queued, fresh): the oldest good replies as a rotating slice
    (`CYCLE`), each with what it says (`reply_digest`), and every other good reply fresh,
    so only the slice and words new to the site are asked."""
    count = sample if sample is not None else math.ceil(cache.good_replies(db) / CYCLE)
    queued = cache.oldest_good(db, count)
    return queued, cache.fresh_queries(db, None) - set(queued)


def run_crawl(*, base_url: str, cache_path: Path, words: list[str] | None, max_age: float,
              limit: int | None, settings: dict, say=print, refresh: bool = False,
              sample: int | None = None, force: bool = False) -> int:
    """Run the crawl; return the process exit code. `words` None means enumerate the site;
    `refresh`: enumerate, fetch new words and re-verify a sample (see `refresh_plan`);
    `force`: retire what the refresh's list no longer names even past `SHRINK`."""
    with cache.crawl_lock(cache_path):  # one crawl per cache, for its whole life
        return _run_crawl(base_url=base_url, cache_path=cache_path, words=words,
                          max_age=max_age, limit=limit, settings=settings, say=say,
                          refresh=refresh, sample=sample, force=force)


def _run_crawl(*, base_url, cache_path, words, max_age, limit, settings, say, refresh,
               sample, force) -> int:
    from scrapy.crawler import CrawlerProcess

    from .spider import TdkSpider

    db = cache.open_cache(cache_path, create=True)
    # we hold the crawl lock: a crawl's hold on the clock is a dead one's (see free_turns);
    # it ends one gap from now, as if its request in flight ended now
    cache.free_turns(db, CRAWL, crawl_holder(), time.time() + float(
        settings.get("DOWNLOAD_DELAY", 0)))
    began = cache.next_second()  # what the refresh names from here on is newer than the rest
    if words is not None:
        words = [q for q in dict.fromkeys(query_for(w) for w in words) if q]
        cache.save_words(db, words, "word list")
    if refresh:
        hashes, fresh = refresh_plan(db, sample)
        queued = list(hashes)
        say(f"refresh {base_url} → {cache_path}: re-verifying the {len(queued)} oldest "
            f"replies (every reply within {CYCLE} refreshes), fetching words new to the "
            "site's list")
    else:
        queued, fresh = plan(db, words, max_age)
        say(f"crawl {base_url} → {cache_path}: {len(queued)} queued word(s) due, {len(fresh)} "
            f"fresh within {max_age:g} days skipped" + ("" if words is not None
                                                       else "; enumerating the site's word list"))
    db.close()
    process = CrawlerProcess(settings)
    # Scrapy's handler drops what is under LOG_LEVEL, but its loggers still build a record
    # for every request and item ("Crawled", "Scraped from": ~2 a page) unless told.
    logging.getLogger("scrapy").setLevel(process.settings["LOG_LEVEL"])
    logging.getLogger("scrapy.downloadermiddlewares.redirect").addFilter(_not_about_referer)
    crawler = process.create_crawler(TdkSpider)
    started = time.monotonic()
    process.crawl(crawler, base_url=base_url, queued=queued, fresh=fresh,
                  enumerate_words=words is None, limit=limit)
    process.start()
    stats = crawler.stats.get_stats()
    code = summarise(stats, cache_path, time.monotonic() - started, say)
    if words is None and not refresh and finish_reason(stats) == "finished":
        _record_reading(cache_path, began, stats)
    if refresh:
        text, refused = refresh_report(cache_path, began, hashes, stats, force)
        say(text)
        code = code or (EXIT_STOPPED if refused else EXIT_OK)
    return code


def _record_reading(cache_path: Path, began: str, stats: dict) -> None:
    """Record a first crawl's reading of the site's list (it retires nothing: never the
    refresh's reference), short when a sitemap listed no word while others did: a build
    refuses such a cache (99 of 200 words built as complete)."""
    empty, found = stats.get("kelime/empty_sitemaps", 0), stats.get("kelime/enumerated", 0)
    short = (f"{empty} sitemap(s) listed no word ({stats['kelime/empty_sitemap']}) while "
             f"the others listed {found:,}") if empty and found else None
    db = cache.open_cache(cache_path)
    try:
        cache.record_enumeration(db, began, cache.seen_since(db, began), 0, accepted=False,
                                 short=short)
    finally:
        db.close()


def _not_about_referer(record: logging.LogRecord) -> bool:
    """Drops RedirectMiddleware's warning, at every crawl's start, that no RefererMiddleware
    runs and a redirect drops the Referer header: the crawl sends none on purpose
    (REFERER_ENABLED is off; settings.py). Scrapy warns even when `handle_referer` is
    overridden, its hook for this, so the one warning is filtered, nothing else."""
    text = record.getMessage()
    return not ("found no" in text and "RefererMiddleware" in text)


#: A refresh may retire at most this share of the words of the last accepted list (or, with
#: none yet, of the words the cache holds) unless forced: an empty <urlset> answered for one
#: of two sitemaps retired half the dictionary. TDK's list barely moves (2 entries removed
#: in two years), so 1% is generous for the site and tight for an accident.
SHRINK = 0.01


def refresh_report(cache_path: Path, began: str, hashes: dict, stats: dict,
                   force: bool = False) -> tuple[str, bool]:
    """What a refresh found: new words, sample replies whose entries changed (or whose
    verdict did), words gone from the list (retired only after an enumeration that
    finished, and past `SHRINK` only when forced), its requests, and the words that went
    from found to not found (`flipped`, named). Also whether the retirement was refused."""
    db = cache.open_cache(cache_path)
    try:
        finished = finish_reason(stats) == "finished"
        gone_text, refused = _retire(db, began, force) if finished else (
            "words gone from the list not judged (the crawl stopped)", False)
        new = db.execute("SELECT count(*) FROM words WHERE added_at >= ?", [began]).fetchone()[0]
        now = cache.reply_digests(db, hashes)
    finally:
        db.close()
    changed = sum(1 for q, said in hashes.items() if now.get(q) != said)
    requests = stats.get(REQUESTS, 0)
    text = (f"Refresh: {new} new word(s); {changed} of the {len(hashes)} re-verified "
            f"replies changed; {gone_text}; {requests} requests in all.")
    flips = flipped(hashes, now)
    if flips:
        text += (f"\n{len(flips)} word(s) went from found to NOT FOUND (they leave the next "
                 f"build): {', '.join(flips[:FLIPS_SHOWN])}"
                 + (f" and {len(flips) - FLIPS_SHOWN} more" if len(flips) > FLIPS_SHOWN else "")
                 + ". If TDK did not drop them, the site answered wrongly: look them up "
                 "(`kelime define WORD --refresh`) before you build.")
    return text, refused


#: Words a refresh names of those that flipped from found to not found.
FLIPS_SHOWN = 10


def flipped(before: dict[str, str | None], after: dict[str, str | None]) -> list[str]:
    """The queries whose good ``ok`` reply (`before`, `reply_digest`s) is now not found."""
    return [q for q, said in before.items()
            if said not in (None, cache.NOT_FOUND) and after.get(q) == cache.NOT_FOUND]


def _retire(db, began: str, force: bool) -> tuple[str, bool]:
    """Retire the words a finished enumeration begun at `began` did not name, unless they are
    over `SHRINK` of the reference list and not `force`d; (what it did, refused)."""
    named, missing = cache.seen_since(db, began), cache.not_seen_since(db, began)
    last = cache.last_enumeration(db)
    reference = last["words"] if last else named + missing
    if missing and missing > SHRINK * reference and not force:
        cache.record_enumeration(db, began, named, 0, accepted=False)
        against = (f"the {reference:,} words of the last accepted list ({last['ended'][:10]})"
                   if last else f"the {reference:,} words the cache holds")
        return (f"REFUSED to retire {missing:,} word(s) the site's list no longer names: "
                f"{missing / reference:.1%} of {against}, over the {SHRINK:.0%} a refresh "
                "may retire. A sitemap may have answered short; nothing was retired. Rerun "
                "later, or if the site really dropped them, rerun `kelime crawl refresh "
                "--force`"), True
    gone = cache.mark_gone(db, began)
    cache.record_enumeration(db, began, named, gone, accepted=True)
    return f"{gone} word(s) the site no longer lists (kept, left out of builds)", False


def summarise(stats: dict, cache_path: Path, elapsed: float, say=print) -> int:
    """Print what happened and what the cache now holds; return the exit code."""
    s = snapshot(stats, elapsed)
    reason = finish_reason(stats)
    head = ending(reason).head
    disallowed = stats.get("kelime/disallowed", 0)
    say(f"{head} after {elapsed:.1f} s: {s['done']} of {s['total']} words fetched: ok {s['ok']}, "
        f"not_found {s['not_found']}, failed {s['failed']}; {s['retried']} retries, "
        f"{disallowed} disallowed by robots.txt, {stats.get('kelime/skipped', 0)} skipped "
        "(stopping).")
    if stats.get("kelime/stop_message"):
        say(f"Error: {stats['kelime/stop_message']}")
    say(status_text(cache_path))
    code = ending(reason).code
    unsettled = max(0, s["total"] - s["done"] - disallowed - stats.get("kelime/skipped", 0))
    if reason == "finished" and (s["failed"] or unsettled):
        code = EXIT_FAILED
        say(failed_text(cache_path, s["failed"], unsettled, stats.get(FAILED_WORDS) or []))
    if s["failed"] or reason != "finished":
        say("Rerun the same command to resume: done words are not fetched again, failed ones "
            "are (unless their failure is final).")
    return code


def _cut(text: str, size: int) -> str:
    return text if len(text) <= size else text[:size - 1] + "…"


def failed_text(cache_path: Path, failed: int, unsettled: int, words: list[str]) -> str:
    """The line saying the crawl's work failed (exit 1): how many words failed, the first
    ones with their errors as stored, how many it meant to fetch and did not."""
    db = cache.open_readonly(cache_path)
    try:
        errors = {w: (cache.get_reply(db, w) or {}).get("error") for w in words}
    finally:
        db.close()
    named = "; ".join(f"{w}: {_cut(e or '?', 200)}" for w, e in errors.items())
    parts = [f"{failed} word(s) failed" + (f" ({named}" + (", …)" if failed > len(words)
                                                             else ")") if named else "")]
    if unsettled:
        parts.append(f"{unsettled} word(s) it meant to fetch are still pending")
    return (f"The crawl's work FAILED (exit {EXIT_FAILED}): {'; '.join(parts)}. `kelime crawl "
            "status` shows each word's state; a failure marked final (entry_owned, a reply "
            "not about the word asked, a reply over the size limit, entries in an unexpected "
            "shape) is not asked again until "
            "--max-age: its error says what to do.")


def status_data(cache_path: Path) -> dict:
    """`kelime crawl status --json`: the cache's counts (`cache_stats`), read-only."""
    db = cache.open_readonly(cache_path)
    try:
        return cache.cache_stats(db)
    finally:
        db.close()


def status_text(cache_path: Path) -> str:
    """`kelime crawl status`: the cache's state in three lines (read-only)."""
    st = status_data(cache_path)
    r, w = st["replies"], st["words"]
    lines = [f"Cache {cache_path}: replies ok {r['ok']}, not_found {r['not_found']}, failed "
             f"{r['failed']}; {st['entries']} entries.",
             f"Words: {w['queued']} queued, {w['done']} done, {w['pending']} pending, "
             f"{w['disallowed']} disallowed by robots.txt; {w['gone']} gone from the site's "
             "list.",
             f"Fetched between {st['oldest_fetch'] or '-'} and {st['newest_fetch'] or '-'}."]
    refused = st["refused"]
    off_word = refused["count"] - refused["entry_owned"]
    if off_word:
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(refused["kinds"].items())
                          if kind != "entry_owned")
        example = refused["example"]
        lines.append(f"REFUSED: {off_word} repl{'y' if off_word == 1 else 'ies'} "
                     f"not about the word asked ({kinds}), nothing of them stored; builds use "
                     f"the earlier good reply, if any. For example {example['query']}: "
                     f"{example['error']}")
    if refused["entry_owned"]:
        lines.append(f"REFUSED {refused['entry_owned']} reply(ies) listing an entry another "
                     "word owns (the reply stored before is kept):")
        lines += [f"  {r['query']}: {r['error']}" for r in refused["first"]]
    for dump in st["imports"]:
        if dump["finished_at"] is None:
            lines.append(f"INCOMPLETE: the import of {dump['file']} begun "
                         f"{dump['started_at']} never finished: import it again (it resumes); "
                         "until then a build refuses this cache.")
    return "\n".join(lines)


def stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
