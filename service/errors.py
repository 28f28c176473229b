"""Errors: domain errors carry their HTTP status, and one handler renders every error.

Every error reply has one shape, whatever raised it (a domain error, FastAPI's request
validation, Starlette's 404/405, or a bug)::

    {"error": {"code": "unknown_game", "message": "unknown game 'scrabble'; ...",
               "details": {"known": ["kelimelik", ...]}}}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from kelime.errors import NoAnagramIndex, QueryError

from .responses import JSON


class ServiceError(Exception):
    """An error a client can act on; subclasses fix the HTTP status."""

    status = 500

    def __init__(self, code: str, message: str, details=None, headers: dict | None = None):
        super().__init__(message)
        self.code, self.message, self.details, self.headers = code, message, details, headers


class Invalid(ServiceError):
    """Malformed input: 422."""

    status = 422


class TooLarge(ServiceError):
    """Over a limit: 413."""

    status = 413


class NotFound(ServiceError):
    status = 404


class Unavailable(ServiceError):
    """The service cannot answer yet (no lexicon, no cache): 503."""

    status = 503


class TooMany(ServiceError):
    """A client over one of its limits (reports an hour, wrong admin tokens): 429, with
    Retry-After."""

    status = 429


def client_address(request: Request) -> str:
    """The client's address: uvicorn puts X-Forwarded-For's client there only when the
    connection comes from a proxy named in KELIME_FORWARDED_ALLOW_IPS (none by default)."""
    client = request.scope.get("client")
    return client[0] if client else "unknown"


#: The error shape, as JSON Schema, and the errors any route can answer (OpenAPI).
ERROR_SCHEMA = {"type": "object", "required": ["error"], "properties": {"error": {
    "type": "object", "required": ["code", "message"],
    "properties": {"code": {"type": "string"}, "message": {"type": "string"}, "details": {}}}}}
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"description": description,
             "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
    for status, description in (
        (404, "No such route or lexicon (`unknown_lexicon` names the loaded ones)."),
        (413, "Over a limit (words, characters, body size, tiles …); `details` has the limit."),
        (415, "The body is not sent as JSON (`Content-Type: application/json`)."),
        (422, "Malformed request; the message says what to send."),
        (431, "The request line and headers are over the server's limit."),
        (503, "Not ready (no default lexicon), busy (`Retry-After`), or no anagram index."))}


#: Every exception class that `handle_error` renders (registered once each in create_app).
HANDLED = (ServiceError, QueryError, NoAnagramIndex, HTTPException, RequestValidationError,
           ClientDisconnect, Exception)

_HTTP_CODES = {404: "not_found", 405: "method_not_allowed"}


def error_body(code: str, message: str, details=None) -> dict:
    error = {"code": code, "message": message}
    if details is not None:
        error["details"] = details
    return {"error": error}


def describe(exc: Exception, request: Request) -> tuple[int, dict, Mapping[str, str] | None]:
    """(status, body, extra headers) for any exception."""
    if isinstance(exc, ServiceError):
        return exc.status, error_body(exc.code, exc.message, exc.details), exc.headers
    if isinstance(exc, QueryError):  # a rack, pattern or option the core refused
        return 413 if exc.over_limit else 422, error_body(exc.code, exc.message,
                                                          exc.details), None
    if isinstance(exc, NoAnagramIndex):
        return 503, error_body("no_anagram_index", str(exc)), None
    if isinstance(exc, RequestValidationError):
        return 422, *_validation(exc)
    if isinstance(exc, HTTPException):
        headers = exc.headers
        if exc.status_code == 405:
            headers = {**(headers or {}), "Allow": allowed_methods(request, exc)}
        return exc.status_code, _http(exc, request, headers), headers
    if isinstance(exc, ClientDisconnect):
        return 400, error_body("client_disconnected", "the client closed the connection"), None
    return 500, error_body("internal_error", "unexpected server error; it has been logged"), None


def _validation(exc: RequestValidationError) -> tuple[dict, None]:
    errors = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
              for e in exc.errors()]
    first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
    where = " ".join(str(part) for part in first["loc"])
    return error_body("invalid_request", f"{where}: {first['msg']}".strip(": "), errors), None


def allowed_methods(request: Request, exc: HTTPException) -> str:
    """Every method the path answers (Starlette's Allow names only the first route's)."""
    table = getattr(request.app.state, "allow", {}) if "app" in request.scope else {}
    path = getattr(request.scope.get("route"), "path", None)
    return table.get(path) or (exc.headers or {}).get("Allow", "")


def _http(exc: HTTPException, request: Request, headers: Mapping[str, str] | None) -> dict:
    path = request.url.path
    where = f"{request.method[:20]} {path if len(path) <= 80 else path[:80] + '…'}"
    if exc.status_code == 404:
        message = f"{where} matches no route; the API is listed at /docs"
    elif exc.status_code == 405:
        allowed = (headers or {}).get("Allow", "")
        message = f"{where}: method not allowed here (allowed: {allowed})"
    else:
        message = f"{where}: {exc.detail}"
    return error_body(_HTTP_CODES.get(exc.status_code, f"http_{exc.status_code}"), message)


async def handle_error(request: Request, exc: Exception) -> Response:
    """The one exception handler: render `exc` as the JSON error shape."""
    status, body, headers = describe(exc, request)
    return Response(orjson.dumps(body), status_code=status, media_type=JSON, headers=headers)
