"""GET /v1/words/{word} reads TDK entries from a cache written by kelime.tdk.store, read-only."""

from __future__ import annotations

import orjson
import sqlite_utils
from fastapi.testclient import TestClient

from kelime.lexicon import Candidate, compile_words, write_lexicon
from kelime.service.app import create_app
from kelime.service.settings import Settings
from kelime.tdk import store as cache

from .fake_tdk import builtin_entries

ADET = [e for e in builtin_entries() if e["madde"] in ("âdet", "adet")]


def lexicon(tmp_path):
    compiled = compile_words([Candidate("adet"), Candidate("kitap")])
    write_lexicon(compiled, tmp_path / "data", "tr",
                  {"kind": "test", "name": "tiny", "licence": "n/a"},
                  created="2026-01-01T00:00:00Z")
    return tmp_path / "data"


def test_words_route_returns_every_entry_of_the_word(tmp_path):
    data = lexicon(tmp_path)
    db = cache.open_cache(tmp_path / "tdk.sqlite", create=True)
    cache.save_reply(db, {"query": "adet", "url": "u", "status": 200, "outcome": "ok",
                          "body": "[]", "error": None, "attempts": 1}, ADET)
    db.close()
    before = (tmp_path / "tdk.sqlite").read_bytes()
    app = create_app(Settings(data=data, cache=tmp_path / "tdk.sqlite"))
    with TestClient(app) as client:
        reply = client.get("/v1/words/âdet")
        other = client.get("/v1/words/kitap")
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["normalized"] == "adet" and body["valid"] is True
    assert body["entries"] == ADET  # both, exactly as TDK sent them
    assert other.json()["entries"] == []
    assert (tmp_path / "tdk.sqlite").read_bytes() == before  # read-only: untouched


def test_words_route_reads_a_cache_of_the_older_schema_without_migrating_it(tmp_path):
    data = lexicon(tmp_path)
    path = tmp_path / "old.sqlite"
    db = sqlite_utils.Database(path)
    cache.MIGRATIONS.apply(db, stop_before="m002_reply_entries")
    for e in ADET:
        db["entries"].insert({"madde_id": int(e["madde_id"]), "madde": e["madde"],
                              "headword": "adet", "query": "adet",
                              "raw": orjson.dumps(e).decode()}, pk="madde_id")
    db.close()
    before = path.read_bytes()
    with TestClient(create_app(Settings(data=data, cache=path))) as client:
        reply = client.get("/v1/words/adet")
    assert reply.status_code == 200, reply.text
    assert reply.json()["entries"] == ADET
    assert path.read_bytes() == before
    assert [m.name for m in cache.MIGRATIONS.applied(sqlite_utils.Database(path))] == [
        "m001_initial"]
