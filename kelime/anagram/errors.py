"""What an anagram or split question can do wrong, as the errors kelime already knows::

    QueryError (kelime.errors)                  code, message, over_limit, details
    └── AnagramError (also a ValueError)        .status: 422, or 413 when over a limit
        ├── RackError        invalid_rack       a rack that is not tiles (``kale[lm``)
        │   └── RackNotDealt  rack_not_dealt    tiles the game cannot deal (3 two-letter
        │                                       tiles in Kelimatik); "what_if" lifts it
        ├── PatternError     invalid_pattern    a board slot that is not ``.`` and letters
        ├── OptionError      invalid_option     mode, sort, lengths or limit out of range
        │   └── GameMismatch  game_not_for_lexicon  (409) a game not of the lexicon's letters
        └── OverLimit        over_limit         more tiles, blanks, results … than allowed
    LexiconError (kelime.errors)
    └── IndexFormatError (also a ValueError)    an anagram index that is damaged or foreign
"""

from __future__ import annotations

from typing import Any

from ..errors import LexiconError, QueryError


class AnagramError(QueryError, ValueError):
    """A question that cannot be answered as asked; the message says what to change."""

    CODE = "invalid_query"
    STATUS = 422  # a malformed question

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(self.CODE, message, isinstance(self, OverLimit), details)

    @property
    def status(self) -> int:
        return 413 if self.over_limit else self.STATUS


class RackError(AnagramError):
    """A rack that cannot be read as tiles."""

    CODE = "invalid_rack"


class RackNotDealt(RackError):
    """Tiles the game cannot deal: more than its hand, fewer than a fixed hand, more blanks
    or of a letter than its bag, a makeup its rules do not deal (`deal`). A question that
    asks "what if" (`what_if`) is answered anyway."""

    CODE = "rack_not_dealt"


class PatternError(AnagramError):
    """A board pattern that cannot be read."""

    CODE = "invalid_pattern"


class OptionError(AnagramError):
    """An option (mode, sort, lengths, limit) that is not one kelime knows."""

    CODE = "invalid_option"


class GameMismatch(OptionError):
    """A game whose tiles are not the lexicon's letters (Turkish Kelimatik and the Kurmanji
    lexicon): a well-formed question that the lexicons and games of this server cannot
    answer together (HTTP 409)."""

    CODE = "game_not_for_lexicon"
    STATUS = 409


class OverLimit(AnagramError):
    """A question bigger than the limits allow (HTTP 413)."""

    CODE = "over_limit"


class IndexFormatError(LexiconError, ValueError):
    """An anagram index file that is not one, is damaged, or is of another version."""
