"""POST /v1/anagram and POST /v1/split: which words these tiles make, and can a hand be laid
out whole (Harfbank). Thin shells around `Lexicon.anagram` and `Lexicon.split`, which are
what `kelime anagram --json` and `kelime split --json` print.

Plain Starlette routes like /v1/validate's (see there), described by `OPENAPI` below.

A search is CPU-bound and holds the GIL, so threads would only share one core: each worker
runs **one search at a time**, on a thread of its own (`gate.Gate`: the event loop and the
other routes' threads keep answering meanwhile). Everything a question carries (rack,
pattern, exclude list, options) is read and checked *before* it waits for its turn, from a
body of at most `Settings.search_body_bytes`: a waiting question holds only its parsed,
bounded self. It waits at most `max_search_wait_ms` (2 s), is refused at once with 503
`busy` and Retry-After when the questions ahead of it would take longer, or when
`max_queued_searches` already wait, and is dropped when its client has gone.
"""

from __future__ import annotations

from time import perf_counter

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from kelime.anagram import Query, make_query, parse_rack
from kelime.anagram.query import plays
from kelime.anagram.split import check_hand
from kelime.games import Game
from kelime.lexicon import Lexicon

from ..body import read_body
from ..gate import Gate
from ..metrics import LOG_KEY
from ..models import parse_anagram, parse_split
from ..parse import refuse_query
from ..responses import JSON, json_response
from .validate import NamedRoute

ANAGRAM, SPLIT = "/v1/anagram", "/v1/split"
#: What one search is guessed to take before any was timed (it is measured from then on).
FIRST_GUESS = 0.05
ADVICE = ("a question is a rack, a pattern and at most KELIME_MAX_EXCLUDE_WORDS words to "
          "exclude")


def searches(state) -> Gate:
    """The worker's one gate for searches (`gate.Gate`), made on first use."""
    if getattr(state, "searches", None) is None:
        settings = state.kelime.settings
        state.searches = Gate("searches (anagram, split and moves questions)", threads=1,
                              most_waiting=settings.max_queued_searches,
                              most_wait=settings.max_search_wait_ms / 1000, guess=FIRST_GUESS)
    return state.searches


async def run_search(request: Request, work, quick: bool = False):
    """`work` on the worker's one search thread, in its turn (or 503 `busy`), unless the
    client has gone by then; `quick` work on the event loop when no search runs or waits
    (`Gate.run`)."""
    async def still_there() -> None:
        if await request.is_disconnected():
            raise ClientDisconnect()
    return await searches(request.app.state).run(work, ready=still_there, quick=quick)


def counted(kelime, scope, kind: str, lex, work):
    """`work`, counted in the metrics (kind, time searching, whether a split completed) and
    its lexicon noted in `scope` for the access log: what the routes and the fast path
    (service/fast.py) both run. `work` answers a dict, or the bytes of one that is
    complete."""
    def run() -> dict | bytes:
        start = perf_counter()
        reply = work()
        complete = reply.get("complete", True) if isinstance(reply, dict) else True
        kelime.metrics.count_search(kind, perf_counter() - start, complete)
        scope[LOG_KEY] = {"lexicon": lex.info["version"]}
        return reply
    return run


def anagram_question(kelime, body: bytes) -> tuple[Lexicon, Game, Query]:
    """The lexicon, game and checked query of a POST /v1/anagram body."""
    settings = kelime.settings
    ask = parse_anagram(body, settings)
    lex, profile = kelime.played(ask.lexicon, ask.game)
    query = make_query(ask.rack, profile, lex.anagrams.alphabet, settings.limits, **ask.options)
    return lex, profile, query


async def anagram_post(request: Request) -> Response:
    """The words the rack makes, each with its `tiles` and `score` by the game's rules."""
    kelime = request.app.state.kelime
    refuse_query(request.scope)
    body = await read_body(request, kelime.settings.search_body_bytes, advice=ADVICE)
    lex, profile, query = anagram_question(kelime, body)
    reply = await run_search(request, counted(
        kelime, request.scope, "anagram", lex, lambda: lex.anagram_json(query, profile)),
        quick=lex.anagram_quick(query, profile))
    return Response(reply, media_type=JSON)  # no ETag: no cache stores a POST, nor revalidates one


async def split_post(request: Request) -> Response:
    """The hand laid out as words, or the layout with the least penalty."""
    kelime = request.app.state.kelime
    refuse_query(request.scope)
    settings = kelime.settings
    ask = parse_split(await read_body(request, settings.search_body_bytes, advice=ADVICE),
                      settings)
    lex, profile = kelime.played(ask.lexicon, ask.game, "harfbank")
    plays(profile, lex.anagrams.alphabet)  # (409) before the rack is read in its letters
    rack = check_hand(parse_rack(ask.rack, lex.anagrams.alphabet, settings.limits), profile,
                      ask.what_if)
    reply = await run_search(request, counted(
        kelime, request.scope, "split", lex,
        lambda: lex.split(rack, profile, settings.limits, what_if=ask.what_if)))
    return json_response(reply)  # no ETag: an answer cut short by the clock can differ


routes = [NamedRoute(ANAGRAM, anagram_post, methods=["POST"]),
          NamedRoute(SPLIT, split_post, methods=["POST"])]

_ERRORS = {"413": {"description": "Over a limit (tiles, blanks, two-letter tiles, results, "
                                  "pattern squares, exclude words, body size)."},
           "422": {"description": "A rack, pattern or option that cannot be read, or a rack "
                                  "the game cannot deal (`rack_not_dealt`: send `\"what_if\": "
                                  "true` to ask anyway); the message says what to fix."},
           "503": {"description": "Busy (`Retry-After`), or the lexicon has no anagram index: "
                                  "rebuild it with `kelime build`."}}


def openapi(anagram_body: dict, split_body: dict, anagram_rules: list, split_rules: list,
            replies: dict) -> dict:
    """The OpenAPI operations of both paths, given the schemas of their bodies (`models`,
    with the settings' limits), the per-game and per-lexicon rules for the rack (`allOf`)
    and the replies (`kelime.service.openapi` fills them in)."""
    def body(schema: dict, rules: list, example: dict) -> dict:
        if rules:
            schema = {**schema, "allOf": rules}
        return {"required": True, "content": {JSON: {"schema": schema, "example": example}}}

    def reply(description: str, schema: dict) -> dict:
        return {"200": {"description": description, "content": {JSON: {"schema": schema}}},
                **_ERRORS}

    return {
        ANAGRAM: {"post": {
            "tags": ["anagram"], "summary": "Words a rack makes", "operationId": "anagram",
            "description": anagram_post.__doc__,
            "requestBody": body(anagram_body, anagram_rules,
                                {"rack": "kaletn?[lm]ıs", "game": "kelimatik"}),
            "responses": reply("The words, best first by `sort`.", replies["anagram"])}},
        SPLIT: {"post": {
            "tags": ["anagram"], "summary": "Lay a whole hand out as words (Harfbank)",
            "operationId": "split", "description": split_post.__doc__,
            "requestBody": body(split_body, split_rules, {"rack": "kalemkitapsilg?"}),
            "responses": reply("The layout, or the one with the least penalty.",
                               replies["split"])}},
    }
