"""Lifecycle shells around kelime.cache: every item is written in its own transaction
as it arrives, so a crash or kill -9 loses only the requests in flight."""

from __future__ import annotations

from kelime import cache

from .items import Reply, WordsFound


class CachePipeline:
    def __init__(self, path: str, stats):
        self.path, self.stats, self.db = path, stats, None

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.settings["KELIME_CACHE"], crawler.stats)

    def open_spider(self):
        self.db = cache.open_cache(self.path, create=True)

    def close_spider(self):
        if self.db is not None:
            self.db.close()

    def process_item(self, item):
        if isinstance(item, WordsFound):
            cache.save_words(self.db, item.words, item.source)
        elif isinstance(item, Reply):
            cache.save_reply(self.db, item.row(), item.entries)
            self.stats.inc_value(f"kelime/{item.outcome}")
        return item
