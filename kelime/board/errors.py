"""What a board question can do wrong (HTTP 422, or 413 over a limit)::

    QueryError (kelime.errors)
    └── BoardError (also a ValueError)   .status 422
        ├── BoardShapeError   invalid_board   a board that is not size × size cells of the game
        ├── TilesError        invalid_tiles   tiles off the board, on a taken square, twice on
        │                                     one square, not a letter of the game, too many
        ├── BoardRackError    invalid_rack    a rack that is not the game's letters and `?`
        └── BoardOverLimit    over_limit      (413) a rack of more tiles or blanks than the
                                              game's

A rack the game cannot deal (two j's in kelimelik) is the anagram's `RackNotDealt`
(``rack_not_dealt``, 422: `kelime.anagram.deal`), raised by `moves.read_rack` unless it is
asked "what if"; BoardOverLimit holds either way.
"""

from __future__ import annotations

from typing import Any

from ..errors import QueryError


class BoardError(QueryError, ValueError):
    """A board question that cannot be answered as asked; the message says what to fix."""

    CODE = "invalid_board"

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(self.CODE, message, isinstance(self, BoardOverLimit), details)

    @property
    def status(self) -> int:
        return 413 if self.over_limit else 422


class BoardShapeError(BoardError):
    """A board that is not `size` rows of `size` cells, each empty, a letter or a blank."""


class TilesError(BoardError):
    """Tiles that cannot be laid at all (as opposed to a legal-or-not placement)."""

    CODE = "invalid_tiles"


class BoardRackError(BoardError):
    """A rack of tiles that are not the game's letters or `?`."""

    CODE = "invalid_rack"


class BoardOverLimit(BoardError):
    """A rack bigger than the game's (HTTP 413)."""

    CODE = "over_limit"
