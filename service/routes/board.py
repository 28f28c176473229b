"""POST /v1/play and POST /v1/moves: is this play on this board legal, which words does it
form, what does it score; and which moves does this rack have, best first. Thin shells
around `kelime.board` (`check`, `moves`), with the lexicon's verdicts and word graph.

A play is checked on the event loop (a few dozen squares read). A moves question is a
search, so it takes its turn at the worker's one search thread like an anagram
(`anagram.run_search`: the gate, 503 `busy` when the queue is long); its work is bounded
(`kelime.board.BoardLimits.work`), and an answer cut short says `"complete": false`.
"""

from __future__ import annotations

import gc
import logging
import os
from collections.abc import Iterable
from time import perf_counter

from starlette.requests import Request
from starlette.responses import Response

from kelime.anagram.query import plays
from kelime.board import BoardLimits, Position, check, moves, read_rack, read_tiles
from kelime.games import Game
from kelime.lexicon import Lexicon
from kelime.lexicon.pins import Pins

from ..body import read_body
from ..models import MovesAsk, PlayAsk, parse_moves, parse_play
from ..parse import refuse_query
from ..responses import JSON, json_response
from .anagram import counted, run_search
from .validate import NamedRoute

log = logging.getLogger("uvicorn.error")  # where the master and the workers log
PLAY, MOVES = "/v1/play", "/v1/moves"
ADVICE = "a question is a board of the game's size, its tiles or rack, and names"
LIMITS = BoardLimits()


def _position(kelime, ask: PlayAsk | MovesAsk) -> tuple[Lexicon, Game, Position]:
    lex, profile = kelime.played(ask.lexicon, ask.game)
    plays(profile, lex.alphabet)  # (409) a game whose letters are not the lexicon's
    return lex, profile, Position.read(ask.board, profile)


async def play_post(request: Request) -> Response:
    """Whether the tiles make a legal play on the board, the words it forms (the main word
    first, then the cross words), each valid or not and scored, and the play's score
    (counted only when every word is valid)."""
    kelime = request.app.state.kelime
    refuse_query(request.scope)
    ask = parse_play(await read_body(request, kelime.settings.search_body_bytes,
                                     advice=ADVICE), kelime.settings)
    lex, profile, spot = _position(kelime, ask)
    tiles = read_tiles([{"row": t.row, "col": t.col, "letter": t.letter, "blank": t.blank}
                        for t in ask.tiles], spot)
    min_length = profile.min_length
    return json_response({"lexicon": lex.info,
                          **check(spot, tiles, lambda w: lex.judge(w, min_length)[1])})


async def moves_post(request: Request) -> Response:
    """The legal moves of the rack on the board, best first (score, then row, column,
    across before down, word, tiles), each with its tiles, words and score. A rack the game
    cannot deal (two j's in kelimelik) is refused, 422 `rack_not_dealt`, unless
    `"what_if": true`; one past the search's bound (8 tiles, 3 blanks), 413 either way."""
    kelime = request.app.state.kelime
    refuse_query(request.scope)
    ask = parse_moves(await read_body(request, kelime.settings.search_body_bytes,
                                      advice=ADVICE), kelime.settings)
    lex, _, spot = _position(kelime, ask)
    rack = read_rack(ask.rack, spot, ask.what_if)
    limit = LIMITS.default_results if ask.limit is None else ask.limit

    def work() -> dict:
        found = moves(spot, rack, lex.board_graph, LIMITS, limit)
        return {"lexicon": lex.info, **found.as_dict(limit)}

    reply = await run_search(request, counted(kelime, request.scope, "moves", lex, work))
    return json_response(reply)  # no ETag: an answer cut short by its work can differ


def warm(pins: Pins, games: Iterable[Game], default_lexicon: str) -> None:
    """Build the word graph (`Lexicon.board_graph`) of each current build a board game plays
    by default, now rather than in the first moves question (~0.3 s of CPU for the offline
    Turkish lexicon, ~1 s on a busy machine, inside that question's time and the searches'
    gate): the `kelime serve` master before it forks (its workers inherit the graph), and a
    worker as it loads a reload's builds, before it serves them.

    Then every object the process holds is moved out of the garbage collector's walks
    (`gc.freeze`, after a collection): the graph's nodes (~21,000 dicts for the offline
    Turkish lexicon; its `before` strings are not tracked), never garbage while it is
    served, made each full collection walk them (in process 17.5 ms a full collection with
    the graph, 6.5 ms without: inside whichever question it fell in), and writing to their
    headers copied the master's pages into each worker. A graph left behind by a reload is
    still freed (its dicts hold no cycles: reference counts free them), and each reload
    first puts the frozen objects back (`gc.unfreeze`) so a cycle freed since is collected."""
    built = False
    for name in sorted({g.lexicon or default_lexicon for g in games
                        if g.board is not None and g.board.bonuses}):
        lex = pins.lexicons.get(name)
        if lex is not None and "board_graph" not in vars(lex):
            began = perf_counter()
            lex.board_graph  # noqa: B018 (made and kept: a cached_property)
            log.info("process %d built the word graph of %s %s for board moves in %.2f s",
                     os.getpid(), lex.name, lex.info["version"], perf_counter() - began)
            built = True
    if built:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        log.info("process %d froze its %d objects (the word graphs among them) out of the "
                 "garbage collector's walks", os.getpid(), gc.get_freeze_count())


routes = [NamedRoute(PLAY, play_post, methods=["POST"]),
          NamedRoute(MOVES, moves_post, methods=["POST"])]

_ERRORS = {"413": {"description": "A rack of more tiles or blanks than the game's rack "
                                  "holds (with `what_if` too: the search's own bound), or a "
                                  "body over its size."},
           "422": {"description": "A board, tiles, rack or option that cannot be read "
                                  "(`invalid_board`, `invalid_tiles`, `invalid_rack`, "
                                  "`invalid_option`; the message names the square), or a "
                                  "rack the game cannot deal (`rack_not_dealt`, /v1/moves: "
                                  "send `\"what_if\": true` to ask anyway)."},
           "503": {"description": "Busy (`Retry-After`)."}}
EXAMPLE_BOARD = [[""] * 15 for _ in range(15)]


def openapi(play_body: dict, moves_body: dict, replies: dict) -> dict:
    """The OpenAPI operations of both paths, given the schemas of their bodies and replies
    (`kelime.service.openapi` fills them in)."""
    def reply(description: str, schema: dict) -> dict:
        return {"200": {"description": description, "content": {JSON: {"schema": schema}}},
                **_ERRORS}

    board = [row[:] for row in EXAMPLE_BOARD]
    board[7][7:10] = ["k", "a", "l"]
    return {
        PLAY: {"post": {
            "tags": ["board"], "summary": "Check a play on a board", "operationId": "checkPlay",
            "description": play_post.__doc__,
            "requestBody": {"required": True, "content": {JSON: {"schema": play_body, "example": {
                "game": "kelimelik", "board": board,
                "tiles": [{"row": 7, "col": 10, "letter": "e"}]}}}},
            "responses": reply("The verdict on the play (200 whether it is legal or not).",
                               replies["play"])}},
        MOVES: {"post": {
            "tags": ["board"], "summary": "The best moves of a rack on a board",
            "operationId": "findMoves", "description": moves_post.__doc__,
            "requestBody": {"required": True, "content": {JSON: {"schema": moves_body, "example": {
                "game": "kelimelik", "board": board, "rack": "kale?ab", "limit": 5}}}},
            "responses": reply("The moves, best first.", replies["moves"])}},
    }
