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


def test_a_locked_cache_answers_503_at_once_and_never_holds_other_routes_threads(tmp_path):
    """Another process holds the cache's lock (a crawl mid-write): each /v1/words request
    gives up after a short wait with 503 `cache_busy` (or `busy` when too many wait) and
    Retry-After, in the error shape; an anagram question sent behind 48 of them is answered
    while the lock is still held. (Each used to hold one of the 40 shared threads for the
    crawl's 30 s busy timeout: /v1/anagram waited 28 s.)"""
    import asyncio
    import sqlite3

    import httpx

    from kelime.service.entries import READ_THREADS

    from .service_helpers import serve_in_thread
    from .waiting import until

    data = lexicon(tmp_path)
    path = tmp_path / "tdk.sqlite"
    cache.open_cache(path, create=True).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")  # readers too must wait for it
    holder.execute("BEGIN EXCLUSIVE")

    app = create_app(Settings(data=data, cache=path))

    def reads_hold_their_threads() -> bool:
        """Every thread of the cache's reads is taken by a read waiting for the lock, and
        more reads queue behind them."""
        reads = getattr(app.state, "cache_reads", None)  # made by the first read
        return (reads is not None and reads.turns.borrowed_tokens == READ_THREADS
                and reads.waiting > 0)

    async def load(url: str):
        limits = httpx.Limits(max_connections=100)
        async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
            words = [asyncio.create_task(client.get("/v1/words/kitap")) for _ in range(48)]
            await until(reads_hold_their_threads, "reads of the locked cache holding every "
                        f"one of its {READ_THREADS} threads, more waiting")
            anagram = await client.post("/v1/anagram", json={"rack": "kitap"}, timeout=15)
            return anagram, await asyncio.gather(*words)

    try:
        with serve_in_thread(app) as url:
            anagram, replies = asyncio.run(load(url))
            assert holder.in_transaction  # every answer came with the lock still held
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert anagram.status_code == 200 and anagram.json()["words"], anagram.text
    codes = {reply.json()["error"]["code"] for reply in replies}
    assert {reply.status_code for reply in replies} == {503}
    assert "cache_busy" in codes and codes <= {"cache_busy", "busy"}
    assert all(int(reply.headers["retry-after"]) >= 1 for reply in replies)
    busy = next(r.json()["error"] for r in replies if r.json()["error"]["code"] == "cache_busy")
    assert "locked by another process" in busy["message"]
