"""Lifecycle shells around the crawl store (kelime.tdk.store).

A polite crawl (a delay between requests, AutoThrottle, or robots.txt's Crawl-delay)
writes every reply in its own transaction as it arrives. With politeness off, replies
come faster than one commit each allows, so they are written in batches: every
KELIME_SAVE_BATCH replies or KELIME_SAVE_INTERVAL seconds after the first one waiting,
whichever comes first, and at the close. Either way a crash or kill -9 loses only what was
not committed (at most one batch): those words are still due, and the rerun fetches them
again (the cache is the resume point). Words found (WordsFound) are saved at once, after
the replies waiting before them.

A save that fails (the cache busy past its timeout, the disk full, the file read-only) is
never dropped quietly: the crawl stops with the store's message for the summary (finish
reason ``cache_unwritable``, exit 1, also when the failing save is the close's: see
crawler.run.finish_reason), and the CacheError propagates so Scrapy logs the item it
could not store. Rerunning fetches those words again: they are still due."""

from __future__ import annotations

import asyncio
import logging

import sqlite_utils
from protego import Protego
from scrapy import Request

from kelime.errors import CacheError
from kelime.tdk import store as cache

from .items import Reply, WordsFound
from .middlewares import robots_read, stop_crawl

logger = logging.getLogger(__name__)
STOP_REASON = "cache_unwritable"
#: stats key: replies (or word lists) that could not be stored; any makes the crawl's
#: finish reason STOP_REASON (crawler.run.finish_reason), even when the close found it.
UNSAVED = "kelime/unsaved"
#: stats key: the first FAILED_SHOWN queries whose reply this crawl stored as failed (the
#: summary names them, with their errors)
FAILED_WORDS, FAILED_SHOWN = "kelime/failed_words", 5


def batching(settings) -> bool:
    """Whether replies are saved in batches: only when requests are not spaced (no delay,
    none for a host in DOWNLOAD_SLOTS, no AutoThrottle; robots.txt's Crawl-delay turns it
    off when read)."""
    slots = settings.getdict("DOWNLOAD_SLOTS").values()
    return (settings.getint("KELIME_SAVE_BATCH") > 1 and not settings.getfloat("DOWNLOAD_DELAY")
            and not settings.getbool("AUTOTHROTTLE_ENABLED")
            and not any(float(slot.get("delay") or 0) for slot in slots))


class CachePipeline:
    def __init__(self, path: str, stats, crawler=None, timeout: float = cache.BUSY_TIMEOUT,
                 batch: int = 1, interval: float = 0.0):
        self.path, self.stats, self.crawler = path, stats, crawler
        self.db: sqlite_utils.Database | None = None  # open from open_spider to close_spider
        self.timeout = timeout
        self.batch, self.interval = batch, interval  # batch 1: each reply at once
        self.pending: list[Reply] = []
        self.timer: asyncio.TimerHandle | None = None  # flushes `pending` after `interval`
        self.closing = False

    @classmethod
    def from_crawler(cls, crawler):
        s = crawler.settings
        pipeline = cls(s["KELIME_CACHE"], crawler.stats, crawler,
                       s.getfloat(cache.BUSY_TIMEOUT_SETTING),
                       s.getint("KELIME_SAVE_BATCH") if batching(s) else 1,
                       s.getfloat("KELIME_SAVE_INTERVAL"))
        crawler.signals.connect(pipeline.on_robots_read, signal=robots_read)
        return pipeline

    def on_robots_read(self, rules: Protego, request: Request) -> None:
        if rules.crawl_delay(self.crawler.settings["ROBOTSTXT_USER_AGENT"]):
            self.batch = 1  # paced: each reply at once (the next process_item flushes)

    def open_spider(self):
        self.db = cache.open_cache(self.path, create=True, timeout=self.timeout)

    def close_spider(self):
        if self.db is None:
            return
        self.closing = True
        try:
            self.flush()
        except CacheError:
            pass  # stopped: the summary says why (finish_reason)
        finally:
            self.db.close()

    def process_item(self, item):
        if isinstance(item, Reply):
            if not item.fetched_at:  # when it came, not when its batch is written
                item.fetched_at = cache.now_iso()
            self.pending.append(item)
            if len(self.pending) >= self.batch:
                self.flush()
            elif self.timer is None:  # the crawl runs on asyncio's loop (Pacing sleeps on it)
                self.timer = asyncio.get_running_loop().call_later(self.interval,
                                                                    self._flush_later)
        elif isinstance(item, WordsFound):
            self.flush()  # the replies before them first, as they came
            self._save(item, lambda db: cache.save_words(db, item.words, item.source))
        return item

    def flush(self) -> None:
        """Write the replies waiting, in one transaction; CacheError when it fails."""
        if self.timer is not None:
            self.timer.cancel()
        self.timer = None
        replies, self.pending = self.pending, []
        if replies:
            stored = self._save(replies, lambda db: cache.save_replies(
                db, [(r.row(), r.entries) for r in replies]))
            for r, outcome in zip(replies, stored):  # a good reply may be refused (entry_owned)
                self.stats.inc_value(f"kelime/{outcome}")
                failed = self.stats.get_value(FAILED_WORDS) or []
                if outcome == "failed" and len(failed) < FAILED_SHOWN:
                    self.stats.set_value(FAILED_WORDS, [*failed, r.query])

    def _flush_later(self) -> None:
        self.timer = None
        try:
            self.flush()
        except CacheError:
            pass  # the crawl is stopping; _stop said why

    def _save(self, what, save):
        db = self.db
        assert db is not None  # Scrapy opens the spider before it hands over items
        try:
            return save(db)
        except CacheError as e:
            self._stop(what, e)
            raise

    def _stop(self, what, error: CacheError) -> None:
        if isinstance(what, WordsFound):
            text = f"{len(what.words)} word(s) from {what.source}"
        elif len(what) == 1:
            text = f"the reply for {what[0].query!r}"
        else:
            text = f"{len(what)} replies ({what[0].query!r} … {what[-1].query!r})"
        message = f"could not store {text}, so the crawl stopped: {error}"
        self.stats.inc_value(UNSAVED)
        logger.error("%s", message)
        if self.crawler is None:
            return
        if not self.closing:
            stop_crawl(self.crawler, STOP_REASON, message)
        elif not self.stats.get_value("kelime/stop_message"):  # closing: the summary says it
            self.stats.set_value("kelime/stop_message", message)
