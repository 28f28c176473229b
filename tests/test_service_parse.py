"""service.parse without HTTP: every request body or query either parses or is a clear 4xx."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kelime.service.errors import Invalid, ServiceError, TooLarge
from kelime.service.parse import Ask, get_limit, json_type, parse_body, parse_query
from kelime.service.settings import Settings

LIMITS = Settings()
SMALL = Settings(max_words=3, max_word_chars=5)


def test_body_and_query_give_the_same_question():
    body = parse_body(orjson.dumps({"words": ["kitap", "İstanbul"], "lexicon": "tr",
                                    "game": "harfbank"}), LIMITS)
    query = parse_query(urlencode([("word", "kitap"), ("word", "İstanbul"), ("lexicon", "tr"),
                                   ("game", "harfbank")]).encode(), LIMITS)
    assert body == query == Ask(["kitap", "İstanbul"], "tr", "harfbank")


def test_limits_come_from_the_settings():
    assert parse_body(b'{"words": ["abcde", "b", "c"]}', SMALL).words == ["abcde", "b", "c"]
    with pytest.raises(TooLarge) as many:
        parse_body(b'{"words": ["a", "b", "c", "d"]}', SMALL)
    assert many.value.details == {"count": 4, "limit": 3}
    with pytest.raises(TooLarge) as long:
        parse_query(b"word=a&word=abcdef", SMALL)
    assert long.value.code == "word_too_long" and long.value.details["index"] == 1


def test_a_huge_query_is_refused_without_parsing_it_all():
    query = b"&".join([b"word=ev"] * 50_000)
    with pytest.raises(TooLarge) as refused:
        parse_query(query, LIMITS)
    assert refused.value.code == "query_too_large"
    assert refused.value.details == {"size": len(query), "limit": 32 * 1024}
    assert "use POST /v1/validate for big batches" in refused.value.message
    with pytest.raises(TooLarge) as many:  # under the byte limit, over GET's word limit
        parse_query(b"&".join([b"word="] * 5_000), LIMITS)
    assert many.value.code == "too_many_words"
    assert many.value.details == {"count": 5_000, "limit": 1_000}


def test_get_takes_fewer_words_than_post_and_says_so():
    assert get_limit(LIMITS) == (1_000, "use POST /v1/validate for big batches (up to 10,000 "
                                        "words)")
    assert get_limit(SMALL) == (3, "split the list into several requests")  # POST: no more
    with pytest.raises(TooLarge) as tight:
        parse_query(b"word=ab&word=cd", Settings(max_query_bytes=10))
    assert tight.value.details == {"size": 15, "limit": 10}


def test_plus_and_percent_escapes_decode_like_a_form():
    assert parse_query(b"word=dulda+tutmak&word=%C4%B0&word=a%2Bb", LIMITS).words == [
        "dulda tutmak", "İ", "a+b"]


def test_raw_utf8_in_the_query_is_read_as_utf8():
    assert parse_query("word=İstanbul".encode(), LIMITS).words == ["İstanbul"]


@pytest.mark.parametrize("value, name", [(None, "null"), (True, "boolean"), (1, "number"),
                                         (1.5, "number"), ("s", "string"), ([], "array"),
                                         ({}, "object")])
def test_json_type_names(value, name):
    assert json_type(value) == name


def test_invalid_utf8_names_the_byte():
    with pytest.raises(Invalid) as bad:
        parse_body(b'{"words": ["\xc4"]}', LIMITS)
    assert bad.value.code == "invalid_encoding"
    assert "byte 0xc4 at offset 12" in bad.value.message


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(), lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.sampled_from(["words", "lexicon", "game", "x"]) | st.text(),
                                      inner, max_size=4), max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.binary(max_size=200), JSON.map(lambda v: json.dumps(v).encode())))
def test_any_body_parses_or_is_a_clear_client_error(body):
    try:
        ask = parse_body(body, LIMITS)
    except ServiceError as e:
        assert e.status in (413, 422) and e.message
    else:
        assert ask.words and all(isinstance(w, str) for w in ask.words)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200) | st.text().map(str.encode))
def test_any_query_parses_or_is_a_clear_client_error(query):
    try:
        ask = parse_query(query, LIMITS)
    except ServiceError as e:
        assert e.status in (413, 422) and e.message
    else:
        assert ask.words and all(isinstance(w, str) for w in ask.words)


@given(st.lists(st.text(max_size=64), min_size=1, max_size=20))
def test_words_round_trip_through_json_and_query(words):
    assert parse_body(orjson.dumps({"words": words}), LIMITS).words == words
    assert parse_query(urlencode([("word", w) for w in words]).encode(), LIMITS).words == words
