"""GET /healthz (process up), /readyz (a lexicon is loaded) and /metrics (Prometheus)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from ..metrics import CONTENT_TYPE
from ..responses import json_response
from ..state import KelimeDep, not_ready

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> Response:
    """200 while the process answers."""
    return json_response({"status": "ok"})


@router.get("/readyz")
async def readyz(kelime: KelimeDep) -> Response:
    """200 naming the loaded lexicons; 503 (error shape) when none is loaded."""
    if not kelime.lexicons:
        raise not_ready(kelime.settings)
    return json_response({"status": "ready", "lexicons": sorted(kelime.lexicons),
                          "default": kelime.settings.default_lexicon})


@router.get("/metrics")
async def metrics(kelime: KelimeDep) -> Response:
    """Prometheus text: requests by route and status, latency, words by verdict, lexicons."""
    return Response(kelime.metrics.render(), media_type=CONTENT_TYPE)
