"""Laying one word with tiles: where two-letter tiles go, and which tile covers each letter.

    >>> place("olmaz", None, ("lm",)), lay("olmaz", None, ("lm",), (1,), {"a": 1, "z": 1})
    ((1,), ['?o', 'lm', 'a', 'z'])
    >>> lay("kitap", "k.t.p", (), (), {"i": 1, "a": 1})
    ['k', 'i', 't', 'a', 'p']

Board letters (pattern squares that are not ``.``) appear in the tiles as plain letters;
the pattern tells which they are. Real tiles cover letters from the left; a blank covers
each letter no real tile is left for (``"?l"``). Any such choice scores the same.
"""

from __future__ import annotations

from .rack import BLANK, FREE


def place(word: str, squares: str | None, multi: tuple[str, ...]) -> tuple[int, ...] | None:
    """Where each multi-letter tile starts (on free squares, not overlapping), or None.

    None also when the word does not fit the pattern's board letters.
    """
    if squares is None:
        return _place(word, multi, frozenset(), ()) if multi else ()
    if len(word) != len(squares) or any(s != FREE and s != c for s, c in zip(squares, word)):
        return None
    return _place(word, multi, frozenset(i for i, s in enumerate(squares) if s != FREE), ())


def _place(word: str, multi: tuple[str, ...], taken: frozenset[int],
           starts: tuple[int, ...]) -> tuple[int, ...] | None:
    if len(starts) == len(multi):
        return starts
    tile = multi[len(starts)]
    at = word.find(tile)
    while at >= 0:
        span = frozenset(range(at, at + len(tile)))
        if not span & taken:
            found = _place(word, multi, taken | span, starts + (at,))
            if found is not None:
                return found
        at = word.find(tile, at + 1)
    return None


def lay(word: str, squares: str | None, multi: tuple[str, ...], starts: tuple[int, ...],
        letters: dict[str, int]) -> list[str]:
    """The word's tiles in order, given the multi tiles' starts and the rack's single letters."""
    if squares is None and not multi:
        return _singles(word, letters)
    spans = dict(zip(starts, multi))
    left = dict(letters)
    tiles, i = [], 0
    while i < len(word):
        ch = word[i]
        if squares is not None and squares[i] != FREE:
            tiles.append(ch)
        elif i in spans:
            tiles.append(spans[i])
            i += len(spans[i])
            continue
        elif left.get(ch):
            left[ch] -= 1
            tiles.append(ch)
        else:
            tiles.append(BLANK + ch)
        i += 1
    return tiles


def _singles(word: str, letters: dict[str, int]) -> list[str]:
    """`lay` for a word of single tiles and blanks only (the common case, kept quick)."""
    return lay_singles(word, letters, {}, 0)[0]


def lay_singles(word: str, letters: dict[str, int], values: dict[str, int],
                blank_value: int) -> tuple[list[str], int]:
    """(tiles, their value) of a word laid with single tiles and blanks only."""
    left, tiles, value = dict(letters), [], 0
    for ch in word:
        n = left.get(ch)
        if n:
            left[ch] = n - 1
            tiles.append(ch)
            value += values.get(ch, 0)
        else:
            tiles.append(BLANK + ch)
            value += blank_value
    return tiles, value
