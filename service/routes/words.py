"""GET /v1/words/{word}: the verdict on one word, with its TDK entries when the cache has them."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from kelime.errors import EXCERPT, excerpt
from kelime.normalize import WHITESPACE
from kelime.suggest import suggest

from ..entries import tdk_entries
from ..errors import Invalid
from ..parse import check_raw_path, check_word, name_value, query_pairs
from ..responses import etag, json_response
from ..schemas import WordReply
from ..state import KelimeDep

router = APIRouter(prefix="/v1", tags=["words"])
LexiconName = Annotated[str | None, Query(max_length=64)]
GameName = Annotated[str | None, Query(alias="game", max_length=64)]


def names(query: bytes) -> dict[str, str]:
    """`lexicon` and `game` from the query string, each at most once; nothing else."""
    found: dict[str, str] = {}
    for key, value in query_pairs(query, 2, words=False):
        if key not in ("lexicon", "game") or key in found:
            what = "repeated" if key in found else "unknown"
            raise Invalid("invalid_request", f"{what} query parameter {excerpt(key)}; the "
                          "parameters are lexicon and game", {what: key[:EXCERPT]})
        found[key] = name_value(key, value)
    return found


@router.get("/words/{word:path}", response_model=WordReply)
async def word_info(word: str, kelime: KelimeDep, request: Request, lexicon: LexiconName = None,
                    game_name: GameName = None) -> Response:
    """Normalised form, verdict with reason, `suggestions` (for a word that is not valid: the
    valid words it was probably meant to be, e.g. `KITAP` → `kitap`, `cay` → `çay`), `hooks`
    (the letters that make a valid word put before or after it), and TDK entries (`[]` and
    `cache: null` without a cache)."""
    check_raw_path(request.scope.get("raw_path"))  # `word` has U+FFFD for bytes not UTF-8
    if not word.strip(WHITESPACE):  # `/v1/words/%20` is no word either
        raise Invalid("invalid_request", "no word in the path: ask GET /v1/words/kitap")
    asked = names(request.scope.get("query_string", b""))  # strict, like /v1/validate's
    lexicon, game_name = asked.get("lexicon"), asked.get("game")
    lex, game = kelime.played(lexicon, game_name)
    min_length = game.min_length
    verdict = kelime.check(lex, check_word(word, kelime.settings), min_length)
    entries, cache = await tdk_entries(request, kelime.settings.cache, verdict["normalized"])
    hooks = lex.hooks(verdict["normalized"], min_length)
    suggestions = [] if verdict["valid"] else suggest(verdict["normalized"], lex.words,
                                                      lex.alphabet, min_length=min_length)
    reply = {"lexicon": lex.info, **verdict, "suggestions": suggestions, "hooks": hooks,
             "entries": entries, "cache": cache}
    return json_response(reply, etag(lex.info["sha256"], [word, min_length, entries]))
