"""Anagram queries: worked examples, and properties against the brute-force reference."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kelime.anagram import (
    AnagramIndex,
    Limits,
    OptionError,
    OverLimit,
    RackError,
    RackNotDealt,
    anagram,
    build_index,
    make_query,
    search,
)
from kelime.anagram.bits import ids, values
from kelime.anagram.brute import best_laying, brute_search
from kelime.anagram.search import planned, scores
from kelime.games import get_game
from tests.test_anagram_support import check_hit, games, lexicons, questions, rack_text

WORDS = ["kol", "haksız", "olmaz", "kitap", "kat", "tak", "at", "ak", "kale", "kalem", "elma",
         "alm", "ilim", "kilim", "ilmek", "sal", "almaç", "okul"]


@pytest.fixture(scope="module")
def index():
    return AnagramIndex.from_buffer(build_index(WORDS))


def words_of(answer) -> list[str]:
    return [h.word for h in answer.words]


def test_kelimatik_worked_examples(index):
    kelimatik = get_game("kelimatik")
    assert kelimatik.score(["k", "o", "l"]) == 18
    assert kelimatik.score(["h", "a", "k", "?s", "ı", "z"]) == 78
    assert kelimatik.score(["?o", "lm", "a", "z"]) == 24
    found = {h.word: h for h in anagram(index, "kol", kelimatik, what_if=True).words}
    assert found["kol"].score == 18
    haksiz = {h.word: h for h in anagram(index, "hak?ız", kelimatik, what_if=True).words}["haksız"]
    assert (haksiz.score, haksiz.tiles) == (78, ("h", "a", "k", "?s", "ı", "z"))
    olmaz = {h.word: h for h in anagram(index, "?[lm]az", kelimatik, what_if=True).words}["olmaz"]
    assert (olmaz.score, olmaz.tiles) == (24, ("?o", "lm", "a", "z"))


def test_a_two_letter_tile_is_laid_only_on_side_by_side_letters(index):
    kelimatik = get_game("kelimatik")
    assert "ilim" not in words_of(anagram(index, "[lm]ii", kelimatik, what_if=True))   # l and m apart
    assert "ilmek" in words_of(anagram(index, "[lm]iek", kelimatik, what_if=True))


def test_a_word_takes_the_better_of_the_two_letter_tile_and_single_tiles(index):
    kelimatik = get_game("kelimatik")  # l = 3, m = 2, but the tile lm is worth 1
    best = {h.word: h for h in anagram(index, "elma[lm]", kelimatik, what_if=True).words}
    assert best["elma"].tiles == ("e", "l", "m", "a") and best["elma"].score == (1 + 3 + 2 + 1) * 4
    only_tile = {h.word: h for h in anagram(index, "ea[lm]", kelimatik, what_if=True).words}
    assert only_tile["elma"].tiles == ("e", "lm", "a") and only_tile["elma"].score == 3 * 3


def test_a_real_tile_beats_a_blank(index):
    kale = {h.word: h for h in anagram(index, "kale?").words}["kale"]
    assert kale.tiles == ("k", "a", "l", "e") and kale.score == 4


def test_bingo_for_all_seven_tiles():
    index = AnagramIndex.from_buffer(build_index(["kitapla", "kitap"]))
    answer = {h.word: h.score for h in anagram(index, "kitapl?").words}
    assert answer == {"kitapla": 12 + 1 + 50, "kitap": 12}
    assert {h.word: h.score for h in anagram(index, "kitapl?", "sozce").words}["kitapla"] == 62


def test_pattern_fills_the_board_slot(index):
    answer = anagram(index, "ia", pattern="k.t.p")
    assert [h.as_dict() for h in answer.words] == [
        {"word": "kitap", "score": 12, "tiles": ["k", "i", "t", "a", "p"]}]
    assert words_of(anagram(index, "ai", pattern="K.T.P")) == ["kitap"]
    assert words_of(anagram(index, "i", pattern="k.t.p")) == []


def test_exclude_and_exact(index):
    assert "kat" not in words_of(anagram(index, "kat", exclude=["KAT"]))
    assert words_of(anagram(index, "kat", mode="exact")) == ["kat", "tak"]


def test_sorts_limit_and_truncated(index):
    by_score = anagram(index, "kitapl?", sort="score")
    scores = [h.score for h in by_score.words]
    assert scores == sorted(scores, reverse=True)
    assert words_of(anagram(index, "kat", sort="alpha")) == ["ak", "at", "kat", "tak"]
    assert words_of(anagram(index, "kale", sort="length"))[0] == "kale"
    limited = anagram(index, "kat", limit=2, sort="alpha")
    assert limited.count == 4 and limited.truncated and words_of(limited) == ["ak", "at"]
    assert anagram(index, "kat", limit=0).as_dict() == {"count": 4, "truncated": True,
                                                       "words": []}


def test_lengths(index):
    assert words_of(anagram(index, "kat", min_length=3, sort="alpha")) == ["kat", "tak"]
    assert words_of(anagram(index, "kat", max_length=2, sort="alpha")) == ["ak", "at"]
    assert words_of(anagram(index, "kat", min_length=3, max_length=2)) == []  # no error
    assert words_of(anagram(index, "kat", "kelimatik", sort="alpha", what_if=True)) == ["kat", "tak"]


@pytest.mark.parametrize("options, error, code", [
    ({"mode": "all"}, OptionError, "invalid_option"),
    ({"sort": "random"}, OptionError, "invalid_option"),
    ({"min_length": 0}, OptionError, "invalid_option"),
    ({"limit": -1}, OptionError, "invalid_option"),
    ({"limit": 1001}, OverLimit, "over_limit"),
    ({"exclude": ["a"] * 1001}, OverLimit, "over_limit"),
    ({"exclude": [3]}, OptionError, "invalid_option"),
])
def test_bad_options(options, error, code):
    with pytest.raises(error) as caught:
        make_query("kat", get_game("kelimelik"), **options)
    assert caught.value.code == code and caught.value.message


@pytest.mark.parametrize("rack, game, message, details", [
    ("abcdefgğhıijkl", "kelimelik", "Kelimelik gives a rack of at most 7 tiles; this rack has 14",
     {"rule": "tiles", "least": 0, "most": 7, "found": 14}),
    ("kalemler", "sozce", "Sözce gives a rack of at most 7 tiles; this rack has 8",
     {"rule": "tiles", "least": 0, "most": 7, "found": 8}),
    ("kalemkitapsilgiç", "harfbank", "Harfbank deals 14 tiles (15 with the one drawn to throw "
     "away); this rack has 16", {"rule": "tiles", "least": 14, "most": 15, "found": 16}),
    ("kale??", "kelimatik", "Kelimatik has 1 joker; this rack has 2",
     {"rule": "blanks", "least": 0, "most": 1, "found": 2}),
])
def test_a_rack_the_game_cannot_deal_is_refused(rack, game, message, details):
    """No what-if racks unless asked: 14 tiles would give a kelimelik bingo to any 7."""
    with pytest.raises(RackNotDealt, match=re.escape(message)) as caught:
        make_query(rack, get_game(game))
    assert caught.value.details == {"game": game, **details} and caught.value.status == 422
    assert caught.value.code == "rack_not_dealt"
    make_query(rack, get_game(game), what_if=True)  # asked anyway: answered


def test_the_bingo_is_for_the_game_s_full_hand_exactly():
    index = AnagramIndex.from_buffer(build_index(["kitapla", "kitaplar", "kitap"]))
    full = {h.word: h.score for h in anagram(index, "kitapla").words}
    assert full == {"kitapla": 14 + 50, "kitap": 12}
    with pytest.raises(RackNotDealt, match="this rack has 8"):
        anagram(index, "kitaplar")
    harfbank = {h.word: h.score for h in anagram(index, "kitaplar", "harfbank",
                                                what_if=True).words}
    assert harfbank == {"kitaplar": 16, "kitapla": 14, "kitap": 12}  # no bingo in harfbank


def test_two_letter_tiles_only_in_games_that_have_them():
    with pytest.raises(RackError, match="kelimelik has no two-letter tiles"):
        make_query("ka[lm]", get_game("kelimelik"))


def test_the_answer_shape(index):
    body = anagram(index, "kat?").as_dict()
    assert set(body) == {"count", "truncated", "words"}
    assert all(set(w) == {"word", "score", "tiles"} for w in body["words"])


def same_answer(fast, slow) -> None:
    assert (fast.count, fast.truncated) == (slow.count, slow.truncated)
    assert [(h.word, h.score) for h in fast.words] == [(h.word, h.score) for h in slow.words]


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.data(), lexicons, games)
def test_search_matches_brute_force(data, lexicon, game):
    """Every answer is a word buildable with its stated tiles and score, none is missing."""
    tiles, pattern = data.draw(questions(lexicon, game))
    options = {
        "mode": data.draw(st.sampled_from(["build", "build", "exact"])),
        "sort": data.draw(st.sampled_from(["score", "length", "alpha"])),
        "limit": data.draw(st.integers(0, 12)),
        "pattern": pattern,
        "min_length": data.draw(st.none() | st.integers(1, 4)),
        "max_length": data.draw(st.none() | st.integers(4, 8)),
        "exclude": data.draw(st.lists(st.sampled_from(lexicon), max_size=3)),
    }
    query = make_query(rack_text(tiles), game, what_if=True, **options)
    fast = search(AnagramIndex.from_buffer(build_index(lexicon)), query, game)
    same_answer(fast, brute_search(lexicon, query, game))
    for hit in fast.words:
        check_hit(hit, query, game, set(lexicon))


@settings(max_examples=100, deadline=None)
@given(st.data(), lexicons, games)
def test_more_blanks_than_usual(data, lexicon, game):
    """A game whose bag has 4 blanks (the shipped ones have 1 or 2)."""
    tiles, pattern = data.draw(questions(lexicon, game, max_blanks=2))
    limits, game = Limits(blanks=4), replace(game, blanks=4, rack_size=game.rack_size + 2)
    query = make_query(rack_text(tiles + ["?", "?"]), game, limits=limits, limit=50,
                       pattern=pattern, what_if=True)
    fast = search(AnagramIndex.from_buffer(build_index(lexicon)), query, game)
    same_answer(fast, brute_search(lexicon, query, game))


@SETTINGS
@given(st.data(), lexicons, games)
def test_every_candidates_ranking_score_is_its_best_score(data, lexicon, game):
    """The bit-sliced scores that rank the answers equal the best laying's, word by word."""
    tiles, pattern = data.draw(questions(lexicon, game))
    query = make_query(rack_text(tiles), game, pattern=pattern, what_if=True,
                       mode=data.draw(st.sampled_from(["build", "exact"])))
    index = AnagramIndex.from_buffer(build_index(lexicon))
    found = planned(index, query, game)
    everyone = 0
    for _, members in found:
        everyone |= members
    ranking = values(scores(index, query, game, found, everyone), len(index))
    for i in ids(everyone):
        assert ranking[i] == best_laying(index.word(i), query, game).score
