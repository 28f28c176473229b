"""POST /v1/admin/reload: every worker switches to the data folder's current builds.

Exists only when KELIME_ADMIN_TOKEN is set; the request must carry
``Authorization: Bearer <token>`` (401 without it, 403 with another token).
"""

from __future__ import annotations

import hmac

from fastapi import APIRouter, Request
from starlette.responses import Response

from ..errors import ServiceError
from ..responses import json_response
from ..schemas import Reloaded
from ..state import KelimeDep, NoQuery

router = APIRouter(prefix="/v1/admin", tags=["admin"], dependencies=[NoQuery])


class Unauthorized(ServiceError):
    status = 401


class Forbidden(ServiceError):
    status = 403


def check_token(request: Request, token: str) -> None:
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not given:
        raise Unauthorized("unauthorized", "send `Authorization: Bearer $KELIME_ADMIN_TOKEN`",
                           headers={"WWW-Authenticate": "Bearer"})
    if not hmac.compare_digest(given.strip().encode(), token.encode()):
        raise Forbidden("forbidden", "the admin token is wrong")


@router.post("/reload", response_model=Reloaded, responses={
    401: {"description": "No `Authorization: Bearer` token."},
    403: {"description": "The token is wrong."},
    409: {"description": "The current builds were refused; the old ones still serve."}})
async def reload(request: Request, kelime: KelimeDep) -> Response:
    """Switch every worker to the data folder's current builds (as SIGHUP does).

    200 `{"outcome": "reloaded" | "unchanged", "generation": N, "lexicons": {name: version}}`
    once this worker serves them; 409 when a build cannot be served (the old ones still are).
    """
    check_token(request, kelime.settings.admin_token)
    return json_response(await request.app.state.reloader.reload())
