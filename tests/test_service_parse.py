"""service.parse without HTTP: every request body or query either parses or is a clear 4xx."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kelime.service.errors import Invalid, ServiceError, TooLarge
from kelime.service.models import (
    ONE_PASS_BYTES,
    AnagramAsk,
    body_schema,
    parse_anagram,
    parse_report,
)
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


REFUSED = [(b'{"words": ["a"], "wrods": ["b"], "x": 1}', "unknown field(s) 'wrods', 'x'"),
           (b'{"words": ["a", 3]}', "is a number, not a string: every word must be a JSON string"),
           (b'{"words": ["a"], "lexicon": 5}', "'lexicon' must be a string or null, not a number"),
           (b'{"words": ["a"], "suggest": "yes"}', "'suggest' must be true or false, not a string")]


@pytest.mark.parametrize("body, says", REFUSED)
def test_short_and_long_bodies_are_refused_alike(body, says):
    """A short body is decoded by msgspec in one pass, a long one parsed by orjson and then
    converted (models.ONE_PASS_BYTES): the refusal is the same either way."""
    data = orjson.loads(body)
    data["words"] = ["ev"] * 1000 + data["words"]
    long = orjson.dumps(data)
    assert len(body) <= ONE_PASS_BYTES < len(long)
    refusals = []
    for each in (body, long):
        with pytest.raises(Invalid) as refused:
            parse_body(each, LIMITS)
        assert refused.value.code == "invalid_request" and says in refused.value.message
        refusals.append(refused.value.details)
    if "index" in refusals[0]:
        assert refusals[1]["index"] == refusals[0]["index"] + 1000


def test_an_anagram_question_passes_on_only_the_options_sent():
    ask = parse_anagram(b'{"rack": "kale", "limit": 5.0, "sort": "length", "pattern": null}',
                        LIMITS)
    assert ask.options == {"limit": 5, "sort": "length"}  # 5.0 is 5; null is the default
    with pytest.raises(Invalid) as refused:
        parse_anagram(b'{"rack": "kale", "limit": 5.5}', LIMITS)
    assert refused.value.code == "invalid_option"
    assert refused.value.message.startswith("'limit' must be a whole number or null, not a "
                                            "number")
    with pytest.raises(Invalid) as no_rack:
        parse_anagram(b'{"limit": 5}', LIMITS)
    assert no_rack.value.code == "invalid_rack" and "no 'rack'" in no_rack.value.message


def test_a_report_note_is_stripped_and_a_kind_named():
    ask = parse_report(b'{"word": "ev", "kind": "missing", "note": "  var  "}', LIMITS)
    assert (ask.word, ask.kind, ask.note) == ("ev", "missing", "var")
    with pytest.raises(Invalid) as refused:
        parse_report(b'{"word": "ev", "kind": "spam"}', LIMITS)
    assert refused.value.details == {"field": "kind", "allowed": ["missing", "wrong",
                                                                 "offensive"]}


def test_the_body_schema_is_the_models_with_the_settings_limits():
    schema = body_schema(Ask, SMALL)
    assert schema["required"] == ["words"] and schema["additionalProperties"] is False
    assert schema["properties"]["words"] == {"type": "array", "minItems": 1, "maxItems": 3,
                                             "items": {"type": "string", "maxLength": 5}}
    limit = body_schema(AnagramAsk, SMALL)["properties"]["limit"]
    assert limit["anyOf"][0] == {"type": "integer", "minimum": 0,
                                 "maximum": SMALL.max_results}
