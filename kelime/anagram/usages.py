"""Usages: the distinct multisets of tiles with which a hand can lay each word.

A word laid under a plan (see `plan`) takes its two-letter tiles, real tiles for as many of
its other letters as the hand holds, and blanks for the rest; with blanks to spare, a blank
may also stand in for any of those real tiles, which frees the tile for another word.
Usages are counted over the hand's tile *kinds* (``"a"``, ``"?"``, ``"lm"`` …).

    >>> from kelime.anagram.rack import parse_rack
    >>> from kelime.anagram.plan import plans
    >>> rack = parse_rack("kale?")
    >>> [u.tiles for u in word_usages("kal", plans(rack, None, False)[0], rack)]
    [('k', 'a', 'l'), ('k', '?a', 'l'), ('?k', 'a', 'l'), ('k', 'a', '?l')]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from .bits import ids
from .index import AnagramIndex
from .plan import Plan, plans
from .rack import BLANK, Rack
from .select import candidates
from .tiles import lay, place


@dataclass(frozen=True)
class Usage:
    """One way to lay one word: the single tiles, two-letter tiles and blanks it takes."""

    word: str
    singles: str              # the single tiles' letters, sorted
    multi: tuple[str, ...]
    blanks: int

    @cached_property
    def takes(self) -> dict[str, int]:
        """Tile kind → how many of it the word takes."""
        out: dict[str, int] = {}
        for kind in (*self.singles, *self.multi, *(BLANK * self.blanks)):
            out[kind] = out.get(kind, 0) + 1
        return out

    @property
    def tiles(self) -> tuple[str, ...]:
        """The word's tiles in word order."""
        letters: dict[str, int] = {}
        for ch in self.singles:
            letters[ch] = letters.get(ch, 0) + 1
        starts = place(self.word, None, self.multi)
        assert starts is not None  # a usage's two-letter tiles fit its word: it was laid
        return tuple(lay(self.word, None, self.multi, starts, letters))


def _need(word: str, multi: tuple[str, ...]) -> str | None:
    """The word's letters, sorted, less those its two-letter tiles cover (None: it lacks one)."""
    letters = "".join(sorted(word))
    for ch in "".join(multi):
        at = letters.find(ch)
        if at < 0:
            return None
        letters = letters[:at] + letters[at + 1:]
    return letters


def _real(need: str, rack: Rack) -> str:
    """The letters of `need` (sorted) that the rack's single tiles cover."""
    taken: list[str] = []
    used: dict[str, int] = {}
    for ch in need:
        n = used.get(ch, 0)
        if n < rack.letters.get(ch, 0):
            used[ch] = n + 1
            taken.append(ch)
    return "".join(taken)


def _spared(real: str, spare: int) -> list[str]:
    """`real` less every sub-multiset of at most `spare` letters (those a blank replaces)."""
    found = {real: None}
    layer = [real]
    for _ in range(spare):
        layer = [s[:i] + s[i + 1:] for s in layer for i in range(len(s))
                 if i == 0 or s[i] != s[i - 1]]
        found.update(dict.fromkeys(layer))
    return list(found)


def word_usages(word: str, plan: Plan, rack: Rack) -> list[Usage]:
    """The usages of `word` under `plan` (none when the rack cannot lay it so)."""
    need = _need(word, plan.multi) if place(word, None, plan.multi) is not None else None
    if need is None:
        return []
    real = _real(need, rack)
    if len(need) - len(real) > rack.blanks:
        return []
    spare = rack.blanks - (len(need) - len(real))
    return [Usage(word, singles, plan.multi, len(need) - len(singles))
            for singles in _spared(real, spare)]


def hand_usages(index: AnagramIndex, rack: Rack, min_length: int,
                late: Callable[[], bool] = lambda: False) -> list[Usage]:
    """Every distinct usage of every word the hand can lay, one word per tile multiset;
    when `late()` turns true, those found so far (the split then answers incomplete)."""
    seen: dict[tuple[str, tuple[str, ...], int], Usage] = {}  # by its tiles
    done: set[tuple[tuple[str, ...], str]] = set()  # (two-letter tiles, letters sorted)
    for n, plan in enumerate(plans(rack, None, exact=False)):
        if n and late():  # the plan of single tiles is always listed: it lays the most words
            break
        found = candidates(index, rack, plan, min_length, rack.letter_count, False, None)
        for i in ids(found):
            word = index.word(i)
            shape = (plan.multi, "".join(sorted(word)))
            if shape in done:  # an anagram of a word already seen: the same usages
                continue
            done.add(shape)
            for usage in word_usages(word, plan, rack):
                seen.setdefault((usage.singles, usage.multi, usage.blanks), usage)
    return list(seen.values())
