"""POST and GET /v1/validate: is each word a valid game word, and if not, why."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from ..body import read_body
from ..parse import parse_body, parse_query
from ..responses import etag, json_response, matches, not_modified
from ..state import KelimeDep, game

router = APIRouter(prefix="/v1", tags=["validate"])

BODY_DOC = {"requestBody": {"required": True, "content": {"application/json": {"schema": {
    "type": "object", "required": ["words"], "additionalProperties": False,
    "properties": {
        "words": {"type": "array", "items": {"type": "string", "maxLength": 64},
                  "minItems": 1, "maxItems": 10000},
        "lexicon": {"type": "string", "default": "tr"},
        "game": {"type": "string", "default": "kelimelik"}},
    "example": {"words": ["kitap", "İstanbul", "evler"], "game": "kelimelik"}}}}}}


@router.post("/validate", openapi_extra=BODY_DOC)
async def validate_post(request: Request, kelime: KelimeDep) -> Response:
    """Check `{"words": [...], "lexicon"?: "tr", "game"?: "kelimelik"}`; results in request order."""
    ask = parse_body(await read_body(request, kelime.settings.max_body_bytes), kelime.settings)
    lex, min_length = kelime.lexicon(ask.lexicon), game(ask.game).min_length
    return json_response(kelime.validate(lex, ask.words, min_length), etag(lex.info["sha256"]))


@router.get("/validate")
async def validate_get(request: Request, kelime: KelimeDep) -> Response:
    """Check `?word=a&word=b[&lexicon=tr][&game=kelimelik]`; cacheable (ETag, If-None-Match → 304)."""
    ask = parse_query(request.scope["query_string"], kelime.settings)
    lex, min_length = kelime.lexicon(ask.lexicon), game(ask.game).min_length
    tag = etag(lex.info["sha256"], [ask.words, min_length])
    cache = {"Cache-Control": f"public, max-age={kelime.settings.cache_max_age}"}
    if matches(request.headers.get("if-none-match"), tag):
        return not_modified(tag, cache)
    return json_response(kelime.validate(lex, ask.words, min_length), tag, cache)
