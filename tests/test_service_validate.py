"""POST and GET /v1/validate against the real app on two small real lexicons."""

from __future__ import annotations

import json
import socket

import httpx
import orjson
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kelime.cli import cli
from kelime.lexicon import Lexicon
from kelime.service.app import create_app
from kelime.service.settings import SERVER_URL_LIMIT, Settings
from tests.service_helpers import serve_in_thread

MIXED = ["kitap", "İstanbul", "evler", "göt", "a", "e-posta", "dulda tutmak", "KİTAP"]


def post(client, words, **extra):
    return client.post("/v1/validate", json={"words": words, **extra})


def verdicts(reply) -> list[tuple]:
    return [(r["word"], r["normalized"], r["valid"], r["reason"]) for r in reply.json()["results"]]


def test_post_gives_one_verdict_per_word_in_order(client, data_dir):
    reply = post(client, MIXED)
    assert reply.status_code == 200
    assert verdicts(reply) == [
        ("kitap", "kitap", True, None),
        ("İstanbul", "istanbul", False, "proper_name"),
        ("evler", "evler", False, "not_in_dictionary"),
        ("göt", "göt", False, "obscene"),
        ("a", "a", False, "too_short"),
        ("e-posta", "e-posta", False, "invalid_chars"),
        ("dulda tutmak", "dulda tutmak", False, "phrase"),
        ("KİTAP", "kitap", True, None),
    ]
    body = reply.json()
    assert body["all_valid"] is False
    assert body["lexicon"] == Lexicon.load(data_dir / "tr").info
    assert reply.headers["content-type"] == "application/json"


def test_reply_is_exactly_lexicon_validate_and_kelime_check_json(client, data_dir):
    reply = post(client, MIXED, game="kelimatik").json()
    assert reply == Lexicon.load(data_dir / "tr").validate(MIXED, 3)
    run = CliRunner().invoke(cli, ["check", "--json", "--game", "kelimatik",
                                   "--data", str(data_dir), *MIXED])
    assert run.exit_code == 1, run.output
    assert json.loads(run.output) == reply


def test_all_valid_and_duplicates_kept_in_order(client):
    reply = post(client, ["ev", "kitap", "ev", "EV", "ev"]).json()
    assert reply["all_valid"] is True
    assert [r["word"] for r in reply["results"]] == ["ev", "kitap", "ev", "EV", "ev"]
    assert [r["normalized"] for r in reply["results"]] == ["ev", "kitap", "ev", "ev", "ev"]


@pytest.mark.parametrize("game, min_length", [("kelimelik", 2), ("sozce", 2), ("kelimatik", 3),
                                              ("harfbank", 3), ("KELIMATIK", 3), (None, 2)])
def test_game_sets_the_minimum_length(client, game, min_length):
    extra = {"game": game} if game else {}
    results = post(client, ["ev", "at", "kitap"], **extra).json()["results"]
    short = [r["reason"] for r in results[:2]]
    assert short == ([None, None] if min_length == 2 else ["too_short", "too_short"])
    assert results[2]["valid"] is True
    query = "word=ev&word=kitap" + (f"&game={game}" if game else "")
    assert client.get(f"/v1/validate?{query}").json()["results"][0]["valid"] is (min_length == 2)


def test_unknown_game_is_404_listing_the_games(client):
    for reply in (post(client, ["ev"], game="scrabble"),
                  client.get("/v1/validate?word=ev&game=scrabble")):
        assert reply.status_code == 404
        error = reply.json()["error"]
        assert error["code"] == "unknown_game"
        assert "scrabble" in error["message"] and "kelimatik" in error["message"]
        assert error["details"]["known"] == ["kelimelik", "sozce", "kelimatik",
                                             "kelimatik-ku", "harfbank"]


def test_lexicons_side_by_side(client, data_dir):
    ku = post(client, ["şîr", "ŞÎR", "xwe", "kitap"], lexicon="ku").json()
    assert ku["lexicon"] == Lexicon.load(data_dir / "ku").info
    assert [(r["normalized"], r["reason"]) for r in ku["results"]] == [
        ("şîr", None), ("şîr", None), ("xwe", None), ("kitap", "not_in_dictionary")]
    tr = post(client, ["şîr", "xwe"]).json()
    assert tr["lexicon"]["name"] == "tr"
    assert [(r["normalized"], r["reason"]) for r in tr["results"]] == [
        ("şir", "not_in_dictionary"), ("xwe", "invalid_chars")]
    get = client.get("/v1/validate?word=%C5%9F%C3%AEr&lexicon=ku").json()
    assert get["lexicon"]["name"] == "ku" and get["all_valid"] is True


def test_unknown_lexicon_is_404_naming_the_loaded_ones(client):
    for reply in (post(client, ["ev"], lexicon="de"), client.get("/v1/validate?word=ev&lexicon=de")):
        assert reply.status_code == 404
        error = reply.json()["error"]
        assert error["code"] == "unknown_lexicon"
        assert "'de'" in error["message"] and "ku, tr" in error["message"]
        assert error["details"] == {"known": ["ku", "tr"]}


ODD = [
    ("kitap\x00", "kitap\x00", "invalid_chars"),
    ("\x00", "\x00", "invalid_chars"),
    ("kitap😀", "kitap😀", "invalid_chars"),
    ("😀", "😀", "invalid_chars"),
    ("ki\u200btap", "ki\u200btap", "invalid_chars"),  # zero-width space: not stripped
    ("\u200fkitap", "\u200fkitap", "invalid_chars"),  # right-to-left mark
    ("kitap\u200e", "kitap\u200e", "invalid_chars"),  # left-to-right mark
    ("\u202ekitap", "\u202ekitap", "invalid_chars"),  # right-to-left override
    ("\ufeffkitap", "\ufeffkitap", "invalid_chars"),  # byte-order mark
    ("ka\u0302til", "katil", None),  # a + combining circumflex → â → a
    ("KA\u0302TİL", "katil", None),
    ("a\u0302", "a", "too_short"),
    (" \tkitap\n", "kitap", None),
    ("", "", "too_short"),
    ("   ", "", "too_short"),
    ("ev ev", "ev ev", "phrase"),
]
DOTS = [  # Turkish dotted/dotless I in every combination
    ("ILIK", "ılık", None), ("ılık", "ılık", None), ("Ilık", "ılık", None),
    ("İLİK", "ilik", None), ("ilik", "ilik", None), ("İlik", "ilik", None),
    ("ILİK", "ılik", "not_in_dictionary"), ("İLIK", "ilık", "not_in_dictionary"),
    ("I\u0307L\u0130K", "ilik", None),  # I + combining dot above composes to İ
    ("I\u0307LIK", "ilık", "not_in_dictionary"),
    ("i\u0307lik", "ilik", None),  # what plain str.lower("İlik") or JS toLowerCase gives
    ("İĞNE", "iğne", None), ("IĞNE", "ığne", "not_in_dictionary"),
    ("iğne".upper(), "ığne", "not_in_dictionary"),  # Python's upper() is not Turkish
]


@pytest.mark.parametrize("word, normalized, reason", ODD + DOTS)
def test_odd_unicode_gets_a_verdict_never_an_error(client, word, normalized, reason):
    for reply in (post(client, [word]), client.get("/v1/validate", params={"word": word})):
        assert reply.status_code == 200, reply.text
        (result,) = reply.json()["results"]
        assert (result["word"], result["normalized"], result["reason"]) == (word, normalized, reason)
        assert result["valid"] is (reason is None)


def raw_post(client, body: bytes):
    return client.post("/v1/validate", content=body, headers={"content-type": "application/json"})


@pytest.mark.parametrize("body, code, says", [
    (b"not json", "invalid_json", "not valid JSON"),
    (b"", "invalid_json", "empty"),
    (b"  \n", "invalid_json", "empty"),
    (b'{"words": ["kitap"', "invalid_json", "not valid JSON"),
    (b'{"words": ["ki\xfftap"]}', "invalid_encoding", "byte 0xff at offset 14"),
    (b'{"words": ["\\ud800"]}', "invalid_json", "surrogate"),
    (b'["kitap"]', "invalid_request", "JSON object"),
    (b'"kitap"', "invalid_request", "not a string"),
    (b"{}", "invalid_request", "no 'words'"),
    (b'{"words": "kitap"}', "invalid_request", "array of strings, not a string"),
    (b'{"words": null}', "invalid_request", "not null"),
    (b'{"words": {"0": "kitap"}}', "invalid_request", "not an object"),
    (b'{"words": []}', "invalid_request", "empty"),
    (b'{"words": ["a"], "wrods": ["b"]}', "invalid_request", "unknown field(s) 'wrods'"),
    (b'{"words": ["a"], "lexicon": 5}', "invalid_request", "'lexicon' must be a string"),
    (b'{"words": ["a"], "lexicon": ["tr"]}', "invalid_request", "not an array"),
    (b'{"words": ["a"], "game": true}', "invalid_request", "'game' must be a string"),
])
def test_malformed_bodies_are_422_with_an_actionable_message(client, body, code, says):
    reply = raw_post(client, body)
    assert reply.status_code == 422, reply.text
    error = reply.json()["error"]
    assert error["code"] == code
    assert says in error["message"]


@pytest.mark.parametrize("element, json_type, said", [
    (None, "null", "null"), (3, "number", "a number"), (2.5, "number", "a number"),
    (True, "boolean", "a boolean"), ({"w": "ev"}, "object", "an object"),
    (["ev"], "array", "an array")])
def test_a_word_that_is_not_a_string_names_its_index(client, element, json_type, said):
    reply = raw_post(client, orjson.dumps({"words": ["ev", "kitap", element, "ev"]}))
    assert reply.status_code == 422
    error = reply.json()["error"]
    assert error["details"] == {"index": 2, "type": json_type}
    assert error["message"] == (f"words[2] is {said}, not a string: every word must be a "
                                "JSON string")


def test_null_lexicon_and_game_mean_the_defaults(client):
    reply = raw_post(client, b'{"words": ["ev"], "lexicon": null, "game": null}')
    assert reply.status_code == 200 and reply.json()["lexicon"]["name"] == "tr"


@pytest.mark.parametrize("kind, status", [
    ("application/json", 200), ("application/json; charset=utf-8", 200),
    ("application/vnd.api+json", 200), (None, 200),
    ("text/plain", 415), ("application/x-www-form-urlencoded", 415),
    ("multipart/form-data; boundary=x", 415), ("application/json; charset=latin-1", 415)])
def test_a_body_that_says_it_is_not_json_is_415(client, kind, status):
    headers = {"content-type": kind} if kind else {}
    for path, body in (("/v1/validate", b'{"words": ["ev"]}'), ("/v1/anagram", b'{"rack": "ev"}'),
                       ("/v1/split", b'{"rack": "kitapkalemsilg?"}')):
        reply = client.post(path, content=body, headers=headers)
        assert reply.status_code == status, (path, reply.text)
        if status == 415:
            error = reply.json()["error"]
            assert error["code"] == "unsupported_media_type"
            assert "Content-Type: application/json" in error["message"]


def test_word_length_limit_is_413_naming_the_index(client):
    assert post(client, ["k" * 64]).status_code == 200
    reply = post(client, ["ev", "k" * 65])
    assert reply.status_code == 413
    assert reply.json()["error"] == {
        "code": "word_too_long", "message": "words[1] has 65 characters; the limit is 64",
        "details": {"index": 1, "length": 65, "limit": 64}}
    get = client.get("/v1/validate", params={"word": ["ev", "ev", "k" * 65]})
    assert get.status_code == 413 and get.json()["error"]["details"]["index"] == 2


def test_word_count_limit(client):
    assert len(post(client, ["ev"] * 10_000).json()["results"]) == 10_000
    for count in (10_001, 100_000):
        reply = post(client, ["ev"] * count)
        assert reply.status_code == 413
        error = reply.json()["error"]
        assert error["code"] == "too_many_words"
        assert error["details"] == {"count": count, "limit": 10_000}
        assert "split the list" in error["message"]


def test_a_20_mb_body_is_413(client):
    body = b'{"words": ["' + b"k" * (20 * 1024 * 1024) + b'"]}'
    reply = raw_post(client, body)
    assert reply.status_code == 413
    error = reply.json()["error"]
    assert error["code"] == "body_too_large"
    assert error["details"] == {"size": len(body), "limit": 4 * 1024 * 1024}


def test_get_matches_post(client):
    words = ["kitap", "İstanbul", "evler", "göt", "ka\u0302til", "ev ev", "x&y=z", "%"]
    get = client.get("/v1/validate", params={"word": words})
    assert get.status_code == 200
    assert get.json() == post(client, words).json()


@pytest.mark.parametrize("query, status, code, says", [
    ("", 422, "invalid_request", "no word to check"),
    ("lexicon=tr", 422, "invalid_request", "no word to check"),
    ("words=kitap", 422, "invalid_request", "unknown query parameter 'words'"),
    ("word=ev&lexicon=tr&lexicon=ku", 422, "invalid_request", "repeated query parameter 'lexicon'"),
    ("word=%FF", 422, "invalid_encoding", "not valid UTF-8"),
    ("word=ki%C4tap", 422, "invalid_encoding", "not valid UTF-8"),
    ("word=ev&game=nope", 404, "unknown_game", "nope"),
    ("word=ev&lexicon=xx", 404, "unknown_lexicon", "loaded: ku, tr"),
])
def test_bad_queries(client, query, status, code, says):
    reply = client.get(f"/v1/validate?{query}")
    assert reply.status_code == status, reply.text
    error = reply.json()["error"]
    assert error["code"] == code and says in error["message"]


def test_empty_word_parameter_is_too_short_not_an_error(client):
    assert verdicts(client.get("/v1/validate?word=")) == [("", "", False, "too_short")]


def words_query(count: int, length: int) -> str:
    return "&".join(["word=" + "a" * length] * count)


def test_get_word_parameter_limit(client):
    ok = client.get("/v1/validate?" + words_query(1_000, 2))
    assert ok.status_code == 200 and len(ok.json()["results"]) == 1_000
    reply = client.get("/v1/validate?" + words_query(1_001, 2))
    assert reply.status_code == 413
    error = reply.json()["error"]
    assert error["code"] == "too_many_words" and error["details"] == {"count": 1_001, "limit": 1_000}
    assert "use POST /v1/validate for big batches (up to 10,000 words)" in error["message"]


def test_get_limits_answer_json_before_the_http_servers_own(data_dir):
    """httptools refuses request targets over 65,535 bytes with uvicorn's text/plain 400
    before the app sees them: GET's 32 KiB query limit answers JSON well before (and behind
    nginx a URL over 64 KiB is its JSON 414: tests/test_nginx.py)."""
    limit = Settings().max_query_bytes
    assert limit + len("/v1/validate?") < SERVER_URL_LIMIT
    at_limit = words_query(1_000, 26)  # 1,000 words of 26 letters: 31,999 bytes
    over = words_query(1_000, 27)      # 32,999 bytes
    assert len(at_limit) <= limit < len(over)
    with serve_in_thread(create_app(Settings(data=data_dir))) as url:
        ok = httpx.get(f"{url}/v1/validate?{at_limit}")
        assert ok.status_code == 200 and len(ok.json()["results"]) == 1_000
        for query in (over, words_query(1_900, 27)):  # just over ours; near the server's
            reply = httpx.get(f"{url}/v1/validate?{query}")
            assert reply.status_code == 413 and reply.headers["content-type"] == "application/json"
            assert reply.json()["error"] == {
                "code": "query_too_large", "details": {"size": len(query), "limit": limit},
                "message": f"the query string has {len(query):,} bytes; the limit for GET is "
                           f"{limit:,}: use POST /v1/validate for big batches"}
        many = httpx.get(f"{url}/v1/validate?{words_query(1_001, 5)}")
        assert many.status_code == 413 and many.json()["error"]["code"] == "too_many_words"
        target = "/v1/validate?word=" + "a" * (SERVER_URL_LIMIT - 17)  # one byte too long
        reply = raw_get(url, target)  # (httpx refuses to send it): uvicorn's own refusal
        assert reply.startswith(b"HTTP/1.1 400 "), reply


def raw_get(url: str, target: str) -> bytes:
    """The status line and headers uvicorn answers to `GET target`, over a plain socket."""
    server = httpx.URL(url)
    with socket.create_connection((server.host, server.port)) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    return reply


def test_get_is_cacheable_with_etag_and_304(client, data_dir):
    url = "/v1/validate?word=kitap&word=ev"
    first = client.get(url)
    tag = first.headers["etag"]
    assert tag.startswith('"' + Lexicon.load(data_dir / "tr").info["sha256"][:32])
    assert first.headers["cache-control"] == "no-cache"  # revalidated: no old build's verdicts
    assert client.get(url).headers["etag"] == tag
    for header in (tag, f"W/{tag}", f'"other", {tag}', "*"):
        again = client.get(url, headers={"If-None-Match": header})
        assert again.status_code == 304, header
        assert again.content == b"" and again.headers["etag"] == tag
    assert client.get(url, headers={"If-None-Match": '"other"'}).status_code == 200
    others = {client.get(u).headers["etag"] for u in (
        "/v1/validate?word=ev&word=kitap", "/v1/validate?word=kitap&word=ev&game=kelimatik",
        "/v1/validate?word=kitap&word=ev&lexicon=ku")}
    assert tag not in others and len(others) == 3


def test_a_post_sends_no_etag_and_its_get_does(client):
    """An ETag validates the target resource's representation (RFC 9110 §8.8.3); one POST
    URL answers every question, and no cache stores or revalidates a POST, so a POST reply
    sends none. The same question as a GET is cacheable, with a tag naming the lexicon."""
    kitap = post(client, ["kitap"])
    assert "etag" not in kitap.headers
    assert "etag" not in client.post("/v1/validate", json={"words": ["kitap"],
                                                           "suggest": True}).headers
    get = client.get("/v1/validate?word=kitap")
    assert get.json() == kitap.json()
    assert get.headers["etag"].startswith('"' + kitap.json()["lexicon"]["sha256"][:32] + "-")


WORDS = st.lists(st.text(max_size=64), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=WORDS)
def test_any_text_gets_one_verdict_per_word(client, words):
    for reply in (post(client, words), client.get("/v1/validate", params={"word": words})):
        assert reply.status_code == 200, reply.text
        results = reply.json()["results"]
        assert len(results) == len(words)
        assert [r["word"] for r in results] == words
        assert all(r["valid"] is (r["reason"] is None) for r in results)
