"""Errors: one table of the codes a client can get, and one handler that renders any error.

Every error reply has one shape, whatever raised it (a domain error, FastAPI's request
validation, Starlette's 404/405, or a bug)::

    {"error": {"code": "unknown_game", "message": "unknown game 'scrabble'; ...",
               "details": {"known": ["kelimelik", ...]}}}

`CODES` is the one list of codes: an error is raised by its code and gets its HTTP status
from there, and the OpenAPI schema's error responses and docs/api.md's table are made from
it (tests/test_service_errors.py holds them equal). `ServiceError` is a `KelimeError`, so
one tree holds every error; the core's errors that reach a client (a `QueryError` of an
anagram question, a lexicon without its anagram index) are rendered by their code through
the same table.
"""

from __future__ import annotations

from functools import singledispatch
from http import HTTPStatus
from typing import Any, ClassVar, NamedTuple

import orjson
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from kelime.errors import KelimeError, NoAnagramIndex, QueryError

from .responses import JSON


class Code(NamedTuple):
    status: int
    meaning: str


#: Every error code, its HTTP status, and what it means (one line, for the docs).
CODES: dict[str, Code] = {
    # 400 and 408: the connection itself
    "client_disconnected": Code(400, "The client closed the connection before its body came."),
    "request_timeout": Code(408, "The request's body did not arrive in time."),
    # 401, 403: the admin routes
    "unauthorized": Code(401, "An admin route without `Authorization: Bearer …`."),
    "forbidden": Code(403, "An admin route with the wrong token."),
    # 404, 405
    "not_found": Code(404, "No such route or file."),
    "unknown_lexicon": Code(404, "No such lexicon is loaded; `details.known` lists them."),
    "unknown_version": Code(404, "The lexicon is loaded, but not the version `name@version` "
                                 "names (no longer, or not yet, held); `details.held` lists "
                                 "the versions held, the current one first."),
    "unknown_game": Code(404, "No such game; `details.known` lists them."),
    "method_not_allowed": Code(405, "The path does not answer this method (`Allow` lists "
                                    "those it does)."),
    # 409: what this server has cannot answer the question together
    "game_not_for_lexicon": Code(409, "The game's tiles are not the lexicon's letters "
                                      "(`details.games` lists the games that fit)."),
    # 409: the admin reload
    "reload_refused": Code(409, "The data folder's builds cannot be served; the old ones "
                                "still are."),
    # 413: over a limit; `details` has the limit
    "body_too_large": Code(413, "The body is over its limit (bytes)."),
    "query_too_large": Code(413, "The query string is over GET's limit: POST big batches."),
    "too_many_words": Code(413, "More words than a request may carry."),
    "too_many_parameters": Code(413, "More query parameters than the route takes."),
    "word_too_long": Code(413, "A word over the characters a word may have."),
    "note_too_long": Code(413, "A report's note over its characters."),
    "over_limit": Code(413, "An anagram, split or moves question over a limit (tiles, blanks, "
                            "results, pattern squares, exclude words)."),
    "reports_full": Code(413, "The report store takes no more reports for now."),
    # 415
    "unsupported_media_type": Code(415, "The body is not sent as JSON (`Content-Type: "
                                        "application/json`), or is sent compressed "
                                        "(`Content-Encoding`)."),
    # 422: malformed input; the message says what to send
    "invalid_json": Code(422, "The body is empty or not JSON."),
    "invalid_encoding": Code(422, "The body, path or query is not UTF-8."),
    "invalid_request": Code(422, "A field or parameter that is missing, unknown or of the "
                                 "wrong type."),
    "invalid_rack": Code(422, "A rack that cannot be read as tiles."),
    "rack_not_dealt": Code(422, "A rack the game cannot deal (Kelimatik: 5 consonants, 3 "
                                "vowels, 1 two-letter tile, 1 joker; Harfbank: 14 or 15 tiles; "
                                "kelimelik: at most 7, and its bag's counts); `details` has the "
                                "`game`, the `rule` (`tiles`, `blanks`, `letter`, `vowels`, "
                                "`consonants`, `two_letter`), `least`, `most` and `found`. "
                                "`\"what_if\": true` asks anyway."),
    "invalid_pattern": Code(422, "A board pattern that cannot be read."),
    "invalid_board": Code(422, "A board that is not the game's (size × size cells, each \"\", "
                               "a letter of the game or `?` and a letter), or a game with "
                               "no board."),
    "invalid_tiles": Code(422, "Tiles that cannot be laid: off the board, on a taken square, "
                               "two on one square, not a letter of the game, more than a "
                               "rack holds."),
    "invalid_option": Code(422, "An anagram option of the wrong type or out of range."),
    "invalid_query": Code(422, "An anagram or split question that cannot be answered as "
                               "asked."),
    "not_a_word": Code(422, "A reported word that is not a single word of the lexicon's "
                            "letters."),
    # 429: `Retry-After` says when to try again
    "too_many_reports": Code(429, "More reports from this client than an hour allows."),
    "too_many_tries": Code(429, "Too many wrong admin tokens from this client."),
    # 500, 503
    "internal_error": Code(500, "A bug; it has been logged."),
    "not_ready": Code(503, "No lexicon is loaded yet: build one."),
    "default_lexicon_missing": Code(503, "The default lexicon is not loaded."),
    "busy": Code(503, "Busy (`Retry-After`): too many questions, bodies or connections "
                      "already waiting."),
    "no_anagram_index": Code(503, "The lexicon was built without the anagram index: "
                                  "rebuild it."),
    "cache_busy": Code(503, "The TDK cache is locked by another process."),
    "cache_unavailable": Code(503, "The TDK cache cannot be read."),
    "reports_unavailable": Code(503, "The report store cannot be written right now."),
    "page_missing": Code(503, "The page's files are missing from the installation."),
    # 504: the admin reload
    "reload_timeout": Code(504, "The server did not answer the reload in time."),
    "reload_incomplete": Code(504, "Not every worker serves the new builds yet."),
}


class ServiceError(KelimeError):
    """An error a client can act on: its `code` (a key of `CODES`) fixes the HTTP status.
    The subclasses below name a family (`except TooLarge`), and refuse a code of another
    status."""

    family: ClassVar[int | None] = None

    def __init__(self, code: str, message: str, details: Any = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        status = CODES[code].status
        if self.family not in (None, status):
            raise ValueError(f"{code!r} is a {status}, not a {type(self).__name__} "
                             f"({self.family})")
        self.code, self.message, self.details, self.headers = code, message, details, headers
        self.status = status


class Invalid(ServiceError):
    """Malformed input: 422."""

    family = 422


class TooLarge(ServiceError):
    """Over a limit: 413."""

    family = 413


class NotFound(ServiceError):
    family = 404


class Unavailable(ServiceError):
    """The service cannot answer yet (no lexicon, no cache, busy): 503."""

    family = 503


class TooMany(ServiceError):
    """A client over one of its limits (reports an hour, wrong admin tokens): 429, with
    Retry-After."""

    family = 429


def client_address(request: Request, unknown: str = "unknown") -> str:
    """The client's address: X-Forwarded-For's only when the request came through the
    balancer (`trust.py`), else the connection's peer."""
    client = request.scope.get("client")
    return client[0] if client else unknown


#: The error shape, as JSON Schema, and the errors any route can answer (OpenAPI), each
#: status listing its codes.
ERROR_SCHEMA = {"type": "object", "required": ["error"], "properties": {"error": {
    "type": "object", "required": ["code", "message"],
    "properties": {"code": {"type": "string", "enum": sorted(CODES),
                            "description": "What went wrong, one of the codes of docs/api.md "
                                           "(the status comes with it)."},
                   "message": {"type": "string"}, "details": {}}}}}


#: The error statuses any route can answer (the others are documented where they happen).
EVERY_ROUTE = (400, 404, 408, 413, 415, 422, 503)
#: What the HTTP server (uvicorn) answers itself, before the app, to a request it cannot
#: read: in plain text. Behind nginx the client gets nginx's JSON 400 or 414 instead.
UNREADABLE = ("; or, in plain text from the HTTP server itself, a request it cannot read (a "
              "request line over 65,535 bytes, a malformed header line): send well-formed "
              "HTTP/1.1, and POST big batches")


def _error_responses() -> dict[int | str, dict[str, Any]]:
    by_status: dict[int, list[str]] = {}
    for code, entry in CODES.items():
        by_status.setdefault(entry.status, []).append(f"`{code}`")
    out: dict[int | str, dict[str, Any]] = {status: {
        "description": f"{HTTPStatus(status).phrase}: {', '.join(codes)}.",
        "content": {JSON: {"schema": {"$ref": "#/components/schemas/Error"}}}}
        for status, codes in sorted(by_status.items()) if status in EVERY_ROUTE}
    out[400]["description"] = out[400]["description"].rstrip(".") + UNREADABLE + "."
    out[400]["content"]["text/plain"] = {"schema": {"type": "string"}}
    return out


ERROR_RESPONSES = _error_responses()


def codes_table() -> str:
    """The table of codes as Markdown (docs/api.md carries it; a test holds it equal)."""
    rows = [f"| `{code}` | {entry.status} | {entry.meaning} |"
            for code, entry in sorted(CODES.items(), key=lambda item: (item[1].status,
                                                                       item[0]))]
    return "\n".join(["| code | status | meaning |", "| --- | --- | --- |", *rows])


#: Every exception class that `handle_error` renders (registered once each in create_app).
HANDLED = (ServiceError, QueryError, NoAnagramIndex, HTTPException, RequestValidationError,
           ClientDisconnect, Exception)

_HTTP_CODES = {404: "not_found", 405: "method_not_allowed"}

Described = tuple[int, dict[str, Any], dict[str, str] | None]


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    error = {"code": code, "message": message}
    if details is not None:
        error["details"] = details
    return {"error": error}


def by_code(code: str, message: str, details: Any = None,
            headers: dict[str, str] | None = None) -> Described:
    """(status, body, headers) of an error with a code of `CODES`."""
    return CODES[code].status, error_body(code, message, details), headers


@singledispatch
def describe(exc: Exception, request: Request) -> Described:
    """(status, body, extra headers) for any exception: by its class, the nearest registered
    below; anything unexpected is a 500 that says nothing of the server's insides."""
    return by_code("internal_error", "unexpected server error; it has been logged")


@describe.register
def _(exc: ServiceError, request: Request) -> Described:
    return by_code(exc.code, exc.message, exc.details, exc.headers)


@describe.register
def _(exc: QueryError, request: Request) -> Described:
    """A rack, pattern or option the core refused: its code is in the table."""
    return by_code(exc.code, exc.message, exc.details)


@describe.register
def _(exc: NoAnagramIndex, request: Request) -> Described:
    return by_code("no_anagram_index", str(exc))


@describe.register
def _(exc: ClientDisconnect, request: Request) -> Described:
    return by_code("client_disconnected", "the client closed the connection")


@describe.register
def _(exc: RequestValidationError, request: Request) -> Described:
    """FastAPI's own validation (query parameters of its routes), summarised."""
    errors = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
              for e in exc.errors()]
    first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
    where = " ".join(str(part) for part in first["loc"])
    return by_code("invalid_request", f"{where}: {first['msg']}".strip(": "), errors)


@describe.register
def _(exc: HTTPException, request: Request) -> Described:
    """Starlette's own: 404 no route, 405 (with every method the path answers); any other
    is a bug (kelime raises `ServiceError`s): a 500, like any unexpected exception."""
    if exc.status_code not in _HTTP_CODES:
        return describe.dispatch(Exception)(exc, request)
    headers = dict(exc.headers) if exc.headers else None
    if exc.status_code == 405:
        headers = {**(headers or {}), "Allow": allowed_methods(request, exc)}
    return exc.status_code, _http(exc, request, headers), headers


def allowed_methods(request: Request, exc: HTTPException) -> str:
    """Every method the path answers (Starlette's Allow names only the first route's)."""
    table = getattr(request.app.state, "allow", {}) if "app" in request.scope else {}
    path = getattr(request.scope.get("route"), "path", None)
    return table.get(path) or (exc.headers or {}).get("Allow", "")


def _http(exc: HTTPException, request: Request, headers: dict[str, str] | None
          ) -> dict[str, Any]:
    path = request.url.path
    where = f"{request.method[:20]} {path if len(path) <= 80 else path[:80] + '…'}"
    if exc.status_code == 404:
        message = f"{where} matches no route; the API is listed at /docs"
    else:
        allowed = (headers or {}).get("Allow", "")
        message = f"{where}: method not allowed here (allowed: {allowed})"
    return error_body(_HTTP_CODES[exc.status_code], message)


async def handle_error(request: Request, exc: Exception) -> Response:
    """The one exception handler: render `exc` as the JSON error shape."""
    status, body, headers = describe(exc, request)
    return Response(orjson.dumps(body), status_code=status, media_type=JSON, headers=headers)
