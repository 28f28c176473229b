"""Covering a hand with words: the exact search behind `split`.

A hand is a multiset of tile kinds packed in one int (WIDTH bits per kind); each usage
(see `usages`) is packed the same way, so taking one is a subtraction. Leaving a tile of
kind k over costs ``costs[k]``; the search finds the least total cost.

It takes the remaining multiset's first kind in the given order (rarest first: the kind the
fewest usages hold) and either leaves one such tile over or covers it with a usage that
fits and holds it, memoising each multiset's result. Two cuts keep it small: the best
layout found so far (a call only looks for something cheaper than its `limit`, and a
result at or over it is only a lower bound, memoised as such), and a floor (tiles no
fitting usage can hold are left over whatever happens). Usages are kept as bit sets, so
the usages that fit a multiset are one OR per tile kind. At `deadline` it raises
OutOfTime; the caller answers its best layout so far.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter

from .bits import from_ids, ids
from .usages import Usage

WIDTH = 5               # bits per tile kind in a packed multiset
MASK = (1 << WIDTH) - 1
CHECK_EVERY = 256       # search steps between looks at the clock


class OutOfTime(Exception):
    """The search reached its deadline."""


class Cover:
    """The memoised search over packed multisets of the hand's tile kinds."""

    def __init__(self, kinds: list[str], costs: list[int], usages: list[Usage],
                 clock: Callable[[], float], deadline: float):
        self.kinds, self.costs, self.clock, self.deadline = kinds, costs, clock, deadline
        self.position = position = {k: i for i, k in enumerate(kinds)}
        shift = {k: WIDTH * i for k, i in position.items()}
        value = {k: costs[i] for k, i in position.items()}
        keyed = []
        for u in usages:
            takes = u.takes
            keyed.append((-sum([value[k] * n for k, n in takes.items()]), u.order, u.singles,
                          u.multi, sum([n << shift[k] for k, n in takes.items()]), u))
        keyed.sort(key=itemgetter(0, 1, 2, 3))  # most valuable first, then Turkish order
        # (`Usage.order`: a word's id, no collation key to compute for each)
        self.usages = [row[5] for row in keyed]
        self.packed = [row[4] for row in keyed]
        self.everyone = (1 << len(self.usages)) - 1
        self._tables(position)
        self.memo: dict[int, tuple[int, bool]] = {}
        self.choice: dict[int, int | None] = {}
        self.steps = 0

    def pack(self, counts: dict[str, int]) -> int:
        """A multiset of tile kinds as one int, WIDTH bits per kind."""
        return sum(n << (WIDTH * self.position[k]) for k, n in counts.items())

    def _tables(self, position: dict[str, int]) -> None:
        """need[k][c]: usages taking ≥ c of kind k; first[k]: usages whose first kind is k
        (each set made from its members' ids at once: ORing in one bit at a time would copy
        a set as wide as the usages every time)."""
        need: list[list[list[int]]] = [[[]] for _ in self.kinds]
        first: list[list[int]] = [[] for _ in self.kinds]
        for j, usage in enumerate(self.usages):
            low = len(self.kinds)
            for k, n in usage.takes.items():
                at = position[k]
                low = min(low, at)
                planes = need[at]
                while len(planes) <= n:
                    planes.append([])
                for c in range(1, n + 1):
                    planes[c].append(j)
            first[low].append(j)
        size = len(self.usages) // 8 + 1
        self.need = [[self.everyone, *(from_ids(members, size) for members in planes[1:])]
                     for planes in need]
        for row in self.need:
            if len(row) < 2:
                row.append(0)
        self.first = [from_ids(members, size) for members in first]

    def count(self, m: int, k: int) -> int:
        """How many tiles of kind `k` multiset `m` holds."""
        return (m >> (WIDTH * k)) & MASK

    def fitting(self, m: int) -> int:
        """The usages that fit in multiset `m`."""
        over = 0
        for k, planes in enumerate(self.need):
            c = self.count(m, k) + 1
            if c < len(planes):
                over |= planes[c]
        return self.everyone ^ (self.everyone & over)

    def floor(self, m: int, fits: int) -> int:
        """A lower bound: the cost of the tiles no fitting usage can hold."""
        return sum(self.costs[k] * self.count(m, k) for k in range(len(self.kinds))
                   if self.count(m, k) and not fits & self.need[k][1])

    def tick(self) -> None:
        """Count a step; look at the clock on the first and every CHECK_EVERY-th."""
        self.steps += 1
        if self.steps % CHECK_EVERY == 1 and self.clock() > self.deadline:
            raise OutOfTime

    def solve(self, m: int, limit: int) -> int:
        """The least leftover cost of `m` when below `limit`; otherwise a bound ≥ `limit`."""
        if m == 0:
            return 0
        known = self.memo.get(m)
        if known is not None and (known[1] or known[0] >= limit):
            return known[0]
        self.tick()
        fits = self.fitting(m)
        floor = self.floor(m, fits)
        if floor >= limit:
            self.memo[m] = (floor, False)
            return floor
        k = next(i for i in range(len(self.kinds)) if self.count(m, i))
        cost = self.costs[k]
        best, choice = cost + self.solve(m - (1 << (WIDTH * k)), limit - cost), None
        for j in ids(fits & self.first[k]):
            if best <= floor:
                break
            got = self.solve(m - self.packed[j], min(best, limit))
            if got < best:
                best, choice = got, j
        self.memo[m] = (best, best < limit)
        if best < limit:
            self.choice[m] = choice
        return best

    def layout(self, m: int) -> tuple[list[Usage], list[str]]:
        """The best layout of `m` the search proved: (usages, leftover kinds)."""
        laid, left = [], []
        while m:
            j = self.choice[m]
            if j is None:
                k = next(i for i in range(len(self.kinds)) if self.count(m, i))
                left.append(self.kinds[k])
                m -= 1 << (WIDTH * k)
            else:
                laid.append(self.usages[j])
                m -= self.packed[j]
        return laid, left

    def greedy(self, m: int) -> tuple[int, list[Usage], list[str]]:
        """A quick layout to beat: the most valuable usage that fits, again and again."""
        laid = []
        while True:
            fits = self.fitting(m)
            if not fits:
                break
            j = (fits & -fits).bit_length() - 1
            laid.append(self.usages[j])
            m -= self.packed[j]
        left = [self.kinds[k] for k in range(len(self.kinds)) for _ in range(self.count(m, k))]
        return sum(self.costs[self.kinds.index(k)] for k in left), laid, left
