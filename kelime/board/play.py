"""One play on a board: is the placement legal, which words it forms, what each scores.

The rules ("Puan Hesaplama", `kelimelik-style-rules.tr.txt`): the tiles lie in one line,
contiguous with the tiles already there; the first play covers the centre, a later one
touches a tile already on the board; a one-letter word never counts. Each word scores its
letters' values, a letter on an H2/H3 square ×2/×3, then the word ×2/×3 for each K2/K3
square under it; a bonus counts only under a tile laid in this play, for every word through
it; a blank scores its value (0) but its word takes the square's word bonus. The play
scores the sum of its words, + the game's `bingo_bonus` when it lays `rack_size` tiles.

    >>> from kelime.games import get_game
    >>> from kelime.board.position import Position
    >>> spot = Position.read([[""] * 15 for _ in range(15)], get_game("kelimelik"))
    >>> play = lay(spot, [Tile(7, 6, "e"), Tile(7, 7, "l"), Tile(7, 8, "a", blank=True)])
    >>> play.legal, [(w.word, w.score) for w in play.words]  # (1 + 1 + 0) × 2 (the centre)
    (True, [('ela', 4)])
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod
from typing import Any

from ..errors import excerpt
from .errors import TilesError
from .position import Position

ACROSS, DOWN = "across", "down"
STEP = {ACROSS: (0, 1), DOWN: (1, 0)}
#: Why a placement is not legal (the `reason` of POST /v1/play).
REASONS = ("no_tiles", "not_in_line", "gap", "off_centre", "one_letter", "not_touching")


@dataclass(frozen=True, order=True)
class Tile:
    """A tile laid from the rack: `letter` is what it stands for, `blank` whether it is one."""

    row: int
    col: int
    letter: str
    blank: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"row": self.row, "col": self.col, "letter": self.letter, "blank": self.blank}


@dataclass(frozen=True)
class Word:
    """A word a play forms: its letters, first square, direction and score."""

    word: str
    row: int
    col: int
    direction: str
    score: int


@dataclass(frozen=True)
class Play:
    """A placement: legal or why not (`reason`, `message`), and the words it forms (the
    main word first, then the cross words), each scored."""

    tiles: tuple[Tile, ...]
    legal: bool
    reason: str | None = None
    message: str | None = None
    words: tuple[Word, ...] = ()
    bingo: bool = False
    bonus: int = 0

    @property
    def main(self) -> Word | None:
        return self.words[0] if self.words else None

    @property
    def score(self) -> int:
        """The sum of the words' scores and the bingo bonus (0 when not legal)."""
        return sum(w.score for w in self.words) + self.bonus if self.legal else 0


def read_tiles(tiles: Sequence[Any], spot: Position) -> tuple[Tile, ...]:
    """Tiles from JSON (`row`, `col`, `letter`, `blank`?); TilesError names the bad one."""
    game, read, seen = spot.game, [], set()
    if len(tiles) > game.rack_size:
        raise TilesError(f"{len(tiles)} tiles, but a {game.name} rack holds "
                         f"{game.rack_size}: lay at most {game.rack_size}",
                         {"tiles": len(tiles), "rack_size": game.rack_size})
    for i, t in enumerate(tiles):
        row, col, letter, blank = t["row"], t["col"], t["letter"], t.get("blank", False)
        if isinstance(letter, str) and not letter.isascii():
            letter = unicodedata.normalize("NFC", letter)  # ş as s + U+0327 is ş
        where = f"tile {i} (row {row}, column {col})"
        if not spot.on(row, col):
            raise TilesError(f"{where} is off the board: rows and columns count from 0 to "
                             f"{spot.size - 1}", {"tile": i})
        if letter not in game.letter_values:
            raise TilesError(f"{where} is {excerpt(letter)}, not a letter of {game.name} "
                             f"({''.join(game.letter_values)}); a blank is a letter with "
                             f"\"blank\": true", {"tile": i})
        if spot.letter(row, col):
            raise TilesError(f"{where} is on a taken square: {spot.letter(row, col)!r} is "
                             f"there already", {"tile": i, "row": row, "col": col})
        if (row, col) in seen:
            raise TilesError(f"{where}: two tiles on one square", {"tile": i})
        seen.add((row, col))
        read.append(Tile(row, col, letter, bool(blank)))
    if (blanks := sum(t.blank for t in read)) > game.blanks:
        raise TilesError(f"{blanks} blanks, but {game.name} has {game.blanks}",
                         {"blanks": blanks})
    return tuple(read)


def _illegal(tiles: tuple[Tile, ...], reason: str, message: str) -> Play:
    return Play(tiles, False, reason, message)


def _at(row: int, col: int) -> str:
    return f"row {row}, column {col}"


def lay(spot: Position, tiles: Sequence[Tile]) -> Play:
    """The play of `tiles` (readable ones: `read_tiles`) on `spot`: legal or not, its words."""
    tiles = tuple(sorted(tiles))
    if not tiles:
        return _illegal(tiles, "no_tiles", "no tiles: lay at least one")
    first = tiles[0]
    rows, cols = {t.row for t in tiles}, {t.col for t in tiles}
    if len(rows) > 1 and len(cols) > 1:
        odd = next(t for t in tiles if t.row != first.row and t.col != first.col)
        return _illegal(tiles, "not_in_line", f"the tile at {_at(odd.row, odd.col)} is not in "
                        f"line with the one at {_at(first.row, first.col)}: a play is one "
                        f"row or one column")
    new = {(t.row, t.col): t for t in tiles}
    direction = ACROSS if len(cols) > 1 else DOWN if len(rows) > 1 else _longer(spot, first)
    dr, dc = STEP[direction]
    last = tiles[-1]
    r, c = first.row, first.col
    while (r, c) != (last.row, last.col):
        r, c = r + dr, c + dc
        if (r, c) not in new and not spot.letter(r, c):
            return _illegal(tiles, "gap", f"{_at(r, c)} is empty between the tiles at "
                            f"{_at(first.row, first.col)} and {_at(last.row, last.col)}: a "
                            f"play is contiguous")
    if spot.empty:
        centre = spot.layout.centre
        if centre not in new:
            return _illegal(tiles, "off_centre", f"the first play must cover the centre "
                            f"({_at(*centre)})")
        if len(tiles) == 1:
            return _illegal(tiles, "one_letter", "one tile alone makes a one-letter word, "
                            "which never counts: the first play lays at least 2 tiles")
    elif not any(spot.on(t.row + a, t.col + b) and spot.letter(t.row + a, t.col + b)
                 for t in tiles for a, b in ((0, 1), (1, 0), (0, -1), (-1, 0))):
        return _illegal(tiles, "not_touching", f"no tile touches one already on the board "
                        f"(the tiles run from {_at(first.row, first.col)} to "
                        f"{_at(last.row, last.col)}): a play joins the words there")
    words = [_word(spot, new, first.row, first.col, direction)]
    cross = DOWN if direction == ACROSS else ACROSS
    words += [_word(spot, new, t.row, t.col, cross) for t in tiles]
    found = tuple(w for w in words if len(w.word) > 1)
    bingo = len(tiles) >= spot.game.rack_size
    return Play(tiles, True, words=found, bingo=bingo,
                bonus=spot.game.bingo_bonus if bingo else 0)


def _line(spot: Position, new: dict[tuple[int, int], Tile], row: int, col: int,
          direction: str) -> list[tuple[int, int]]:
    """The squares of the word through (row, col) in `direction`, first to last."""
    dr, dc = STEP[direction]

    def filled(r: int, c: int) -> bool:
        return spot.on(r, c) and ((r, c) in new or bool(spot.letter(r, c)))

    while filled(row - dr, col - dc):
        row, col = row - dr, col - dc
    squares = []
    while filled(row, col):
        squares.append((row, col))
        row, col = row + dr, col + dc
    return squares


def _longer(spot: Position, tile: Tile) -> str:
    """One tile's direction: that of the longer word it forms, across when equally long."""
    new = {(tile.row, tile.col): tile}
    across = len(_line(spot, new, tile.row, tile.col, ACROSS))
    return DOWN if len(_line(spot, new, tile.row, tile.col, DOWN)) > across else ACROSS


def _word(spot: Position, new: dict[tuple[int, int], Tile], row: int, col: int,
          direction: str) -> Word:
    squares = _line(spot, new, row, col, direction)
    letters, total, factors = [], 0, []
    layout, game = spot.layout, spot.game
    for r, c in squares:
        tile = new.get((r, c))
        if tile is None:
            letters.append(spot.letter(r, c))
            total += spot.value(r, c)
            continue
        letters.append(tile.letter)
        value = game.blank_value if tile.blank else game.letter_values[tile.letter]
        total += value * layout.letter_multiplier(r, c)
        factors.append(layout.word_multiplier(r, c))
    return Word("".join(letters), *squares[0], direction, total * prod(factors))


def check(spot: Position, tiles: Sequence[Tile],
          judge: Callable[[str], str | None]) -> dict[str, Any]:
    """The reply of POST /v1/play (without its `lexicon`): `judge` says why a word is not
    valid (None when it is)."""
    play = lay(spot, tiles)
    words = [{"word": w.word, "valid": (why := judge(w.word)) is None, "reason": why,
              "score": w.score} for w in play.words]
    counts = play.legal and all(w["valid"] for w in words)
    return {"legal": play.legal, "reason": play.reason, "message": play.message,
            "words": words, "score": play.score if counts else 0,
            "bingo": play.bingo and counts}
