"""Covering a hand with words: the exact search behind `split`.

A hand is a multiset of tile kinds packed in one int (WIDTH bits per kind); each usage
(see `usages`) is packed the same way, so taking one is a subtraction. Leaving a tile of
kind k over costs ``costs[k]``; the search finds the least total cost.

It takes the remaining multiset's first kind in its order (rarest first, set by
`Cover.of_rows`: the kind the fewest usages hold) and either leaves one such tile over or
covers it with a usage that fits and holds it, memoising each multiset's result. Two cuts
keep it small: the best layout found so far (a call only looks for something cheaper than
its `limit`, and a result at or over it is only a lower bound, memoised as such), and a
floor (tiles no fitting usage can hold are left over whatever happens). Usages are kept as
bit sets, so the usages that fit a multiset are one OR per tile kind. At `deadline` it
raises OutOfTime; the caller answers its best layout so far.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import mul

from .bits import ids
from .rack import BLANK
from .usages import Row

WIDTH = 8               # bits per tile kind in a packed multiset: one byte, read by to_bytes
MASK = (1 << WIDTH) - 1
MOST = 31               # the most tiles of one kind a hand may hold
CHECK_EVERY = 256       # search steps between looks at the clock
#: AT_LEAST[c]: a byte → b"1" when it is ≥ c, else b"0" (for `bytes.translate`).
AT_LEAST = [bytes(0x31 if v >= c else 0x30 for v in range(256)) for c in range(MOST + 1)]


class OutOfTime(Exception):
    """The search reached its deadline."""


def _members(counts: bytes, c: int) -> int:
    """The set of the positions in `counts` that hold c or more."""
    return int(counts.translate(AT_LEAST[c])[::-1] or b"0", 2)


class Cover:
    """The memoised search over packed multisets of the hand's tile kinds."""

    def __init__(self, kinds: list[str], costs: list[int], rows: list[Row],
                 counts: list[bytes], clock: Callable[[], float], deadline: float):
        """`kinds` rarest first, `rows` most valuable first, `counts[j]`: row j's count of
        each kind (see `of_rows`)."""
        self.kinds, self.costs, self.clock, self.deadline = kinds, costs, clock, deadline
        self.position = {k: i for i, k in enumerate(kinds)}
        self.usages = rows
        self.packed = [int.from_bytes(c, "little") for c in counts]
        self.everyone = (1 << len(rows)) - 1
        self._tables(counts)
        self.memo: dict[int, tuple[int, bool]] = {}
        self.choice: dict[int, int | None] = {}
        self.steps = 0

    @classmethod
    def of_rows(cls, kinds: list[str], costs: list[int], rows: list[Row],
                clock: Callable[[], float], deadline: float) -> Cover:
        """The search over `rows` packed in the order of `kinds` (`costs[i]`: leaving a tile
        of kinds[i] over): the kinds reordered rarest first (held by the fewest rows, the
        blank last of equals), the rows most valuable first, then in Turkish order (a
        word's id, no collation key to compute for each)."""
        n = len(kinds)
        counts = [row[4].to_bytes(n, "little") for row in rows]
        held = [len(col) - col.count(0) for col in zip(*counts)] if rows else [0] * n
        order = sorted(range(n), key=lambda p: (held[p], kinds[p] == BLANK, kinds[p]))
        value = [sum(map(mul, c, costs)) for c in counts]
        ranked = sorted(range(len(rows)), key=lambda j: (-value[j], *rows[j][:3]))
        columns = list(zip(*[counts[j] for j in ranked])) if rows else [()] * n
        moved = [columns[p] for p in order]
        return cls([kinds[p] for p in order], [costs[p] for p in order],
                   [rows[j] for j in ranked], [bytes(c) for c in zip(*moved)] if rows else [],
                   clock, deadline)

    def pack(self, counts: dict[str, int]) -> int:
        """A multiset of tile kinds as one int, WIDTH bits per kind."""
        return sum(n << (WIDTH * self.position[k]) for k, n in counts.items())

    def _tables(self, counts: list[bytes]) -> None:
        """need[k][c]: usages taking ≥ c of kind k; first[k]: usages whose first kind is k
        (each set made from one column of counts at once, by `bytes.translate`)."""
        columns = [bytes(col) for col in zip(*counts)] if counts else [b""] * len(self.kinds)
        self.need = [[self.everyone, *(_members(col, c) for c in range(1, max(col, default=0)
                                                                        + 1))]
                     for col in columns]
        for row in self.need:
            if len(row) < 2:
                row.append(0)
        self.first, seen = [], 0
        for row in self.need:
            self.first.append(row[1] ^ (row[1] & seen))
            seen |= row[1]

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

    def layout(self, m: int) -> tuple[list[Row], list[str]]:
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

    def greedy(self, m: int) -> tuple[int, list[Row], list[str]]:
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
