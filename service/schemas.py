"""The shape of every JSON reply, as pydantic models: the OpenAPI schema's responses.

The routes build their replies as plain dicts and send them with orjson (no pydantic on
the way out: the hot path stays fast), so these models describe, they do not convert.
What keeps them true is the schemathesis run in the test suite, which checks every reply
against the schema, and tests/test_schema.py, which checks the replies of the routes'
interesting cases against the schema closed (every object's fields listed, none other),
so a field added to a reply and not here fails the suite. The schema itself leaves replies
open (no `additionalProperties: false`): a generated client keeps working when a reply
gains a field, and ignores the fields it does not know.

    >>> Verdict.model_json_schema()["properties"]["reason"]["anyOf"][0]["enum"][:2]
    ['obscene', 'proper_name']
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, JsonValue

from kelime.board import REASONS as REASONS_ILLEGAL
from kelime.lexicon import REASONS
from kelime.reports import KINDS

#: Why a word is not valid (null when it is).
Reason = Literal[REASONS]  # type: ignore[valid-type]


class Exact(BaseModel):
    """A reply object whose every field is listed; a later version may add fields."""


class LexiconRef(Exact):
    """The lexicon that answered: its name and the version of its data (first 12 hex digits
    of `sha256`), which changes whenever a word's verdict can."""

    name: str
    version: str
    sha256: str
    words: int = Field(description="Valid words in the lexicon.")


class Verdict(Exact):
    """One word's verdict."""

    word: str = Field(description="The word as sent.")
    normalized: str = Field(description="Lower-cased the lexicon's way (İ→i, I→ı), "
                                        "circumflexes folded (â→a).")
    valid: bool
    reason: Reason | None = Field(description="Why the word is not valid; null when it is.")


def _no_default(schema: dict[str, JsonValue]) -> None:
    """A field left out of a reply when it has no value: its schema has no `default: null`."""
    schema.pop("default")


class Checked(Verdict):
    """A verdict in a validate reply."""

    # None: left out of the reply (never sent as null), so the schema says list, not null
    suggestions: list[str] = Field(None, json_schema_extra=_no_default,  # type: ignore[arg-type]
                                   description="Only with `\"suggest\": true`, on a "
                                   "result that is not valid: the valid words it was probably "
                                   "meant to be (KITAP → kitap, cay → çay), best first.")


class ValidateReply(Exact):
    lexicon: LexiconRef
    all_valid: bool
    results: list[Checked] = Field(description="One per word sent, in the same order.")


class Hooks(Exact):
    front: list[str] = Field(description="Letters that make a valid word put before it.")
    back: list[str] = Field(description="Letters that make a valid word put after it.")


class CacheRef(Exact):
    name: str = Field(description="The TDK crawl cache's file name.")
    entries: int


class WordReply(Verdict):
    lexicon: LexiconRef
    suggestions: list[str] = Field(description="For a word that is not valid, the valid "
                                   "words it was probably meant to be; [] otherwise.")
    hooks: Hooks
    entries: list[dict[str, Any]] = Field(description="TDK's entries for the word, as TDK "
                                          "sent them (`[]` without a cache).")
    cache: CacheRef | None = Field(description="null when the server has no TDK cache.")


class Counts(BaseModel):
    """What the build counted (`words` always; kelime's builds also count the refusals)."""

    words: int
    rejected: int | None = None
    rejected_by_reason: dict[str, int] | None = None


class HeldBuild(LexiconRef):
    """A build of a lexicon this server holds: `name@version` asks it."""

    created: str = Field(description="When the build's source was made (ISO 8601).")
    current: bool = Field(description="Whether it answers questions that name no version.")


class LexiconSummary(LexiconRef):
    alphabet: str = Field(description="The letters, in the lexicon's order.")
    created: str = Field(description="When the source was made (ISO 8601).")
    normalization_version: int
    counts: Counts
    source: dict[str, Any] = Field(description="Where the words come from: kind, name, "
                                   "licence, date …")
    held: list[HeldBuild] = Field(description="Every build held, the current one first: a "
                                  "question naming `name@version` is answered by that build "
                                  "while it is held (`KELIME_KEEP_VERSIONS`).")


class LexiconsReply(Exact):
    lexicon: LexiconRef | None = Field(description="The default lexicon, null when it is "
                                       "not loaded.")
    default: str
    lexicons: list[LexiconSummary]


class TwoLetterTiles(Exact):
    values: dict[str, int]
    default_value: int = Field(description="The value of a two-letter tile not listed.")


class Square(Exact):
    row: int
    col: int


class BoardInfo(Exact):
    size: int = Field(description="Squares a side; rows and columns count from 0.")
    centre: Square = Field(description="The square the first play must cover.")
    bonuses: list[list[Literal["", "H2", "H3", "K2", "K3"]]] = Field(
        description="Row by row: \"\" plain, H2/H3 the letter ×2/×3, K2/K3 the word ×2/×3.")
    layout_from: str | None = Field(description="The game whose layout this board uses "
                                    "(Sözce: kelimelik, its rules publish none), or null.")


class GameInfo(Exact):
    name: str = Field(description="The id requests name (`game`).")
    title: str = Field(description="The game's name for people (Sözce, Kürtçe Kelimatik).")
    lexicon: str | None = Field(description="The lexicon the game is played with, when it "
                                "names one (Kurdish Kelimatik: ku); its tiles are that "
                                "lexicon's letters.")
    min_length: int = Field(description="Letters a word needs (a two-letter tile counts 2).")
    rack_size: int
    bingo_bonus: int = Field(description="For playing `rack_size` tiles at once.")
    letter_values: dict[str, int]
    description: str
    letter_counts: dict[str, int] | None = Field(description="Tiles in the bag, when known.")
    blanks: int
    blank_value: int
    two_letter_tiles: TwoLetterTiles | None = Field(description="null: the game has none.")
    discard: int = Field(description="Tiles a split may throw away to finish a hand.")
    composition: dict[str, int] | None = Field(description="What a hand holds, when the game "
                                               "fixes it (e.g. consonants: 5).")
    blank_penalty: int | None = Field(description="What a joker left in a hand costs in a "
                                      "split's penalty; null: the game has no blanks.")
    joker_finish_multiplier: int = Field(description="What the other players' penalty is "
                                         "multiplied by when a hand finishes by throwing the "
                                         "joker (Harfbank: 2).")
    fixed_hand: bool = Field(description="true: every hand holds exactly `rack_size` tiles "
                             "(plus `discard` drawn: Kelimatik, Harfbank); false: at most, "
                             "fewer at the end of a game (kelimelik, Sözce). A rack outside "
                             "it is refused (`rack_not_dealt`) unless `what_if`.")
    min_hand_average: int | None = Field(description="Points a player must average a hand, "
                                         "when the game sets a minimum (Kelimatik: 100 in "
                                         "Turkish, 50 in Kurdish).")
    scoring: Literal["sum", "product"] = Field(description="sum: tile values (+ bingo); "
                                               "product: their sum × tiles used.")
    score_formula: str
    board: BoardInfo | None = Field(description="A board game's board (POST /v1/play, "
                                    "/v1/moves); null: the game has none.")


class GamesReply(Exact):
    lexicon: LexiconRef | None
    default: str
    games: list[GameInfo]


class Found(Exact):
    word: str
    score: int = Field(description="By the game's formula; a blank counts its value (0).")
    tiles: list[str] = Field(description="The tiles in word order: `?x` a blank laid as x, "
                             "`lm` a two-letter tile.")


class AnagramReply(Exact):
    lexicon: LexiconRef
    count: int = Field(description="Words found, before `limit`.")
    truncated: bool = Field(description="Whether `limit` left words out.")
    words: list[Found]


class Laid(Exact):
    word: str
    tiles: list[str]


class SplitReply(Exact):
    lexicon: LexiconRef
    found: bool = Field(description="Whether the hand is laid out whole (the thrown tile "
                                    "aside).")
    complete: bool = Field(description="false: the time budget ran out; this is the best "
                                       "layout found.")
    words: list[Laid]
    discarded: list[str] = Field(description="The tiles left over: neither laid out nor "
                                             "thrown away.")
    penalty: int = Field(description="What the tiles left over cost: their values (a joker "
                                     "its game's `blank_penalty`).")
    thrown: str | None = Field(description="The tile thrown away to finish (a hand one over "
                                           "the game's `rack_size`), or null.")
    others_penalty_multiplier: int | None = Field(
        description="When the hand finishes (`found`): what the other players' penalty is "
                    "multiplied by, 2 in Harfbank when the thrown tile is the joker, else 1 "
                    "(the game's `joker_finish_multiplier`); null when it does not finish.")


class PlayedWord(Exact):
    word: str
    valid: bool
    reason: Reason | None = Field(description="Why the word is not valid, null when it is.")
    score: int = Field(description="What the word scores in this play (letter bonuses, then "
                                   "word bonuses, under the new tiles only).")


class PlayReply(Exact):
    lexicon: LexiconRef
    legal: bool = Field(description="Whether the placement is legal (one line, contiguous, "
                                    "touching the tiles there, the first over the centre).")
    reason: Literal[REASONS_ILLEGAL] | None = Field(  # type: ignore[valid-type]
        description="Why the placement is not legal, null when it is.")
    message: str | None = Field(description="The reason in words, naming the square.")
    words: list[PlayedWord] = Field(description="The main word first, then the cross words.")
    score: int = Field(description="The words' scores and the bingo bonus; 0 unless the play "
                                   "is legal and every word valid.")
    bingo: bool = Field(description="Whether the play lays a whole rack (and counts).")


class MoveTile(Exact):
    row: int
    col: int
    letter: str = Field(description="The letter the tile stands for.")
    blank: bool


class MoveWord(Exact):
    word: str
    score: int


class Move(Exact):
    row: int = Field(description="The main word's first square.")
    col: int
    direction: Literal["across", "down"]
    word: str = Field(description="The main word.")
    tiles: list[MoveTile] = Field(description="Only the tiles laid from the rack.")
    words: list[MoveWord] = Field(description="The main word first, then the cross words.")
    score: int
    bingo: bool


class MovesReply(Exact):
    lexicon: LexiconRef
    count: int = Field(description="Legal moves found in all, before `limit`.")
    truncated: bool = Field(description="Whether `limit` left moves out.")
    complete: bool = Field(description="false: the search's work ran out; the moves are those "
                                       "found so far.")
    moves: list[Move] = Field(description="Best first: score, then row, column, across "
                                          "before down, word, tiles.")


class Health(Exact):
    status: Literal["ok"]


class Ready(Exact):
    status: Literal["ready"]
    lexicons: list[str]
    versions: dict[str, str] = Field(description="Name → the current version.")
    held: dict[str, list[str]] = Field(description="Name → every version held (`name@version` "
                                       "asks one), the current one first.")
    default: str


class Reloaded(Exact):
    outcome: Literal["reloaded", "unchanged"]
    generation: int
    lexicons: dict[str, str] = Field(description="Name → version now served.")


class ReportReply(Exact):
    id: int = Field(description="The report's id (a duplicate gets the open report's).")
    status: Literal["open"]
    kind: Literal[KINDS]  # type: ignore[valid-type]
    count: int = Field(description="Reports of this word and kind so far, this one included.")
    duplicate: bool = Field(description="Whether an open report of the same word and kind "
                                        "was counted instead of a new one made.")
    lexicon: LexiconRef
    game: str
    verdict: Verdict = Field(description="The word's verdict now, in this game.")


#: The models the hand-written OpenAPI paths (plain Starlette routes) refer to.
PLAIN_ROUTE_MODELS = (ValidateReply, AnagramReply, SplitReply, ReportReply, PlayReply,
                      MovesReply)
