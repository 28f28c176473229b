"""Racks, board patterns and exclude lists, read from what people type.

A rack is one letter per tile, ``?`` for a blank/joker and ``[xy]`` for a two-letter tile;
a pattern is one square per character, ``.`` for a square the rack fills and a letter for
a tile already on the board. Both go through `normalize` first (case, circumflexes):

    >>> parse_rack("KALE?[LM]").tiles
    ('k', 'a', 'l', 'e', '?', 'lm')
    >>> str(parse_rack("âdet")), parse_pattern("K.T.P").board
    ('adet', {'k': 1, 't': 1, 'p': 1})

A bracket holds exactly two letters: ``[l]`` and ``[lmn]`` are refused rather than
guessed at (one letter needs no brackets; no game has a tile of three letters).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property

from ..normalize import TURKISH, WHITESPACE, Alphabet, normalize
from .errors import AnagramError, OptionError, OverLimit, PatternError, RackError
from .limits import Limits

BLANK = "?"
FREE = "."
MULTI_LETTERS = 2
EXAMPLE = "e.g. kale?[lm]"


@dataclass(frozen=True)
class Rack:
    """A rack's tiles in the order written: letters, ``"?"`` blanks, ``"lm"`` two-letter tiles."""

    tiles: tuple[str, ...]

    @cached_property
    def letters(self) -> dict[str, int]:
        """Single-letter tiles: letter → count."""
        return dict(Counter(t for t in self.tiles if len(t) == 1 and t != BLANK))

    @cached_property
    def blanks(self) -> int:
        return self.tiles.count(BLANK)

    @cached_property
    def multi(self) -> tuple[str, ...]:
        """Two-letter tiles, sorted."""
        return tuple(sorted(t for t in self.tiles if len(t) > 1))

    @property
    def letter_count(self) -> int:
        """Letters the rack can lay: a two-letter tile counts 2."""
        return sum(len(t) for t in self.tiles)

    def __len__(self) -> int:
        return len(self.tiles)

    def __str__(self) -> str:
        return "".join(f"[{t}]" if len(t) > 1 else t for t in self.tiles)


@dataclass(frozen=True)
class Pattern:
    """A slot on the board: ``.`` squares filled from the rack, letters already there."""

    squares: str

    @cached_property
    def board(self) -> dict[str, int]:
        """Letters already on the board: letter → count."""
        return dict(Counter(ch for ch in self.squares if ch != FREE))

    @property
    def free(self) -> int:
        return self.squares.count(FREE)

    def __len__(self) -> int:
        return len(self.squares)


def _describe(ch: str) -> str:
    return f"{ch!r} (U+{ord(ch):04X})"


def _normalized(text: object, what: str, alphabet: Alphabet, limits: Limits,
                error: Callable[..., AnagramError]) -> str:
    """The text normalised; refuses non-text, empty and over-long input, control characters."""
    if not isinstance(text, str):
        raise error(f"the {what} must be text, not {type(text).__name__}")
    if len(text) > limits.text_chars:
        raise OverLimit(f"the {what} is {len(text)} characters; the limit is {limits.text_chars}",
                        {"limit": limits.text_chars})
    text = normalize(text, alphabet)
    if not text:
        raise error(f"the {what} is empty")
    for pos, ch in enumerate(text, 1):
        if unicodedata.category(ch) == "Cc" and ch not in WHITESPACE:
            raise error(f"the {what} has the control character U+{ord(ch):04X} at position "
                        f"{pos}; remove it", {"position": pos, "character": ch})
    return text


def _not_a_tile(ch: str, pos: int, alphabet: Alphabet) -> RackError:
    details = {"position": pos, "character": ch}
    if ch in WHITESPACE:
        return RackError(f"the rack has a space at position {pos}: write the tiles together, "
                         f"{EXAMPLE}", details)
    hint = "; write a blank as ?" if ch in "*_." else ""
    return RackError(f"{_describe(ch)} at position {pos} is not a letter of this lexicon "
                     f"({alphabet.letters}){hint}", details)


def _bracket(text: str, start: int, alphabet: Alphabet) -> tuple[str, int]:
    """The two-letter tile opened at `start` and the index after its ``]``."""
    pos = start + 1
    end = text.find("]", start)
    nested = text.find("[", start + 1)
    if end < 0:
        raise RackError(f"the '[' at position {pos} is never closed: write a two-letter tile as "
                        f"[lm]", {"position": pos})
    if 0 <= nested < end:
        raise RackError(f"'[' inside a bracket at position {nested + 1}: brackets do not nest; "
                        f"a two-letter tile is written [lm]", {"position": nested + 1})
    tile = text[start + 1:end]
    for offset, ch in enumerate(tile, pos + 1):
        if ch == BLANK:
            raise RackError(f"a two-letter tile holds letters, not '?' (position {offset})",
                            {"position": offset})
        if ch not in alphabet.letter_set:
            raise _not_a_tile(ch, offset, alphabet)
    if len(tile) != MULTI_LETTERS:
        what = "is empty" if not tile else f"has {len(tile)} letter{'s' * (len(tile) > 1)}"
        raise RackError(f"the bracket at position {pos} {what}: a bracket holds a two-letter "
                        f"tile such as [lm]; write single tiles without brackets",
                        {"position": pos, "tile": tile})
    return tile, end + 1


def _tiles(text: str, alphabet: Alphabet) -> list[str]:
    tiles, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "[":
            tile, i = _bracket(text, i, alphabet)
            tiles.append(tile)
            continue
        if ch == "]":
            raise RackError(f"the ']' at position {i + 1} has no '[' before it",
                            {"position": i + 1})
        if ch != BLANK and ch not in alphabet.letter_set:
            raise _not_a_tile(ch, i + 1, alphabet)
        tiles.append(ch)
        i += 1
    return tiles


def parse_rack(text: str, alphabet: Alphabet = TURKISH, limits: Limits = Limits()) -> Rack:
    """The rack `text` describes; RackError or OverLimit says what to fix."""
    tiles = _tiles(_normalized(text, "rack", alphabet, limits, RackError), alphabet)
    if len(tiles) > limits.rack_tiles:
        raise OverLimit(f"the rack has {len(tiles)} tiles; the limit is {limits.rack_tiles}",
                        {"limit": limits.rack_tiles, "tiles": len(tiles)})
    blanks = tiles.count(BLANK)
    if blanks > limits.blanks:
        raise OverLimit(f"the rack has {blanks} blanks; the limit is {limits.blanks}",
                        {"limit": limits.blanks, "blanks": blanks})
    pairs = sum(len(t) > 1 for t in tiles)  # each one can double the plans a search tries
    if pairs > limits.two_letter_tiles:
        raise OverLimit(f"the rack has {pairs} two-letter tiles; the limit is "
                        f"{limits.two_letter_tiles}",
                        {"limit": limits.two_letter_tiles, "two_letter_tiles": pairs})
    return Rack(tuple(tiles))


def parse_pattern(text: str, alphabet: Alphabet = TURKISH, limits: Limits = Limits()) -> Pattern:
    """The board slot `text` describes (``k.t.p``); PatternError or OverLimit says what to fix."""
    squares = _normalized(text, "pattern", alphabet, limits, PatternError)
    for pos, ch in enumerate(squares, 1):
        if ch != FREE and ch not in alphabet.letter_set:
            raise PatternError(f"{_describe(ch)} at position {pos} of the pattern is neither '.' "
                               f"(a square the rack fills) nor a letter on the board",
                               {"position": pos, "character": ch})
    if FREE not in squares:
        raise PatternError("the pattern has no '.' square for the rack to fill, e.g. k.t.p")
    if len(squares) > limits.pattern_length:
        raise OverLimit(f"the pattern has {len(squares)} squares; the limit is "
                        f"{limits.pattern_length}", {"limit": limits.pattern_length})
    return Pattern(squares)


def parse_exclude(words: Iterable[str] | None, alphabet: Alphabet = TURKISH,
                  limits: Limits = Limits()) -> frozenset[str]:
    """The normalised words to leave out of the answers."""
    if isinstance(words, str):
        raise OptionError(f"exclude must be a list of words, not the text {words[:20]!r}")
    words = list(words or ())
    if len(words) > limits.exclude_words:
        raise OverLimit(f"exclude has {len(words)} words; the limit is {limits.exclude_words}",
                        {"limit": limits.exclude_words})
    for word in words:
        if not isinstance(word, str):
            raise OptionError(f"exclude must be a list of words, not of {type(word).__name__}")
    return frozenset(normalize(w, alphabet) for w in words)
