"""kelime.normalize: the one door every word goes through (CONTRACT.md, "Words")."""

import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kelime.normalize import (ALPHABET, TURKISH, WHITESPACE, Alphabet, invalid_chars, is_game_word,
                              letters_problem, normalize, sort_key, turkish_lower,
                              turkish_sorted)


@pytest.mark.parametrize("raw, expected", [
    # The four i's, alone and in words.
    ("I", "ı"), ("ı", "ı"), ("İ", "i"), ("i", "i"),
    ("I\u0307", "i"),  # I + combining dot above is İ after NFC
    ("i\u0307", "i"),  # "İ".lower() outside Turkish rules: the dot is the i's own
    ("\u0130LİK".lower(), "ilik"),
    ("a\u0307", "\u0227"),  # a dot above anything else stays (NFC: ȧ, then invalid_chars)
    ("IŞIK", "ışık"), ("İKİ", "iki"), ("ıIiİ", "ııii"), ("IĞDIR", "ığdır"),
    ("İstanbul", "istanbul"), ("ISPARTA", "ısparta"), ("Iğdır", "ığdır"),
    # Other Turkish capitals.
    ("ÇĞÖŞÜ", "çğöşü"), ("Çiğdem", "çiğdem"),
    # NFD input is composed first.
    ("a\u0302det", "adet"), ("c\u0327", "ç"), ("g\u0306", "ğ"), ("s\u0327", "ş"),
    ("o\u0308", "ö"), ("u\u0308", "ü"), ("C\u0327OCUK", "çocuk"),
    # Circumflexes fold, upper and lower.
    ("âdet", "adet"), ("Âdet", "adet"), ("ÂDET", "adet"), ("îmân", "iman"),
    ("kûfî", "kufi"), ("ÛÎÂ", "uia"), ("rüzgâr", "rüzgar"),
    # Surrounding whitespace goes; inner whitespace stays.
    ("  kitap\t\n", "kitap"), ("\u00a0kitap\u3000", "kitap"), ("Acem ağzı ", "acem ağzı"),
    ("dulda tutmak", "dulda tutmak"),
])
def test_normalize_table(raw, expected):
    assert normalize(raw) == expected


def test_plain_lower_is_wrong_for_turkish():
    assert "I".lower() == "i" and len("İ".lower()) == 2
    assert turkish_lower("I") == "ı" and turkish_lower("İ") == "i"


@pytest.mark.parametrize("raw, bad", [
    ("ki\u200btap", ["\u200b"]),  # zero-width space
    ("ki\u200dtap", ["\u200d"]),  # zero-width joiner
    ("\u200fkitap", ["\u200f"]),  # right-to-left mark (not whitespace, not stripped)
    ("kitap\u202e", ["\u202e"]),  # right-to-left override
    ("ki\x00tap", ["\x00"]),      # NUL
    ("kitap😀", ["😀"]),
    ("kitap2", ["2"]), ("111ada", ["1"]),
    ("e-posta", ["-"]), ("bak!", ["!"]), ("kur’an", ["’"]), ("kur'an", ["'"]),
    ("wifi", ["w"]), ("xenon", ["x"]), ("quark", ["q"]),
    ("straße", ["ß"]), ("naïve", ["ï"]),
])
def test_invalid_characters_are_reported_never_stripped(raw, bad):
    norm = normalize(raw)
    assert len(norm) == len(unicodedata.normalize("NFC", raw).strip())  # nothing removed
    assert letters_problem(norm) == "invalid_chars"
    assert invalid_chars(norm) == bad
    assert not is_game_word(norm)


@pytest.mark.parametrize("word, problem", [
    ("kitap", None), ("ışık", None), ("a", None),
    ("dulda tutmak", "phrase"), ("acem ağzı", "phrase"), ("ak\u00a0saçlı", "phrase"),
    ("e-posta", "invalid_chars"), ("e posta-kutusu", "invalid_chars"),
    ("örnekkelime 3", "invalid_chars"), ("-den yana", "invalid_chars"),
    ("... azmanı", "invalid_chars"), ("", "invalid_chars"),
])
def test_letters_problem(word, problem):
    assert letters_problem(word) == problem


def test_turkish_sort_order_differs_from_code_points():
    words = ["zil", "üzüm", "uçak", "şeker", "su", "öküz", "ot", "iğne", "ılık", "çay", "cam",
             "ğ", "gaz", "ayı", "ay"]
    expected = ["ay", "ayı", "cam", "çay", "gaz", "ğ", "ılık", "iğne", "ot", "öküz", "su",
                "şeker", "uçak", "üzüm", "zil"]
    assert turkish_sorted(words) == expected
    assert sorted(words) != expected  # code-point order puts ç, ı, ö, ş, ü after z
    for a, b in [("c", "ç"), ("ı", "i"), ("o", "ö"), ("s", "ş"), ("u", "ü"), ("g", "ğ")]:
        assert sort_key(a) < sort_key(b)
    assert sort_key("z") < sort_key("ç") or sorted(["z", "ç"]) == ["z", "ç"]
    assert turkish_sorted(["ç", "z"]) == ["ç", "z"]


def test_alphabet_letters():
    assert len(ALPHABET) == 29 and len(set(ALPHABET)) == 29
    assert TURKISH.letters == ALPHABET
    kurdish = Alphabet("abcçdeêfghiîjklmnopqrsştuûvwxyz")
    assert normalize("Îro", kurdish) == "îro"        # î is a Kurdish letter: not folded
    assert normalize("IRAQ", kurdish) == "iraq"      # no ı in Kurdish: plain casing
    assert is_game_word("xwê", kurdish) and not is_game_word("xwê")


texts = st.text(st.characters(codec="utf-8"), max_size=12)
turkishish = st.text(st.sampled_from("aAâÂbcçÇdeEgğĞhıIiİîÎoöÖsşŞuüÜûÛ \u0302\u0307\u0308\u0327-"),
                     max_size=12)


@settings(max_examples=400, deadline=None)
@given(st.one_of(texts, turkishish))
@example("â\u0308")  # folding â must not leave a decomposed a + ̈
@example("I\u0307\u0302")  # İ + ̂ lower-cases to i + ̂ = î, which folds to i
@example("â\u0302")
def test_normalize_is_idempotent_and_nfc(text):
    once = normalize(text)
    assert normalize(once) == once
    assert unicodedata.is_normalized("NFC", once)
    assert once == once.strip(WHITESPACE)
    assert "I" not in once and "İ" not in once and not set("âîû") & set(once)


@settings(max_examples=300, deadline=None)
@given(st.one_of(texts, turkishish))
def test_a_valid_game_word_holds_only_the_29_letters(text):
    norm = normalize(text)
    if letters_problem(norm) is None:
        assert norm and set(norm) <= set(ALPHABET)
    else:
        assert not norm or set(norm) - set(ALPHABET)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.sampled_from(ALPHABET), min_size=1, max_size=6), max_size=15))
def test_turkish_sorted_follows_the_alphabet(words):
    ordered = turkish_sorted(words)
    assert sorted(ordered) == sorted(words)
    as_indexes = [[ALPHABET.index(ch) for ch in w] for w in ordered]
    assert as_indexes == sorted(as_indexes)


@pytest.mark.parametrize("raw", ["kitap\x1f", "\x1ckitap", "dulda\x1etutmak", "ev\x1d"])
def test_control_separators_are_refused_not_trimmed(raw):
    """str.strip() would trim U+001C–U+001F (str.isspace says yes); Unicode says they are not
    white space, so they stay and the word is refused."""
    norm = normalize(raw)
    assert norm == raw and letters_problem(norm) == "invalid_chars"


def test_unicode_white_space_is_trimmed_and_separates_phrases():
    assert normalize("\u3000 kitap\xa0\t") == "kitap"
    assert letters_problem("dulda\u00a0tutmak") == "phrase"
