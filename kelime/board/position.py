"""A board position: the letters on a game's board, which of them are blanks, and the
squares' bonuses; read from the JSON the service and the CLI take.

A cell is ``""`` (empty), a letter of the game (``"ş"``) or ``"?"`` + a letter (a blank
played as that letter), read as NFC (``s`` + U+0327 is ``ş``). Rows and columns count from
0; the centre of a 15 × 15 board is row 7, column 7.

    >>> from kelime.games import get_game
    >>> board = [[""] * 15 for _ in range(15)]
    >>> board[7][6:9] = ["k", "?e", "l"]
    >>> spot = Position.read(board, get_game("kelimelik"))
    >>> spot.letter(7, 7), spot.value(7, 6), spot.value(7, 7), spot.empty
    ('e', 1, 0, False)
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import excerpt
from ..games import BLANK, Game
from ..games.layout import BoardLayout
from .errors import BoardShapeError


@dataclass(frozen=True)
class Position:
    """`letters[row][col]` is ``""`` or a letter; `blanks` the squares whose tile is a blank."""

    game: Game
    layout: BoardLayout
    letters: tuple[tuple[str, ...], ...]
    blanks: frozenset[tuple[int, int]]

    @classmethod
    def read(cls, board: Any, game: Game) -> Position:
        """The position of a JSON board; BoardShapeError names the first bad row or cell."""
        layout = board_of(game)
        size = layout.size
        if not isinstance(board, list) or len(board) != size:
            raise BoardShapeError(f"the board must be {size} rows of {size} cells (the "
                                  f"{game.name} board), not {_length(board)}",
                                  {"size": size})
        letters, blanks = [], set()
        for r, row in enumerate(board):
            if not isinstance(row, list) or len(row) != size:
                raise BoardShapeError(f"row {r} of the board must be {size} cells, not "
                                      f"{_length(row)}", {"size": size, "row": r})
            line = []
            for c, cell in enumerate(row):
                if isinstance(cell, str) and not cell.isascii():
                    cell = unicodedata.normalize("NFC", cell)  # ş as s + U+0327 is ş
                letter = cell[1:] if isinstance(cell, str) and cell[:1] == BLANK else cell
                if cell != "" and (not isinstance(letter, str)
                                   or letter not in game.letter_values):
                    raise BoardShapeError(
                        f"the cell at row {r}, column {c} is {excerpt(cell)}: a cell is \"\" "
                        f"(empty), a letter of {game.name} ({''.join(game.letter_values)}) "
                        f"or \"?\" and a letter (a blank played as that letter)",
                        {"row": r, "col": c})
                line.append(letter)
                if cell[:1] == BLANK:
                    blanks.add((r, c))
            letters.append(tuple(line))
        return cls(game, layout, tuple(letters), frozenset(blanks))

    @property
    def size(self) -> int:
        return self.layout.size

    @property
    def empty(self) -> bool:
        return not any(any(row) for row in self.letters)

    def letter(self, row: int, col: int) -> str:
        return self.letters[row][col]

    def value(self, row: int, col: int) -> int:
        """What the tile on a square scores: its letter's value, a blank's `blank_value`."""
        if (row, col) in self.blanks:
            return self.game.blank_value
        return self.game.letter_values[self.letters[row][col]]

    def on(self, row: int, col: int) -> bool:
        return 0 <= row < self.size and 0 <= col < self.size

    def rows(self) -> list[list[str]]:
        """The board as JSON cells again."""
        return [[("?" + ch if (r, c) in self.blanks else ch) for c, ch in enumerate(row)]
                for r, row in enumerate(self.letters)]


def board_of(game: Game) -> BoardLayout:
    """The game's board; BoardShapeError when it is not a board game."""
    if game.board is None or not game.board.bonuses:
        raise BoardShapeError(f"{game.name} is not played on a board: ask a board game "
                              f"(kelimelik, sozce)", {"game": game.name})
    return game.board


def _length(value: Any) -> str:
    return f"{len(value)}" if isinstance(value, Sequence) and not isinstance(value, str) \
        else f"a {type(value).__name__}"
