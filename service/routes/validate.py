"""POST and GET /v1/validate: is each word a valid game word, and if not, why.

The hot path of the service, so these two are plain Starlette routes rather than FastAPI
ones: FastAPI's per-request dependency solving cost ~30 µs here, more than checking
8 words (benchmarks/validate.py). They take the same state (`request.app.state.kelime`)
the other routes get through `KelimeDep`, raise the same domain errors, and are described
in the OpenAPI schema by `OPENAPI` below.

Both answer with `kelime.lexicon.verdicts.validate_json`: the bytes of
``orjson.dumps(kelime.validate(lex, words, min_length))`` (what `kelime check --json` prints),
joined from the lexicon's memo of serialised results, and counted in the metrics from the
tally it returns (tests/test_validate_fast.py holds them equal).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route

from kelime.lexicon.verdicts import validate_json
from kelime.suggest import suggest

from ..body import read_body
from ..parse import parse_body, parse_query, refuse_query
from ..responses import JSON, cache_control, etag, json_response, matches, not_modified, pinned

PATH = "/v1/validate"


async def validate_post(request: Request) -> Response:
    """Check `{"words": [...], "lexicon"?: "tr", "game"?: "kelimelik"}`; results in request
    order."""
    kelime = request.app.state.kelime
    refuse_query(request.scope)
    ask = parse_body(await read_body(request, kelime.settings.max_body_bytes), kelime.settings)
    lex, game = kelime.played(ask.lexicon, ask.game)
    min_length = game.min_length
    if ask.suggest:  # off the fast path: the memo holds replies without suggestions
        return json_response(with_suggestions(kelime.validate(lex, ask.words, min_length), lex,
                                              min_length))
    return answer(kelime, lex, ask.words, min_length, {})  # no ETag: a POST has no validator


def with_suggestions(report: dict, lex, min_length: int) -> dict:
    """The report with `suggestions` on each invalid result (`kelime.suggest`)."""
    for result in report["results"]:
        if not result["valid"]:
            result["suggestions"] = suggest(result["normalized"], lex.words, lex.alphabet,
                                            min_length=min_length)
    return report


async def validate_get(request: Request) -> Response:
    """Check `?word=a&word=b[&lexicon=tr][&game=kelimelik]`; cacheable (ETag, If-None-Match → 304).
    GET takes fewer words than POST, in a query string of limited size: POST bigger batches."""
    kelime = request.app.state.kelime
    ask = parse_query(request.scope["query_string"], kelime.settings)
    lex, game = kelime.played(ask.lexicon, ask.game)
    min_length = game.min_length
    tag = answer_tag(lex, ask.words, min_length)
    cache = cache_control(pinned(ask.lexicon) and kelime.settings.games is None,
                          kelime.settings.cache_max_age)
    if matches(", ".join(request.headers.getlist("if-none-match")), tag):  # early: no verdicts
        return not_modified(tag, cache)
    return answer(kelime, lex, ask.words, min_length, {**cache, "ETag": tag})


def answer(kelime, lex, words: list[str], min_length: int, headers: dict) -> Response:
    """The reply of `kelime.validate(lex, words, min_length)`, byte for byte, counted."""
    body, tally = validate_json(lex, words, min_length)
    kelime.metrics.count_tally(lex.name, tally)
    return Response(body, media_type=JSON, headers=headers)


def answer_tag(lex, words: list[str], min_length: int) -> str:
    """A GET reply's strong ETag: the lexicon, and the question."""
    return etag(lex.info["sha256"], [lex.info["name"], words, min_length])


class NamedRoute(Route):
    """A Starlette route that, like FastAPI's own, puts itself in `scope["route"]`, where the
    metrics read the route template and a 405 finds the methods of the path."""

    def matches(self, scope):
        match, child_scope = super().matches(scope)
        if match is not Match.NONE:
            child_scope["route"] = self
        return match, child_scope


routes = [NamedRoute(PATH, validate_post, methods=["POST"]),
          NamedRoute(PATH, validate_get, methods=["GET"])]

def openapi(body: dict, query_words: dict, reply: dict, settings) -> dict:
    """This path's OpenAPI operations, given the schemas of the body (`models.Ask`), of the
    query's words and of the reply, with the settings' limits (`kelime.service.openapi`)."""
    names = {key: body["properties"][key] for key in ("lexicon", "game")}
    replies = {"200": {"description": "One result per word, in request order.",
                       "content": {JSON: {"schema": reply}}},
               "413": {"description": f"Over a limit: words ({settings.max_words:,}; "
                                      f"{settings.max_suggest_words:,} with suggest), "
                                      f"characters a word ({settings.max_word_chars}), body "
                                      f"size; for GET {query_words['maxItems']:,} words in a "
                                      f"query string of {settings.max_query_bytes:,} bytes "
                                      "(POST big batches)."}}
    return {PATH: {
        "post": {"tags": ["validate"], "summary": "Validate words (JSON body)",
                 "operationId": "validate_post", "description": validate_post.__doc__,
                 "responses": replies,
                 "requestBody": {"required": True, "content": {JSON: {
                     "schema": body, "example": {"words": ["kitap", "İstanbul", "evler"],
                                                 "game": "kelimelik"}}}}},
        "get": {"tags": ["validate"], "summary": "Validate words (query string, cacheable)",
                "operationId": "validate_get", "description": validate_get.__doc__,
                "responses": replies,
                "parameters": [{"name": "word", "in": "query", "required": True,
                                "explode": True, "schema": query_words},
                               *({"name": k, "in": "query", "schema": {"type": "string",
                                  **{a: v[a] for a in ("default", "description") if a in v}}}
                                 for k, v in names.items())]},
    }}
