"""Reading racks, patterns and exclude lists: what is accepted, and the errors people see."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kelime.anagram import (
    Limits,
    OptionError,
    OverLimit,
    PatternError,
    RackError,
    parse_exclude,
    parse_pattern,
    parse_rack,
)
from kelime.normalize import Alphabet


def test_the_contract_example():
    rack = parse_rack("kale?[lm]")
    assert rack.tiles == ("k", "a", "l", "e", "?", "lm") and len(rack) == 6
    assert (rack.letters, rack.blanks, rack.multi) == ({"k": 1, "a": 1, "l": 1, "e": 1}, 1, ("lm",))
    assert rack.letter_count == 7 and str(rack) == "kale?[lm]"


@pytest.mark.parametrize("text, tiles", [
    ("KALE?[LM]", ("k", "a", "l", "e", "?", "lm")),
    ("âdet", ("a", "d", "e", "t")),
    ("Iİ", ("ı", "i")),
    ("  kitap\t", ("k", "i", "t", "a", "p")),
    ("??", ("?", "?")),
    ("[ar][ar]", ("ar", "ar")),
])
def test_normalised_like_words(text, tiles):
    assert parse_rack(text).tiles == tiles


@pytest.mark.parametrize("text, words", [
    ("", "empty"),
    ("   ", "empty"),
    ("ka[lm", "never closed"),
    ("ka[l[m]]", "do not nest"),
    ("ka[]", "is empty"),
    ("ka]", "has no '['"),
    ("ka\x00le", "control character U+0000 at position 3"),
    ("ka\x07", "control character U+0007"),
    ("kaxle", "'x' (U+0078) at position 3 is not a letter"),
    ("ka*", "write a blank as ?"),
    ("ka le", "space at position 3"),
    ("[l]", "has 1 letter"),
    ("[lmn]", "has 3 letters"),
    ("[l?]", "not '?'"),
    ("[l1]", "'1' (U+0031) at position 3"),
])
def test_rack_errors_say_what_to_fix(text, words):
    with pytest.raises(RackError) as caught:
        parse_rack(text)
    assert caught.value.code == "invalid_rack" and caught.value.status == 422
    assert words in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_rack_errors_point_at_the_position():
    with pytest.raises(RackError) as caught:
        parse_rack("kaqz")
    assert caught.value.details == {"position": 3, "character": "q"}


@pytest.mark.parametrize("text, limits, words", [
    ("a" * 17, Limits(), "17 tiles; the limit is 16"),
    ("ab???", Limits(), "3 blanks; the limit is 2"),
    ("a" * 300, Limits(), "300 characters"),
    ("abc", Limits(rack_tiles=2), "3 tiles; the limit is 2"),
])
def test_over_the_limits_is_413(text, limits, words):
    with pytest.raises(OverLimit) as caught:
        parse_rack(text, limits=limits)
    assert caught.value.code == "over_limit" and caught.value.status == 413
    assert caught.value.over_limit and words in str(caught.value)


def test_a_letter_of_another_alphabet():
    kurdish = Alphabet("abcçdeêfghiîjklmnopqrsştuûvwxyz")
    assert parse_rack("xwê", kurdish).tiles == ("x", "w", "ê")
    with pytest.raises(RackError, match="'x'"):
        parse_rack("xwe")


def test_patterns():
    pattern = parse_pattern("K.T.P")
    assert (pattern.squares, pattern.board, pattern.free, len(pattern)) == (
        "k.t.p", {"k": 1, "t": 1, "p": 1}, 2, 5)
    for text, words in [("", "empty"), ("kitap", "no '.' square"), ("k?t", "'?'"),
                        ("k.[t]", "'['")]:
        with pytest.raises(PatternError) as caught:
            parse_pattern(text)
        assert words in str(caught.value)
        assert caught.value.code == "invalid_pattern"
    with pytest.raises(OverLimit):
        parse_pattern("." * 16)


def test_exclude():
    assert parse_exclude(["KİTAP", "âdet", " kol "]) == {"kitap", "adet", "kol"}
    assert parse_exclude(None) == frozenset()
    with pytest.raises(OptionError):
        parse_exclude([1])
    with pytest.raises(OverLimit):
        parse_exclude(["a"] * 1001)


tiles = st.lists(st.sampled_from([*"abcçğıiöşüz?", "lm", "ar"]), min_size=1, max_size=16)


@given(tiles)
def test_written_racks_read_back(rack_tiles):
    text = "".join(f"[{t}]" if len(t) > 1 else t for t in rack_tiles)
    limits = Limits(blanks=16, two_letter_tiles=16)
    assert parse_rack(text, limits=limits).tiles == tuple(rack_tiles)
    assert parse_rack(text.upper().replace("I", "İ") if "ı" not in text else text,
                      limits=limits).tiles == tuple(rack_tiles)


@given(st.text(max_size=20))
def test_any_text_is_a_rack_or_a_rack_error(text):
    try:
        rack = parse_rack(text, limits=Limits(blanks=20))
    except (RackError, OverLimit):  # never anything else (17 ?s are over the 16 tiles)
        return
    assert rack.tiles and all(t == "?" or t.isalpha() for t in rack.tiles)


def test_the_two_letter_tiles_of_a_rack_are_bounded():
    """Each distinct two-letter tile doubled the search: 16 of them took seconds. The limit
    counts the tiles, so a client can check it (the OpenAPI schema states it)."""
    sixteen = "".join(f"[{t}]" for t in ("lm", "ar", "an", "er", "ak", "la", "ma", "le", "ik",
                                         "in", "ka", "ta", "ra", "en", "at", "al"))
    with pytest.raises(OverLimit) as err:
        parse_rack(sixteen, limits=Limits(rack_tiles=16))
    assert err.value.status == 413 and "16 two-letter tiles; the limit is 4" in str(err.value)
    assert err.value.details == {"limit": 4, "two_letter_tiles": 16}
    assert len(parse_rack("[lm][ar][an][er]kale").multi) == 4
    with pytest.raises(OverLimit):
        parse_rack("[lm][lm][lm][lm][lm]")
    assert len(parse_rack("[lm]" * 7, limits=Limits(two_letter_tiles=7)).multi) == 7
