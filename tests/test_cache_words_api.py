"""GET /v1/words/{word} reads TDK entries from a cache written by kelime.cache."""

from __future__ import annotations

import pytest

from kelime import cache
from kelime.build import Candidate, compile_words, write_lexicon

from .fake_tdk import builtin_entries

service_app = pytest.importorskip("service.app")
from service.settings import Settings  # noqa: E402


def test_words_route_returns_every_entry_of_the_word(tmp_path):
    from fastapi.testclient import TestClient

    compiled = compile_words([Candidate("adet"), Candidate("kitap")])
    write_lexicon(compiled, tmp_path / "data", "tr", {"kind": "test", "name": "tiny",
                                                      "licence": "n/a"})
    entries = [e for e in builtin_entries() if e["madde"] in ("âdet", "adet")]
    db = cache.open_cache(tmp_path / "tdk.sqlite", create=True)
    cache.save_reply(db, {"query": "adet", "url": "u", "status": 200, "outcome": "ok",
                          "body": "[]", "error": None, "attempts": 1}, entries)
    db.close()
    app = service_app.create_app(Settings(data=tmp_path / "data", cache=tmp_path / "tdk.sqlite"))
    with TestClient(app) as client:
        reply = client.get("/v1/words/âdet")
        other = client.get("/v1/words/kitap")
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["normalized"] == "adet" and body["valid"] is True
    assert body["entries"] == entries  # both, exactly as TDK sent them
    assert other.json()["entries"] == []
