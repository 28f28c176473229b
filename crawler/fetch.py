"""Single look-ups for `kelime define`: httpx + tenacity, same headers and classification
as the crawl, the reply stored in the cache.

Retry policy is data, the crawl's own (`crawler.failures.RETRY`): `fetch` retries transient
replies (429/503/HTML/broken JSON…), timeouts and dropped connections with exponential
backoff (at least Retry-After), four tries in all, and re-raises the last error (never a
bare RetryError). Tests call ``fetch.retry_with(wait=wait_none())`` instead of sleeping.
Imports no Scrapy: `kelime define` stays quick to start.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from tenacity import retry, retry_if_exception, stop_after_attempt

from kelime.errors import FetchError
from kelime.normalize import normalize
from kelime.tdk import store as cache
from kelime.tdk.replies import Classified, classify, gts_url, query_for

from .failures import RETRY, RETRYABLE, describe, failure_kind, retry_after
from .settings import USER_AGENT


class TransientReply(Exception):
    """TDK answered, but with something worth asking again for (429, 503, HTML, …)."""

    def __init__(self, response: httpx.Response, classified: Classified):
        super().__init__(classified.error)
        self.response, self.classified = response, classified
        self.retry_after = retry_after(response.headers.get("Retry-After"))


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
def fetch(client: httpx.Client, base_url: str, query: str) -> tuple[httpx.Response, Classified]:
    """GET /gts?ara=<query> and classify the body; transient answers raise TransientReply."""
    response = client.get(gts_url(base_url, query))
    classified = classify(response.status_code, response.content)
    if classified.transient:
        raise TransientReply(response, classified)
    return response, classified


def make_client(user_agent: str = USER_AGENT, ciphers: str | None = None,
                timeout: float = 30.0) -> httpx.Client:
    """An httpx client with the crawl's headers and, optionally, a custom TLS cipher list."""
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
                        timeout=timeout, verify=verify, follow_redirects=True)


def explain(exc: BaseException, url: str) -> str:
    """An httpx error (or a transient reply that never got better) as an actionable sentence."""
    if isinstance(exc, TransientReply):
        return (f"{urlsplit(url).netloc} kept answering badly: {exc.classified.error} "
                f"(HTTP {exc.response.status_code})")
    return describe(failure_kind(exc), exc, url)


def cached(db, word: str) -> dict | None:
    """The word's answer from an open cache, or None when it has no good reply for it."""
    query, norm = query_for(word), normalize(word)
    entries, reply = cache.entries_for_word(db, norm), cache.get_reply(db, query)
    if not entries and (reply is None or reply["outcome"] == "failed"):
        return None
    return {"query": query, "normalized": norm, "outcome": "ok" if entries else reply["outcome"],
            "source": "cache", "entries": entries}


def lookup(cache_path: Path, word: str, *, base_url: str, client: httpx.Client | None = None,
           refresh: bool = False, fetcher=fetch) -> dict:
    """The word's entries from the cache, fetched live (and stored) when absent or `refresh`.

    Returns {query, normalized, outcome, source: cache|live, entries}; raises FetchError
    when TDK cannot be asked or keeps answering badly. The failure is recorded in an
    existing cache (its attempts count); a look-up that fails creates no cache file.
    """
    cache_path = Path(cache_path)
    if cache_path.exists() and not refresh:
        db = cache.open_readonly(cache_path)
        try:
            hit = cached(db, word)
        finally:
            db.close()
        if hit is not None:
            return hit
    query = query_for(word)
    url = gts_url(base_url, query)
    row = {"query": query, "url": url, "outcome": "failed"}
    try:
        response, c = _ask(client, fetcher, base_url, query)
    except (httpx.HTTPError, TransientReply) as e:
        response = getattr(e, "response", None)
        row.update(error=explain(e, url), attempts=_attempts(fetcher),
                   status=getattr(response, "status_code", None))
        if cache_path.exists():
            _store(cache_path, row, []).close()
        raise FetchError(row["error"]) from None
    row.update(outcome=c.outcome, error=c.error, status=response.status_code,
               body=response.text or None, attempts=_attempts(fetcher))
    db = _store(cache_path, row, c.entries)
    try:
        if c.outcome == "failed":
            raise FetchError(f"{urlsplit(url).netloc}: {c.error}")
        return {"query": query, "normalized": normalize(word), "outcome": c.outcome,
                "source": "live", "entries": cache.entries_for_word(db, normalize(word))
                or c.entries}
    finally:
        db.close()


def _ask(client, fetcher, base_url: str, query: str):
    if client is not None:
        return fetcher(client, base_url, query)
    with make_client() as own:
        return fetcher(own, base_url, query)


def _store(cache_path: Path, row: dict, entries: list[dict]):
    db = cache.open_cache(cache_path, create=True)
    cache.save_reply(db, row, entries)
    return db


def _attempts(fetcher) -> int:
    return getattr(fetcher, "statistics", {}).get("attempt_number", 1)
