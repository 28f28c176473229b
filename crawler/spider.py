"""The TDK spider: only parses. Enumerates words (autocomplete.json when it still answers
JSON, else robots.txt's sitemaps of /kelime/<slug> pages), asks /gts?ara= once per word,
and yields `WordsFound` and `Reply` items; crawler.pipelines stores them. Enumerating stops the
crawl (exit 1, with the way out) when a sitemap is not one or no word is found."""

from __future__ import annotations

import hashlib
import logging
import re
import struct
from urllib.parse import unquote, urljoin, urlsplit

import orjson
import scrapy
from lxml import etree
from protego import Protego
from scrapy import signals
from scrapy.exceptions import CloseSpider, IgnoreRequest
from scrapy.utils.gz import gunzip
from scrapy.utils.sitemap import Sitemap

from kelime.tdk.replies import classify, gts_url, query_for

from .failures import describe, failure_kind, same_host
from .items import Reply, WordsFound
from .middlewares import CLASSIFIED, ROBOTS_SAYS, robots_read, stop_crawl, too_big
from .settings import DOWNLOAD_MAX_BYTES

logger = logging.getLogger(__name__)
XML = {"Accept": "application/xml, text/xml;q=0.9, */*;q=0.1"}
NOT_A_SITEMAP = "not a sitemap"
NO_WORD_LIST = ("Without a word list there is nothing to fetch: give the words yourself with "
                "`kelime crawl run --words FILE` (one a line), or rerun later (done words are "
                "kept).")


CUT_OFF = "cut off"
#: What stands for "every word" when robots.txt is read: rules are prefixes of the path and
#: query, so any word is matched by `Disallow: /gts?ara=<its first letters>` (the probe
#: `kelime-robots-probe` stopped the crawl at `Disallow: /gts?ara=k`). `/gts?ara=` with no
#: word is a prefix of every word's URL: a rule matching it matches them all. A rule
#: matching only it (`$`) matches no word, so a word-like probe must be disallowed too.
#: Rules that name some words' letters leave those words `disallowed`, one by one.
PROBES = ("", "kelime-robots-probe")
_CLOSED = re.compile(rb"</(?:[\w.-]+:)?(?:urlset|sitemapindex)\s*>\s*$")


def words_from_sitemap(body: bytes) -> tuple[str, list[str]]:
    """('sitemapindex', child sitemap URLs), ('urlset', headwords of /kelime/<slug> URLs),
    (CUT_OFF, []) for one that stops before its closing tag (a transfer cut short: lxml
    reads what came and 516 of 2,000 words looked like a whole list), or (NOT_A_SITEMAP,
    []) for anything else: HTML, empty, broken XML or gzip."""
    parsed = _sitemap_locs(body)
    if parsed is None:
        return NOT_A_SITEMAP, []
    if isinstance(parsed, str):  # CUT_OFF, the one text it answers
        return CUT_OFF, []
    kind, locs = parsed
    if kind == "sitemapindex":
        return "sitemapindex", locs
    words = []
    for loc in locs:
        path = urlsplit(loc).path
        if path.startswith("/kelime/") and len(path) > len("/kelime/"):
            words.append(unquote(path[len("/kelime/"):]))
    return "urlset", words


#: The most a gzipped sitemap may unpack to (the protocol's limit is 50 MB): a 3 MB file
#: unpacking to 3 GB took the crawl to 5.8 GB of memory.
SITEMAP_MAX = DOWNLOAD_MAX_BYTES  # a gzipped sitemap unpacks to at most what a download is


def _sitemap_locs(body: bytes) -> tuple[str, list[str]] | str | None:
    """(root tag, <loc> values) of a sitemap or sitemap index, gzipped or not; CUT_OFF for
    one without its closing tag; else None (also for one unpacking past SITEMAP_MAX)."""
    try:
        if body[:2] == b"\x1f\x8b":
            body = gunzip(body, max_size=SITEMAP_MAX)
        sitemap = Sitemap(body)  # StopIteration when lxml finds no element at all (HTML)
        if sitemap.type not in ("sitemapindex", "urlset"):
            return None
        if not _CLOSED.search(body[-200:]):
            return CUT_OFF
        return sitemap.type, [d["loc"] for d in sitemap if d.get("loc")]
    except (StopIteration, OSError, EOFError, struct.error, etree.LxmlError, ValueError):
        return None  # _DecompressionMaxSizeExceeded is a ValueError


def what_came_back(status: int, content_type: str, body: bytes) -> str:
    """A reply in a few words for an error message: status, type and how the body begins."""
    text = f"HTTP {status}" + (f" ({content_type})" if content_type else "")
    start = body[:60].decode("utf-8", errors="replace").strip()
    if not start:
        return text + " with an empty body"
    return text + f" beginning {start + ('…' if len(body) > 60 else '')!r}"


def words_from_autocomplete(body: bytes) -> list[str] | None:
    """Headwords of the old autocomplete.json ([{"madde": …}]); None when it is not that."""
    text = body.decode("utf-8", errors="replace").removeprefix("\ufeff").strip()
    if not text.startswith("["):
        return None  # since the 2026 redesign: the SPA's HTML
    try:
        rows = orjson.loads(text)  # a depth bomb is an error here, not a RecursionError
    except orjson.JSONDecodeError:
        return None
    return [r["madde"] for r in rows if isinstance(r, dict) and isinstance(r.get("madde"), str)]


class TdkSpider(scrapy.Spider):
    name = "tdk"
    gts_maxsize: int  # bytes of a /gts reply at most (from_crawler: KELIME_GTS_MAXSIZE)

    def __init__(self, base_url: str, queued=(), fresh=(), enumerate_words: bool = True,
                 limit: int | None = None, **kwargs):
        super().__init__(**kwargs)
        self.base_url = base_url.rstrip("/")
        self.queued, self.fresh = list(queued), set(fresh)
        self.enumerate_words, self.limit = enumerate_words, limit
        self.seen: set[str] = set()
        self.sitemaps: list[str] = []
        self.enumeration: list[str] = []  # where words were looked for, and what came back

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.gts_maxsize = crawler.settings.getint("KELIME_GTS_MAXSIZE")
        crawler.signals.connect(spider.on_robots_read, signal=robots_read)
        crawler.signals.connect(spider.on_idle, signal=signals.spider_idle)
        return spider

    def on_robots_read(self, rules: Protego, request: scrapy.Request) -> None:
        self.sitemaps = list(rules.sitemaps)
        agent = self.crawler.settings["ROBOTSTXT_USER_AGENT"]
        probes = [gts_url(self.base_url, word) for word in PROBES]
        if not any(rules.can_fetch(probe, agent) for probe in probes):
            stop_crawl(self.crawler, "robots_disallow", "robots.txt disallows every word's "
                       f"/gts request ({urlsplit(probes[0]).path} for user agent {agent!r}): "
                       "nothing can be fetched. Check the site's robots.txt (kelime obeys "
                       "it); the words you have are kept.")

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
                                 errback=self.gts_failed, dont_filter=True,  # seen: once
                                 meta={"kelime_query": query, "handle_httpstatus_all": True,
                                       "download_maxsize": self.gts_maxsize})

    def parse_autocomplete(self, response):
        words = words_from_autocomplete(response.body)
        if words is None:
            logger.info("autocomplete.json answered HTML, not JSON (2026 redesign): skipped")
            self.crawler.stats.set_value("kelime/autocomplete", "html, skipped")
            self.enumeration.append(f"{response.url} answered HTML, not JSON")
        else:
            self.crawler.stats.set_value("kelime/autocomplete", len(words))
            self.enumeration.append(f"{response.url} listed {len(words)} word(s)")
            yield from self._found(words, "autocomplete.json")
        yield from self._sitemap_requests()

    def autocomplete_failed(self, failure):
        logger.info("autocomplete.json: %s", failure.value)
        self.enumeration.append(f"{failure.request.url} failed ({failure.value})")
        yield from self._sitemap_requests()

    def _sitemap_requests(self):
        for url in self.sitemaps or [f"{self.base_url}/sitemap.xml"]:
            yield self._sitemap_request(url)

    def _sitemap_request(self, url):
        if not same_host(url, self.base_url):  # robots.txt or an index may name any host
            self._stop("sitemap_unreadable", f"the sitemap {url} is not on "
                       f"{urlsplit(self.base_url).netloc}: not read (only the configured "
                       "site's lists name the words).")
        return scrapy.Request(url, self.parse_sitemap, headers=XML, errback=self.sitemap_failed,
                              meta={"handle_httpstatus_all": True})

    def parse_sitemap(self, response):
        ok = 200 <= response.status < 300  # every status comes here (handle_httpstatus_all)
        kind, items = words_from_sitemap(response.body) if ok else (NOT_A_SITEMAP, [])
        if kind == CUT_OFF:
            self._stop("sitemap_unreadable", f"the sitemap {response.url} is cut off (it "
                       f"ends after {len(response.body):,} bytes, before its closing tag): "
                       "a list read from it would be short. Rerun later.")
        if kind == NOT_A_SITEMAP:
            self._not_a_sitemap(response)
        if kind == "sitemapindex":
            self.enumeration.append(f"{response.url} listed {len(items)} sitemap(s)")
            for url in items:
                yield self._sitemap_request(urljoin(response.url, url))
        else:
            self.enumeration.append(f"{response.url} listed {len(items)} word page(s)")
            if not items:  # with others listing words, the reading is short (run.py says so)
                self.crawler.stats.inc_value("kelime/empty_sitemaps")
                self.crawler.stats.set_value("kelime/empty_sitemap", response.url)
            yield from self._found(items, f"sitemap {urlsplit(response.url).path}")

    def _not_a_sitemap(self, response):
        ctype = response.headers.get("Content-Type", b"").decode("latin-1")
        what = what_came_back(response.status, ctype, response.body)
        self._stop("sitemap_unreadable", f"could not read the sitemap {response.url}: it "
                   f"answered {what}, not a sitemap (XML <urlset> or <sitemapindex>).")

    def sitemap_failed(self, failure):
        if isinstance(failure.value, IgnoreRequest):  # the crawl is stopping, or robots.txt
            if self.crawler.crawling and not self.crawler.stats.get_value("kelime/stop_message"):
                self._stop("sitemap_unreadable", f"robots.txt disallows the sitemap "
                           f"{failure.request.url}.")
            return
        kind = failure_kind(failure.value)
        self._stop("sitemap_unreadable", f"could not read the sitemap {failure.request.url}: "
                   f"{describe(kind, failure.value, failure.request.url)}")

    def on_idle(self) -> None:
        """Enumeration is over (nothing left to do): no word found means nothing was crawled."""
        stats = self.crawler.stats
        if (self.enumerate_words and not stats.get_value("kelime/enumerated")
                and not stats.get_value("kelime/stop_message")):
            tried = "; ".join(self.enumeration) or "nothing could be asked"
            self._stop("no_words", f"enumerating the site found no words ({tried}).")

    def _stop(self, reason: str, message: str):
        """End the crawl now with `message` (and the way out) for the summary: exit 1."""
        stats = self.crawler.stats
        if not stats.get_value("kelime/stop_message"):
            stats.set_value("kelime/stop_message", f"{message} {NO_WORD_LIST}")
        raise CloseSpider(reason)

    def _found(self, words, source):
        queries = [q for q in dict.fromkeys(query_for(w) for w in words) if q]
        self.crawler.stats.inc_value("kelime/enumerated", len(queries))
        yield WordsFound(queries, source)
        yield from self._word_requests(queries)

    def parse_gts(self, response):
        body, c = response.meta.pop(CLASSIFIED, (None, None))
        if body is not response.body:  # not the very body the middleware classified
            c = classify(response.status, response.body, response.meta["kelime_query"])
        raw = response.body  # read as UTF-8 (TDK's JSON) whatever the charset header claims
        yield Reply(query=response.meta["kelime_query"], url=response.url, outcome=c.outcome,
                    status=response.status,
                    body=raw.decode("utf-8", errors="replace") if raw else None,
                    error=c.error, attempts=response.meta.get("kelime_attempt", 1),
                    entries=c.entries, sha256=hashlib.sha256(raw).hexdigest() if raw else None,
                    final=c.final)

    def gts_failed(self, failure):
        request, exc = failure.request, failure.value
        if too_big(exc, request):  # recorded: a reply kelime will not store, not a skipped word
            yield Reply(query=request.meta["kelime_query"], url=request.url, outcome="failed",
                        error=f"the reply is over {self.gts_maxsize // 2**20} MiB (a "
                              "dictionary reply is kilobytes): not stored",
                        attempts=request.meta.get("kelime_attempt", 1), final=True)
            return
        stopping = bool(self.crawler.stats.get_value("kelime/stop_message"))
        if isinstance(exc, IgnoreRequest) and ROBOTS_SAYS in str(exc) and not stopping:
            # a state, not pending (an unreadable robots.txt disallows all: that is a stop)
            yield Reply(query=request.meta["kelime_query"], url=request.url,
                        outcome="disallowed", attempts=0,
                        error=f"robots.txt disallows {urlsplit(request.url).path}?"
                              f"{urlsplit(request.url).query}: not asked (asked once allowed)")
            return
        if isinstance(exc, IgnoreRequest):  # the crawl is stopping
            self.crawler.stats.inc_value("kelime/skipped")
            return
        yield Reply(query=request.meta["kelime_query"], url=request.url, outcome="failed",
                    error=describe(failure_kind(exc), exc, request.url),
                    attempts=request.meta.get("kelime_attempt", 1))
