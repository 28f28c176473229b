"""One vocabulary for network failures and one retry policy, shared by the Scrapy crawl and
`kelime define` (httpx). Nothing here imports Scrapy, Twisted or httpx.

`failure_kind(exc)` sorts an exception into certificate | tls | refused | dns | timeout |
closed | other
by walking its causes (Twisted wraps the real reason in `reasons` lists, httpx in
`__cause__`); `describe(kind, exc, url)` turns it into a sentence with the next step;
`RETRY` says how often and how long to wait before asking again.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

RETRYABLE = frozenset({"timeout", "closed", "other"})   # worth another try after a pause
BREAKER = frozenset({"certificate", "tls", "refused", "dns"})  # deterministic: stop soon
#: Stop at the first: a server whose certificate cannot be verified may be anyone.
AT_ONCE = frozenset({"certificate"})
#: The longest Retry-After believed (seconds): a longer ask (`1e400`, 400 nines, a date in
#: the year 9999) is read as a week. The crawl stops past KELIME_RETRY_AFTER_MAX, a look-up
#: past Limits.max_wait, each saying when to try again: a week at most.
RETRY_AFTER_CAP = 7 * 86_400.0

_DNS = ("resolve", "name or service not known", "nodename nor servname",
        "name resolution", "getaddrinfo")
_CLOSED = ("connectionlost", "connectiondone", "responsenever", "responsefailed", "dataloss",
           "remotedisconnected", "remoteprotocolerror", "readerror", "writeerror")


@dataclass(frozen=True)
class RetryPolicy:
    """Tries in all, and exponential backoff with jitter: base·2^(n-1), plus up to `jitter`
    of it, at most `cap` seconds; never less than what Retry-After asks."""

    tries: int = 4
    base: float = 2.0
    cap: float = 300.0
    jitter: float = 0.5

    def wait(self, attempt: int, retry_after: float = 0.0, rng=random.random) -> float:
        """Seconds to wait after failed try number `attempt` (1-based)."""
        delay = self.base * 2 ** (attempt - 1)
        return max(min(self.cap, delay * (1 + self.jitter * rng())), retry_after)


RETRY = RetryPolicy()


def retry_after(value: bytes | str | None, now: float | None = None) -> float:
    """Seconds asked by a Retry-After header (delta-seconds or HTTP-date), at most
    RETRY_AFTER_CAP; 0 when absent, bad, negative or past (never an exception, never
    infinite: `1e400` is a float overflow)."""
    if not value:
        return 0.0
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    try:
        seconds = float(text.strip())
    except ValueError:
        try:
            seconds = parsedate_to_datetime(text).timestamp() - (now or time.time())
        except (TypeError, ValueError, OverflowError, IndexError):
            return 0.0
    return min(seconds, RETRY_AFTER_CAP) if seconds > 0 and not math.isnan(seconds) else 0.0


def robots_unreadable(status: int) -> bool:
    """A robots.txt answer that means "everything disallowed" (RFC 9309): a 5xx, or a 429
    ("not now", not "no rules"). Any other 4xx means no rules."""
    return status == 429 or status >= 500


_PORTS = {"http": 80, "https": 443}


def same_host(url: str, base: str) -> bool:
    """Whether `url` is on `base`'s host (and port): where a redirect may lead. An upgrade
    from http to https on the same host is fine; the way back, or any other host, is not:
    only the configured site's answers are stored."""
    a, b = urlsplit(url), urlsplit(base)
    if a.hostname != b.hostname or a.scheme not in _PORTS:
        return False
    if (a.port or _PORTS[a.scheme]) == (b.port or _PORTS[b.scheme]):
        return not (a.scheme == "http" and b.scheme == "https")
    return a.port is None and b.port is None and (b.scheme, a.scheme) == ("http", "https")


def offsite_text(target: str, base: str) -> str:
    """A refused redirect, as a reason."""
    return (f"redirected to {target}, off {urlsplit(base).netloc}: not followed (only the "
            "configured site's answers are stored); check --base-url")


def _causes(exc: BaseException | None, depth: int = 0) -> Iterator[BaseException]:
    if exc is None or depth > 6:
        return
    yield exc
    for reason in getattr(exc, "reasons", None) or []:
        yield from _causes(getattr(reason, "value", reason), depth + 1)
    yield from _causes(exc.__cause__ or exc.__context__, depth + 1)


_CERTIFICATE = ("certificate verify failed", "verificationerror", "mismatch",
                "certificate_verify_failed", "self-signed", "self signed")


def failure_kind(exc: BaseException) -> str:
    """certificate | tls | refused | dns | timeout | closed | other."""
    for cause in _causes(exc):
        text = f"{type(cause).__name__} {cause!r} {cause}".lower()
        if any(k in text for k in _CERTIFICATE):
            return "certificate"
    for cause in _causes(exc):
        name = f"{type(cause).__module__}.{type(cause).__name__}".lower()
        text = str(cause).lower()
        if "ssl" in name or "tls" in name or "handshake" in text or "ssl" in text:
            return "tls"
        if "refused" in name or "refused" in text:
            return "refused"
        if "dns" in name or any(k in name or k in text for k in _DNS):
            return "dns"
        if "timeout" in name or "took longer than" in text or "timed out" in text:
            return "timeout"
    for cause in _causes(exc):
        if any(k in type(cause).__name__.lower() for k in _CLOSED):
            return "closed"
    return "other"


def reason_text(exc: BaseException, kind: str) -> str:
    """The innermost cause's message, without Twisted's Failure wrappers."""
    causes = [c for c in _causes(exc) if not getattr(c, "reasons", None)] or [exc]
    tls = kind in ("tls", "certificate")
    cause = next((c for c in causes if tls and "ssl" in type(c).__module__.lower()), causes[-1])
    args = cause.args[0] if cause.args else None
    if isinstance(args, list) and args and isinstance(args[0], tuple):  # OpenSSL.SSL.Error
        return "; ".join(str(t[-1]) for t in args if t and t[-1])
    return str(cause) or type(cause).__name__


def describe(kind: str, exc: BaseException, url: str) -> str:
    """A failure of `kind` as a sentence a maintainer can act on."""
    host = urlsplit(url).netloc
    why = reason_text(exc, kind)
    return {
        "certificate": f"the TLS certificate of {host} cannot be verified ({why}): a server "
                       "kelime cannot verify may be anyone, so nothing it sends is stored. If "
                       f"{host} is TDK behind a certificate authority this machine does not "
                       "trust, point SSL_CERT_FILE at that authority's certificate; otherwise "
                       "check --base-url and the network (someone may be in the middle).",
        "tls": f"TLS handshake with {host} failed ({why}). The server may reject this "
               "client's cipher list: try --ciphers ECDHE-RSA-AES256-GCM-SHA384, or check "
               "that --base-url speaks HTTPS.",
        "refused": f"{host} refused the connection: is --base-url right and the site up?",
        "dns": f"cannot resolve {host}: check --base-url and this machine's network/DNS.",
        "timeout": f"{host} did not answer in time ({why}); it may be slow or pacing us. "
                   "Retried with backoff; raise --delay (or the timeout) if it persists.",
        "closed": f"{host} closed the connection without a reply ({why}). TDK does this to "
                  "user agents it blocks (e.g. ones containing 'Python') and under load: "
                  "check --user-agent and slow down with --delay.",
    }.get(kind, f"request to {host} failed: {type(exc).__name__}: {why}")
