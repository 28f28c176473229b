"""GET /healthz (process up), /readyz (a lexicon is loaded) and /metrics (Prometheus)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from ..errors import Unavailable
from ..metrics import CONTENT_TYPE
from ..responses import json_response
from ..schemas import Health, Ready
from ..state import KelimeDep, NoQuery, not_ready

router = APIRouter(tags=["health"], dependencies=[NoQuery])


@router.get("/healthz", response_model=Health)
async def healthz() -> Response:
    """200 while the process answers."""
    return json_response({"status": "ok"})


@router.get("/readyz", response_model=Ready)
async def readyz(kelime: KelimeDep) -> Response:
    """200 naming every loaded lexicon, its current version and every version held; 503
    (error shape) unless the default lexicon is loaded (requests that name no lexicon would
    fail)."""
    default = kelime.settings.default_lexicon
    if not kelime.lexicons:
        raise not_ready(kelime.settings)
    versions = {name: lex.info["version"] for name, lex in sorted(kelime.lexicons.items())}
    if default not in kelime.lexicons:
        raise Unavailable("default_lexicon_missing", f"the default lexicon {default!r} is not "
                          f"loaded (loaded: {', '.join(versions)}): build it with `kelime "
                          f"build --name {default}`, or set KELIME_DEFAULT_LEXICON",
                          {"lexicons": versions, "default": default})
    held = {name: [lex.info["version"] for lex in kelime.held(name)] for name in versions}
    return json_response({"status": "ready", "lexicons": sorted(kelime.lexicons),
                          "versions": versions, "held": held, "default": default})


@router.get("/metrics", response_class=Response, responses={200: {
    "description": "Prometheus text exposition format, summed over every worker.",
    "content": {"text/plain": {"schema": {"type": "string"}}}}})
async def metrics(kelime: KelimeDep) -> Response:
    """Prometheus text: requests by route and status, latency, words by verdict, lexicons."""
    return Response(kelime.metrics.render(), media_type=CONTENT_TYPE)
