"""A board as text, the one format `kelime play`/`kelime moves` read and the page's paste
box takes: one line a row, one character a square.

- ``.`` an empty square, a lower-case letter a tile, an upper-case letter a blank standing
  for that letter (Turkish casing: ``İ`` a blank i, ``I`` a blank ı);
- as many lines as the board has rows, each as many characters as it has columns (15 × 15);
  blank lines and spaces at the end of a line are ignored;
- or the API's JSON: a board (an array of rows of cells, `kelime.board.position`), or an
  object whose ``"board"`` is one (a POST /v1/play or /v1/moves body), when the text starts
  with ``[`` or ``{``.

A board that cannot be read is a BoardShapeError naming the line and column of the text
(counted from 1, as an editor counts) and the row and column of the board (from 0).

    >>> from kelime.games import get_game
    >>> text = "\\n".join(["." * 15] * 7 + [".......kAl....."] + ["." * 15] * 7)
    >>> spot = read_board(text, get_game("kelimelik"))
    >>> spot.letter(7, 8), (7, 8) in spot.blanks, board_text(spot) == text + "\\n"
    ('a', True, True)
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from ..errors import excerpt
from ..games import BLANK, Game
from ..normalize import Alphabet, turkish_lower
from .errors import BoardShapeError
from .position import Position, board_of

EMPTY = "."


def alphabet_of(game: Game) -> Alphabet:
    """The game's letters, cased as the language cases them (Turkish when it has a ı)."""
    return Alphabet("".join(game.letter_values))


def letter_of(ch: str, game: Game, alphabet: Alphabet | None = None) -> tuple[str, bool] | None:
    """(letter, blank?) of a square's character: a letter of the game is its tile, the same
    letter in upper case a blank (``İ`` → ("i", True), ``I`` → ("ı", True)); None otherwise."""
    if ch in game.letter_values:
        return ch, False
    lower = turkish_lower(ch, alphabet or alphabet_of(game))
    return (lower, True) if lower != ch and lower in game.letter_values else None


def read_board(text: str, game: Game) -> Position:
    """The position `text` draws (the format above); BoardShapeError says where it is wrong."""
    if text.lstrip("\ufeff \t\r\n")[:1] in ("[", "{"):
        return Position.read(_json_board(text), game)
    size = board_of(game).size
    alphabet, letters = alphabet_of(game), "".join(game.letter_values)
    rows: list[list[str]] = []
    for number, line in enumerate(text.removeprefix("\ufeff").splitlines(), 1):
        line = unicodedata.normalize("NFC", line.rstrip())
        if not line:
            continue
        r = len(rows)
        if r == size:
            raise BoardShapeError(f"line {number} is a row too many: a {game.name} board is "
                                  f"{size} rows (blank lines do not count)",
                                  {"line": number, "size": size})
        if len(line) != size:
            raise BoardShapeError(f"line {number} (row {r}) has {len(line)} squares, not "
                                  f"{size}: one character a square, {EMPTY!r} an empty one",
                                  {"line": number, "row": r, "size": size})
        row = []
        for c, ch in enumerate(line):
            if ch == EMPTY:
                row.append("")
                continue
            if (tile := letter_of(ch, game, alphabet)) is None:
                raise BoardShapeError(
                    f"line {number}, column {c + 1} (row {r}, column {c}) is {ch!r}: a square "
                    f"is {EMPTY!r} (empty), a letter of {game.name} ({letters}) or the same "
                    f"letter in upper case (a blank played as that letter: İ for i, I for ı)",
                    {"line": number, "column": c + 1, "row": r, "col": c})
            letter, blank = tile
            row.append(BLANK + letter if blank else letter)
        rows.append(row)
    if rows and len(rows) < size:
        raise BoardShapeError(f"the board has {len(rows)} rows, not {size}: a {game.name} "
                              f"board is {size} lines of {size} squares ({EMPTY!r} an empty one)",
                              {"rows": len(rows), "size": size})
    return Position.read(rows or [[""] * size for _ in range(size)], game)


def _json_board(text: str) -> Any:
    try:
        board = json.loads(text.removeprefix("\ufeff"))
    except json.JSONDecodeError as e:
        raise BoardShapeError(f"the board is not JSON: {e.msg} at line {e.lineno}, column "
                              f"{e.colno}", {"line": e.lineno, "column": e.colno}) from None
    if isinstance(board, dict):
        if "board" not in board:
            raise BoardShapeError(f"the JSON object has no \"board\" (its keys: "
                                  f"{excerpt(', '.join(map(str, board)))}): give the board, "
                                  f"or a /v1/play or /v1/moves body", {})
        board = board["board"]
    return board


def board_text(spot: Position) -> str:
    """`spot` in the text format, each row a line (`read_board` reads it back)."""
    alphabet = alphabet_of(spot.game)
    return "".join("".join(_square(ch, (r, c) in spot.blanks, alphabet)
                           for c, ch in enumerate(row)) + "\n"
                   for r, row in enumerate(spot.letters))


def _square(letter: str, blank: bool, alphabet: Alphabet) -> str:
    if not letter:
        return EMPTY
    return upper(letter, alphabet) if blank else letter


def upper(letter: str, alphabet: Alphabet) -> str:
    """A letter in upper case by the alphabet's casing: i → İ and ı → I when it has a ı."""
    if "ı" in alphabet.letter_set and letter in "iı":
        return "İ" if letter == "i" else "I"
    return letter.upper()


__all__ = ["alphabet_of", "board_text", "letter_of", "read_board", "upper"]
