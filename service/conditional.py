"""HEAD on every GET route, and 304 for every GET whose ETag the client already has.

One pure-ASGI middleware, so that no route has to remember either: a HEAD is answered as
the GET would be, without its body (same status, same headers, Content-Length included);
a GET (or HEAD) whose reply carries an ETag named by the request's If-None-Match becomes
a 304 with the ETag and caching headers and no body (RFC 9110 §13.1.2, §15.4.5).
"""

from __future__ import annotations

from .responses import matches

#: The headers a 304 keeps (RFC 9110 §15.4.5).
KEPT = {b"etag", b"cache-control", b"vary", b"content-location", b"expires", b"date"}


def weakened(headers: list) -> list:
    """The headers with a strong ETag made weak (the body was compressed on the way out)."""
    return [(k, b"W/" + v if k == b"etag" and not v.startswith(b"W/") else v)
            for k, v in headers]


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
                if any(k == b"content-encoding" for k, _ in headers):
                    headers = weakened(headers)  # a strong ETag names one representation
                    message = {**message, "headers": headers}
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
