"""Politeness machinery that needs Scrapy: robots.txt read strictly (RFC 9309) with its
Crawl-delay, backoff with Retry-After, the circuit breaker, and the pause between requests.
Built on Scrapy's public extension points only: downloader middlewares, extensions,
signals and `engine.download_async`."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from protego import Protego
from scrapy import Request, signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.defer import deferred_from_coro

from kelime.tdk import store
from kelime.tdk.replies import TRANSIENT_STATUSES, Classified, classify, redirected

from .clock import POLL, Clock, crawl_holder, gap_after
from .failures import (
    AT_ONCE,
    BREAKER,
    RetryPolicy,
    describe,
    failure_kind,
    offsite_text,
    retry_after,
    robots_unreadable,
    same_host,
)
from .items import Reply

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy import Spider
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

STOP_MESSAGES = {
    "forbidden": "TDK answered 403 Forbidden {n} times in a row: it is refusing this client. "
                 "Wait a few hours, check --user-agent, raise --delay, then rerun "
                 "(done words are kept).",
    "html": "TDK answered its web page (HTML) instead of JSON {n} times in a row: the /gts "
            "route may have moved (as in the site's 2026 redesign) or TDK is refusing us. "
            "Check {url} in a browser before rerunning (done words are kept).",
    "failed": "{n} words in a row failed ({error}). Stopped so as not to hammer a struggling "
              "site; rerun later: failed words are retried, done words are kept.",
    "unavailable": "TDK answered 429 or 5xx (or no reply in time) {n} times in a row: it is "
                   "overloaded, down or limiting us. Stopped so as not to hammer it; rerun "
                   "later (done words are kept).",
    "robots": "could not read {url} ({error}). Without it nothing may be fetched (RFC 9309: "
              "an unreachable robots.txt means everything is disallowed). Rerun later "
              "(done words are kept).",
    "wait": "TDK asks to wait {wait:,.0f} s (Retry-After) before the next request, longer "
            "than the {most:,.0f} s kelime waits within a run: rerun after {when} (done words "
            "are kept).",
}

#: request.meta key: (the body, its classification), so the spider need not classify the
#: same body again (the shape check costs ~25 µs a reply).
CLASSIFIED = "kelime_classified"
#: request.meta key: the bytes of the body received so far (see `too_big`).
RECEIVED = "kelime_received"
#: request.meta key: where a redirect to another host would have led (not followed).
OFFSITE = "kelime_offsite"
#: request.meta key: the refused redirect to another word's /gts (`redirected`, not followed).
REWORDED = "kelime_reworded"
#: stats key: requests sent (robots.txt, sitemaps, /gts, retries), counted by `Pacing`.
REQUESTS = "kelime/requests"


def stop_crawl(crawler, reason: str, message: str) -> None:
    """End the crawl from a middleware: `message` is what the summary says (the first stop's
    message wins), `reason` the finish reason crawler.run maps to exit 1."""
    if crawler.stats.get_value("kelime/stop_message"):
        return
    crawler.stats.set_value("kelime/stop_message", message)
    logger.info("stopping (%s): %s", reason, message)
    deferred_from_coro(crawler.engine.close_spider_async(reason=reason))


def too_big(exc: BaseException, request=None) -> bool:
    """Whether Scrapy gave up on a reply for its size: a Content-Length over the limit (a
    cancelled download), a body growing past it (chunked: Scrapy cancels it with a bare
    CancelledError, so `Pacing` counts the bytes received), or one that decompressed past
    it."""
    text = str(exc)
    if "DOWNLOAD_MAXSIZE" in text or "download max size" in text:
        return True
    meta = request.meta if request is not None else {}
    limit = meta.get("download_maxsize") or 0
    return bool(limit) and meta.get(RECEIVED, 0) > limit


def _streak_kind(kind: str, status: int) -> str:
    """What a /gts reply counts toward the breaker: 403s, HTML, or the site unavailable
    (429 and 5xx: it failed everything with 503 for 108 requests); '' resets the streak."""
    if kind in ("forbidden", "html"):
        return kind
    return "unavailable" if status in TRANSIENT_STATUSES else ""


#: Seconds a claim on the cache's clock holds, unasked, while our requests are in flight
#: (Pacing.holding): only with no pause between requests.
HOLD = 0.25


class Pacing:
    """Politeness from the reply's END, for every request (robots.txt and sitemaps too).
    Scrapy spaces requests start to start, so after a reply that took 3 s the next one
    left 14 ms later. The next request waits at least the slot's delay (DOWNLOAD_DELAY,
    robots.txt Crawl-delay, AutoThrottle) after this reply ended, and as long as the reply
    took, when that is longer (a slow server gets slower requests), up to
    AUTOTHROTTLE_MAX_DELAY (with AutoThrottle on, as by default). Placed last before the
    download handler (950), so it sees every reply first: one refused later (a gzip body
    unpacking past the limit is an IgnoreRequest from HttpCompressionMiddleware, at 590)
    still sets the pause. Also counts each download's bytes (meta[RECEIVED]) for
    `too_big`, and asks a paced request's connection to close (`paced`).

    The pause is shared through the cache's politeness clock (`crawler.clock`): a
    `kelime define` or `kelime reports check` on the same cache waits for the crawl's
    request and gap, and the crawl waits for theirs (they ran beside it: two requests in
    flight, 3 ms apart)."""

    def __init__(self, crawler):
        s = crawler.settings
        self.crawler = crawler
        self.delay = s.getfloat("DOWNLOAD_DELAY")
        # a slow reply slows the next request as AutoThrottle would: not with it off
        self.max_gap = (s.getfloat("AUTOTHROTTLE_MAX_DELAY")
                        if s.getbool("AUTOTHROTTLE_ENABLED") else 0.0)
        self.next_at = 0.0  # no request before: the last reply's end + the gap it earned
        self.ended_at = 0.0  # when the last reply ended
        self.in_flight = 0  # our requests sent and not yet ended
        self.going = 0  # and those past our own gap, waiting for the clock (paced: one)
        self.claimed_at = -HOLD  # when we last claimed the clock (see `holding`)
        # the clock is read in the reactor's thread: never wait long for another writer
        self.clock = Clock(s.get("KELIME_CACHE"), crawl_holder(), create=True,
                           lease=2.0 * s.getfloat("DOWNLOAD_TIMEOUT"),
                           timeout=min(1.0, s.getfloat(store.BUSY_TIMEOUT_SETTING)))
        crawler.signals.connect(self._bytes, signal=signals.bytes_received)
        crawler.signals.connect(self._closed, signal=signals.spider_closed)
        crawler.signals.connect(self._robots_read, signal=robots_read)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def _robots_read(self, rules: Protego, request: Request) -> None:
        """robots.txt's Crawl-delay holds from robots.txt's own reply, for the crawl and on
        the cache's clock: its gap was earned before the delay was known (the slot's, start
        to start, can be shorter)."""
        delay = rules.crawl_delay(self.crawler.settings["ROBOTSTXT_USER_AGENT"])
        if delay:
            self.next_at = max(self.next_at, self.ended_at + float(delay))
            self.clock.ended(max(0.0, self.next_at - time.monotonic()))  # look-ups wait too

    async def process_request(self, request: Request) -> None:
        downloader = self.crawler.engine.downloader
        slot = downloader.slots.get(downloader.get_slot_key(request))
        paced = self.paced(slot.delay if slot is not None else 0.0)
        # our own gap first; paced, also after every request of ours in flight has ended:
        # Scrapy spaces a slot's requests start to start, so at --concurrency 4 one left
        # while another was in flight, or 0.248 s after it ended at a 0.3 s delay
        await self._wait(lambda: POLL if paced and self.going else
                         self.next_at - time.monotonic())
        self.going += 1  # at once (no await since the check): the next one waits for it
        try:
            if paced or not self.holding():
                self.claimed_at = -HOLD  # not ours until claimed again
                await self._wait(self.clock.wait)  # 0: claimed
                self.claimed_at = time.monotonic()
        except BaseException:
            self.going -= 1
            raise
        if paced:
            request.headers.setdefault("Connection", "close")
        request.meta["kelime_sent"] = time.monotonic()
        self.in_flight += 1
        self.crawler.stats.inc_value(REQUESTS)

    def holding(self) -> bool:
        """Whether the clock is still ours without asking: with no pause between requests,
        a claim holds while our own requests are in flight, renewed every HOLD seconds (so
        a look-up waiting is let in within about HOLD, once they end), and given back when
        the last one ends: two clock transactions a request were a tenth of a fast crawl."""
        return self.in_flight > 0 and time.monotonic() - self.claimed_at < HOLD

    def paced(self, slot_delay: float = 0.0) -> bool:
        """Whether requests are spaced (a delay, robots.txt's Crawl-delay in the slot's,
        AutoThrottle): then each asks for its own connection (Connection: close). Twisted's
        pool re-sends a GET at once, silently, when a connection it reuses closes before the
        reply (as TDK closes on clients it blocks), ignoring the pause and Backoff; it does
        so only on reused connections, and Scrapy has no public switch for it. A handshake
        a request costs little beside a pause; a crawl with none (politeness off) keeps
        its connections."""
        return bool(self.max_gap or self.delay or slot_delay)

    async def _wait(self, left: Callable[[], float]) -> None:
        while (wait := left()) > 0:
            if not self.crawler.crawling:
                raise IgnoreRequest("crawl stopping")
            await asyncio.sleep(min(wait, POLL))

    def _closed(self, spider: Spider | None = None, reason: str | None = None) -> None:
        self.clock.close()

    def process_response(self, request, response):
        self._ended(request)
        return response

    def process_exception(self, request, exception):
        if not isinstance(exception, IgnoreRequest):
            self._ended(request)  # a failed request counts: it reached the server (or tried)
        elif request.meta.pop("kelime_sent", None) is not None:
            self.in_flight, self.going = self.in_flight - 1, self.going - 1  # refused: no gap
            if not self.in_flight:
                self.clock.ended(max(0.0, self.next_at - time.monotonic()))

    def _bytes(self, data, request, spider=None):
        request.meta[RECEIVED] = request.meta.get(RECEIVED, 0) + len(data)

    def _ended(self, request: Request) -> None:
        now = time.monotonic()
        sent = request.meta.pop("kelime_sent", None)
        if sent is not None:
            self.in_flight, self.going = self.in_flight - 1, self.going - 1
        took = now - (sent if sent is not None else now)
        slot = self.crawler.engine.downloader.slots.get(request.meta.get("download_slot"))
        delay = slot.delay if slot is not None else self.delay
        gap = gap_after(delay, took, self.max_gap)
        self.ended_at, self.next_at = now, max(self.next_at, now + gap)
        if gap or not self.in_flight:  # with no gap, the last one in flight gives it back
            self.clock.ended(gap)


class SameHost:
    """Redirects stay on the host and the word asked: one to another host, or to another
    word's /gts (``ara=okul`` → ``ara=kitap``), is not followed (Scrapy's RedirectMiddleware
    would follow it) and the request keeps the 3xx reply, with the target in meta[OFFSITE]
    or the failure in meta[REWORDED] for the reason. Placed before RedirectMiddleware (a
    higher number sees replies first)."""

    def process_response(self, request, response):
        location = response.headers.get("Location")
        if 300 <= response.status < 400 and location:
            target = urljoin(request.url, location.decode("latin-1"))
            if not same_host(target, request.url):
                request.meta["dont_redirect"] = True
                request.meta[OFFSITE] = target
            elif reworded := redirected(request.url, target):
                request.meta["dont_redirect"] = True
                request.meta[REWORDED] = reworded
        return response


#: request.meta key: the request is robots.txt itself (or another that robots.txt does not
#: govern): `RobotsTxt` lets it through. Scrapy's own spelling, so its other parts agree.
DONT_OBEY = "dont_obey_robotstxt"
#: Signal sent once robots.txt is read: handlers get `rules` (a Protego parser: can_fetch,
#: crawl_delay, sitemaps) and the `request` that made it be read.
robots_read = object()
#: The IgnoreRequest message of a request robots.txt disallows (the spider matches it).
ROBOTS_SAYS = "Forbidden by robots.txt"
DISALLOW_ALL = "User-agent: *\nDisallow: /\n"


class RobotsTxt:
    """robots.txt, obeyed as RFC 9309 says, read once per site before its first request.

    Scrapy's RobotsTxtMiddleware allows everything when robots.txt cannot be read; here a
    5xx or 429 (after Backoff's retries), a redirect off the site, or no answer at all
    means "everything disallowed": the crawl stops and says why. A 4xx means no rules.
    robots.txt is fetched through the downloader (`engine.download_async`), so Backoff,
    Pacing and SameHost apply to it as to any request; it is parsed by Protego, matched
    for ROBOTSTXT_USER_AGENT. A disallowed request raises IgnoreRequest(ROBOTS_SAYS)."""

    def __init__(self, crawler: Crawler) -> None:
        if not crawler.settings.getbool("ROBOTSTXT_OBEY"):
            raise NotConfigured
        self.crawler = crawler
        self.agent = crawler.settings["ROBOTSTXT_USER_AGENT"]
        self.rules: dict[str, Protego] = {}  # per scheme://host:port
        self.reading = asyncio.Lock()  # the first request reads it; the others wait

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RobotsTxt:
        return cls(crawler)

    async def process_request(self, request: Request) -> None:
        if request.meta.get(DONT_OBEY):
            return
        rules = await self._rules(request)
        if not rules.can_fetch(request.url, self.agent):
            self.crawler.stats.inc_value("robotstxt/forbidden")
            raise IgnoreRequest(ROBOTS_SAYS)

    async def _rules(self, request: Request) -> Protego:
        parts = urlsplit(request.url)
        site = f"{parts.scheme}://{parts.netloc}"
        async with self.reading:
            if site not in self.rules:
                self.rules[site] = await self._read(f"{site}/robots.txt")
                await self.crawler.signals.send_catch_log_async(
                    signal=robots_read, rules=self.rules[site], request=request)
        return self.rules[site]

    async def _read(self, url: str) -> Protego:
        """The rules of robots.txt at `url`; "disallow all", the crawl stopping, when it
        cannot be read."""
        self.crawler.stats.inc_value("robotstxt/request_count")
        robots = Request(url, priority=1000, meta={DONT_OBEY: True}, callback=NO_CALLBACK)
        try:
            response = await self.crawler.engine.download_async(robots)
        except Exception as e:  # noqa: BLE001 - any failure: unreadable (IgnoreRequest too)
            return self._refuse(url, describe(failure_kind(e), e, url))
        self.crawler.stats.inc_value(f"robotstxt/response_status_count/{response.status}")
        if robots_unreadable(response.status):
            return self._refuse(response.url, f"HTTP {response.status}")
        if OFFSITE in response.meta:
            return self._refuse(response.url, offsite_text(response.meta[OFFSITE], response.url))
        if 400 <= response.status < 500:
            return Protego.parse("")  # no robots.txt: no rules
        return Protego.parse(response.body.decode("utf-8", errors="replace"))

    def _refuse(self, url: str, error: str) -> Protego:
        stop_crawl(self.crawler, "robots_unreadable",
                   STOP_MESSAGES["robots"].format(url=url, error=error))
        return Protego.parse(DISALLOW_ALL)


class CrawlDelay:
    """Honour robots.txt Crawl-delay: a floor under the slot delay (AutoThrottle included),
    set when robots.txt is read and kept after every reply from then on."""

    def __init__(self, crawler):
        self.crawler, self.floor = crawler, {}
        crawler.signals.connect(self._robots_read, signal=robots_read)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def _robots_read(self, rules: Protego, request: Request) -> None:
        delay = rules.crawl_delay(self.crawler.settings["ROBOTSTXT_USER_AGENT"])
        if delay:
            key = self.crawler.engine.downloader.get_slot_key(request)
            self.floor[key] = float(delay)
            self.crawler.stats.set_value("kelime/crawl_delay", float(delay))
            self._clamp(key)
            # from now on, after every reply (AutoThrottle may lower the slot's delay):
            # none of that work, a signal receiver per reply, without a Crawl-delay
            self.crawler.signals.connect(self._downloaded, signal=signals.response_downloaded)

    def _downloaded(self, response, request, spider):
        self._clamp(request.meta.get("download_slot"))

    def _clamp(self, key):
        slot = self.crawler.engine.downloader.slots.get(key)
        if slot is not None and key in self.floor:
            slot.delay = max(slot.delay, self.floor[key])


class Backoff:
    """Retries transient failures after a pause that holds back EVERY request (not just
    the failed one): exponential with jitter, at least what Retry-After asks. Trips the
    circuit breaker (stops the crawl) on a streak of 403s, HTML replies or TLS failures,
    or of words that ended failed."""

    def __init__(self, crawler):
        s = crawler.settings
        self.crawler, self.stats = crawler, crawler.stats
        self.retries = s.getint("KELIME_RETRY_TIMES")
        self.policy = RetryPolicy(tries=self.retries + 1, base=s.getfloat("KELIME_BACKOFF_BASE"),
                                  cap=s.getfloat("KELIME_BACKOFF_MAX"))
        self.threshold = s.getint("KELIME_BREAKER_THRESHOLD")
        self.failed_limit = s.getint("KELIME_BREAKER_FAILED_WORDS")
        self.paused_until, self.stopping = 0.0, False
        self.longest_wait = s.getfloat("KELIME_RETRY_AFTER_MAX")
        self.streak, self.streak_kind, self.failed_words = 0, "", 0
        crawler.signals.connect(self._item_scraped, signal=signals.item_scraped)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    async def process_request(self, request):
        while (wait := self.paused_until - time.monotonic()) > 0:
            if self.stopping or not self.crawler.crawling:
                raise IgnoreRequest("crawl stopping")
            await asyncio.sleep(min(wait, 0.2))
        if self.stopping:
            raise IgnoreRequest("circuit breaker open")

    def process_response(self, request, response):
        if "kelime_query" in request.meta:
            c = classify(response.status, response.body, request.meta["kelime_query"])
            if OFFSITE in request.meta:
                c = Classified("failed", "offsite",
                               error=offsite_text(request.meta[OFFSITE], request.url))
            elif REWORDED in request.meta:
                c = request.meta[REWORDED]
            request.meta[CLASSIFIED] = (response.body, c)  # the spider reads it (parse_gts)
            self._note(_streak_kind(c.kind, response.status), request.url)
            transient, reason = c.transient, c.error
        else:
            transient, reason = response.status in TRANSIENT_STATUSES, f"HTTP {response.status}"
        if transient:
            return self._retry(request, reason, response) or response
        return response

    def process_exception(self, request, exception):
        if isinstance(exception, IgnoreRequest) or too_big(exception, request):
            return None  # a reply over the size limit will be as big next time
        kind = failure_kind(exception)
        if kind in BREAKER:
            self._note(kind, request.url, describe(kind, exception, request.url))
            return None
        if kind in ("timeout", "closed"):
            self._note("unavailable", request.url)
        return self._retry(request, describe(kind, exception, request.url))

    def _retry(self, request, reason, response=None):
        attempt = request.meta.get("kelime_attempt", 1)
        if attempt > self.retries or self.stopping:
            self.stats.inc_value("kelime/gave_up")
            return None
        asked = retry_after(response.headers.get("Retry-After")) if response is not None else 0.0
        if asked > self.longest_wait:  # a day's pause inside a run is no crawl: stop, say when
            when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(time.time() + asked))
            self.stopping = True
            stop_crawl(self.crawler, "asked_to_wait", STOP_MESSAGES["wait"].format(
                wait=asked, most=self.longest_wait, when=when))
            return None
        wait = self.policy.wait(attempt, asked)
        self.paused_until = max(self.paused_until, time.monotonic() + wait)
        why = f"{reason}; TDK asked for {asked:g} s (Retry-After)" if asked else reason
        self.stats.set_value("kelime/waiting_until", time.time() + wait)  # for the progress
        self.stats.set_value("kelime/waiting_why", why)
        self.stats.inc_value("kelime/retried")
        logger.info("retry %d of %s in %.1f s: %s", attempt, request.url, wait, reason)
        new = request.copy()
        new.meta["kelime_attempt"] = attempt + 1
        new.dont_filter = True
        return new

    def _note(self, kind: str, url: str, message: str | None = None) -> None:
        """Count a streak of one bad kind; any good reply resets it."""
        if not kind:
            self.streak, self.streak_kind = 0, ""
            return
        self.streak = self.streak + 1 if kind == self.streak_kind else 1
        self.streak_kind = kind
        if self.streak >= self.threshold or kind in AT_ONCE:
            text = message or STOP_MESSAGES[kind].format(n=self.streak, url=url)
            if kind in BREAKER and kind not in AT_ONCE:
                text = f"{self.streak} requests in a row failed: {text}"
            self.trip(text)

    def _item_scraped(self, item, response, spider):
        if not isinstance(item, Reply):
            return
        self.failed_words = self.failed_words + 1 if item.outcome == "failed" else 0
        if self.failed_words >= self.failed_limit:
            self.trip(STOP_MESSAGES["failed"].format(n=self.failed_words, error=item.error))

    def trip(self, message: str) -> None:
        """Open the breaker: stop the crawl, keep the reason for the summary."""
        if self.stopping:
            return
        self.stopping = True
        stop_crawl(self.crawler, "circuit_breaker", message)
