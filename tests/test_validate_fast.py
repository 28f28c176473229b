"""The fast path of validation (`kelime.lexicon.verdicts`): the very bytes of the plain path,
whatever the words, and a memo that stays within its budget whatever clients send."""

from __future__ import annotations

import gc
import random
import tracemalloc
from collections import Counter

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kelime.lexicon import Lexicon
from kelime.lexicon import verdicts as verdicts_module
from kelime.lexicon.verdicts import MEMO_BYTES, Verdicts, validate_json
from kelime.service.app import create_app
from kelime.service.settings import Settings
from tests.service_helpers import TestClient
from tests.test_service_health import sample


@pytest.fixture(scope="module")
def lexicons(data_dir) -> dict[str, Lexicon]:
    return {name: Lexicon.load(data_dir / name) for name in ("tr", "ku")}


@pytest.fixture(scope="module")
def memos(lexicons) -> dict[str, list[Verdicts]]:
    """For each lexicon: its own memo (`validate_json`'s), one on a frozenset of the valid
    words, and one so small that it changes generation every few words; all shared by every
    example."""
    return {name: [lex._verdicts, Verdicts(lex, valid=frozenset(lex.words.keys())),
                   Verdicts(lex, budget=4096)] for name, lex in lexicons.items()}


def plain(lex: Lexicon, words: list[str], min_length: int) -> tuple[bytes, dict]:
    """The reply and its tally made the slow way: `Lexicon.check` on each word."""
    results = [lex.check(word, min_length).as_dict() for word in words]
    reply = {"lexicon": lex.info, "all_valid": all(r["valid"] for r in results),
             "results": results}
    return orjson.dumps(reply), dict(Counter(r["reason"] for r in results))


# --- the words: what players type, what breaks normalisers, and junk -------------------------

LETTERS = "abcçdefgğhıijklmnoöprsştuüvyz" "ABCÇDEFGĞHIİJKLMNOÖPRSŞTUÜVYZ" "êîûâÊÎÛÂxwq"
MARKS = ["\u0302", "\u0307", "\u0308", "\u0327", "\u0301"]
ODD = [" ", "\t", "\n", "\xa0", "\u3000", "-", "'", "\"", "\\", "/", "\x00", "\x1f", "\u200b",
       "\u200f", "\ufeff", "😀", "ß", "ǅ", "ﬁ", "\u0130\u0307", "I\u0307", "İ", "ı", "3", "%"]


def turkish_upper(word: str) -> str:
    return word.replace("i", "İ").replace("ı", "I").upper()


def circumflexed(word: str) -> str:
    return word.replace("a", "â", 1).replace("i", "i\u0302", 1).replace("u", "û", 1)


SHAPES = [str, str.upper, turkish_upper, str.title, str.capitalize, circumflexed,
          lambda w: f"  {w}\t", lambda w: w + w, lambda w: w[::-1], lambda w: w + "q",
          lambda w: w.replace(" ", "  "), lambda w: w[:1]]


@st.composite
def word_lists(draw, lexicon_words: list[str]) -> list[str]:
    known = st.builds(lambda word, shape: shape(word), st.sampled_from(lexicon_words),
                      st.sampled_from(SHAPES))
    built = st.lists(st.sampled_from([*LETTERS, *MARKS, *ODD]), max_size=14).map("".join)
    long = st.text(st.sampled_from([*LETTERS, *MARKS, "😀", " "]), min_size=30, max_size=120)
    word = st.one_of(known, known, built, st.text(max_size=20), long)
    pool = draw(st.lists(word, min_size=1, max_size=12))
    picks = draw(st.lists(st.integers(0, len(pool) - 1), max_size=40))  # repeats, in any order
    return [pool[i] for i in picks]


def known_words(lexicons) -> list[str]:
    return sorted({w for lex in lexicons.values()
                   for w in [*lex.words.keys(), *lex.rejected.keys()]})


@pytest.fixture(scope="module")
def words_strategy(lexicons):
    return word_lists(known_words(lexicons) + ["kâtil", "İSTANBUL", "ılık", "ILIK", ""])


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@pytest.mark.slow
@given(data=st.data(), min_length=st.sampled_from([1, 2, 3, 5]), name=st.sampled_from(["tr", "ku"]))
def test_fast_path_gives_the_bytes_of_check_on_each_word(lexicons, memos, words_strategy,
                                                         data, min_length, name):
    words = data.draw(words_strategy)
    lex = lexicons[name]
    want_body, want_tally = plain(lex, words, min_length)
    assert want_body == orjson.dumps(lex.validate(words, min_length))
    for memo in memos[name]:
        for _ in range(2):  # judged, then from the memo
            body, tally = memo.reply(words, min_length)
            assert body == want_body
            assert tally == want_tally
    assert validate_json(lex, words, min_length) == (want_body, want_tally)


def test_edge_batches(lexicons):
    lex = lexicons["tr"]
    assert validate_json(lex, []) == (orjson.dumps(lex.validate([])), {})
    for words in (["kitap"] * 5, ["göt"] * 3, ["kitap", "göt"], ["", "", "x"]):
        assert validate_json(lex, words) == plain(lex, words, 2)


def test_batches_past_the_counting_width(lexicons, monkeypatch):
    """Each verdict is counted in WIDTH bits; longer batches are summed in chunks."""
    monkeypatch.setattr(verdicts_module, "WIDTH", 2)
    monkeypatch.setattr(verdicts_module, "_MASK", 3)
    lex = lexicons["tr"]
    memo = Verdicts(lex)
    rng = random.Random(5)
    pool = ["kitap", "ev", "göt", "İstanbul", "evler", "a", "e-posta", "dulda tutmak", "KİTAP"]
    for size in (1, 3, 4, 7, 13, 40):
        words = [rng.choice(pool) for _ in range(size)]
        assert memo.reply(words) == plain(lex, words, 2), words
    assert memo.reply(["kitap"] * 10) == plain(lex, ["kitap"] * 10, 2)


# --- the memo's bound ---------------------------------------------------------------------

def random_words(rng: random.Random, count: int) -> list[str]:
    """Distinct words of every kind: short Turkish, long, astral, marks, junk."""
    alphabets = ["abcçdefgğhıijklmnoöprsştuüvyz", "ABCÇDEFGĞHIİJKLMNOÖPRSŞTUÜVYZ\u0302\u0307",
                 "😀🀄𝔘\x00\"\\", "".join(map(chr, range(0x20, 0x3000, 7)))]
    return [f"{i}" + "".join(rng.choice(letters) for _ in range(rng.choice((3, 8, 20, 64))))
            for i, letters in ((i, rng.choice(alphabets)) for i in range(count))]


@pytest.mark.slow
def test_memo_memory_stays_within_its_budget(lexicons):
    lex, budget = lexicons["tr"], 256 * 1024
    rng = random.Random(11)
    lex.validate(random_words(random.Random(0), 300))  # normalisation's own caches, made once
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        memo = Verdicts(lex, budget=budget)
        most = 0
        for _ in range(40):
            batch = random_words(rng, 500)
            memo.reply(batch, rng.choice((2, 3)))
            memo.reply(batch[:50], 2)
            del batch
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - before
            most = max(most, held)
            assert memo.used <= budget // 2
            assert held <= budget, f"the memo holds {held:,} bytes, over its {budget:,}"
        assert most > budget // 2  # it did fill up: the bound was tested, not idle
    finally:
        tracemalloc.stop()


def test_the_lexicons_own_memo_is_bounded(data_dir):
    lex = Lexicon.load(data_dir / "tr")
    rng = random.Random(3)
    for _ in range(30):
        validate_json(lex, random_words(rng, 1000), 2)
    memo = lex._verdicts
    assert 0 < memo.used <= MEMO_BYTES // 2
    assert len(memo) < 30_000
    assert validate_json(lex, ["kitap", "KİTAP"]) == plain(lex, ["kitap", "KİTAP"], 2)


def test_a_word_bigger_than_the_memo_is_answered_not_kept(lexicons):
    lex = lexicons["tr"]
    memo = Verdicts(lex, budget=1024)
    huge = "kitap" * 500
    assert memo.reply([huge, huge]) == plain(lex, [huge, huge], 2)
    assert huge not in memo._young.get(2, {})


# --- over HTTP ----------------------------------------------------------------------------

MIXED = ["kitap", "İstanbul", "evler", "göt", "a", "e-posta", "dulda tutmak", "KİTAP", "kitap",
         "ka\u0302til", " \tkitap\n", "", "😀", "I\u0307L\u0130K", "ev ev"]


@pytest.mark.parametrize("game, min_length", [(None, 2), ("kelimatik", 3)])
def test_http_replies_are_the_bytes_of_lexicon_validate(client, data_dir, game, min_length):
    lex = Lexicon.load(data_dir / "tr")
    want = orjson.dumps(lex.validate(MIXED, min_length))
    extra = {"game": game} if game else {}
    for _ in range(2):
        post = client.post("/v1/validate", json={"words": MIXED, **extra})
        get = client.get("/v1/validate", params={"word": MIXED, **extra})
        for reply in (post, get):
            assert reply.status_code == 200
            assert reply.content == want
            assert reply.headers["content-type"] == "application/json"
            assert reply.headers["content-length"] == str(len(want))
    assert get.headers["cache-control"] == "no-cache" and get.headers["etag"]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data(), lexicon=st.sampled_from(["tr", "ku"]))
def test_http_any_words_byte_for_byte(client, lexicons, words_strategy, data, lexicon):
    words = data.draw(words_strategy.filter(lambda ws: ws and all(len(w) <= 64 for w in ws)))
    reply = client.post("/v1/validate", json={"words": words, "lexicon": lexicon})
    assert reply.status_code == 200, reply.text
    assert reply.content == orjson.dumps(lexicons[lexicon].validate(words, 2))


def test_metrics_count_each_word_from_the_memo_too(data_dir):
    words = ["kitap", "KİTAP", "göt", "İstanbul", "evler", "e-posta", "a", "kitap"]
    with TestClient(create_app(Settings(data=data_dir))) as client:
        for _ in range(3):  # judged once, then answered from the memo
            assert client.post("/v1/validate", json={"words": words}).status_code == 200
        client.get("/v1/validate", params={"word": words[:2], "lexicon": "ku"})
        client.get("/v1/words/göt")
        text = client.get("/metrics").text
    counted = "kelime_words_validated_total"
    assert sample(text, counted, lexicon="tr", verdict="valid") == 9
    for verdict, n in {"obscene": 4, "proper_name": 3, "not_in_dictionary": 3,
                       "invalid_chars": 3, "too_short": 3}.items():
        assert sample(text, counted, lexicon="tr", verdict=verdict) == n, verdict
    assert sample(text, counted, lexicon="ku", verdict="not_in_dictionary") == 2
