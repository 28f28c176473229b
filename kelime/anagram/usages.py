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
from dataclasses import dataclass, field
from functools import cached_property

from .bits import ids
from .index import AnagramIndex
from .plan import Plan, plans
from .rack import BLANK, Rack
from .select import candidates, over_blanks
from .tiles import lay, place


@dataclass(frozen=True)
class Usage:
    """One way to lay one word: the single tiles, two-letter tiles and blanks it takes."""

    word: str
    singles: str              # the single tiles' letters, sorted
    multi: tuple[str, ...]
    blanks: int
    #: The word's place in Turkish order (its id in the index; 0 when not known), which
    #: `cover.Cover` sorts by.
    order: int = field(default=0, compare=False, repr=False)

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
        assert starts is not None  # a usage is only made of a word its tiles fit
        return tuple(lay(self.word, None, self.multi, starts, letters))


def _need(word: str, letters: str, multi: tuple[str, ...]) -> str | None:
    """The word's `letters` (sorted) less those its two-letter tiles cover (None: it lacks
    one)."""
    for ch in "".join(multi):
        at = letters.find(ch)
        if at < 0:
            return None
        letters = letters[:at] + letters[at + 1:]
    return letters


def _real(need: str, have: dict[str, int]) -> str:
    """The letters of `need` (sorted) that single tiles (`have`: letter → count) cover."""
    return "".join([ch * min(need.count(ch), have.get(ch, 0)) for ch in dict.fromkeys(need)])


def _spared(real: str, spare: int) -> list[str]:
    """`real` less every sub-multiset of at most `spare` letters (those a blank replaces)."""
    found = {real: None}
    layer = [real]
    for _ in range(spare):
        layer = [s[:i] + s[i + 1:] for s in layer for i in range(len(s))
                 if i == 0 or s[i] != s[i - 1]]
        found.update(dict.fromkeys(layer))
    return list(found)


def _layings(word: str, plan: Plan, rack: Rack, letters: str) -> list[tuple[str, int]]:
    """(single tiles' letters, blanks) of each way to lay `word` (its `letters` sorted)
    under `plan`."""
    if plan.multi and place(word, None, plan.multi) is None:
        return []
    need = _need(word, letters, plan.multi)
    if need is None:
        return []
    real = _real(need, rack.letters)
    missing = len(need) - len(real)
    if missing > rack.blanks:
        return []
    return [(singles, len(need) - len(singles))
            for singles in _spared(real, rack.blanks - missing)]


def word_usages(word: str, plan: Plan, rack: Rack) -> list[Usage]:
    """The usages of `word` under `plan` (none when the rack cannot lay it so)."""
    return [Usage(word, singles, plan.multi, blanks)
            for singles, blanks in _layings(word, plan, rack, "".join(sorted(word)))]


def _short_of_one(index: AnagramIndex, have: dict[str, int],
                  found: int) -> tuple[dict[int, str], int]:
    """Of `found`, ({word id: its one letter} for the words that hold one letter more than
    the single tiles `have`, the words that hold more than one too many): one bit-plane
    AND a letter, where looking at every word's letters would cost ~2 µs a word."""
    short = found & over_blanks(index, have, 0)
    one = short ^ (short & over_blanks(index, have, 1))
    beyond: dict[int, str] = {}
    for letter in index.alphabet.letters:
        planes = index.count_planes(letter)
        c = have.get(letter, 0) + 1
        if c < len(planes) and one & planes[c]:
            beyond.update(dict.fromkeys(ids(one & planes[c]), letter))
    return beyond, short ^ one


#: A usage as a plain row, cheaper to make than a `Usage`: (word id, single tiles' letters
#: sorted, two-letter tiles, blanks, the tiles it takes packed one byte per kind in the order
#: of `hand_kinds`).
Row = tuple[int, str, tuple[str, ...], int, int]


def hand_kinds(rack: Rack) -> list[str]:
    """The hand's tile kinds, sorted: the order a `Row` packs them in."""
    return sorted(set(rack.tiles))


def hand_rows(index: AnagramIndex, rack: Rack, min_length: int,
              late: Callable[[], bool] = lambda: False) -> list[Row]:
    """Every distinct usage of every word the hand can lay, one word per tile multiset (the
    first in Turkish order, under the first plan that lays it), as rows; when `late()` turns
    true, those found so far (the split then answers incomplete)."""
    unit = {k: 1 << (8 * i) for i, k in enumerate(hand_kinds(rack))}
    blank = unit.get(BLANK, 0)
    seen: dict[tuple[str, tuple[str, ...], int], Row] = {}
    for n, plan in enumerate(plans(rack, None, exact=False)):
        if n and late():  # the plan of single tiles is always listed: it lays the most words
            break
        multi = plan.multi
        base = sum([unit[t] for t in multi])
        found = candidates(index, rack, plan, min_length, rack.letter_count, False, None)
        beyond, many = _short_of_one(index, rack.letters, found) if not multi else ({}, 0)
        general = set(ids(many)) if many else set()
        done: set[str] = set()  # the sorted letters of the words seen under this plan
        for i in ids(found):
            letters = index.letters(i)
            if letters in done:  # an anagram of a word already seen: the same usages
                continue
            done.add(letters)
            if multi or i in general:
                layings = _layings(index.word(i), plan, rack, letters)
            else:  # single tiles for every letter, or all but one
                letter = beyond.get(i)
                real = letters if letter is None else letters.replace(letter, "", 1)
                spare = rack.blanks - (letter is not None)
                size = len(letters)
                layings = [(singles, size - len(singles))
                           for singles in (_spared(real, spare) if spare else (real,))]
            for singles, blanks in layings:
                key = (singles, multi, blanks)
                if key not in seen:
                    seen[key] = (i, singles, multi, blanks,
                                 base + blanks * blank + sum(map(unit.__getitem__, singles)))
    return list(seen.values())


def usage(index: AnagramIndex, row: Row) -> Usage:
    """The `Usage` a row stands for."""
    i, singles, multi, blanks, _ = row
    return Usage(index.word(i), singles, multi, blanks, i)


def hand_usages(index: AnagramIndex, rack: Rack, min_length: int,
                late: Callable[[], bool] = lambda: False) -> list[Usage]:
    """`hand_rows` as `Usage` objects."""
    return [usage(index, row) for row in hand_rows(index, rack, min_length, late)]
