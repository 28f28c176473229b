"""How big a question may be. The service reads its limits once and passes them down."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """The largest rack, pattern, answer and search an anagram or split question may ask."""

    rack_tiles: int = 16         # a Harfbank hand is 15
    blanks: int = 2              # blanks/jokers in one rack (and never more than the game has)
    two_letter_tiles: int = 4    # two-letter tiles in one rack: the search goes through the
                                 # ways to lay them, at most 2 ** this many
    results: int = 1000          # the largest `limit` a query may ask for
    default_results: int = 100   # `limit` when the query names none
    pattern_length: int = 15     # a board row
    exclude_words: int = 1000    # words in `exclude`
    text_chars: int = 256        # characters of rack or pattern text, before parsing
    time_budget: float = 0.5     # seconds a split may search before answering its best so far
