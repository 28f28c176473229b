"""Sets of word ids as Python ints (bit i set ⇔ word i is in), and numbers per word held
bit-sliced: a list of such sets, slice j holding bit j of every word's number.

An AND or OR of two 60,000-bit sets costs about 0.3 µs, so a question about every word of
the lexicon is a few hundred such operations. Never negate a set (``~x`` makes a negative
int and costs 10×): subtract with ``x ^ (x & y)``.

    >>> ids(0b10110), members(0b10110).tolist(), from_ids([1, 2, 4], 1)
    ([1, 2, 4], [1, 2, 4], 22)
    >>> s = []; add(s, 0b011, 3); add(s, 0b110, 1); values(s, 3)   # 3·{0,1} + 1·{1,2}
    [3, 4, 1]
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

_ONE = re.compile("1")
#: Word ids as an array (`members`), ascending.
Ids = npt.NDArray[np.intp]


def ids(bits: int) -> list[int]:
    """The members of a set, ascending."""
    text = bin(bits)
    last = len(text) - 1
    found = [last - m.start() for m in _ONE.finditer(text, 2)]
    found.reverse()
    return found


def members(bits: int) -> Ids:
    """The members of a set, ascending, as an array: what a question's listed words are read
    from, each step one call into C over every word (~25 µs for the ~1,000 members of a
    40,773-bit set; `ids` ~140 µs, but it is quicker for a set of a few members)."""
    raw = np.frombuffer(bits.to_bytes((bits.bit_length() + 7) // 8, "little"), np.uint8)
    return np.unpackbits(raw, bitorder="little").view(np.bool_).nonzero()[0]


def from_ids(members: Iterable[int], nbytes: int) -> int:
    """The set of `members` (each < 8 × nbytes)."""
    buf = bytearray(nbytes)
    for i in members:
        buf[i >> 3] |= 1 << (i & 7)
    return int.from_bytes(buf, "little")


def add(slices: list[int], members: int, weight: int) -> None:
    """Add `weight` ≥ 0 to the number of every member (in place)."""
    if weight < 0:
        raise ValueError(f"bit-sliced numbers are never negative (weight {weight})")
    bit = 0
    while weight:
        if weight & 1:
            _carry(slices, members, bit)
        weight >>= 1
        bit += 1


def _carry(slices: list[int], carry: int, bit: int) -> None:
    while carry:
        if bit >= len(slices):
            slices.extend([0] * (bit - len(slices)))
            slices.append(carry)
            return
        here = slices[bit]
        slices[bit] = here ^ carry
        carry &= here
        bit += 1


def plus(a: list[int], b: list[int]) -> list[int]:
    """The per-member sum of two bit-sliced numbers."""
    out = list(a)
    for bit, members in enumerate(b):
        _carry(out, members, bit)
    return out


def product(a: list[int], b: list[int]) -> list[int]:
    """The per-member product of two bit-sliced numbers (shift and add)."""
    out: list[int] = []
    for shift, members in enumerate(b):
        if members:
            out = plus(out, [0] * shift + restrict(a, members))
    return out


def restrict(slices: list[int], members: int) -> list[int]:
    """The numbers of `members` only (0 for everyone else)."""
    return [s & members for s in slices]


def greater(a: list[int], b: list[int], universe: int) -> int:
    """The members of `universe` whose number in `a` is larger than in `b`."""
    width = max(len(a), len(b))
    a, b = a + [0] * (width - len(a)), b + [0] * (width - len(b))
    more, tied = 0, universe
    for j in reversed(range(width)):
        differ = a[j] ^ b[j]
        more |= tied & differ & a[j]
        tied ^= tied & differ
    return more


def at_least(slices: list[int], k: int, universe: int) -> int:
    """The members of `universe` whose number is at least `k`."""
    more, tied = 0, universe
    for j in reversed(range(max(len(slices), k.bit_length()))):
        here = slices[j] if j < len(slices) else 0
        if k >> j & 1:
            tied &= here
        else:
            more |= tied & here
    return more | tied


def maximum(a: list[int], b: list[int], universe: int) -> list[int]:
    """The larger of two numbers for every member of `universe`."""
    take_a = greater(a, b, universe)
    take_b = universe ^ take_a
    width = max(len(a), len(b))
    a, b = a + [0] * (width - len(a)), b + [0] * (width - len(b))
    return [(x & take_a) | (y & take_b) for x, y in zip(a, b)]


def top(slices: list[int], universe: int, n: int) -> tuple[int, int, int]:
    """Split off the members with the `n` largest numbers: (above, tied, how many of tied).

    ``above`` have numbers larger than the n-th largest; ``tied`` have exactly it; the
    answer is ``above`` plus that many members of ``tied``.
    """
    if universe.bit_count() <= n:
        return universe, 0, 0
    above, level, need = 0, universe, n
    for j in reversed(range(len(slices))):
        high = level & slices[j]
        count = high.bit_count()
        if count >= need:
            level = high
        else:
            above |= high
            need -= count
            level ^= high
    return above, level, need


def values(slices: list[int], n: int) -> list[int]:
    """The numbers of members 0 … n−1 (for tests and examples)."""
    return [sum(((s >> i) & 1) << j for j, s in enumerate(slices)) for i in range(n)]
