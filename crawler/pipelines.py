"""Lifecycle shells around the crawl store (kelime.tdk.store): every item is written in its
own transaction as it arrives, so a crash or kill -9 loses only the requests in flight.

A save that fails (the cache busy past its timeout, the disk full, the file read-only) is
never dropped quietly: the crawl stops at once with the store's message for the summary
(finish reason ``cache_unwritable``, exit 1), and the CacheError propagates so Scrapy logs
the item it could not store. Rerunning fetches that word again: it is still due."""

from __future__ import annotations

import logging

import sqlite_utils

from kelime.errors import CacheError
from kelime.tdk import store as cache

from .items import Reply, WordsFound
from .middlewares import stop_crawl

logger = logging.getLogger(__name__)
STOP_REASON = "cache_unwritable"


class CachePipeline:
    def __init__(self, path: str, stats, crawler=None, timeout: float = cache.BUSY_TIMEOUT):
        self.path, self.stats, self.crawler = path, stats, crawler
        self.db: sqlite_utils.Database | None = None  # open from open_spider to close_spider
        self.timeout = timeout

    @classmethod
    def from_crawler(cls, crawler):
        s = crawler.settings
        return cls(s["KELIME_CACHE"], crawler.stats, crawler,
                   s.getfloat(cache.BUSY_TIMEOUT_SETTING))

    def open_spider(self):
        self.db = cache.open_cache(self.path, create=True, timeout=self.timeout)

    def close_spider(self):
        if self.db is not None:
            self.db.close()

    def process_item(self, item):
        db = self.db
        assert db is not None  # Scrapy opens the spider before it hands over items
        try:
            if isinstance(item, WordsFound):
                cache.save_words(db, item.words, item.source)
            elif isinstance(item, Reply):
                cache.save_reply(db, item.row(), item.entries)
        except CacheError as e:
            self._stop(item, e)
            raise
        if isinstance(item, Reply):
            self.stats.inc_value(f"kelime/{item.outcome}")
        return item

    def _stop(self, item, error: CacheError) -> None:
        what = (f"the reply for {item.query!r}" if isinstance(item, Reply)
                else f"{len(item.words)} word(s) from {item.source}")
        message = f"could not store {what}, so the crawl stopped: {error}"
        self.stats.inc_value("kelime/unsaved")
        logger.error("%s", message)
        if self.crawler is not None:
            stop_crawl(self.crawler, STOP_REASON, message)
