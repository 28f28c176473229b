"""Sets of words as ints and bit-sliced numbers, against plain Python lists."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kelime.anagram import bits

numbers = st.lists(st.integers(0, 300), min_size=1, max_size=70)


def sliced(values: list[int]) -> list[int]:
    slices: list[int] = []
    for i, v in enumerate(values):
        bits.add(slices, 1 << i, v)
    return slices


@given(st.sets(st.integers(0, 2000)))
def test_ids_members_and_from_ids(members):
    ordered = sorted(members)
    as_int = bits.from_ids(ordered, 251)
    assert as_int == sum(1 << i for i in members)
    assert bits.ids(as_int) == ordered
    assert bits.members(as_int).tolist() == ordered


@given(numbers, st.data())
def test_arithmetic(a, data):
    b = data.draw(st.lists(st.integers(0, 300), min_size=len(a), max_size=len(a)))
    everyone = (1 << len(a)) - 1
    n = len(a)
    assert bits.values(sliced(a), n) == a
    assert bits.values(bits.plus(sliced(a), sliced(b)), n) == [x + y for x, y in zip(a, b)]
    assert bits.values(bits.product(sliced(a), sliced(b)), n) == [x * y for x, y in zip(a, b)]
    assert bits.values(bits.maximum(sliced(a), sliced(b), everyone), n) == list(map(max, a, b))
    assert bits.ids(bits.greater(sliced(a), sliced(b), everyone)) == [
        i for i in range(n) if a[i] > b[i]]
    k = data.draw(st.integers(0, 700))
    assert bits.ids(bits.at_least(sliced(a), k, everyone)) == [i for i in range(n) if a[i] >= k]


@given(numbers, st.integers(0, 80), st.data())
def test_top_takes_the_largest_numbers_smallest_ids_first(a, n, data):
    members = data.draw(st.sets(st.integers(0, len(a) - 1)))
    universe = bits.from_ids(members, 9)
    above, tied, need = bits.top(bits.restrict(sliced(a), universe), universe, n)
    chosen = sorted(bits.ids(above) + bits.ids(tied)[:need])
    assert chosen == sorted(sorted(members, key=lambda i: (-a[i], i))[:n])
