"""Network failures in words a maintainer can act on (Scrapy/Twisted side).

`failure_kind(exc)` sorts an exception into tls | refused | dns | timeout | closed | other
by walking its causes (Twisted wraps the real reason in `reasons` lists);
`describe(kind, exc, url)` turns it into a sentence with the next step.
"""

from __future__ import annotations

from urllib.parse import urlsplit

RETRYABLE = frozenset({"timeout", "closed", "other"})   # worth another try after a pause
BREAKER = frozenset({"tls", "refused", "dns"})          # deterministic: count toward stopping


def _causes(exc: BaseException, depth: int = 0):
    if exc is None or depth > 6:
        return
    yield exc
    for reason in getattr(exc, "reasons", None) or []:
        yield from _causes(getattr(reason, "value", reason), depth + 1)
    yield from _causes(exc.__cause__ or exc.__context__, depth + 1)


def failure_kind(exc: BaseException) -> str:
    for cause in _causes(exc):
        name = f"{type(cause).__module__}.{type(cause).__name__}".lower()
        text = str(cause).lower()
        if "ssl" in name or "tls" in name or "handshake" in text or "ssl" in text:
            return "tls"
        if "refused" in name or "refused" in text:
            return "refused"
        if "dns" in name or "resolve" in name or "resolve" in text:
            return "dns"
        if "timeout" in name or "took longer than" in text or "timed out" in text:
            return "timeout"
    for cause in _causes(exc):
        name = type(cause).__name__.lower()
        if any(k in name for k in ("connectionlost", "connectiondone", "responsenever",
                                   "responsefailed", "dataloss", "remotedisconnected")):
            return "closed"
    return "other"


def reason_text(exc: BaseException, kind: str) -> str:
    """The innermost cause's message, without Twisted's Failure wrappers."""
    causes = [c for c in _causes(exc) if not getattr(c, "reasons", None)] or [exc]
    cause = next((c for c in causes if kind == "tls" and "ssl" in type(c).__module__.lower()),
                 causes[-1])
    args = cause.args[0] if cause.args else None
    if isinstance(args, list) and args and isinstance(args[0], tuple):  # OpenSSL.SSL.Error
        return "; ".join(str(t[-1]) for t in args if t and t[-1])
    return str(cause) or type(cause).__name__


def describe(kind: str, exc: BaseException, url: str) -> str:
    host = urlsplit(url).netloc
    exc = reason_text(exc, kind)
    return {
        "tls": f"TLS handshake with {host} failed ({exc}). The server may reject this "
               "client's cipher list: try --ciphers ECDHE-RSA-AES256-GCM-SHA384, or check "
               "that --base-url speaks HTTPS.",
        "refused": f"{host} refused the connection: is --base-url right and the site up?",
        "dns": f"cannot resolve {host}: check --base-url and this machine's network/DNS.",
        "timeout": f"{host} did not answer in time ({exc}); it may be slow or pacing us. "
                   "Retried with backoff; raise -s DOWNLOAD_TIMEOUT=60 or --delay if it persists.",
        "closed": f"{host} closed the connection without a reply ({exc}). TDK does this to "
                  "user agents it blocks (e.g. ones containing 'Python') and under load: "
                  "check --user-agent and slow down with --delay.",
    }.get(kind, f"request to {host} failed: {type(exc).__name__}: {exc}")
