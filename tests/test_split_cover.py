"""The split's fast preparation: `hand_rows` packs each usage one byte per tile kind, and
`Cover.of_rows` orders the kinds and builds its bit tables from those bytes; every table is
checked here against the usages counted one by one."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import pytest

from kelime.anagram import AnagramIndex, build_index, parse_rack, split
from kelime.anagram.cover import MOST, WIDTH, Cover
from kelime.anagram.limits import Limits
from kelime.anagram.rack import BLANK
from kelime.anagram.split import SCALE
from kelime.anagram.usages import hand_kinds, hand_rows, hand_usages, usage
from kelime.games import get_game
from kelime.lexicon import compile_words
from kelime.sources import bootstrap_candidates
from tests.test_anagram_support import check_layout, plain_best

HARFBANK = get_game("harfbank")


@pytest.fixture(scope="module")
def bootstrap():
    words = compile_words(bootstrap_candidates()).words
    return set(words), AnagramIndex.from_buffer(build_index(words))


def hands(count: int, seed: int):
    """Hands of 8–14 tiles from kelimelik's bag, with a joker and two-letter tiles or not."""
    rnd = random.Random(seed)
    bag = "".join(ch * n for ch, n in get_game("kelimelik").letter_counts.items())
    for _ in range(count):
        yield parse_rack("".join(rnd.sample(bag, rnd.choice([8, 10, 12, 13])))
                         + rnd.choice(["?", "", "[ar]", "[lm]", "?[ar]"]))


def cover(index, rack) -> Cover:
    kinds = hand_kinds(rack)
    return Cover.of_rows(kinds, [HARFBANK.left_value(k) * SCALE + 1 for k in kinds],
                         hand_rows(index, rack, 3), lambda: 0.0, 1.0)


def test_a_row_packs_the_tiles_its_usage_takes_one_byte_per_kind(bootstrap):
    _, index = bootstrap
    for rack in hands(8, seed=3):
        kinds = hand_kinds(rack)
        assert kinds == sorted(set(rack.tiles))
        for row in hand_rows(index, rack, 3):
            counts = row[4].to_bytes(len(kinds), "little")
            assert dict(zip(kinds, counts)) == {k: usage(index, row).takes.get(k, 0)
                                                for k in kinds}


def test_one_row_per_way_to_lay_a_word(bootstrap):
    """No two rows of a word take the same tiles (test_anagram_split holds the rows' usages
    equal to every way found the slow way)."""
    _, index = bootstrap
    for rack in hands(5, seed=4):
        rows = hand_rows(index, rack, 3)
        assert rows and len({row[:4] for row in rows}) == len(rows)


def test_the_kinds_go_rarest_first_and_the_tables_say_what_each_usage_takes(bootstrap):
    """need, first and the packed ints of `Cover.of_rows`, against each usage's `takes`."""
    _, index = bootstrap
    for rack in hands(6, seed=5):
        search = cover(index, rack)
        usages = [usage(index, row) for row in search.usages]
        held = Counter(k for u in usages for k in u.takes)
        assert search.kinds == sorted(set(rack.tiles),
                                      key=lambda k: (held[k], k == BLANK, k))
        assert search.costs == [HARFBANK.left_value(k) * SCALE + 1 for k in search.kinds]
        for j, u in enumerate(usages):
            bit = 1 << j
            assert search.packed[j] == search.pack(u.takes)
            for k, kind in enumerate(search.kinds):
                planes = search.need[k]
                assert [bool(planes[c] & bit) for c in range(1, len(planes))] == \
                    [u.takes.get(kind, 0) >= c for c in range(1, len(planes))]
            low = min(search.kinds.index(kind) for kind in u.takes)
            assert [bool(f & bit) for f in search.first] == \
                [k == low for k in range(len(search.kinds))]


def test_the_usages_that_fit_a_multiset(bootstrap):
    _, index = bootstrap
    rnd = random.Random(6)
    for rack in hands(6, seed=6):
        search = cover(index, rack)
        usages = [usage(index, row) for row in search.usages]
        for _ in range(5):
            part = Counter(rnd.sample(list(rack.tiles), rnd.randint(2, len(rack.tiles))))
            fits = search.fitting(search.pack(part))
            assert [bool(fits >> j & 1) for j in range(len(usages))] == \
                [not Counter(u.takes) - part for u in usages]


def test_the_answer_is_the_least_penalty_over_the_rows(bootstrap):
    """Split (rows all through) against a plain search over `Usage` objects."""
    words, index = bootstrap
    for rack in hands(12, seed=7):
        answer = split(index, rack, HARFBANK, deadline=10.0**9, what_if=True)
        check_layout(answer, list(rack.tiles), HARFBANK, words)
        assert (answer.penalty, len(answer.discarded)) == \
            plain_best(list(rack.tiles), hand_usages(index, rack, 3), HARFBANK)


def test_a_byte_per_kind_holds_the_most_tiles_a_hand_may_hold():
    assert MOST < 1 << WIDTH
    index = AnagramIndex.from_buffer(build_index(["aaa", "aaaa"]))
    big = replace(HARFBANK, rack_size=40)
    answer = split(index, "a" * MOST + "b", big, Limits(rack_tiles=40), deadline=10.0**9,
                   what_if=True)
    assert answer.discarded == ("b",) and answer.complete
    assert sum(len(w.word) for w in answer.words) == MOST
