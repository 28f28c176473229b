"""Game profiles: the packaged TOML files, lookups, scores, and a deployment's own files."""

from __future__ import annotations

import json
import re
from collections import Counter
from itertools import product
from pathlib import Path

import pytest

from kelime import games
from kelime.games import (
    DEFAULT_GAME,
    GAMES,
    Game,
    GameProfileError,
    UnknownGame,
    get_game,
    load_games,
    longest_word,
)

KELIMELIK = {  # the rules' table: letter → (value, count)
    "a": (1, 12), "b": (3, 2), "c": (4, 2), "ç": (4, 2), "d": (3, 2), "e": (1, 8), "f": (8, 1),
    "g": (5, 1), "ğ": (7, 1), "h": (5, 1), "ı": (2, 4), "i": (1, 7), "j": (10, 1), "k": (1, 7),
    "l": (1, 7), "m": (2, 4), "n": (1, 5), "o": (2, 3), "ö": (6, 1), "p": (7, 1), "r": (2, 6),
    "s": (3, 3), "ş": (4, 2), "t": (2, 5), "u": (2, 3), "ü": (3, 2), "v": (7, 1), "y": (3, 2),
    "z": (4, 2),
}


def test_the_five_games():
    assert list(GAMES) == ["kelimelik", "sozce", "kelimatik", "kelimatik-ku", "harfbank"]
    assert DEFAULT_GAME == "kelimelik" and get_game(None) is GAMES["kelimelik"]
    assert {g.name: (g.min_length, g.rack_size, g.bingo_bonus) for g in GAMES.values()} == {
        "kelimelik": (2, 7, 50), "sozce": (2, 7, 49), "kelimatik": (3, 10, 0),
        "kelimatik-ku": (3, 10, 0), "harfbank": (3, 14, 0)}
    assert {g.name: g.title for g in GAMES.values()} == {
        "kelimelik": "Kelimelik", "sozce": "Sözce", "kelimatik": "Kelimatik",
        "kelimatik-ku": "Kürtçe Kelimatik", "harfbank": "Harfbank"}


def test_both_kelimatiks_carry_their_per_hand_minimum():
    """"Türkçe Kelimatik oyununda … her el ortalama 100 sayı …; Kürtçe kelimatik oyununda ise
    ortalama 50 puan"."""
    assert GAMES["kelimatik"].min_hand_average == 100
    assert GAMES["kelimatik-ku"].min_hand_average == 50
    assert GAMES["kelimatik-ku"].as_dict()["min_hand_average"] == 50
    assert GAMES["kelimelik"].min_hand_average is None


KURMANJI = "abcçdeêfghiîjklmnopqrsştuûvwxyz"


def test_kurdish_kelimatik_values_every_kurmanji_letter_and_is_played_with_ku():
    game = GAMES["kelimatik-ku"]
    assert sorted(game.letter_values) == sorted(KURMANJI) and game.lexicon == "ku"
    assert game.unvalued(KURMANJI) == [] and GAMES["kelimatik"].unvalued(KURMANJI) == [
        "ê", "î", "q", "û", "w", "x"]
    assert game.scoring == "product" and game.composition == GAMES["kelimatik"].composition
    assert game.has_two_letter_tiles and game.tile_value("xw") == 1  # one a hand, as LM


@pytest.mark.parametrize("tiles, score", [
    (["ê", "v", "a", "r"], (2 + 3 + 1 + 1) * 4),          # êvar: ê = 2
    (["x", "w", "î", "n"], (5 + 6 + 2 + 1) * 4),          # xwîn: x = 5, w = 6, î = 2
    (["h", "û", "n"], (3 + 7 + 1) * 3),                    # hûn: û = 7
    (["q", "e", "l", "e", "m"], (10 + 1 + 3 + 1 + 3) * 5),  # qelem: q = 10
    (["x", "w", "e", "ş"], (5 + 6 + 1 + 5) * 4),          # xweş: 68 (20 under Turkish values)
    (["?x", "w", "î"], (0 + 6 + 2) * 3),                   # a joker as x is worth 0
    (["j", "i", "n"], (4 + 1 + 1) * 3),                    # jin: j = 4 (it was 10)
])
def test_kurdish_kelimatik_worked_examples(tiles, score):
    assert GAMES["kelimatik-ku"].score(tiles) == score


def test_kurdish_values_follow_how_often_running_kurmanji_text_uses_each_letter():
    """The profile's values are what `by_frequency` derives from running Kurmanji text, each
    word counted as often as the text uses it (the method and the shares are in
    kelimatik-ku.toml), recomputed here from the vendored table. They came from KLPT's
    headwords, each counted once: j was worth 10 and u 7 though ji, ku and tu are among the
    commonest words."""
    from kelime.games.values import by_frequency, letter_shares

    table = Path(games.__file__).with_name("kurmanji-text.tsv").read_text(encoding="utf-8")
    header = [line for line in table.splitlines() if line.startswith("#")]
    assert any("libreoffice-l10n-kmr" in line and "MPL-2.0" in line for line in header)
    counts = {word: int(n) for word, n in (line.split("\t") for line in
                                             table.splitlines() if not line.startswith("#"))}
    assert sum(counts.values()) > 20_000 and counts["ji"] > counts["ku"] > counts["xwe"] > 50
    words = [word for word, n in counts.items() for _ in range(n)]
    derived = by_frequency(words, KURMANJI, list(GAMES["kelimatik"].letter_values.values()))
    values = GAMES["kelimatik-ku"].letter_values
    assert derived == values
    shares = letter_shares(words)
    assert shares[0][0] == "a" and shares[-1][0] == "q" and values["q"] == 10
    assert values["a"] == values["e"] == 1 == min(derived.values())
    assert values["j"] == values["u"] == 4  # ji, ku, tu: used, so cheap


def test_kelimelik_has_the_rules_tile_table():
    game = GAMES["kelimelik"]
    assert {k: (game.letter_values[k], game.letter_counts[k]) for k in game.letter_values} == \
        KELIMELIK
    assert (game.blanks, game.blank_value) == (2, 0)
    assert sum(game.letter_counts.values()) + game.blanks == 100


def test_the_other_games_values():
    assert GAMES["sozce"].letter_values == GAMES["kelimelik"].letter_values
    assert GAMES["sozce"].blanks == 2 and GAMES["sozce"].letter_counts is None
    kelimatik = GAMES["kelimatik"]
    assert kelimatik.letter_values == {**GAMES["kelimelik"].letter_values, "l": 3}
    assert kelimatik.composition == {"consonants": 5, "vowels": 3, "two_letter": 1, "blanks": 1}
    assert kelimatik.tile_value("lm") == 1 and kelimatik.tile_value("ar") == 1  # the default
    assert GAMES["harfbank"].discard == 1 and GAMES["harfbank"].has_two_letter_tiles
    assert not GAMES["kelimelik"].has_two_letter_tiles


@pytest.mark.parametrize("name", ["kelimatik", " KELIMATIK ", "Kelimatik\n"])
def test_get_game_ignores_case_and_spaces(name):
    assert get_game(name) is GAMES["kelimatik"]


def test_unknown_game_lists_the_known_ones():
    with pytest.raises(UnknownGame) as caught:
        get_game("monopoly")
    assert str(caught.value) == ("unknown game 'monopoly'; known games: "
                                 "kelimelik, sozce, kelimatik, kelimatik-ku, harfbank")
    assert isinstance(caught.value, ValueError)


def test_scores():
    kelimatik, kelimelik = GAMES["kelimatik"], GAMES["kelimelik"]
    assert kelimatik.score(["k", "o", "l"]) == 18                     # (1 + 2 + 3) × 3
    assert kelimatik.score(["h", "a", "k", "?s", "ı", "z"]) == 78     # 13 × 6
    assert kelimatik.score(["?o", "lm", "a", "z"]) == 24              # 6 × 4
    assert kelimelik.score(["k", "i", "t", "a", "p"]) == 12
    assert kelimelik.score(list("kitapla")) == 14 + 50                 # all 7 tiles
    assert kelimelik.score(list("kitapla"), board=1) == 14             # one was on the board
    assert GAMES["sozce"].score(list("kitapla")) == 14 + 49
    assert GAMES["harfbank"].penalty(["z", "?", "lm"]) == 5


def test_as_dict_is_json_and_keeps_the_old_keys():
    for game in GAMES.values():
        body = game.as_dict()
        assert json.loads(json.dumps(body)) == body
        assert {"name", "min_length", "rack_size", "bingo_bonus", "letter_values",
                "description"} <= set(body)
        assert body["scoring"] in ("sum", "product") and body["score_formula"]
    kelimatik = GAMES["kelimatik"].as_dict()
    assert kelimatik["two_letter_tiles"] == {"values": {"lm": 1}, "default_value": 1}
    assert kelimatik["score_formula"].startswith("(sum of the tile values) × (number of tiles")
    assert "+50 when all 7 tiles" in GAMES["kelimelik"].as_dict()["score_formula"]
    assert GAMES["kelimelik"].as_dict()["two_letter_tiles"] is None


def test_the_board_games_have_kelimeliks_board():
    kelimelik, sozce = GAMES["kelimelik"].board, GAMES["sozce"].board
    assert kelimelik is not None and sozce is not None
    assert sozce.bonuses == kelimelik.bonuses and sozce.layout_from == "kelimelik"
    assert kelimelik.size == 15 and kelimelik.centre == (7, 7) and kelimelik.bonus(7, 7) == "K2"
    counts = Counter(s for row in kelimelik.bonuses for s in row if s)
    assert counts == {"H2": 24, "H3": 8, "K2": 9, "K3": 8}     # GAMES.md's layout, centre K2
    for r, c in product(range(15), repeat=2):                 # symmetric both ways
        assert kelimelik.bonus(r, c) == kelimelik.bonus(c, r) == kelimelik.bonus(14 - r, c)
    assert GAMES["kelimatik"].board is None
    shown = GAMES["sozce"].as_dict()["board"]
    assert shown["bonuses"][0][:3] == ["", "", "K3"] and shown["centre"] == {"row": 7, "col": 7}


@pytest.mark.parametrize(("board", "said"), [
    ('size = 3\nlayout = ".. .. ..\\n.. K2 .."', "must be 3 rows of 3 squares, not 2 rows"),
    ('size = 2\nlayout = ".. X9\\n.. .."', "not X9"),
    ('size = 2', "needs `layout` or `layout_from`"),
    ('size = 15\nlayout_from = "kelimatik"', "'kelimatik', which is not a game with a layout"),
    ('size = 11\nlayout_from = "kelimelik"', "is 11 squares a side but kelimelik's layout is 15"),
])
def test_a_bad_board_says_what_is_wrong(tmp_path, board, said):
    (tmp_path / "minik.toml").write_text(PROFILE.format(name="minik") + "[board]\n" + board,
                                        "utf-8")
    with pytest.raises(GameProfileError, match=re.escape(said)):
        load_games(tmp_path)


PROFILE = '''
name = "{name}"
rack_size = 5
min_length = 2
scoring = "sum"
[tiles]
"a" = {{ value = 1 }}
"b" = {{ value = 2 }}
'''


def test_a_deployment_adds_and_replaces_profiles(tmp_path):
    (tmp_path / "kelimelik.toml").write_text(PROFILE.format(name="kelimelik"), "utf-8")
    (tmp_path / "minik.toml").write_text(PROFILE.format(name="minik"), "utf-8")
    games = load_games(tmp_path)
    assert list(games) == ["kelimelik", "sozce", "kelimatik", "kelimatik-ku", "harfbank", "minik"]
    assert games["kelimelik"].rack_size == 5 and games["minik"].letter_values == {"a": 1, "b": 2}
    assert get_game("MINIK", games) is games["minik"]
    assert load_games() == GAMES


@pytest.mark.parametrize("text, words", [
    ("name = ", "not valid TOML"),
    (PROFILE.format(name="other"), "`name` is 'other' but the file is bad.toml"),
    (PROFILE.format(name="bad").replace('"sum"', '"max"'), "`scoring` must be one of"),
    (PROFILE.format(name="bad").replace("rack_size = 5", "rack_size = 0"), "`rack_size`"),
    ("colour = 1\n" + PROFILE.format(name="bad"), "unknown key(s) colour"),
    (PROFILE.format(name="bad").replace('"b"', '"B"'), "tile 'B'"),
    (PROFILE.format(name="bad").replace('"b"', '"bc"'), "tile 'bc'"),
    (PROFILE.format(name="bad").replace("value = 2", "value = -2"), "≥ 0"),
    (PROFILE.format(name="bad").replace("value = 2 }", "value = 2, count = 3 }"),
     "give every tile a count, or none"),
    (PROFILE.format(name="bad") + "[blank]\nvalue = 5\n", "worth less than a blank"),
])
def test_a_bad_profile_names_the_file_and_the_problem(tmp_path, text, words):
    (tmp_path / "bad.toml").write_text(text, "utf-8")
    with pytest.raises(GameProfileError) as caught:
        load_games(tmp_path)
    assert "bad.toml" in str(caught.value) and words in str(caught.value)


def test_a_missing_folder(tmp_path):
    with pytest.raises(GameProfileError, match="no such folder"):
        load_games(tmp_path / "nowhere")


def test_game_is_plain_data():
    game = Game("minik", 2, 5, letter_values={"a": 1})
    assert game.score(["a", "?b"]) == 1 and game.tile_value("q") == 0


def test_an_unknown_game_name_is_quoted_short():
    with pytest.raises(UnknownGame) as caught:
        get_game("x" * 4_000_000)
    assert len(str(caught.value)) < 200 and "xxxx'…" in str(caught.value)


def test_the_longest_word_each_game_can_lay():
    """A build refuses what no game can lay (`too_long`); it left out every headword over 15
    letters, though Harfbank's 14 tiles, two-letter ones among them, lay more."""
    assert {name: game.longest_word for name, game in GAMES.items()} == {
        "kelimelik": 15, "sozce": 15, "kelimatik": 11, "kelimatik-ku": 11, "harfbank": 28}
    assert longest_word() == 28 and longest_word({"sozce": GAMES["sozce"]}) == 15
