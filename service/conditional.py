"""HEAD on every GET route, and 304 for every GET whose ETag the client already has.

One pure-ASGI middleware, so that no route has to remember either: a HEAD is answered as
the GET would be, without its body (same status, same headers, Content-Length included);
a GET (or HEAD) whose reply carries an ETag named by the request's If-None-Match becomes
a 304 with the ETag and caching headers and no body (RFC 9110 §13.1.2, §15.4.5).

Replies are never compressed here: on loopback or a LAN compressing costs more than it
saves (benchmarks/compression.py), so a replica sends them as they are and nginx gzips at
the edge (deploy/nginx/kelime.conf), where the clients it pays for come in. nginx's gzip
turns a strong ETag weak (W/"…"); `responses.matches` takes either.
"""

from __future__ import annotations

from .responses import matches

#: The headers a 304 keeps (RFC 9110 §15.4.5).
KEPT = {b"etag", b"cache-control", b"vary", b"content-location", b"expires", b"date"}


def wants_gzip(headers: list) -> bool:
    """Whether the request's Accept-Encoding names gzip, without `q=0` (RFC 9110 §12.5.3):
    the lexicon's word list is also kept gzipped, made once (routes/catalog.py).

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
