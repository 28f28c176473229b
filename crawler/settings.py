"""Politeness, in ONE reviewable place. Every run starts from these; flags change a few.

TDK has blocked Python user agents, bursts over ~16 parallel requests and clients that
ignore rate limits. So: one request at a time, at least a second apart, AutoThrottle on
top (it only ever slows down below DOWNLOAD_DELAY), robots.txt obeyed (Disallow and
Crawl-delay), backoff with jitter and Retry-After on 429/503, timeouts and closed
connections, and a circuit breaker that stops the run when TDK
starts refusing us (403s, HTML instead of JSON, TLS failures).
"""

from __future__ import annotations

from typing import Any

from .failures import RETRY

PACKAGE = __package__  # kelime.crawler once installed: Scrapy loads these by dotted name

#: Honest: names the project and a contact URL. Never a search-engine bot's, never "Python".
USER_AGENT = "Mozilla/5.0 (compatible; kelime/0.1; +https://github.com/kelime-tr/kelime)"
DEFAULT_BASE_URL = "https://sozluk.gov.tr"
DEFAULT_DELAY = 1.0        # seconds between requests (the floor; robots Crawl-delay may raise it)
#: Bodies: a /gts reply is kilobytes (the longest, çıkmak, is 28 KB); a sitemap at most
#: 50 MB by the protocol. The crawl and `kelime define` cancel a download past these.
GTS_MAX_BYTES = 8 * 1024 * 1024
DOWNLOAD_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_CONCURRENCY = 1    # requests in flight at once
#: The longest pause after a reply that took long (a slow server gets slower requests):
#: the crawl's AutoThrottle cap and Pacing's, and `kelime define`'s.
MAX_GAP = 60.0
DEFAULT_MAX_AGE = 30.0     # days before a good reply is fetched again

POLITE: dict[str, Any] = {
    "BOT_NAME": "kelime",
    "USER_AGENT": USER_AGENT,
    "ROBOTSTXT_OBEY": True,
    "ROBOTSTXT_USER_AGENT": "kelime",
    "CONCURRENT_REQUESTS": DEFAULT_CONCURRENCY,
    "CONCURRENT_REQUESTS_PER_DOMAIN": DEFAULT_CONCURRENCY,
    "DOWNLOAD_DELAY": DEFAULT_DELAY,
    "DOWNLOAD_DELAY_JITTER": 0,          # Scrapy's jitter goes down to 0.5×; ours only adds
    "AUTOTHROTTLE_ENABLED": True,
    "AUTOTHROTTLE_START_DELAY": DEFAULT_DELAY,
    "AUTOTHROTTLE_MAX_DELAY": MAX_GAP,
    "AUTOTHROTTLE_TARGET_CONCURRENCY": 1.0,
    "DOWNLOAD_TIMEOUT": 30,
    "DEFAULT_REQUEST_HEADERS": {"Accept": "application/json",
                                "Accept-Language": "tr-TR,tr;q=0.9"},
    "COOKIES_ENABLED": False,
    "TELNETCONSOLE_ENABLED": False,
    "RETRY_ENABLED": False,              # replaced by middlewares.Backoff
    "DOWNLOADER_CLIENT_TLS_CIPHERS": "DEFAULT",  # --ciphers: TDK's server has refused some
    # Only TDK writes the cache: its certificate is verified against the system's trust
    # store (SSL_CERT_FILE / SSL_CERT_DIR name another), for /gts, robots.txt and sitemaps
    # alike. Scrapy's default accepted any certificate ("Remote certificate is not valid"
    # was only logged). Not overridable: see LOCKED.
    "DOWNLOAD_VERIFY_CERTIFICATES": True,
    "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",  # words in queue order
    # One site, one download slot: Scrapy's default (DownloaderAwarePriorityQueue) shares
    # requests out among slots, a queue and a slot look-up per request for nothing here.
    "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.ScrapyPriorityQueue",
    # Scrapy's downloader/* counts rebuild each request's HTTP text to count its bytes;
    # Pacing counts the requests sent (kelime/requests: the refresh report's figure).
    "DOWNLOADER_STATS": False,
    "DOWNLOADER_MIDDLEWARES": {  # robots.txt unreadable = disallow all (RFC 9309), not allow
        "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
        f"{PACKAGE}.middlewares.RobotsTxt": 100,
        f"{PACKAGE}.middlewares.SameHost": 650,  # before RedirectMiddleware (600)
        f"{PACKAGE}.middlewares.Backoff": 550,
        f"{PACKAGE}.middlewares.Pacing": 950,  # last before the download: sees replies first
        # Not needed, each a call per request: the spider sets no allowed_domains (SameHost
        # keeps redirects on the site) and no http_user.
        "scrapy.downloadermiddlewares.offsite.OffsiteMiddleware": None,
        "scrapy.downloadermiddlewares.httpauth.HttpAuthMiddleware": None},
    # Neither is needed: no DEPTH_LIMIT, and the spider copies no meta from a response. Its
    # /gts requests skip the duplicate filter (dont_filter): it asks each query once itself.
    "SPIDER_MIDDLEWARES": {"scrapy.spidermiddlewares.depth.DepthMiddleware": None,
                           "scrapy.spidermiddlewares.metacopy.MetaCopyDetectionMiddleware": None},
    "EXTENSIONS": {f"{PACKAGE}.middlewares.CrawlDelay": 10, f"{PACKAGE}.progress.Progress": 20},
    "ITEM_PIPELINES": {f"{PACKAGE}.pipelines.CachePipeline": 300},
    # Per response, Scrapy re-reads each callback's source (inspect + ast) to warn about a
    # generator returning a value (~7% of a fast crawl: tests/test_crawl_parts.py checks
    # ours once instead), and starts CONCURRENT_ITEMS asyncio tasks (100: ~13%) to handle
    # its output; ours yield one item, stored one at a time (SQLite has one writer).
    "WARN_ON_GENERATOR_RETURN_VALUE": False,
    "CONCURRENT_ITEMS": 1,
    # Not needed, and each costs a fast crawl ~5–10%: a Referer header on every request,
    # and following <meta http-equiv="refresh"> in HTML replies (TDK answers JSON; HTML is
    # a failed reply, and a refresh may lead off the site, where SameHost does not look).
    "REFERER_ENABLED": False,
    "METAREFRESH_ENABLED": False,
    "LOG_LEVEL": "WARNING",
    "LOG_INSTALL_ROOT_HANDLER": True,
    # kelime's own knobs (read by middlewares.py and progress.py)
    "KELIME_RETRY_TIMES": RETRY.tries - 1,   # retries after the first try (as `kelime define`)
    "KELIME_BACKOFF_BASE": RETRY.base,       # seconds; doubles each retry, plus up to 50% jitter
    "KELIME_BACKOFF_MAX": RETRY.cap,
    "KELIME_BREAKER_THRESHOLD": 8,       # consecutive 403 / HTML / 429-5xx / TLS failures
    "KELIME_BREAKER_FAILED_WORDS": 20,   # consecutive words that ended `failed`
    "KELIME_PROGRESS_INTERVAL": 10.0,    # seconds between plain log lines (not a TTY)
    "KELIME_CACHE_BUSY_TIMEOUT": 30.0,   # seconds a save waits for another writer's lock
    # Politeness off (no delay, no AutoThrottle, no Crawl-delay): replies are written in
    # batches of this many, or this many seconds after the first one waiting, whichever
    # comes first (crawler.pipelines). A polite crawl writes each at once. 1: never batch.
    "KELIME_SAVE_BATCH": 100,
    "KELIME_SAVE_INTERVAL": 0.25,
    "KELIME_RETRY_AFTER_MAX": 600.0,     # a longer Retry-After stops the crawl, saying when
    # Over these the download is cancelled, compressed or not (GTS_MAX_BYTES above).
    "KELIME_GTS_MAXSIZE": GTS_MAX_BYTES,
    "DOWNLOAD_MAXSIZE": DOWNLOAD_MAX_BYTES,
    "DOWNLOAD_WARNSIZE": 0,
}


def crawl_settings(*, cache: str, delay: float = DEFAULT_DELAY,
                   concurrency: int = DEFAULT_CONCURRENCY, user_agent: str = USER_AGENT,
                   ciphers: str | None = None, extra: dict | None = None) -> dict:
    """POLITE with the command line's choices applied (and `-s KEY=VALUE` overrides last)."""
    settings = dict(POLITE, KELIME_CACHE=cache, USER_AGENT=user_agent, DOWNLOAD_DELAY=delay,
                    AUTOTHROTTLE_START_DELAY=delay, CONCURRENT_REQUESTS=concurrency,
                    CONCURRENT_REQUESTS_PER_DOMAIN=concurrency)
    if ciphers:
        settings["DOWNLOADER_CLIENT_TLS_CIPHERS"] = ciphers
    settings.update(extra or {})
    return settings


#: Settings `-s` may not change: what makes only TDK write the cache.
_TRUST = ("certificates are always verified (to trust a private authority, set "
          "SSL_CERT_FILE to its certificate)")
LOCKED = {"DOWNLOAD_VERIFY_CERTIFICATES": _TRUST, "DOWNLOADER_CLIENTCONTEXTFACTORY": _TRUST}


#: Settings `-s` may set only to a number in a range (the pipeline's batching: a value
#: outside it was taken silently as "never batch", or ended the crawl in a traceback).
BOUNDED: dict[str, tuple[type, float, float]] = {
    "KELIME_SAVE_BATCH": (int, 1, 100_000),  # replies (1: never batch)
    "KELIME_SAVE_INTERVAL": (float, 0.0, 3600.0),  # seconds
    # read by kelime's own pacing too (the gap, the clock's lease): `abc` was a traceback
    "DOWNLOAD_DELAY": (float, 0.0, 86_400.0),
    "DOWNLOAD_TIMEOUT": (float, 0.001, 86_400.0),
}


def check_overrides(extra: dict) -> str | None:
    """Why `-s` overrides cannot be used, or None."""
    for key, value in extra.items():
        if key in LOCKED:
            return f"-s {key} cannot be changed: {LOCKED[key]}"
        if key in BOUNDED and (problem := _out_of_bounds(value, *BOUNDED[key])):
            return f"-s {key}={value!r} {problem}"
    return None


def _out_of_bounds(value: object, kind: type, least: float, most: float) -> str | None:
    """Why `value` is not a `kind` from `least` to `most`, or None."""
    number = (isinstance(value, int) or kind is float and isinstance(value, float)) \
        and not isinstance(value, bool)
    if not number or not least <= value <= most:  # type: ignore[operator]  # NaN fails too
        what = "a whole number" if kind is int else "a number"
        return f"is not {what} from {least:g} to {most:g}"
    return None


def check_user_agent(user_agent: str) -> str | None:
    """Why a user agent would get us blocked or is dishonest, or None when it is fine."""
    lowered = user_agent.lower()
    if "python" in lowered:
        return "contains 'Python': TDK closes such connections"
    if any(bot in lowered for bot in ("googlebot", "apis-google", "bingbot", "yandex")):
        return "impersonates a search engine's bot: name kelime and a contact URL instead"
    if "kelime" not in lowered:
        return ("does not name kelime: an honest User-Agent says who is asking and how to "
                f"reach them, e.g. {USER_AGENT!r}")
    return None
