"""GET /v1/lexicons and GET /v1/games."""

from __future__ import annotations

from kelime.games import GAMES
from kelime.lexicon import Lexicon


def test_lexicons_lists_every_loaded_lexicon(client, data_dir):
    reply = client.get("/v1/lexicons")
    assert reply.status_code == 200
    body = reply.json()
    tr, ku = Lexicon.load(data_dir / "tr"), Lexicon.load(data_dir / "ku")
    assert body["default"] == "tr" and body["lexicon"] == tr.info
    assert [lex["name"] for lex in body["lexicons"]] == ["ku", "tr"]
    first = body["lexicons"][0]
    assert {k: first[k] for k in tr.info} == ku.info
    assert first["alphabet"] == "abcçdeêfghiîjklmnopqrsştuûvwxyz"
    assert first["counts"] == ku.manifest.counts and first["source"]["kind"] == "test"
    assert "files" not in first
    assert reply.headers["etag"]


def test_games_lists_the_profiles(client, data_dir):
    reply = client.get("/v1/games")
    assert reply.status_code == 200
    body = reply.json()
    assert body["lexicon"] == Lexicon.load(data_dir / "tr").info
    assert body["default"] == "kelimelik"
    assert {g["name"]: g["min_length"] for g in body["games"]} == {
        "kelimelik": 2, "sozce": 2, "kelimatik": 3, "kelimatik-ku": 3, "harfbank": 3}
    assert body["games"] == [g.as_dict() for g in GAMES.values()]
    assert reply.headers["etag"] == client.get("/v1/games").headers["etag"]
    assert reply.headers["etag"] != client.get("/v1/lexicons").headers["etag"]
