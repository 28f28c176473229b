"""Reading a request body with a bound: refuse on Content-Length, and count while streaming.

A 20 MB body is refused after at most `limit` bytes were read, whether or not the
client announced its size (chunked uploads have no Content-Length). All the bodies a worker
is receiving at once share one budget (`max_buffered_bytes`): 100 uploads that stall just
short of 4 MiB each used to hold 400 MB until they timed out; past the budget a request is
refused with 503 and Retry-After, and the memory stays bounded. A body that takes longer
than `body_timeout` seconds to arrive is refused with 408 (behind nginx, which reads whole
bodies before passing them on, only a client reaching the replica directly can be that slow).
"""

from __future__ import annotations

import anyio
from starlette.requests import ClientDisconnect, Request

from .errors import Invalid, ServiceError, TooLarge, Unavailable


class Budget:
    """Bytes of request bodies a worker holds while receiving them."""

    def __init__(self, most: int):
        self.most, self.used = most, 0

    def take(self, n: int) -> None:
        if self.used + n > self.most:
            raise Unavailable("busy", f"this server is receiving {self.used:,} bytes of other "
                              f"requests' bodies (its limit is {self.most:,}); try again in a "
                              "moment", headers={"Retry-After": "1"})
        self.used += n


def budget(request: Request) -> Budget:
    state = request.app.state
    if getattr(state, "body_budget", None) is None:
        state.body_budget = Budget(state.kelime.settings.max_buffered_bytes)
    return state.body_budget


def too_large(size: int, limit: int, declared: bool,
              advice: str = "send fewer words per request") -> TooLarge:
    said = (f"declares {size:,} bytes" if declared
            else f"is over the limit ({size:,} bytes received)")
    return TooLarge("body_too_large", f"the request body {said}; the limit is {limit:,} bytes: "
                    f"{advice}", {"size": size, "limit": limit})


def declared_length(request: Request) -> int | None:
    raw = request.headers.get("content-length")
    if raw is None:
        return None
    if not raw.isdigit():
        raise Invalid("invalid_request", f"Content-Length {raw!r} is not a number of bytes")
    return int(raw)


def check_json_type(request: Request, required: bool = False) -> None:
    """A 415 for a body that says it is not JSON. No Content-Type at all is taken as JSON,
    unless `required`: a route that writes asks for it, because a browser sends a body
    without one from any web site, with no CORS preflight."""
    raw = request.headers.get("content-type")
    if raw is None and required:
        raise ServiceError("unsupported_media_type", "the body has no Content-Type: send it "
                          "as JSON with `Content-Type: application/json` (curl: --json)",
                          {"content_type": None})
    if raw is None:
        return
    kind, _, params = raw.partition(";")
    kind = kind.strip().lower()
    charset = next((p.split("=", 1)[1].strip().strip('"').lower() for p in params.split(";")
                    if p.strip().lower().startswith("charset=")), "utf-8")
    if (kind == "application/json" or kind.endswith("+json")) and charset in ("utf-8", "utf8"):
        return
    raise ServiceError("unsupported_media_type", f"the body is sent as {raw[:60]!r}; send JSON "
                      "in UTF-8 with `Content-Type: application/json` (curl: -H "
                      "'Content-Type: application/json')", {"content_type": raw[:60]})


def check_identity(request: Request) -> None:
    """A 415 for a compressed body (RFC 9110 §15.5.16): it was read as JSON and refused as
    "not valid UTF-8 (byte 0x8b)", which sends a client looking at its text, not its
    compression. Bodies are small (the limits) and sent uncompressed."""
    coding = ", ".join(request.headers.getlist("content-encoding"))
    if coding.strip().lower() not in ("", "identity"):
        raise ServiceError("unsupported_media_type", f"the body is sent compressed "
                           f"(Content-Encoding: {coding[:40]}); send the JSON uncompressed, "
                           "without a Content-Encoding header", {"content_encoding": coding[:40]})


def timed_out(seconds: float, size: int) -> ServiceError:
    return ServiceError("request_timeout", f"the body did not arrive within {seconds:g} s "
                        f"({size:,} bytes came): send it at once",
                        headers={"Connection": "close"})


async def read_body(request: Request, limit: int, *, json_type_required: bool = False,
                    advice: str = "send fewer words per request") -> bytes:
    """The whole body (JSON by its Content-Type), or TooLarge as soon as it is known to
    exceed `limit` bytes. A refusal before the body has all come closes the connection
    after it (uvicorn would otherwise keep reading a body nobody waits for)."""
    try:
        return await receive_body(request, limit, json_type_required, advice)
    except ServiceError as e:
        e.headers = {**(e.headers or {}), "Connection": "close"}
        raise


async def receive_body(request: Request, limit: int, json_type_required: bool,
                       advice: str) -> bytes:
    check_json_type(request, json_type_required)
    check_identity(request)
    declared = declared_length(request)
    if declared is not None and declared > limit:
        raise too_large(declared, limit, declared=True, advice=advice)
    chunks, size, held, budget_ = [], 0, 0, budget(request)
    seconds = request.app.state.kelime.settings.body_timeout
    try:
        with anyio.fail_after(seconds):
            while True:
                message = await request.receive()
                if message["type"] == "http.disconnect":
                    raise ClientDisconnect()
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    raise too_large(size, limit, declared=False, advice=advice)
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
                budget_.take(len(chunk))  # a body still arriving: count what it holds
                held += len(chunk)
    except TimeoutError:
        raise timed_out(seconds, size) from None
    finally:
        budget_.used -= held
