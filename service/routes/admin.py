"""POST /v1/admin/reload: every worker switches to the data folder's current builds.

Exists only when KELIME_ADMIN_TOKEN is set (MIN_ADMIN_TOKEN characters or more); the
request must carry ``Authorization: Bearer <token>`` (401 without it, 403 with another
token). A client that sends TRIES wrong tokens within WINDOW seconds gets 429 with
Retry-After until the oldest of them is WINDOW s old, whatever it sends meanwhile (each
worker counts its own).

The route is the operator's, on a replica's own port or socket, never through the balancer:
a request that came through it (`trust.forwarded`: on the balancer's unix socket with
X-Forwarded-For, or from a proxy named in KELIME_FORWARDED_ALLOW_IPS) is a 404 and counts
against nobody, so no client of the balancer can lock the operator out. Wrong tokens count
against the connection's own peer (X-Forwarded-For is not read here), and the operator
always has a way in that no other local user can share: the replica's unix socket, whose
folder only the service's user and nginx can open.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import time
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from ..errors import NotFound, ServiceError, TooMany, client_address
from ..responses import json_response
from ..schemas import Reloaded
from ..state import KelimeDep, NoQuery
from ..trust import forwarded

router = APIRouter(prefix="/v1/admin", tags=["admin"], dependencies=[NoQuery])
log = logging.getLogger("uvicorn.error")
TRIES, WINDOW = 5, 60.0
CLIENTS = 10_000  # clients remembered (the oldest are forgotten first): bounded memory
UNIX = "the unix socket"


class Guard:
    """Wrong tokens by client address: when each was sent, the last TRIES at most."""

    def __init__(self) -> None:
        self.wrong: dict[str, list[float]] = {}

    def check(self, client: str, now: float) -> None:
        recent = [t for t in self.wrong.get(client, ()) if t > now - WINDOW]
        if len(recent) >= TRIES:
            wait = math.ceil(recent[0] + WINDOW - now)
            raise TooMany("too_many_tries", f"{TRIES} wrong admin tokens within "
                               f"{WINDOW:.0f} s from {client}: try again in {wait} s",
                               {"retry_after": wait}, headers={"Retry-After": str(wait)})

    def failed(self, client: str, now: float) -> None:
        times = self.wrong.pop(client, [])[-(TRIES - 1):] + [now]
        self.wrong[client] = times  # re-inserted: the dict's order is the last wrong try
        if len(self.wrong) > CLIENTS:
            del self.wrong[next(iter(self.wrong))]
        log.warning("wrong admin token from %s (%d within %.0f s)", client,
                    sum(t > now - WINDOW for t in times), WINDOW)


def check_token(request: Request, token: str) -> None:
    if forwarded(request.scope):
        raise NotFound("not_found", "admin routes are per replica: call this one on its own "
                       "port or unix socket, not through the balancer")
    guard: Guard = request.app.state.admin_guard
    client, now = client_address(request, UNIX), time.monotonic()
    guard.check(client, now)
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not given:
        raise ServiceError("unauthorized", "send `Authorization: Bearer $KELIME_ADMIN_TOKEN`",
                           headers={"WWW-Authenticate": "Bearer"})
    if not hmac.compare_digest(_digest(given.strip()), _digest(token)):  # no length leaked
        guard.failed(client, now)
        raise ServiceError("forbidden", "the admin token is wrong")


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


@router.post("/reload", response_model=Reloaded, responses={
    401: {"description": "No `Authorization: Bearer` token."},
    403: {"description": "The token is wrong."},
    409: {"description": "The current builds were refused; the old ones still serve."},
    429: {"description": "Too many wrong tokens from this client; see Retry-After."},
    504: {"description": "Not every worker switched in time; `details.lagging` names them."}})
async def reload(request: Request, kelime: KelimeDep) -> Response:
    """Switch every worker to the data folder's current builds (as SIGHUP does).

    200 `{"outcome": "reloaded" | "unchanged", "generation": N, "lexicons": {name: version}}`
    once every worker serves them; 409 when a build cannot be served (the old ones still
    are); 504 naming the workers that did not switch in time.
    """
    token = kelime.settings.admin_token
    assert token is not None  # create_app adds this route only when a token is set
    check_token(request, token)
    return json_response(answer(await request.app.state.reloader.reload()))


def answer(done: dict[str, Any]) -> dict[str, Any]:
    """The reply to a reload's outcome (`reload.reloaded`'s shape), or the error saying why
    there is none: 409 refused, 504 with the laggards (or with why the master did not
    answer)."""
    if done["outcome"] == "refused":
        raise ServiceError("reload_refused", "the current builds cannot be served, so the old "
                           "ones still are: " + "; ".join(done["refused"].values()),
                           {"refused": done["refused"], "serving": done["versions"]})
    if "lagging" in done:
        raise ServiceError("reload_incomplete", done["why"], {
            "lagging": done["lagging"], "generation": done["generation"],
            "lexicons": done["versions"]})
    if done["outcome"] == "timeout":
        raise ServiceError("reload_timeout", done["why"])
    return {"outcome": done["outcome"], "generation": done["generation"],
            "lexicons": done["versions"]}
