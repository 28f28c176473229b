"""Racks a game can deal (kelime.anagram.deal): each profile's hand makeup, refused with
`rack_not_dealt` naming the rule, and lifted by what_if."""

from __future__ import annotations

import pytest

from kelime.anagram import AnagramIndex, RackNotDealt, build_index, make_query, parse_rack, split
from kelime.anagram.deal import deal, kinds
from kelime.games import GameProfileError, get_game, read_profile
from kelime.normalize import KURMANJI

#: A Kelimatik deal as the rules give it: 5 consonants, 3 vowels, 1 two-letter tile, 1 joker.
KELIMATIK = "kaletn?[lm]ıs"


@pytest.mark.parametrize("rack, game, rule, least, most, found, start", [
    ("ka[lm][ar][ek]e?tnm", "kelimatik", "two_letter", 1, 1, 3,
     "Kelimatik deals 1 two-letter tile; this rack has 3"),
    ("aeıioöuüae", "kelimatik", "vowels", 3, 3, 10, "Kelimatik deals 3 vowels; this rack has 10"),
    ("kale?[lm]", "kelimatik", "tiles", 10, 10, 6, "Kelimatik deals 10 tiles; this rack has 6"),
    ("kaletn??ıs", "kelimatik", "blanks", 0, 1, 2, "Kelimatik has 1 joker; this rack has 2"),
    ("kalek", "harfbank", "tiles", 14, 15, 5,
     "Harfbank deals 14 tiles (15 with the one drawn to throw away); this rack has 5"),
    ("kitaplar", "kelimelik", "tiles", 0, 7, 8,
     "Kelimelik gives a rack of at most 7 tiles; this rack has 8"),
    ("jj", "kelimelik", "letter", 0, 1, 2, "Kelimelik's bag has 1 j; this rack has 2"),
    ("kitapjjj", "sozce", "tiles", 0, 7, 8,
     "Sözce gives a rack of at most 7 tiles; this rack has 8"),
])
def test_a_rack_the_game_cannot_deal_names_the_rule(rack, game, rule, least, most, found,
                                                    start):
    with pytest.raises(RackNotDealt) as caught:
        make_query(rack, get_game(game))
    error = caught.value
    assert error.code == "rack_not_dealt" and error.status == 422
    assert error.message.startswith(start + "; fix the rack, or ask anyway")
    assert '"what_if": true' in error.message and "--what-if" in error.message
    assert {k: error.details[k] for k in ("game", "rule", "least", "most", "found")} == {
        "game": game, "rule": rule, "least": least, "most": most, "found": found}
    assert make_query(rack, get_game(game), what_if=True).rack == parse_rack(rack)


@pytest.mark.parametrize("rack, game", [
    (KELIMATIK, "kelimatik"),
    ("kitapla", "kelimelik"), ("ka", "kelimelik"), ("?", "sozce"),  # fewer at the end
    ("kalemkitapsilg", "harfbank"), ("kalemkitapsilg?", "harfbank"),
])
def test_racks_the_game_deals_are_answered(rack, game):
    assert deal(parse_rack(rack), get_game(game)) == parse_rack(rack)


def test_kurdish_kelimatik_counts_kurmanji_vowels():
    """ê î û are vowels of Kurmanji: a Kurdish deal has 3 of a e ê i î o u û."""
    hand = parse_rack("xwêrn?[ar]dîa", KURMANJI)
    assert kinds(hand) == {"consonants": 5, "vowels": 3, "two_letter": 1, "blanks": 1}
    deal(hand, get_game("kelimatik-ku"))
    with pytest.raises(RackNotDealt, match="Kürtçe Kelimatik deals 3 vowels; this rack has 4"):
        deal(parse_rack("xwêrn?[ar]îûa", KURMANJI), get_game("kelimatik-ku"))


def test_a_split_refuses_a_hand_the_game_cannot_deal_unless_asked_what_if():
    index = AnagramIndex.from_buffer(build_index(["kale", "kel"]))
    with pytest.raises(RackNotDealt, match="Harfbank deals 14 tiles"):
        split(index, "kalek", "harfbank")
    assert split(index, "kalek", "harfbank", what_if=True).penalty == 1


def test_a_profile_states_its_hand_makeup():
    """The rules: Kelimatik and Harfbank hands are fixed, board games' racks shrink at the
    end; a makeup key the check does not know is refused rather than ignored."""
    assert [g for g in ("kelimelik", "sozce", "kelimatik", "kelimatik-ku", "harfbank")
            if get_game(g).fixed_hand] == ["kelimatik", "kelimatik-ku", "harfbank"]
    assert get_game("harfbank").as_dict()["fixed_hand"] is True
    base = 'name = "x"\nrack_size = 7\nmin_length = 2\nscoring = "sum"\n'
    with pytest.raises(GameProfileError, match=r"unknown key\(s\) in \[composition\]: jokers"):
        read_profile(base + "[composition]\njokers = 1\n", "x.toml")
    with pytest.raises(GameProfileError, match="`fixed_hand` must be true or false"):
        read_profile(base + 'fixed_hand = "yes"\n', "x.toml")
