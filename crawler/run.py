"""Start one crawl: queue the words, decide what is due, run Scrapy, summarise.

Everything that reads or writes the cache outside Scrapy happens here, before and after
the crawl; inside it, only crawler.pipelines writes."""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from kelime.tdk import store as cache
from kelime.tdk.replies import query_for

from .progress import snapshot

EXIT_OK, EXIT_STOPPED, EXIT_INTERRUPTED = 0, 1, 130


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
    "sitemap_unreadable": Ending("Crawl STOPPED: a sitemap could not be read", EXIT_STOPPED),
    "no_words": Ending("Crawl STOPPED: the site's word list gave no words", EXIT_STOPPED),
    "cache_unwritable": Ending("Crawl STOPPED: a reply could not be stored", EXIT_STOPPED),
    "asked_to_wait": Ending("Crawl PAUSED: TDK asks to wait", EXIT_STOPPED),
}
STOPPED = frozenset(r for r, e in ENDINGS.items() if e.code == EXIT_STOPPED)


def ending(reason: str) -> Ending:
    """The Ending of a finish reason; one kelime does not know stops the run (exit 1)."""
    return ENDINGS.get(reason, Ending(f"Crawl ended ({reason})", EXIT_STOPPED))


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


#: A refresh re-verifies this share of the cache's good replies, oldest first (with the
#: site's list and the new words, a refresh stays under 1% of a full crawl's requests).
SAMPLE = 0.005


def refresh_plan(db, sample: int | None) -> tuple[dict[str, str | None], set[str]]:
    """A weekly refresh's (queued, fresh): the oldest good replies as a rotating sample, each
    with its body's sha256, and every other good reply fresh, so only the sample and words
    new to the site are asked."""
    count = sample if sample is not None else max(1, round(cache.good_replies(db) * SAMPLE))
    queued = cache.oldest_good(db, count)
    return queued, cache.fresh_queries(db, None) - set(queued)


def run_crawl(*, base_url: str, cache_path: Path, words: list[str] | None, max_age: float,
              limit: int | None, settings: dict, say=print, refresh: bool = False,
              sample: int | None = None) -> int:
    """Run the crawl; return the process exit code. `words` None means enumerate the site;
    `refresh`: enumerate, fetch new words and re-verify a sample (see `refresh_plan`)."""
    with cache.crawl_lock(cache_path):  # one crawl per cache, for its whole life
        return _run_crawl(base_url=base_url, cache_path=cache_path, words=words,
                          max_age=max_age, limit=limit, settings=settings, say=say,
                          refresh=refresh, sample=sample)


def _run_crawl(*, base_url, cache_path, words, max_age, limit, settings, say, refresh,
               sample) -> int:
    from scrapy.crawler import CrawlerProcess

    from .spider import TdkSpider

    db = cache.open_cache(cache_path, create=True)
    began = cache.now_iso()
    if words is not None:
        words = [q for q in dict.fromkeys(query_for(w) for w in words) if q]
        cache.save_words(db, words, "word list")
    if refresh:
        hashes, fresh = refresh_plan(db, sample)
        queued = list(hashes)
        say(f"refresh {base_url} → {cache_path}: re-verifying the {len(queued)} oldest "
            f"replies, fetching words new to the site's list")
    else:
        queued, fresh = plan(db, words, max_age)
        say(f"crawl {base_url} → {cache_path}: {len(queued)} queued word(s) due, {len(fresh)} "
            f"fresh within {max_age:g} days skipped" + ("" if words is not None
                                                       else "; enumerating the site's word list"))
    db.close()
    process = CrawlerProcess(settings)
    logging.getLogger("scrapy.downloadermiddlewares.robotstxt").setLevel(logging.CRITICAL)
    crawler = process.create_crawler(TdkSpider)
    started = time.monotonic()
    process.crawl(crawler, base_url=base_url, queued=queued, fresh=fresh,
                  enumerate_words=words is None, limit=limit)
    process.start()
    stats = crawler.stats.get_stats()
    code = summarise(stats, cache_path, time.monotonic() - started, say)
    if refresh:
        say(refresh_report(cache_path, began, hashes, stats))
    return code


def refresh_report(cache_path: Path, began: str, hashes: dict, stats: dict) -> str:
    """What a refresh found: new words, changed sample replies, words gone from the list
    (marked only after an enumeration that finished), and its requests."""
    db = cache.open_cache(cache_path)
    try:
        finished = stats.get("finish_reason", "finished") == "finished"
        gone = cache.mark_gone(db, began) if finished else 0
        new = db.execute("SELECT count(*) FROM words WHERE added_at >= ?", [began]).fetchone()[0]
        now = cache.reply_hashes(db, hashes)
        changed = sum(1 for q, sha in hashes.items() if now.get(q) != sha)
    finally:
        db.close()
    requests = stats.get("downloader/request_count", 0)
    gone_text = (f"{gone} word(s) the site no longer lists (kept, left out of builds)"
                 if finished else "words gone from the list not judged (the crawl stopped)")
    return (f"Refresh: {new} new word(s); {changed} of the {len(hashes)} re-verified "
            f"replies changed; {gone_text}; {requests} requests in all.")


def summarise(stats: dict, cache_path: Path, elapsed: float, say=print) -> int:
    """Print what happened and what the cache now holds; return the exit code."""
    s = snapshot(stats, elapsed)
    reason = stats.get("finish_reason", "finished")
    head = ending(reason).head
    say(f"{head} after {elapsed:.1f} s: {s['done']} of {s['total']} words fetched: ok {s['ok']}, "
        f"not_found {s['not_found']}, failed {s['failed']}; {s['retried']} retries, "
        f"{stats.get('kelime/skipped', 0)} skipped (robots.txt or stopping).")
    if stats.get("kelime/stop_message"):
        say(f"Error: {stats['kelime/stop_message']}")
    elif s["total"] and not s["done"] and stats.get("kelime/skipped", 0) >= s["total"]:
        say("Error: robots.txt disallows every word's /gts request: nothing could be fetched "
            "(check the site's robots.txt; kelime obeys it)")
    say(status_text(cache_path))
    if s["failed"] or reason != "finished":
        say("Rerun the same command to resume: done words are not fetched again, failed ones are.")
    return ending(reason).code


def status_text(cache_path: Path) -> str:
    """`kelime crawl --status`: the cache's state in three lines (read-only)."""
    db = cache.open_readonly(cache_path)
    st = cache.cache_stats(db)
    db.close()
    r, w = st["replies"], st["words"]
    return (f"Cache {cache_path}: replies ok {r['ok']}, not_found {r['not_found']}, failed "
            f"{r['failed']}; {st['entries']} entries.\n"
            f"Words: {w['queued']} queued, {w['done']} done, {w['pending']} pending.\n"
            f"Fetched between {st['oldest_fetch'] or '-'} and {st['newest_fetch'] or '-'}.")


def stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
