"""Which words a rack can make under one plan, as a set of word ids (see `bits`).

A word qualifies when it has the plan's forced letters and its other letters exceed the
rack's single tiles by at most the rack's blanks. The excess is counted per word in
saturating bit-sliced counters, one letter at a time: about 30 × (blanks + 1)² set
operations whatever the rack's size. Two-letter tiles and board letters are then checked
in place, word by word, on the few words left.
"""

from __future__ import annotations

from .bits import from_ids, ids
from .index import AnagramIndex
from .plan import Plan
from .rack import Rack
from .tiles import place


def thresholds(rack: Rack, plan: Plan) -> dict[str, int]:
    """How many of each letter the word may hold before a blank is needed."""
    limits = dict(plan.forced)
    for letter, n in rack.letters.items():
        limits[letter] = limits.get(letter, 0) + n
    return limits


def over_blanks(index: AnagramIndex, limits: dict[str, int], blanks: int) -> int:
    """The words whose letters exceed `limits` by more than `blanks` in all."""
    at_least = [index.all] + [0] * (blanks + 1)  # at_least[j]: excess so far ≥ j
    for letter in index.alphabet.letters:
        planes = index.count_planes(letter)  # planes[c]: the words with ≥ c of the letter
        base = limits.get(letter, 0)
        if base + 1 >= len(planes):
            continue
        excess = [index.all, *planes[base + 1:base + blanks + 2]]  # excess[i]: exceed by ≥ i
        for j in range(blanks + 1, 0, -1):
            acc = at_least[j] | (excess[j] if j < len(excess) else 0)
            for i in range(1, min(j, len(excess))):
                acc |= at_least[j - i] & excess[i]
            at_least[j] = acc
    return at_least[blanks + 1]


def _all_tiles(index: AnagramIndex, limits: dict[str, int], blanks: int) -> int:
    """The words taking exactly every tile: all the letters, and one letter per blank."""
    size = sum(limits.values()) + blanks
    found = index.length_between(size, size)
    for letter, n in limits.items():
        found &= index.plane(letter, n)
    return found


def _some_tiles(index: AnagramIndex, plan: Plan, limits: dict[str, int], blanks: int) -> int:
    """The words holding the plan's forced letters, their others within the rack's reach."""
    found = index.all
    for letter, n in plan.forced.items():
        found &= index.plane(letter, n)
    return found ^ (found & over_blanks(index, limits, blanks)) if found else 0


def _placed(index: AnagramIndex, found: int, plan: Plan, squares: str | None) -> int:
    """Those of `found` whose two-letter tiles and board letters fit in place."""
    fits = (i for i in ids(found) if place(index.word(i), squares, plan.multi) is not None)
    return from_ids(fits, index.nbytes)


def candidates(index: AnagramIndex, rack: Rack, plan: Plan, low: int, high: int,
               exact: bool, squares: str | None) -> int:
    """The words of `low` … `high` letters the rack makes under `plan`."""
    limits = thresholds(rack, plan)
    found = index.length_between(low, min(high, sum(limits.values()) + rack.blanks))
    if found and exact:
        found &= _all_tiles(index, limits, rack.blanks)
    elif found:
        found &= _some_tiles(index, plan, limits, rack.blanks)
    if found and (plan.multi or squares is not None):
        found = _placed(index, found, plan, squares)
    return found
