"""GET /docs: Swagger UI for the API, served from this machine (offline works).

FastAPI's own /docs loads Swagger UI from a CDN, which is a blank page without internet;
this one serves the Swagger UI 5 files that the `fastapi-offline` package ships (Swagger UI
4, as in `swagger-ui-bundle`, cannot read the OpenAPI 3.1 that FastAPI writes).
"""

from __future__ import annotations

import mimetypes
from pathlib import Path

from fastapi import APIRouter
from fastapi.openapi.docs import get_swagger_ui_html
from starlette.responses import Response

from kelime.errors import excerpt

from ..errors import NotFound

router = APIRouter(include_in_schema=False)
ASSETS = ("swagger-ui-bundle.js", "swagger-ui.css", "favicon.png")


def assets_folder() -> Path:
    from importlib.resources import files

    return Path(str(files("fastapi_offline") / "static"))


@router.get("/docs")
async def docs() -> Response:
    return get_swagger_ui_html(openapi_url="/openapi.json", title="kelime API",
                               swagger_js_url="/docs/swagger-ui-bundle.js",
                               swagger_css_url="/docs/swagger-ui.css",
                               swagger_favicon_url="/docs/favicon.png")


@router.get("/docs/{name}")
async def asset(name: str) -> Response:
    if name not in ASSETS:
        raise NotFound("not_found", f"no file {excerpt(name)} here; the API is described at /docs")
    kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
    return Response((assets_folder() / name).read_bytes(), media_type=kind,
                    headers={"Cache-Control": "public, max-age=86400"})
