"""The anagram index file: deterministic bytes, round trips, and clear errors on bad files."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kelime.anagram import AnagramIndex, IndexFormatError, anagram, build_index
from kelime.errors import LexiconError
from kelime.normalize import Alphabet, turkish_sorted
from tests.test_anagram_support import LETTERS

word_lists = st.lists(st.text(alphabet=LETTERS + "ğüöcz", min_size=1, max_size=9), max_size=60)
WORDS = ["kitap", "kale", "ak", "ala", "ılık", "iğne", "çöp", "şüphe"]


@settings(deadline=None)
@given(word_lists, st.randoms())
def test_same_words_same_bytes(words, rnd):
    shuffled = words + words[: len(words) // 2]
    rnd.shuffle(shuffled)
    assert build_index(shuffled) == build_index(words)


@settings(deadline=None)
@given(word_lists)
def test_round_trip(words):
    index = AnagramIndex.from_buffer(build_index(words))
    ordered = turkish_sorted(set(words))
    assert len(index) == len(ordered)
    assert index.words(range(len(index))) == ordered
    for i, word in enumerate(ordered):
        assert index.id_of(word) == i
        assert all((index.plane(ch, word.count(ch)) >> i) & 1 for ch in set(word))
        assert all(not (index.plane(ch, word.count(ch) + 1) >> i) & 1 for ch in LETTERS)
        assert (index.length_between(len(word), len(word)) >> i) & 1
    assert index.id_of("zzzz") is None or "zzzz" in ordered


@settings(deadline=None)
@given(word_lists)
def test_a_words_kept_letters_are_its_letters_sorted(words):
    """`letters` (kept once asked for) is the word's letters sorted, asked once or twice."""
    index = AnagramIndex.from_buffer(build_index(words))
    for _ in range(2):
        assert [index.letters(i) for i in range(len(index))] == [
            "".join(sorted(w)) for w in index.words(range(len(index)))]


def test_loaded_from_a_file_answers_the_same(tmp_path):
    data = build_index(WORDS)
    path = tmp_path / "anagram.idx"
    path.write_bytes(data)
    in_memory = AnagramIndex.from_buffer(data)
    mapped = AnagramIndex.load(path)
    for rack in ("kale?", "tikap", "ılk?", "pöç"):
        assert anagram(mapped, rack).as_dict() == anagram(in_memory, rack).as_dict()
    assert anagram(AnagramIndex.from_buffer(memoryview(data)), "kale").count == 2


def test_the_index_keeps_its_alphabet():
    kurdish = Alphabet("abcçdeêfghiîjklmnopqrsştuûvwxyz")
    index = AnagramIndex.from_buffer(build_index(["xwê", "êw"], kurdish))
    assert index.alphabet == kurdish
    # Kurdish Kelimatik values its letters (x 5, w 6, ê 2; êw is under its 3 letters); a
    # Turkish game, which gives them no value, is refused rather than scoring them 0
    assert [(h.word, h.score) for h in anagram(index, "wêx", "kelimatik-ku",
                                                                what_if=True).words] == [
        ("xwê", (5 + 6 + 2) * 3)]
    with pytest.raises(ValueError, match="kelimelik gives no value to ê"):
        anagram(index, "wêx")
    with pytest.raises(ValueError, match="not words of the alphabet"):
        build_index(["kitap", "e-posta"])


def damaged(data: bytes) -> dict[str, bytes]:
    header_size = struct.unpack_from("<I", data, 12)[0]
    return {
        "empty": b"",
        "not ours": b"PK\x03\x04" + data[4:],
        "magic": b"KELIMEAX" + data[8:],
        "version": data[:8] + struct.pack("<I", 2) + data[12:],
        "header cut": data[:20],
        "header not JSON": data[:16] + b"\xff" * header_size + data[16 + header_size:],
        "truncated": data[:-1],
        "padded": data + b"\0" * 8,
        "flipped bit": data[:-3] + bytes([data[-3] ^ 1]) + data[-2:],
    }


@pytest.mark.parametrize("case, message", [
    ("empty", "truncated"), ("not ours", "not a kelime anagram index"),
    ("magic", "not a kelime anagram index"), ("version", "version 2; this kelime reads version 1"),
    ("header cut", "truncated in its header"), ("header not JSON", "not JSON"),
    ("truncated", "truncated or padded"), ("padded", "truncated or padded"),
    ("flipped bit", "checksum"),
])
def test_a_bad_file_says_so(case, message, tmp_path):
    bad = damaged(build_index(WORDS))[case]
    with pytest.raises(IndexFormatError) as caught:
        AnagramIndex.from_buffer(bad)
    assert message in str(caught.value) and "kelime build" in str(caught.value)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, LexiconError)
    path = tmp_path / "anagram.idx"
    path.write_bytes(bad)
    with pytest.raises(IndexFormatError):
        AnagramIndex.load(path)


def test_a_missing_file(tmp_path):
    with pytest.raises(IndexFormatError, match="cannot read the anagram index"):
        AnagramIndex.load(tmp_path / "nothing.idx")


def test_max_length_is_the_longest_words_letters():
    assert AnagramIndex.from_buffer(build_index(["at", "kitaplık", "ev"])).max_length == 8
    assert AnagramIndex.from_buffer(build_index([])).max_length == 0
