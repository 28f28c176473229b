"""Single look-ups for `kelime define`: httpx + tenacity, same headers and classification
as the crawl, the reply stored in the cache.

Retry policy is data: `fetch` retries transient replies (429/503/HTML/broken JSON…),
timeouts and dropped connections with exponential backoff (at least Retry-After), four
tries in all, and re-raises the last error (never a bare RetryError). Tests call
``fetch.retry_with(wait=wait_none())`` instead of sleeping.
"""

from __future__ import annotations

import ssl
from urllib.parse import urlsplit

import httpx
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_random_exponential

from kelime import cache
from kelime.normalize import normalize

from .classify import Classified, classify, gts_url, query_for
from .middlewares import retry_after
from .settings import USER_AGENT

_expo = wait_random_exponential(multiplier=1, max=60)


class TransientReply(Exception):
    """TDK answered, but with something worth asking again for (429, 503, HTML, …)."""

    def __init__(self, response: httpx.Response, classified: Classified):
        super().__init__(classified.error)
        self.response, self.classified = response, classified
        self.retry_after = retry_after(response.headers.get("Retry-After"))


class FetchError(Exception):
    """A look-up that failed for good, in words the user can act on."""


def _wait(retry_state) -> float:
    """Exponential backoff with jitter, but never less than the server's Retry-After."""
    exc = retry_state.outcome.exception()
    return max(_expo(retry_state), getattr(exc, "retry_after", 0.0))


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, TransientReply):
        return True
    if isinstance(exc, httpx.ConnectError):
        return False  # refused, DNS, TLS: asking again will not help
    return isinstance(exc, (httpx.TimeoutException, httpx.RemoteProtocolError,
                            httpx.ReadError, httpx.WriteError))


@retry(stop=stop_after_attempt(4), wait=_wait, retry=retry_if_exception(_retryable),
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
    host = urlsplit(url).netloc
    if isinstance(exc, TransientReply):
        return f"{host} kept answering badly: {exc.classified.error} (HTTP {exc.response.status_code})"
    text = str(exc)
    if isinstance(exc, httpx.ConnectError) and ("SSL" in text or "TLS" in text):
        return (f"TLS handshake with {host} failed ({text}): try --ciphers "
                "ECDHE-RSA-AES256-GCM-SHA384, or check that --base-url speaks HTTPS")
    if isinstance(exc, httpx.ConnectError):
        return f"cannot connect to {host} ({text}): check --base-url and the network"
    if isinstance(exc, httpx.TimeoutException):
        return f"{host} did not answer in time ({type(exc).__name__}); try again later"
    if isinstance(exc, httpx.RemoteProtocolError):
        return (f"{host} closed the connection without a reply ({text}); TDK does this to "
                "user agents it blocks: check --user-agent")
    return f"request to {host} failed: {type(exc).__name__}: {text}"


def lookup(db, word: str, *, base_url: str, client: httpx.Client | None = None,
           refresh: bool = False, fetcher=fetch) -> dict:
    """The word's entries from the cache, fetched live (and stored) when absent or `refresh`.

    Returns {query, normalized, outcome, source: cache|live, entries}; raises FetchError
    (after storing the failure) when TDK cannot be asked or keeps answering badly.
    """
    query, norm = query_for(word), normalize(word)
    entries, reply = cache.entries_for_word(db, norm), cache.get_reply(db, query)
    cached = reply is not None and reply["outcome"] != "failed"
    if (entries or cached) and not refresh:
        return {"query": query, "normalized": norm, "outcome": "ok" if entries else
                reply["outcome"], "source": "cache", "entries": entries}
    url = gts_url(base_url, query)
    own = client is None
    client = client or make_client()
    row = {"query": query, "url": url, "outcome": "failed"}
    try:
        response, c = fetcher(client, base_url, query)
    except (httpx.HTTPError, TransientReply) as e:
        response = getattr(e, "response", None)
        row.update(error=explain(e, url), attempts=_attempts(fetcher),
                   status=getattr(response, "status_code", None))
        cache.save_reply(db, row)
        raise FetchError(row["error"]) from None
    finally:
        if own:
            client.close()
    row.update(outcome=c.outcome, error=c.error, status=response.status_code,
               body=response.text or None, attempts=_attempts(fetcher))
    cache.save_reply(db, row, c.entries)
    if c.outcome == "failed":
        raise FetchError(f"{urlsplit(url).netloc}: {c.error}")
    return {"query": query, "normalized": norm, "outcome": c.outcome, "source": "live",
            "entries": cache.entries_for_word(db, norm) or c.entries}


def _attempts(fetcher) -> int:
    return getattr(fetcher, "statistics", {}).get("attempt_number", 1)
