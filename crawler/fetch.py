"""Single look-ups for `kelime define`: httpx + tenacity, same headers and classification
as the crawl, the reply stored in the cache.

Retry policy is data, the crawl's own (`crawler.failures.RETRY`): `fetch` retries transient
replies (429/503/HTML/broken JSON…), timeouts and dropped connections with exponential
backoff (at least Retry-After), four tries in all, and re-raises the last error (never a
bare RetryError). Tests call ``fetch.retry_with(wait=wait_none())`` instead of sleeping.

What one reply may cost is bounded too (`Limits`): a /gts reply is kilobytes, so the body
is streamed and dropped past `max_body` decoded bytes (a gzip bomb, a runaway body); the
whole reply, redirects included, must arrive within `deadline` seconds (httpx's timeouts
are per read: a body dripping a byte at a time never trips them); a Retry-After over
`max_wait` fails at once, saying when to come back; redirects are followed here, at most
`max_redirects` of them, `redirect_delay` apart (the crawl's politeness), loops and other
hosts refused.
Those failures (`BadReply`) are final: asking again would cost as much again.
Politeness is the crawl's, per cache: every request (robots.txt, /gts, each redirect hop)
takes its turn on the cache's politeness clock (`kelime.tdk.store.take_turn`), so a look-up
never runs beside a crawl's request on the same cache, and waits the delay after the last
reply's end, whoever asked. robots.txt is read first (kept in the cache a day, RFC 9309):
a disallowed word is not asked, and an unreadable robots.txt (5xx, no answer) asks nothing.
Imports no Scrapy: `kelime define` stays quick to start.
"""

from __future__ import annotations

import math
import os
import sqlite3
import ssl
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from tenacity import retry, retry_if_exception, stop_after_attempt

from kelime.errors import CacheError, FetchError, KelimeError
from kelime.normalize import normalize
from kelime.tdk import store as cache
from kelime.tdk.replies import Classified, classify, gts_url, query_for, redirected

from .clock import POLL, Clock, gap_after
from .failures import (
    RETRY,
    RETRYABLE,
    describe,
    failure_kind,
    offsite_text,
    retry_after,
    robots_unreadable,
    same_host,
)
from .settings import DEFAULT_DELAY, GTS_MAX_BYTES, MAX_GAP, POLITE, USER_AGENT

MIB = 2**20
ACCEPT_ENCODING = "gzip, deflate"  # what `_decoded` inflates, a step at a time


@dataclass(frozen=True)
class Limits:
    """How much one reply may cost before `fetch` gives up on it (see the module doc)."""

    max_body: int = GTS_MAX_BYTES  # decoded bytes; real replies are kilobytes (çıkmak: 28 KB)
    deadline: float = 60.0        # seconds for the whole reply, redirects and pauses included
    max_wait: float = 60.0        # the longest Retry-After worth sleeping for
    max_redirects: int = 5
    redirect_delay: float = 1.0   # seconds between redirect hops, as between crawl requests


LIMITS = Limits()


class TransientReply(Exception):
    """TDK answered, but with something worth asking again for (429, 503, HTML, …)."""

    def __init__(self, response: httpx.Response, classified: Classified):
        super().__init__(classified.error)
        self.response, self.classified = response, classified
        self.retry_after = retry_after(response.headers.get("Retry-After"))


class BadReply(Exception):
    """A reply given up on for good, never retried: too big, too slow, a redirect loop, or
    a Retry-After too long to sleep through. The message says what to do. `final`: the
    reply itself is unusable (too big), so the crawl need not ask again until --max-age."""

    def __init__(self, message: str, final: bool = False):
        super().__init__(message)
        self.final = final


@dataclass(frozen=True)
class Reply:
    """One read reply: the status, the body as text (UTF-8, whatever Content-Type claims:
    TDK sends UTF-8 JSON) and what it means."""

    status: int
    text: str
    classified: Classified


def _wait(retry_state) -> float:
    """The crawl's backoff, never less than the server's Retry-After."""
    exc = retry_state.outcome.exception()
    return RETRY.wait(retry_state.attempt_number, getattr(exc, "retry_after", 0.0))


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, TransientReply):
        return True
    # refused, DNS, TLS: asking again will not help (the crawl's breaker counts those)
    return isinstance(exc, httpx.TransportError) and failure_kind(exc) in RETRYABLE


@retry(stop=stop_after_attempt(RETRY.tries), wait=_wait, retry=retry_if_exception(_retryable),
       reraise=True)
def fetch(client: httpx.Client, base_url: str, query: str, limits: Limits = LIMITS) -> Reply:
    """GET /gts?ara=<query> within `limits` and classify the body; transient answers raise
    TransientReply, hopeless ones BadReply."""
    response, body = get(client, gts_url(base_url, query), limits)
    classified = classify(response.status_code, body, query)
    if classified.transient:
        transient = TransientReply(response, classified)
        if transient.retry_after > limits.max_wait:
            raise BadReply(_too_long_a_wait(transient.retry_after))
        raise transient
    return Reply(response.status_code, body.decode("utf-8", errors="replace"), classified)


def _too_long_a_wait(seconds: float) -> str:
    when = datetime.now().astimezone() + timedelta(seconds=math.ceil(seconds))
    return (f"TDK asks to wait {seconds:.0f} s: try again after "
            f"{when.strftime('%Y-%m-%d %H:%M:%S %Z').strip()}")


def get(client: httpx.Client, url: str, limits: Limits = LIMITS) -> tuple[httpx.Response, bytes]:
    """GET `url`, following redirects ourselves (at most `limits.max_redirects`, each after
    `limits.redirect_delay` s, never in a loop); the last response (closed) and its body.
    Everything, pauses included, happens within `limits.deadline` seconds, but for the
    waits for a turn on the politeness clock: those are ours, not the site's slowness."""
    deadline = time.monotonic() + limits.deadline
    seen = [url]
    while True:
        response, body, deadline = _read(client, url, limits, deadline)
        following = response.next_request if response.has_redirect_location else None
        if following is None:
            return response, body
        url = str(following.url)
        _check_hop(seen, url, limits)
        seen.append(url)
        time.sleep(min(limits.redirect_delay, max(0.0, deadline - time.monotonic())))
        if time.monotonic() > deadline:
            raise _too_slow(limits, url)


def _check_hop(seen: list[str], url: str, limits: Limits) -> None:
    """Refuse a redirect to another host, to another word (`redirected`), back to a URL
    already asked, or one hop too many."""
    host = urlsplit(seen[0]).netloc
    if not same_host(url, seen[0]):
        raise BadReply(f"{host} {offsite_text(url, seen[0])}")
    if reworded := redirected(seen[0], url):
        raise BadReply(f"{host}: {reworded.error}", final=True)
    if url in seen:
        loop = " → ".join(seen[seen.index(url):] + [url])
        raise BadReply(f"{host} redirects in a loop ({loop}): the route may have moved; "
                       "check --base-url")
    if len(seen) > limits.max_redirects:
        raise BadReply(f"{host} redirected more than {limits.max_redirects} times (last to "
                       f"{url}): the route may have moved; check --base-url")


def _too_slow(limits: Limits, url: str) -> BadReply:
    return BadReply(f"{urlsplit(url).netloc} did not send its whole reply within "
                    f"{limits.deadline:g} s (a body trickling in or never ending): "
                    "try again later")


#: How each request takes its turn on the politeness clock (set by `lookup` for its cache).
TURN: ContextVar = ContextVar("kelime_turn", default=nullcontext)
LEASE = 60.0  # seconds a request holds the clock at most (a look-up killed mid-request)
ROBOTS_AGENT = POLITE["ROBOTSTXT_USER_AGENT"]  # the crawl's own
ROBOTS_FRESH = 24 * 3600.0  # seconds robots.txt is kept (RFC 9309: at most a day)


def _read(client: httpx.Client, url: str, limits: Limits,
          deadline: float) -> tuple[httpx.Response, bytes, float]:
    """One GET, streamed, in its turn on the politeness clock: the decoded body, stopped
    past `limits.max_body` bytes or `deadline`, and the deadline moved on by the wait for
    the turn (the delay after robots.txt took the whole deadline of a 1 s look-up, and its
    reply's head came at the deadline or not at all). A redirect's body is not read."""
    asked = time.monotonic()
    with TURN.get()():
        deadline += time.monotonic() - asked
        return (*_read_now(client, url, limits, deadline), deadline)


def _read_now(client: httpx.Client, url: str, limits: Limits,
              deadline: float) -> tuple[httpx.Response, bytes]:
    timeout, clamped = _timeout_until(client.timeout, deadline)
    try:
        with client.stream("GET", url, follow_redirects=False, timeout=timeout,
                           headers={"Accept-Encoding": ACCEPT_ENCODING}) as response:
            if response.has_redirect_location:
                return response, b""
            return response, _body(response, limits, deadline, url)
    except httpx.TimeoutException:
        if clamped:  # the time left, not httpx's own timeout, ran out
            raise _too_slow(limits, url) from None
        raise


def _body(response: httpx.Response, limits: Limits, deadline: float, url: str) -> bytes:
    """The decoded body, chunk by chunk as it arrives: memory stays near `max_body`
    whatever the server sends, compressed or not."""
    chunks, size = [], 0
    for chunk in _decoded(response):
        size += len(chunk)
        if size > limits.max_body:
            raise BadReply(f"TDK's reply was over {limits.max_body / MIB:g} MiB: not a "
                           f"dictionary entry (from {url}); check --base-url", final=True)
        chunks.append(chunk)
        if time.monotonic() > deadline:
            raise _too_slow(limits, url)
    return b"".join(chunks)


def _decoded(response: httpx.Response) -> Iterator[bytes]:
    """The body's bytes, inflated here at most a MiB per step: httpx inflates a whole
    network read at once, and 64 KiB of a gzip bomb is 64 MiB. Requests ask only for
    ACCEPT_ENCODING; a reply compressed otherwise is refused."""
    encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding in ("", "identity"):
        yield from response.iter_raw()
        return
    if encoding not in ("gzip", "x-gzip", "deflate"):
        raise BadReply(f"TDK's reply is compressed as {encoding!r}, which we did not ask for "
                       f"({ACCEPT_ENCODING}); check --base-url")
    inflater = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib header
    try:
        for data in response.iter_raw():
            while data:
                yield inflater.decompress(data, MIB)
                data = inflater.unconsumed_tail
        yield inflater.flush()
    except zlib.error as e:
        raise httpx.DecodingError(f"cannot inflate the {encoding} body: {e}",
                                  request=response.request) from None


def _timeout_until(timeout: httpx.Timeout, deadline: float) -> tuple[httpx.Timeout, bool]:
    """The client's timeouts, none longer than the time left; and whether one was cut."""
    left = max(0.001, deadline - time.monotonic())
    parts = timeout.as_dict()
    cut = {k: left if v is None or v > left else v for k, v in parts.items()}
    return httpx.Timeout(**cut), cut != parts


def make_client(user_agent: str = USER_AGENT, ciphers: str | None = None,
                timeout: float = 30.0) -> httpx.Client:
    """An httpx client with the crawl's headers and, optionally, a custom TLS cipher list.
    It follows no redirect itself: `get` does, paced and bounded."""
    verify: bool | ssl.SSLContext = True
    if ciphers:
        verify = ssl.create_default_context()
        try:
            verify.set_ciphers(ciphers)
        except ssl.SSLError:
            raise FetchError(f"--ciphers {ciphers!r}: OpenSSL knows none of these ciphers "
                             "(see `openssl ciphers -v`)") from None
    return httpx.Client(headers={"User-Agent": user_agent, "Accept": "application/json",
                                 "Accept-Language": "tr-TR,tr;q=0.9"},
                        timeout=timeout, verify=verify, follow_redirects=False)


def explain(exc: BaseException, url: str) -> str:
    """An httpx error (or a transient reply that never got better) as an actionable sentence."""
    if isinstance(exc, BadReply):
        return str(exc)
    if isinstance(exc, TransientReply):
        return (f"{urlsplit(url).netloc} kept answering badly: {exc.classified.error} "
                f"(HTTP {exc.response.status_code})")
    return describe(failure_kind(exc), exc, url)


def cached(db, word: str) -> dict | None:
    """The word's answer from an open cache, or None when it has no good reply for it."""
    query, norm = query_for(word), normalize(word)
    entries, reply = cache.entries_for_word(db, norm), cache.get_reply(db, query)
    if entries:
        outcome = "ok"
    elif reply is not None and reply["outcome"] in cache.GOOD:
        outcome = reply["outcome"]
    else:
        return None
    return {"query": query, "normalized": norm, "outcome": outcome, "source": "cache",
            "entries": entries}


class Politeness:
    """A TURN for `cache_path` (see `crawler.clock`), one a look-up: each request waits for
    the cache's politeness clock (other processes' requests) and for the gap after this
    look-up's own previous request (kept here too: a look-up without a cache yet has no
    clock, and sent /gts 0.000 s after robots.txt), holds the clock while in flight and
    leaves `gap` seconds (or as long as the reply took, up to the crawl's MAX_GAP) after
    its end. `at_least` raises the gap: robots.txt's Crawl-delay, from robots.txt's end."""

    def __init__(self, cache_path: Path, gap: float) -> None:
        self.cache_path, self.gap = cache_path, gap
        self.me = f"look-up pid {os.getpid()} at {time.time():.6f}"
        self.last: tuple[float, float] | None = None  # (monotonic end, seconds it took)

    def due(self) -> float:
        """Seconds until this look-up's next request may start (its own gap)."""
        if self.last is None:
            return 0.0
        ended, took = self.last
        return ended + gap_after(self.gap, took, MAX_GAP) - time.monotonic()

    @contextmanager
    def __call__(self) -> Iterator[None]:
        clock = Clock(self.cache_path, self.me, lease=LEASE)
        try:
            while (own := self.due()) > 0:  # first: the clock is not held while waiting
                time.sleep(min(own, POLL))
            while (wait := clock.wait()) > 0:
                time.sleep(min(wait, POLL))
            started = time.monotonic()
            try:
                yield
            finally:
                ended = time.monotonic()
                self.last = (ended, ended - started)
                clock.ended(gap_after(self.gap, ended - started, MAX_GAP))
        finally:
            clock.close()

    def at_least(self, gap: float) -> None:
        """The gap is `gap` or more from now on, the one after the last request too, on the
        cache's clock as well (as the crawl's Pacing does with Crawl-delay)."""
        if gap <= self.gap:
            return
        self.gap = gap
        if (left := self.due()) > 0:
            clock = Clock(self.cache_path, self.me, lease=LEASE)
            try:
                clock.longer(left)
            finally:
                clock.close()


def politeness(cache_path: Path, gap: float) -> Politeness:
    """The TURN of one look-up on `cache_path`, leaving `gap` seconds between requests."""
    return Politeness(cache_path, gap)


def _save_robots(cache_path: Path, site: str, status: int, text: str) -> None:
    """Keep robots.txt in an existing cache; nothing when it cannot be written (read-only,
    full: the next look-up reads it again)."""
    if not cache_path.exists():
        return
    try:
        db = cache.open_cache(cache_path)
    except (CacheError, sqlite3.Error, OSError):
        return
    try:
        cache.save_robots(db, site, status, text)
    except (CacheError, sqlite3.Error):
        pass
    finally:
        db.close()


def lookup(cache_path: Path, word: str, *, base_url: str, client: httpx.Client | None = None,
           refresh: bool = False, fetcher=fetch, limits: Limits = LIMITS,
           delay: float = DEFAULT_DELAY) -> dict:
    """The word's entries from the cache, fetched live (and stored) when absent or `refresh`.

    Returns {query, normalized, outcome, source: cache|live, entries}; raises FetchError
    when TDK cannot be asked or keeps answering badly (or the word is empty), CacheError
    when the cache cannot be read or written. The failure is recorded in an existing
    cache (its attempts count); a look-up that fails creates no cache file. `limits`
    bounds each reply (size, time, Retry-After, redirects: see `Limits`).
    """
    query, cache_path = _query(word), Path(cache_path)
    if not refresh:
        hit = _from_cache(cache_path, word)
        if hit is not None:
            return hit
    url = gts_url(base_url, query)
    row: dict[str, Any] = {"query": query, "url": url, "outcome": "failed"}
    turns = politeness(cache_path, delay)
    token = TURN.set(turns)
    own = client is None
    client = client or make_client()
    try:
        turns.at_least(_obey_robots(client, cache_path, base_url, url, row, limits))
        reply = fetcher(client, base_url, query, limits)
    except (httpx.HTTPError, TransientReply, BadReply) as e:
        response = getattr(e, "response", None)
        row.update(error=explain(e, url), attempts=_attempts(fetcher),
                   status=getattr(response, "status_code", None),
                   final=getattr(e, "final", False))
        raise FetchError(row["error"] + _record_failure(cache_path, row)) from None
    finally:
        TURN.reset(token)
        if own:
            client.close()
    c = reply.classified
    row.update(outcome=c.outcome, error=c.error, status=reply.status, body=reply.text or None,
               attempts=_attempts(fetcher), final=c.final)
    if c.outcome == "failed":  # final (403, 404…): recorded like any failure
        raise FetchError(f"{urlsplit(url).netloc}: {c.error}" + _record_failure(cache_path, row))
    with _cache_errors(cache_path):
        db, stored = _store(cache_path, row, c.entries)
        try:
            if stored != c.outcome:  # refused by the store: an entry another word owns
                why = (cache.get_reply(db, query) or {}).get("error")
                raise FetchError(f"{urlsplit(url).netloc}: {why}")
            entries = cache.entries_for_word(db, normalize(word)) or c.entries
        finally:
            db.close()
    return {"query": query, "normalized": normalize(word), "outcome": c.outcome,
            "source": "live", "entries": entries}


def _obey_robots(client, cache_path: Path, base_url: str, url: str, row: dict,
                 limits: Limits) -> float:
    """robots.txt's Crawl-delay for us (0.0: none); FetchError, recorded, when robots.txt
    disallows `url` or cannot be read (RFC 9309: then everything is disallowed).
    robots.txt is read from the cache when under a day old, else fetched (and kept)."""
    from protego import Protego

    status, body = _robots(client, cache_path, base_url, limits)
    site = urlsplit(base_url).netloc
    if robots_unreadable(status):
        raise FetchError(f"could not read {site}/robots.txt (HTTP {status}): without it "
                         "nothing may be fetched (RFC 9309); try again later")
    if 400 <= status < 500:
        return 0.0  # no robots.txt: no rules
    rules = Protego.parse(body)
    if not rules.can_fetch(url, ROBOTS_AGENT):
        path = url.split(site, 1)[-1]
        row.update(outcome="disallowed", attempts=0,
                   error=f"robots.txt disallows {path}: not asked (asked once allowed)")
        raise FetchError(f"{site}'s robots.txt disallows {path}: kelime does not ask it"
                         + _record_failure(cache_path, row))
    return float(rules.crawl_delay(ROBOTS_AGENT) or 0.0)


def _robots(client, cache_path: Path, base_url: str, limits: Limits) -> tuple[int, str]:
    """(status, text) of the site's robots.txt (at its root), from the cache when fresh."""
    parts = urlsplit(base_url)
    site = f"{parts.scheme}://{parts.netloc}"
    kept = _kept_robots(cache_path, site)
    if kept is not None:
        return kept
    url = f"{site}/robots.txt"
    try:
        response, body = get(client, url, limits)
    except (httpx.HTTPError, BadReply) as e:
        raise FetchError(f"could not read {url} ({explain(e, url)}): without it nothing may "
                         "be fetched (RFC 9309); try again later") from None
    text = body.decode("utf-8", errors="replace")
    if not robots_unreadable(response.status_code):
        _save_robots(cache_path, site, response.status_code, text)
    return response.status_code, text


def _kept_robots(cache_path: Path, site: str) -> tuple[int, str] | None:
    if not cache_path.exists():
        return None
    try:
        db = cache.open_readonly(cache_path)
    except CacheError:
        return None
    try:
        row = cache.get_robots(db, site)
    finally:
        db.close()
    if row is None:
        return None
    age = datetime.now().astimezone() - datetime.fromisoformat(row["fetched_at"])
    return (row["status"], row["body"] or "") if age.total_seconds() < ROBOTS_FRESH else None


def _query(word: str) -> str:
    """The query for `word`; an empty one is refused (it would cache not_found under '')."""
    query = query_for(word)
    if not query:
        raise FetchError(f"nothing to look up: the word {word!r} is empty once trimmed; "
                         "give a word, e.g. `kelime define kitap`")
    return query


def _from_cache(cache_path: Path, word: str) -> dict | None:
    with _cache_errors(cache_path):
        if not cache_path.exists():
            return None
        db = cache.open_readonly(cache_path)
        try:
            return cached(db, word)
        finally:
            db.close()


def _record_failure(cache_path: Path, row: dict) -> str:
    """Record a failed look-up in an existing cache; '' or why it could not be recorded
    (the look-up's own error stays the one reported)."""
    try:
        with _cache_errors(cache_path):
            if cache_path.exists():
                _store(cache_path, row, [])[0].close()
    except CacheError as e:
        return f" (and the failure was not recorded: {e})"
    return ""


@contextmanager
def _cache_errors(cache_path: Path):
    """SQLite and OS errors the store lets through (a path too long, a disk gone) as
    CacheError: the CLI prints one ``Error: …`` line instead of a traceback."""
    try:
        yield
    except KelimeError:
        raise
    except (sqlite3.Error, OSError) as e:
        why = getattr(e, "strerror", None) or str(e) or type(e).__name__
        raise CacheError(f"cannot use cache {cache_path}: {why}; check --cache (the path, "
                         "its folder's permissions, free disk space)") from None


def _store(cache_path: Path, row: dict, entries: list[dict]) -> tuple[Any, str]:
    """Save the reply, creating the cache if need be; the open cache and the outcome as
    stored (``failed`` for a good reply the store refused: `store.owned_elsewhere`). A
    cache this call created and could not fill is removed: an empty file would read as
    "not a kelime cache" on every later look-up, even once the disk has room again."""
    created = not cache_path.exists()
    db = None
    try:
        db = cache.open_cache(cache_path, create=True)
        stored = cache.save_reply(db, row, entries)
    except BaseException:
        if db is not None:
            db.close()
        if created:
            for leftover in ("", "-wal", "-shm", "-journal"):
                Path(f"{cache_path}{leftover}").unlink(missing_ok=True)
        raise
    return db, stored


def _attempts(fetcher) -> int:
    return getattr(fetcher, "statistics", {}).get("attempt_number", 1)
