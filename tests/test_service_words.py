"""GET /v1/words/{word} without a cache (the with-cache test is tests/test_cache_words_api.py)."""

from __future__ import annotations

import pytest

from kelime.service.app import create_app
from kelime.service.entries import read_entries
from kelime.service.settings import Settings
from tests.service_helpers import TestClient


def test_a_word_without_a_cache(client):
    reply = client.get("/v1/words/İSTANBUL")
    assert reply.status_code == 200
    body = reply.json()
    assert {k: body[k] for k in ("word", "normalized", "valid", "reason", "entries", "cache")} == {
        "word": "İSTANBUL", "normalized": "istanbul", "valid": False, "reason": "proper_name",
        "entries": [], "cache": None}
    assert body["lexicon"]["name"] == "tr"
    assert reply.headers["etag"] != client.get("/v1/words/kitap").headers["etag"]


def test_game_and_lexicon_apply(client):
    assert client.get("/v1/words/ev").json()["valid"] is True
    assert client.get("/v1/words/ev?game=harfbank").json()["reason"] == "too_short"
    ku = client.get("/v1/words/%C5%9F%C3%AEr?lexicon=ku").json()
    assert (ku["normalized"], ku["valid"], ku["lexicon"]["name"]) == ("şîr", True, "ku")
    assert client.get("/v1/words/ev?lexicon=zz").status_code == 404
    assert client.get("/v1/words/ev?game=zz").json()["error"]["code"] == "unknown_game"


def test_odd_words_in_the_path_get_verdicts(client):
    for path, word, reason in [("/v1/words/a%2Fb", "a/b", "invalid_chars"),
                               ("/v1/words/dulda%20tutmak", "dulda tutmak", "phrase"),
                               ("/v1/words/%00", "\x00", "invalid_chars"),
                               ("/v1/words/ka%CC%82til", "ka\u0302til", None),
                               ("/v1/words/%F0%9F%98%80", "😀", "invalid_chars")]:
        body = client.get(path).json()
        assert (body["word"], body["reason"]) == (word, reason), path


def test_a_long_word_is_413(client):
    reply = client.get("/v1/words/" + "k" * 65)
    assert reply.status_code == 413
    assert reply.json()["error"]["details"] == {"length": 65, "limit": 64}


def test_a_configured_cache_that_is_absent_means_no_entries(data_dir, tmp_path):
    app = create_app(Settings(data=data_dir, cache=tmp_path / "absent.sqlite"))
    with TestClient(app) as test_client:
        body = test_client.get("/v1/words/kitap").json()
    assert (body["entries"], body["cache"]) == ([], None)
    assert not (tmp_path / "absent.sqlite").exists()  # looked at, never created
    assert read_entries(tmp_path / "absent.sqlite", "kitap") == ([], None)


def test_an_unreadable_cache_is_503_saying_why(data_dir, tmp_path):
    junk = tmp_path / "tdk.sqlite"
    junk.write_bytes(b"this is not SQLite" * 100)
    with TestClient(create_app(Settings(data=data_dir, cache=junk))) as test_client:
        reply = test_client.get("/v1/words/kitap")
    assert reply.status_code == 503
    error = reply.json()["error"]
    assert error["code"] == "cache_unavailable" and "not an SQLite database" in error["message"]



@pytest.mark.parametrize("path, byte", [("/v1/words/%FF", "ff"), ("/v1/words/ki%C4tap", "c4"),
                                        ("/v1/words/%C4%B0%FF?lexicon=tr", "ff")])
def test_a_path_that_is_not_utf8_is_422_like_the_query(client, path, byte):
    """The server decodes %FF to U+FFFD; a verdict on "\ufffd" would answer the wrong word."""
    reply = client.get(path)
    assert reply.status_code == 422
    assert reply.json()["error"] == {
        "code": "invalid_encoding", "message": f"the path is not valid UTF-8 once percent-decoded "
        f"(byte 0x{byte}): encode the word as UTF-8 (%C4%B0 for İ)"}
    assert client.get("/v1/validate?word=%FF").json()["error"]["code"] == "invalid_encoding"


def test_u_fffd_sent_as_utf8_is_just_a_word(client):
    assert client.get("/v1/words/%EF%BF%BD").json()["word"] == "\ufffd"
