"""The TDK spider: only parses. Enumerates words (autocomplete.json when it still answers
JSON, else robots.txt's sitemaps of /kelime/<slug> pages), asks /gts?ara= once per word,
and yields `WordsFound` and `Reply` items; crawler.pipelines stores them."""

from __future__ import annotations

import json
import logging
from urllib.parse import unquote, urljoin, urlsplit

import scrapy
from scrapy import signals
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.gz import gunzip
from scrapy.utils.sitemap import Sitemap

from .classify import classify, gts_url, query_for
from .errors import describe, failure_kind
from .items import Reply, WordsFound

logger = logging.getLogger(__name__)
XML = {"Accept": "application/xml, text/xml;q=0.9, */*;q=0.1"}


def words_from_sitemap(body: bytes) -> tuple[str, list[str]]:
    """('sitemapindex', child sitemap URLs) or ('urlset', headwords of /kelime/<slug> URLs)."""
    if body[:2] == b"\x1f\x8b":
        body = gunzip(body)
    sitemap = Sitemap(body)
    locs = [d["loc"] for d in sitemap if d.get("loc")]
    if sitemap.type == "sitemapindex":
        return "sitemapindex", locs
    words = []
    for loc in locs:
        path = urlsplit(loc).path
        if path.startswith("/kelime/") and len(path) > len("/kelime/"):
            words.append(unquote(path[len("/kelime/"):]))
    return "urlset", words


def words_from_autocomplete(body: bytes) -> list[str] | None:
    """Headwords of the old autocomplete.json ([{"madde": …}]); None when it is not that."""
    text = body.decode("utf-8", errors="replace").strip()
    if not text.startswith("["):
        return None  # since the 2026 redesign: the SPA's HTML
    try:
        rows = json.loads(text)
    except ValueError:
        return None
    return [r["madde"] for r in rows if isinstance(r, dict) and isinstance(r.get("madde"), str)]


class TdkSpider(scrapy.Spider):
    name = "tdk"

    def __init__(self, base_url: str, queued=(), fresh=(), enumerate_words: bool = True,
                 limit: int | None = None, **kwargs):
        super().__init__(**kwargs)
        self.base_url = base_url.rstrip("/")
        self.queued, self.fresh = list(queued), set(fresh)
        self.enumerate_words, self.limit = enumerate_words, limit
        self.seen: set[str] = set()
        self.sitemaps: list[str] = []

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider._robots_parsed, signal=signals.robots_parsed)
        return spider

    def _robots_parsed(self, robotparser, request):
        self.sitemaps = list(getattr(robotparser, "sitemaps", []))

    async def start(self):
        if self.enumerate_words:  # first, so robots.txt and the word lists come early
            yield scrapy.Request(f"{self.base_url}/autocomplete.json", self.parse_autocomplete,
                                 errback=self.autocomplete_failed)
        for request in self._word_requests(self.queued):
            yield request

    def _word_requests(self, words):
        for word in words:
            query = query_for(word)
            if not query or query in self.seen or query in self.fresh:
                continue
            if self.limit is not None and len(self.seen) >= self.limit:
                return
            self.seen.add(query)
            self.crawler.stats.inc_value("kelime/planned")
            yield scrapy.Request(gts_url(self.base_url, query), self.parse_gts,
                                 errback=self.gts_failed,
                                 meta={"kelime_query": query, "handle_httpstatus_all": True})

    def parse_autocomplete(self, response):
        words = words_from_autocomplete(response.body)
        if words is None:
            logger.info("autocomplete.json answered HTML, not JSON (2026 redesign): skipped")
            self.crawler.stats.set_value("kelime/autocomplete", "html, skipped")
        else:
            self.crawler.stats.set_value("kelime/autocomplete", len(words))
            yield from self._found(words, "autocomplete.json")
        yield from self._sitemap_requests()

    def autocomplete_failed(self, failure):
        logger.info("autocomplete.json: %s", failure.value)
        yield from self._sitemap_requests()

    def _sitemap_requests(self):
        for url in self.sitemaps or [f"{self.base_url}/sitemap.xml"]:
            yield scrapy.Request(url, self.parse_sitemap, headers=XML)

    def parse_sitemap(self, response):
        kind, items = words_from_sitemap(response.body)
        if kind == "sitemapindex":
            for url in items:
                yield scrapy.Request(urljoin(response.url, url), self.parse_sitemap, headers=XML)
        else:
            yield from self._found(items, f"sitemap {urlsplit(response.url).path}")

    def _found(self, words, source):
        queries = [q for q in dict.fromkeys(query_for(w) for w in words) if q]
        self.crawler.stats.inc_value("kelime/enumerated", len(queries))
        yield WordsFound(queries, source)
        yield from self._word_requests(queries)

    def parse_gts(self, response):
        c = classify(response.status, response.body)
        yield Reply(query=response.meta["kelime_query"], url=response.url, outcome=c.outcome,
                    status=response.status, body=response.text if response.body else None,
                    error=c.error, attempts=response.meta.get("kelime_attempt", 1),
                    entries=c.entries)

    def gts_failed(self, failure):
        request, exc = failure.request, failure.value
        if isinstance(exc, IgnoreRequest):  # robots.txt Disallow, or the crawl is stopping
            self.crawler.stats.inc_value("kelime/skipped")
            return
        yield Reply(query=request.meta["kelime_query"], url=request.url, outcome="failed",
                    error=describe(failure_kind(exc), exc, request.url),
                    attempts=request.meta.get("kelime_attempt", 1))
