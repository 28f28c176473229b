"""POST /v1/validate and POST /v1/anagram ahead of the FastAPI stack: the service's hot
paths as plain ASGI.

An 8-word validation spent ~50 µs of CPU in the app, of which the memo lookup took ~3:
the rest went to a dozen layers of middleware (FastAPI's telemetry and body-limit checks,
exception handling, metrics, conditional requests), routing, and Request and
Response objects (py-spy and cProfile; benchmarks/serving.py). `FastValidate` answers the
usual request itself, before any of them: a JSON body in one piece, no query string, no
Origin header when CORS is on. It reads the body, asks `parse_body`, the game and the
memo as the route does (routes/validate.py), and sends the very reply the stack would:
the same headers, with `Vary: Origin` when CORS is on (as Starlette's CORS middleware adds
it), counted in the same metrics and access log.

Anything else goes to the whole app (`App.stack`), with the body already read handed on:
another Content-Type or a body in several pieces (the stack's limits and budget apply),
a Content-Encoding (refused there), a query string, `"suggest": true`, and every refusal
(bad JSON, too many words, an unknown game or lexicon...). An error is thus answered by
the one handler, in its one shape, with its headers; the stack parses the body again,
which costs only the refused.

`FastAnagram` does the same for POST /v1/anagram, when the reply is quick to make
(`Lexicon.anagram_quick`: a plain rack, up to 1,000 words) and the searches' gate has a
free turn right now (`Gate.now`): the route's own quick path ran the search on the event
loop too, but only after ~0.5 ms of stack around it. Otherwise the stack answers, and
waits its turn there.

tests/test_service_fast.py and tests/test_service_fast_anagram.py hold both answers equal,
byte for byte, header for header.
"""

from __future__ import annotations

from collections.abc import Mapping
from time import perf_counter
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from anyio import WouldBlock
from fastapi import FastAPI
from starlette.datastructures import MutableHeaders

from kelime.lexicon.verdicts import validate_json

from .metrics import log_line
from .parse import parse_body
from .routes import anagram, validate
from .trust import Trust

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from .metrics import Metrics
    from .settings import Settings

#: The Content-Types the fast path takes (lower-cased); `body.check_json_type` judges others.
JSON_TYPES = frozenset({b"application/json", b"application/json; charset=utf-8",
                        b"application/json;charset=utf-8"})
#: The reply's headers before its length, as Starlette's Response orders them.
TYPE_HEADER = (b"content-type", b"application/json")


class App(FastAPI):
    """FastAPI, with the usual POSTs of a few paths answered ahead of its stack (`fast`), and
    each client as `trust.Trust` says."""

    fast: Mapping[str, FastRoute] = MappingProxyType({})

    def __init__(self, proxies: list[str], **options: Any) -> None:
        super().__init__(**options)
        self.entry, self.proxied = Trust(self.dispatch, proxies), bool(proxies)

    def serve_fast(self, *routes: FastRoute) -> None:
        """Answer these routes' usual requests ahead of the stack."""
        self.fast = {route.path: route for route in routes}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.proxied or scope.get("client") is None:  # the balancer's socket, or a proxy
            await self.entry(scope, receive, send)       # on TCP: who the client is, first
        else:
            await self.dispatch(scope, receive, send)

    async def dispatch(self, scope: Scope, receive: Receive, send: Send) -> None:
        fast = self.fast.get(scope["path"]) if scope["type"] == "http" else None
        if fast is not None and scope["method"] == "POST":
            await fast(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)

    async def stack(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The whole app: FastAPI's middleware, kelime's, the routes (what `fast` hands on
        to)."""
        await super().__call__(scope, receive, send)


class FastRoute:
    """The usual POST to `path`, answered as the stack `full` would answer it: a subclass
    says what (`answer`), this says when and sends it (headers, CORS, metrics, log)."""

    path = ""

    def __init__(self, app: FastAPI, full: ASGIApp, settings: Settings, metrics: Metrics,
                 cors: bool) -> None:
        self.state, self.full, self.metrics, self.cors = app.state, full, metrics, cors
        self.limit = self.body_limit(settings)
        self.access_log = settings.access_log == "json"

    def body_limit(self, settings: Settings) -> int:
        """The largest body the route reads."""
        raise NotImplementedError

    def answer(self, scope: Scope, body: bytes) -> bytes | None:
        """The reply's body, counted; None when the stack must answer."""
        raise NotImplementedError

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        start = perf_counter()
        if not self.plain(scope):
            await self.full(scope, receive, send)
            return
        message = await receive()
        body = None
        if message["type"] == "http.request" and not message.get("more_body", False):
            asked = message.get("body", b"")
            body = self.answer(scope, asked) if len(asked) <= self.limit else None
        if body is None:
            await self.full(scope, replay(message, receive), send)
            return
        headers = [(b"content-length", b"%d" % len(body)), TYPE_HEADER]
        if self.cors:  # no Origin: the CORS middleware only says the reply varies by it
            MutableHeaders(raw=headers)["Vary"] = "Origin"
        status = 500
        try:
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            status = 200
            await send({"type": "http.response.body", "body": body})
        finally:
            seconds = perf_counter() - start
            self.metrics.observe("POST", self.path, status, seconds)
            if self.access_log:
                log_line(scope, self.path, status, seconds)

    def plain(self, scope: Scope) -> bool:
        """Whether the fast path may answer the request (else the stack does)."""
        if scope["query_string"] or scope.get("root_path"):
            return False
        for name, value in scope["headers"]:
            if name == b"content-type":
                if value.lower() not in JSON_TYPES:
                    return False
            elif name == b"content-length":
                if not value.isdigit() or int(value) > self.limit:
                    return False
            elif name == b"origin" and self.cors or name == b"content-encoding":
                return False  # CORS, a compressed body: the stack's
        return True


class FastValidate(FastRoute):
    """The usual POST /v1/validate (routes/validate.py)."""

    path = validate.PATH

    def body_limit(self, settings: Settings) -> int:
        return settings.max_body_bytes

    def answer(self, scope: Scope, body: bytes) -> bytes | None:
        """None when the question is refused, or asks for suggestions."""
        try:
            kelime = self.state.kelime
            ask = parse_body(body, kelime.settings)
            if ask.suggest:
                return None
            lex, game = kelime.played(ask.lexicon, ask.game)
            reply, tally = validate_json(lex, ask.words, game.min_length)
        except Exception:  # noqa: BLE001 - the stack answers it again, in the error shape
            return None
        kelime.metrics.count_tally(lex.name, tally)
        return reply


class FastAnagram(FastRoute):
    """The usual POST /v1/anagram (routes/anagram.py), when its reply is quick to make
    (`Lexicon.anagram_quick`) and no other search runs or waits: it is made on the event
    loop in a turn of the searches' gate taken at once (`Gate.now`), as the route's own
    quick path would. Any other question (refused, slow, or a busy gate) is the stack's."""

    path = anagram.ANAGRAM

    def body_limit(self, settings: Settings) -> int:
        return settings.search_body_bytes

    def answer(self, scope: Scope, body: bytes) -> bytes | None:
        """None when the question is refused, not quick, or must wait for its turn."""
        kelime = self.state.kelime
        try:
            lex, game, query = anagram.anagram_question(kelime, body)
            if not lex.anagram_quick(query, game):
                return None
        except Exception:  # noqa: BLE001 - the stack answers it again, in the error shape
            return None
        work = anagram.counted(kelime, scope, "anagram", lex,
                               lambda: lex.anagram_json(query, game))
        try:
            return anagram.searches(self.state).now(work)
        except WouldBlock:  # another search runs or waits: the stack's queue
            return None
        except Exception:  # noqa: BLE001 - uncounted (see `counted`): the stack's error
            return None


def replay(first: Message, receive: Receive) -> Receive:
    """`receive`, giving `first` (already received) once before the rest."""
    pending: list[Any] = [first]

    async def again() -> Message:
        return pending.pop() if pending else await receive()

    return again
