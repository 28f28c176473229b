"""HEAD on every GET route, 304 for every GET whose ETag the client already has, and gzip.

One pure-ASGI middleware, so that no route has to remember either: a HEAD is answered as
the GET would be, without its body (same status, same headers, Content-Length included);
a GET (or HEAD) whose reply carries an ETag named by the request's If-None-Match becomes
a 304 with the ETag and caching headers and no body (RFC 9110 §13.1.2, §15.4.5).
"""

from __future__ import annotations

import zlib

from .responses import matches

#: The headers a 304 keeps (RFC 9110 §15.4.5).
KEPT = {b"etag", b"cache-control", b"vary", b"content-location", b"expires", b"date"}


def weakened(headers: list) -> list:
    """The headers with a strong ETag made weak (the body was compressed on the way out)."""
    return [(k, b"W/" + v if k == b"etag" and not v.startswith(b"W/") else v)
            for k, v in headers]


#: zlib's level 1, as nginx's gzip_comp_level default: a 70 KB reply of 1,000 verdicts
#: packs to 10.2 KB in 0.15 ms; level 9 (Starlette's GZipMiddleware) to 9.2 KB in 4 ms.
LEVEL = 1


def wants_gzip(headers: list) -> bool:
    """Whether the request's Accept-Encoding names gzip, without `q=0` (RFC 9110 §12.5.3).

    >>> wants_gzip([(b"accept-encoding", b"br, gzip;q=0.5")])
    True
    >>> wants_gzip([(b"accept-encoding", b"gzip;q=0")])
    False
    """
    for name, value in headers:
        if name == b"accept-encoding" and b"gzip" in (value := value.lower()):
            for part in value.split(b","):
                coding, _, params = part.partition(b";")
                if coding.strip() in (b"gzip", b"x-gzip"):
                    q = params.replace(b" ", b"").partition(b"q=")[2]
                    try:
                        return not q or float(q) > 0
                    except ValueError:
                        return False  # a weight that is no number: not a clear yes
    return False


class Compress:
    """gzip for replies of `minimum_size` bytes or more when the client takes it. A strong
    ETag turns weak when the body is compressed (a strong ETag names one representation);
    replies a route encoded itself pass untouched. Whole bodies (every JSON reply) are
    compressed in one call, streamed ones (static files) chunk by chunk.

    Written here rather than Starlette's GZipMiddleware, measured by benchmarks/options.py:
    that one cost a small reply ~20 µs (a third of an 8-word validation) only for being
    asked, and compressed at level 9."""

    def __init__(self, app, minimum_size: int) -> None:
        self.app, self.minimum_size = app, minimum_size

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or not wants_gzip(scope["headers"]):
            await self.app(scope, receive, send)  # nothing to compress for
            return
        held: list = []  # the response start, until the first body says whether to compress
        packer: list = []

        async def out(message) -> None:
            kind = message["type"]
            if kind == "http.response.start":
                if any(k == b"content-encoding" for k, _ in message["headers"]):
                    await send(message)  # the route encoded it (a lexicon's download)
                else:
                    held.append(message)
                return
            if kind != "http.response.body" or not held:
                if packer and kind == "http.response.body":
                    message = _packed(packer[0], message)
                await send(message)
                return
            start, body, more = held.pop(), message.get("body", b""), message.get("more_body")
            if len(body) < self.minimum_size and not more or _event_stream(start):
                await send(start)
                await send(message)
                return
            if not more:  # a whole body (every JSON reply): one call
                headers, body = gzipped(start["headers"], body)
                await send({**start, "headers": headers})
                await send({"type": "http.response.body", "body": body, "more_body": False})
                return
            packer.append(zlib.compressobj(LEVEL, zlib.DEFLATED, 31))
            await send({**start, "headers": _gzip_headers(start["headers"], None)})
            await send(_packed(packer[0], message))

        await self.app(scope, receive, out)


def gzipped(headers: list[tuple[bytes, bytes]], body: bytes
            ) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """A whole reply's headers and body, gzipped as `Compress` sends them (the validate
    fast path, service/fast.py, sends its replies this way too)."""
    packer = zlib.compressobj(LEVEL, zlib.DEFLATED, 31)
    data = packer.compress(body) + packer.flush()
    return _gzip_headers(headers, data), data


def _packed(packer, message: dict) -> dict:
    more = message.get("more_body", False)
    data = packer.compress(message.get("body", b""))
    data += packer.flush() if not more else packer.flush(zlib.Z_SYNC_FLUSH)
    return {"type": "http.response.body", "body": data, "more_body": more}


def _event_stream(start: dict) -> bool:
    return any(k == b"content-type" and v.startswith(b"text/event-stream")
               for k, v in start["headers"])


def _gzip_headers(headers: list, body: bytes | None) -> list:
    """The start's headers for a gzipped body (`body` None: streamed, length unknown)."""
    kept = [(k, v) for k, v in weakened(headers) if k not in (b"content-length", b"vary")]
    vary = [v for k, v in headers if k == b"vary"]
    kept.append((b"vary", b", ".join([*vary, b"Accept-Encoding"]) if vary else
                 b"Accept-Encoding"))
    kept.append((b"content-encoding", b"gzip"))
    if body is not None:
        kept.append((b"content-length", str(len(body)).encode()))
    return kept


class Conditional:
    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        head = scope["method"] == "HEAD"
        if head:
            scope = {**scope, "method": "GET"}
        # every If-None-Match line counts: a field sent twice is one list (RFC 9110 §5.3)
        wanted = ", ".join(value.decode("latin-1") for name, value in scope["headers"]
                           if name == b"if-none-match") or None
        silent = [head]  # drop the body: a HEAD, or a reply turned into a 304

        async def reply(message) -> None:
            if message["type"] == "http.response.start":
                headers = message.get("headers", [])
                tag = next((v.decode("latin-1") for k, v in headers if k == b"etag"), None)
                if wanted and tag and message["status"] == 200 and matches(wanted, tag):
                    silent[0] = True
                    message = {**message, "status": 304, "headers": [
                        (k, v) for k, v in headers if k in KEPT
                        or k.startswith(b"access-control-")]}  # CORS: a browser checks a 304
                await send(message)
            elif message["type"] == "http.response.body" and silent[0]:
                if not message.get("more_body", False):
                    await send({"type": "http.response.body", "body": b""})
            else:
                await send(message)

        await self.app(scope, receive, reply)
