"""Plans: the ways a rack's two-letter tiles can take part in a word.

A word may lay any sub-multiset of the rack's two-letter tiles as units (``exact`` mode:
all of them); each choice is one plan, and a word's best score is its best over the plans.
A plan's `forced` letters are those the word must hold beyond the single tiles: the
letters of its two-letter tiles and the pattern's board letters.

    >>> from kelime.anagram.rack import parse_rack
    >>> [p.multi for p in plans(parse_rack("ab[lm][lm]"), None, exact=False)]
    [(), ('lm',), ('lm', 'lm')]
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import combinations

from .rack import Pattern, Rack


@dataclass(frozen=True)
class Plan:
    """Which two-letter tiles a word lays as units, and the letters the word must hold."""

    multi: tuple[str, ...]
    board: dict[str, int]   # letters already on the board (the pattern's)
    forced: dict[str, int]  # the board letters plus the letters of `multi`

    @property
    def on_board(self) -> int:
        """Squares of the word already on the board."""
        return sum(self.board.values())

    @property
    def extra(self) -> int:
        """Letters beyond one per tile: 1 per two-letter tile."""
        return sum(len(t) - 1 for t in self.multi)


def plans(rack: Rack, pattern: Pattern | None, exact: bool) -> list[Plan]:
    """Every plan for the rack, the plan without two-letter tiles first."""
    board = pattern.board if pattern is not None else {}
    sizes = [len(rack.multi)] if exact else range(len(rack.multi) + 1)
    chosen = sorted({c for n in sizes for c in combinations(rack.multi, n)},
                    key=lambda c: (len(c), c))
    return [_plan(c, board) for c in chosen]


def _plan(multi: tuple[str, ...], board: dict[str, int]) -> Plan:
    forced = Counter(board)
    for tile in multi:
        forced.update(tile)
    return Plan(multi, dict(board), dict(forced))
