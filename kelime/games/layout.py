"""A board game's board: its size and where its bonus squares are, as plain data.

A profile's ``[board]`` table gives the size and the layout, one line a row of
two-character squares (``..`` plain, ``H2``/``H3`` a letter ×2/×3, ``K2``/``K3`` the word
×2/×3), row 0 at the top; or ``layout_from`` another game's name, whose layout it uses::

    [board]
    size = 15
    layout_from = "kelimelik"   # Sözce: its rules publish no layout

    >>> from kelime.games import get_game
    >>> board = get_game("kelimelik").board
    >>> board.size, board.centre, board.bonus(7, 7), board.bonus(0, 2), board.bonus(0, 0)
    (15, (7, 7), 'K2', 'K3', '')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

BONUSES = ("H2", "H3", "K2", "K3")
PLAIN = ".."


@dataclass(frozen=True)
class BoardLayout:
    """`size` × `size` squares; `bonuses[row][col]` is ``""`` or one of `BONUSES`."""

    size: int
    bonuses: tuple[tuple[str, ...], ...]
    layout_from: str | None = None     # the game whose layout this board copies, if any

    @property
    def centre(self) -> tuple[int, int]:
        return self.size // 2, self.size // 2

    def bonus(self, row: int, col: int) -> str:
        return self.bonuses[row][col]

    def letter_multiplier(self, row: int, col: int) -> int:
        bonus = self.bonuses[row][col]
        return int(bonus[1]) if bonus[:1] == "H" else 1

    def word_multiplier(self, row: int, col: int) -> int:
        bonus = self.bonuses[row][col]
        return int(bonus[1]) if bonus[:1] == "K" else 1

    def as_dict(self) -> dict[str, Any]:
        """What ``GET /v1/games`` shows of the board."""
        return {"size": self.size, "centre": {"row": self.centre[0], "col": self.centre[1]},
                "bonuses": [list(row) for row in self.bonuses], "layout_from": self.layout_from}


def parse_layout(text: str, size: int) -> tuple[tuple[str, ...], ...] | str:
    """The bonus rows of a layout text, or what is wrong with it."""
    rows = [line.split() for line in text.strip().splitlines()]
    if len(rows) != size or any(len(row) != size for row in rows):
        shape = f"{len(rows)} rows of {', '.join(sorted({str(len(r)) for r in rows}))} squares"
        return f"`layout` must be {size} rows of {size} squares, not {shape}"
    odd = sorted({s for row in rows for s in row} - {PLAIN, *BONUSES})
    if odd:
        return (f"`layout` squares must be {PLAIN} or one of {', '.join(BONUSES)}, "
                f"not {', '.join(odd)}")
    return tuple(tuple("" if s == PLAIN else s for s in row) for row in rows)
