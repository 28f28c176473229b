"""HEAD on every GET route, 304 for every GET whose ETag the client already has, and gzip.

One pure-ASGI middleware, so that no route has to remember either: a HEAD is answered as
the GET would be, without its body (same status, same headers, Content-Length included);
a GET (or HEAD) whose reply carries an ETag named by the request's If-None-Match becomes
a 304 with the ETag and caching headers and no body (RFC 9110 §13.1.2, §15.4.5).
"""

from __future__ import annotations

from starlette.middleware.gzip import GZipMiddleware

from .responses import matches

#: The headers a 304 keeps (RFC 9110 §15.4.5).
KEPT = {b"etag", b"cache-control", b"vary", b"content-location", b"expires", b"date"}


def weakened(headers: list) -> list:
    """The headers with a strong ETag made weak (the body was compressed on the way out)."""
    return [(k, b"W/" + v if k == b"etag" and not v.startswith(b"W/") else v)
            for k, v in headers]


class Compress:
    """Starlette's gzip, which also makes a strong ETag weak when it compresses the body (a
    strong ETag names one representation). Replies a route encoded itself keep theirs."""

    def __init__(self, app, minimum_size: int) -> None:
        self.app = app
        self.gzip = GZipMiddleware(self._route, minimum_size=minimum_size)

    async def _route(self, scope, receive, send) -> None:
        async def noted(message) -> None:
            if message["type"] == "http.response.start":
                scope[_ENCODED] = any(k == b"content-encoding" for k, _ in message["headers"])
            await send(message)

        await self.app(scope, receive, noted)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or not any(k == b"accept-encoding" and b"gzip" in v
                                              for k, v in scope["headers"]):
            await self.app(scope, receive, send)  # nothing to compress for: ~10 µs saved
            return

        async def out(message) -> None:
            if message["type"] == "http.response.start" and not scope.get(_ENCODED) and \
                    any(k == b"content-encoding" for k, _ in message["headers"]):
                message = {**message, "headers": weakened(message["headers"])}
            await send(message)

        await self.gzip(scope, receive, out)


_ENCODED = "kelime.encoded"


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
        wanted = None
        for name, value in scope["headers"]:
            if name == b"if-none-match":
                wanted = value.decode("latin-1")
                break
        silent = [head]  # drop the body: a HEAD, or a reply turned into a 304

        async def reply(message) -> None:
            if message["type"] == "http.response.start":
                headers = message.get("headers", [])
                tag = next((v.decode("latin-1") for k, v in headers if k == b"etag"), None)
                if wanted and tag and message["status"] == 200 and matches(wanted, tag):
                    silent[0] = True
                    message = {**message, "status": 304,
                               "headers": [(k, v) for k, v in headers if k in KEPT]}
                await send(message)
            elif message["type"] == "http.response.body" and silent[0]:
                if not message.get("more_body", False):
                    await send({"type": "http.response.body", "body": b""})
            else:
                await send(message)

        await self.app(scope, receive, reply)
