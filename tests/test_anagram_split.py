"""Harfbank splits: every layout re-checked tile by tile, optimal on small hands, and a
hand made of words always splits."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kelime.anagram import (
    AnagramIndex,
    OverLimit,
    RackNotDealt,
    build_index,
    parse_rack,
    split,
)
from kelime.anagram.cover import Cover
from kelime.anagram.limits import Limits
from kelime.anagram.plan import plans
from kelime.anagram.split import SCALE
from kelime.anagram.usages import hand_kinds, hand_rows, hand_usages, usage, word_usages
from kelime.games import get_game
from kelime.lexicon import compile_words
from kelime.normalize import sort_key
from kelime.sources import bootstrap_candidates
from tests.test_anagram_support import LETTERS, best_split, check_layout, plain_best, rack_text

HARFBANK = get_game("harfbank")
WORDS = ["kale", "kalem", "elma", "olmaz", "masa", "kitap", "ilmek", "arı", "kar", "sıra"]
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@pytest.fixture(scope="module")
def index():
    return AnagramIndex.from_buffer(build_index(WORDS))


def test_a_hand_of_words_is_found(index):
    # kalem, masa, and [ar] + ? = arı (a hand of 11: what if)
    answer = split(index, "kalemmasa[ar]?", HARFBANK, what_if=True)
    check_layout(answer, list(parse_rack("kalemmasa[ar]?").tiles), HARFBANK, set(WORDS))
    assert answer.found and answer.complete and answer.penalty == 0 and not answer.discarded
    assert ("arı", ("ar", "?ı")) in [(w.word, w.tiles) for w in answer.words]


def test_leftovers_cost_their_values(index):
    answer = split(index, "kalemzz", HARFBANK, what_if=True)
    assert answer.as_dict() == {"found": False, "complete": True,
                                "words": [{"word": "kalem", "tiles": ["k", "a", "l", "e", "m"]}],
                                "discarded": ["z", "z"], "penalty": 8, "thrown": None,
                                "others_penalty_multiplier": None}


def test_the_fifteenth_tile_is_thrown_away_free(index):
    hand = "kalemmasakitapj"  # 15 tiles: three words and a j
    answer = split(index, hand, HARFBANK, what_if=True)
    assert answer.found and answer.thrown == "j" and answer.discarded == ()
    assert answer.penalty == 0 and [w.word for w in answer.words] == ["kalem", "kitap", "masa"]
    assert answer.others_penalty_multiplier == 1


def test_with_a_joker_to_spare_the_joker_is_thrown_and_doubles_the_others_penalty(index):
    """"joker (sahte okey) ile biterseniz diğer oyunculara 2 kat ceza yazılır": one field
    says so, from the profile."""
    answer = split(index, "kalemmasakitap?", HARFBANK, what_if=True)
    assert answer.found and answer.thrown == "?" and answer.discarded == ()
    assert answer.as_dict()["others_penalty_multiplier"] == 2
    assert HARFBANK.joker_finish_multiplier == 2 and HARFBANK.as_dict()["blank_penalty"] == 0
    assert "multiplies the other players' penalty by 2" in HARFBANK.score_formula


def test_a_leftover_joker_costs_the_profile_s_left_penalty(index):
    from dataclasses import replace

    free = split(index, "kalem?", HARFBANK, what_if=True)  # a joker left over costs 0
    assert (free.discarded, free.penalty) == (("?",), 0)
    costly = split(index, "kalem?", replace(HARFBANK, blank_penalty=25), what_if=True)
    assert (costly.discarded, costly.penalty) == (("a",), 1)  # ilmek with the joker as i


def test_sixteen_tiles_are_too_many(index):
    with pytest.raises(RackNotDealt, match="Harfbank deals 14 tiles"):
        split(index, "kalemmasakitapzz", HARFBANK)


def test_two_letter_tiles_stay_whole(index):
    answer = split(index, "ie[lm]k", HARFBANK, what_if=True)
    assert answer.found and answer.words[0].tiles == ("i", "lm", "e", "k")
    assert not split(index, "ie[ml]k", HARFBANK, what_if=True).found


def test_out_of_time_answers_the_best_so_far(index):
    ticks = iter(range(10**6))  # a clock that has passed the deadline at its first reading
    answer = split(index, "kalemmasa?r[ar]", HARFBANK, clock=lambda: next(ticks), deadline=-1,
                   what_if=True)
    assert not answer.complete and answer.words  # the quick layout it started from
    check_layout(answer, list(parse_rack("kalemmasa?r[ar]").tiles), HARFBANK, set(WORDS))


def test_the_answer_shape(index):
    assert set(split(index, "kale", HARFBANK, what_if=True).as_dict()) == {
        "found", "complete", "words", "discarded", "penalty", "thrown",
        "others_penalty_multiplier"}


lexicons = st.lists(st.text(alphabet=LETTERS, min_size=3, max_size=6), min_size=1, max_size=25)


@st.composite
def hands(draw, lexicon: list[str], game) -> list[str]:
    """Tiles of 1–3 lexicon words, some letters as a joker or a two-letter tile."""
    chosen = draw(st.lists(st.sampled_from(lexicon), min_size=1, max_size=3))
    tiles = []
    for word in chosen:
        i = 0
        while i < len(word):
            if i + 1 < len(word) and draw(st.integers(0, 4)) == 0:
                tiles.append(word[i:i + 2])
                i += 2
            else:
                tiles.append(word[i])
                i += 1
    singles = [i for i, t in enumerate(tiles) if len(t) == 1]
    if singles and draw(st.booleans()):
        tiles[draw(st.sampled_from(singles))] = "?"
    return draw(st.permutations(tiles))


ANY_TILES = Limits(two_letter_tiles=16)  # racks made of words can hold many two-letter tiles


@SETTINGS
@given(st.data(), lexicons)
def test_tiles_of_words_always_split(data, lexicon):
    tiles = data.draw(hands(lexicon, HARFBANK))
    if len(tiles) > HARFBANK.rack_size:
        return
    answer = split(AnagramIndex.from_buffer(build_index(lexicon)), rack_text(tiles), HARFBANK,
                   ANY_TILES, deadline=10.0**9, what_if=True)
    check_layout(answer, tiles, HARFBANK, set(lexicon))
    assert answer.found and answer.complete


@SETTINGS
@given(st.data(), lexicons)
def test_small_hands_get_the_least_penalty(data, lexicon):
    tiles = data.draw(hands(lexicon, HARFBANK))[:data.draw(st.integers(1, 10))]
    tiles += data.draw(st.lists(st.sampled_from(LETTERS + "zj"), max_size=2))
    answer = split(AnagramIndex.from_buffer(build_index(lexicon)), rack_text(tiles), HARFBANK,
                   ANY_TILES, deadline=10.0**9, what_if=True)
    check_layout(answer, tiles, HARFBANK, set(lexicon))
    left = len(answer.discarded)
    assert (answer.penalty, left) == best_split(tiles, HARFBANK, lexicon)


@SETTINGS
@given(st.data(), lexicons)
def test_a_fifteen_tile_hand_throws_the_best_tile(data, lexicon):
    small = replace(HARFBANK, rack_size=5)
    tiles = data.draw(hands(lexicon, small))[:5]
    tiles += data.draw(st.lists(st.sampled_from(LETTERS + "zj"), min_size=1, max_size=1))
    if len(tiles) != small.rack_size + 1:
        return
    answer = split(AnagramIndex.from_buffer(build_index(lexicon)), rack_text(tiles), small,
                   ANY_TILES, deadline=10.0**9, what_if=True)
    check_layout(answer, tiles, small, set(lexicon))
    left = len(answer.discarded)
    assert answer.thrown is not None
    assert (answer.penalty, left) == best_split(tiles, small, lexicon)


def test_cost_scale_leaves_room_for_every_tile():
    assert SCALE > 16  # a leftover tile costs value × SCALE + 1: counts never reach the value


@pytest.fixture(scope="module")
def bootstrap():
    words = compile_words(bootstrap_candidates()).words
    return set(words), AnagramIndex.from_buffer(build_index(words))


def real_hands(count: int, seed: int = 1):
    """Hands of 13–15 tiles drawn from kelimelik's bag, with a joker or two-letter tile."""
    rnd = random.Random(seed)
    bag = "".join(ch * n for ch, n in get_game("kelimelik").letter_counts.items())
    for _ in range(count):
        size = rnd.choice([11, 12, 13])
        yield "".join(rnd.sample(bag, size)) + rnd.choice(["?", "", "[ar]", "[lm]", "?[ar]"])


def test_real_hands_get_the_least_penalty(bootstrap):
    """Big hands on the real word list, against a plain search without bounds or pruning."""
    words, index = bootstrap
    found = 0
    for text in real_hands(30):
        rack = parse_rack(text)
        answer = split(index, rack, HARFBANK, what_if=True, deadline=10.0**9)
        check_layout(answer, list(rack.tiles), HARFBANK, words)
        reference = plain_best(list(rack.tiles), hand_usages(index, rack, 3), HARFBANK)
        assert (answer.penalty, len(answer.discarded)) == reference
        found += answer.found
    assert 0 < found < 30  # both kinds of hand were tried


def test_more_tiles_of_one_kind_than_the_search_packs_are_refused(index):
    """The search once packed each tile kind in 5 bits: a 32nd `a` overflowed into the next
    kind (32 × a "laid out whole" with no words); it still takes at most 31."""
    big = replace(HARFBANK, rack_size=40)
    with pytest.raises(OverLimit) as err:
        split(index, "a" * 32, big, Limits(rack_tiles=40), what_if=True)
    assert "32 tiles of one kind; a split takes at most 31" in str(err.value)


def test_listing_the_words_counts_against_the_time_budget(index):
    """The budget used to start only after every way to lay every word was listed."""
    readings = iter(range(10**6))
    answer = split(index, "kalemmasa[ar][lm]?", HARFBANK, clock=lambda: next(readings) * 1.0,
                   deadline=2.0, what_if=True)
    assert not answer.complete
    check_layout(answer, list(parse_rack("kalemmasa[ar][lm]?").tiles), HARFBANK, set(WORDS))


def test_a_hand_for_a_game_without_the_one_to_throw_says_so(index):
    with pytest.raises(RackNotDealt) as err:
        split(index, "kalemler", get_game("kelimelik"))
    assert str(err.value).startswith("Kelimelik gives a rack of at most 7 tiles; this rack "
                                     "has 8; fix the rack, or ask anyway")


def _usages_word_by_word(index, rack, min_length: int) -> list[tuple]:
    """What `hand_usages` lists, the slow way: every word's letters looked at, every usage
    made (`word_usages`), the first of each multiset kept."""
    seen: dict[tuple, tuple] = {}
    done: set = set()
    for plan in plans(rack, None, exact=False):
        for i in range(len(index)):
            word = index.word(i)
            shape = (plan.multi, "".join(sorted(word)))
            if not min_length <= len(word) <= rack.letter_count or shape in done:
                continue
            usages = word_usages(word, plan, rack)
            if usages:
                done.add(shape)
            for u in usages:
                seen.setdefault((u.singles, u.multi, u.blanks), (u.word, u.singles, u.multi,
                                                                 u.blanks, i))
    return list(seen.values())


def test_the_hands_usages_are_those_of_every_word_looked_at_one_by_one(bootstrap):
    """`hand_usages` tells which letter a word lacks from bit planes, and makes a Usage only
    for a new multiset: the same usages, of the same words (with their ids, the Turkish
    order `Cover` sorts by), as looking at every word of the lexicon, whatever the blanks
    and two-letter tiles."""
    _, index = bootstrap
    rnd = random.Random(5)
    bag = "".join(ch * n for ch, n in get_game("kelimelik").letter_counts.items())
    for blanks in ("", "?", "??", "?[ar]"):
        for _ in range(3):
            rack = parse_rack("".join(rnd.sample(bag, rnd.choice([6, 9]))) + blanks)
            fast = [(u.word, u.singles, u.multi, u.blanks, u.order)
                    for u in hand_usages(index, rack, 3)]
            assert sorted(fast) == sorted(_usages_word_by_word(index, rack, 3)), rack
            assert all(index.word(order) == word for word, *_, order in fast)


def test_the_search_orders_usages_by_value_then_turkish_order(bootstrap):
    """`Cover` sorts usages by their words' ids: the order of their collation keys."""
    _, index = bootstrap
    rack = parse_rack("kalemsiarabaç?")
    kinds = hand_kinds(rack)
    costs = [HARFBANK.left_value(k) * SCALE + 1 for k in kinds]
    search = Cover.of_rows(kinds, costs, hand_rows(index, rack, 3), lambda: 0.0, 1.0)
    usages = [usage(index, row) for row in search.usages]
    cost = dict(zip(kinds, costs))
    assert usages == sorted(usages, key=lambda u: (
        -sum(cost[k] * n for k, n in u.takes.items()), sort_key(u.word), u.singles, u.multi))
    assert search.packed == [search.pack(u.takes) for u in usages]
