"""kelime.cache: the SQLite store of TDK replies and entries (no network here)."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import sqlite_utils
from hypothesis import given, settings, strategies as st

from kelime import cache
from kelime.cache import CacheError, open_cache

from .fake_tdk import builtin_entries

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "tdk-samples"
ENTRIES = {e["madde"]: e for e in builtin_entries()}


def reply(query, outcome="ok", body=None, **kw):
    return {"query": query, "url": f"http://tdk/gts?ara={query}", "status": 200,
            "outcome": outcome, "body": body, "error": kw.pop("error", None),
            "attempts": kw.pop("attempts", 1), **kw}


@pytest.fixture
def db(tmp_path):
    return open_cache(tmp_path / "c.sqlite", create=True)


def test_new_cache_has_the_schema_and_wal(db):
    assert {"replies", "entries", "senses", "sense_tags", "tags", "examples", "words"} <= set(
        db.table_names())
    assert db.journal_mode == "wal"
    assert [m.name for m in cache.MIGRATIONS.applied(db)] == ["m001_initial"]


def test_reopening_applies_nothing_twice(tmp_path):
    open_cache(tmp_path / "c.sqlite", create=True).close()
    db = open_cache(tmp_path / "c.sqlite")
    assert len(cache.MIGRATIONS.applied(db)) == 1


@pytest.mark.parametrize("make, words", [
    (lambda p: None, "does not exist"),
    (lambda p: p.write_bytes(b"hello, not a database" * 50), "not an SQLite database"),
    (lambda p: sqlite_utils.Database(p)["t"].insert({"a": 1}), "not a kelime cache"),
    (lambda p: p.mkdir(), "is a folder"),
])
def test_unusable_files_raise_cache_error_with_a_fix(tmp_path, make, words):
    path = tmp_path / "c.sqlite"
    make(path)
    with pytest.raises(CacheError, match=words):
        open_cache(path)


def test_a_cache_from_a_newer_kelime_is_refused(tmp_path):
    db = open_cache(tmp_path / "c.sqlite", create=True)
    db["_sqlite_migrations"].insert({"migration_set": "kelime.cache", "name": "m999_future",
                                     "applied_at": "2030"})
    db.close()
    with pytest.raises(CacheError, match="newer kelime"):
        open_cache(tmp_path / "c.sqlite")


def test_a_corrupt_cache_raises_cache_error(tmp_path):
    path = tmp_path / "c.sqlite"
    db = open_cache(path, create=True)
    cache.save_reply(db, reply("kitap", body="[]"), [ENTRIES["kitap"]])
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # wreck the schema page
    path.write_bytes(bytes(data))
    with pytest.raises(CacheError):
        list(cache.iter_entries(open_cache(path)))


def test_one_query_several_entries_deduplicated_by_madde_id(db):
    adet = [ENTRIES["âdet"], ENTRIES["adet"]]
    cache.save_reply(db, reply("adet", body=json.dumps(adet)), adet)
    cache.save_reply(db, reply("âdet", body=json.dumps(adet)), adet)
    assert db["replies"].count == 2 and db["entries"].count == 2
    assert list(cache.iter_entries(db)) == adet  # exactly as sent, ordered by madde_id
    assert cache.entries_for_word(db, "adet") == adet
    assert cache.entries_for_word(db, "âdet") == []  # takes a normalised word


def test_senses_tags_and_examples_are_flattened(db):
    inek = ENTRIES["inek"]
    cache.save_reply(db, reply("inek"), [inek])
    vulgar = db.execute("SELECT s.anlam FROM senses s JOIN sense_tags st USING (anlam_id) "
                        "WHERE st.ozellik_id = 36").fetchall()
    assert vulgar == [("Aptal, anlayışsız kimse",)]
    assert db["tags"].get(36)["tam_adi"] == "kaba konuşmada"
    kitap = ENTRIES["kitap"]
    cache.save_reply(db, reply("kitap"), [kitap])
    assert db.execute("SELECT yazar FROM examples WHERE ornek = ?",
                      ["Bir kitabı kendim okurum."]).fetchone() == ("Nurullah Ataç",)


def test_resaving_an_edited_entry_replaces_its_senses(db):
    inek = ENTRIES["inek"]
    cache.save_reply(db, reply("inek"), [inek])
    edited = json.loads(json.dumps(inek))
    del edited["anlamlarListe"][1:]
    cache.save_reply(db, reply("inek"), [edited])
    assert db.execute("SELECT count(*) FROM senses WHERE madde_id = 40").fetchone() == (1,)
    assert db.execute("SELECT count(*) FROM sense_tags").fetchone() == (1,)
    assert list(cache.iter_entries(db)) == [edited]


def test_an_entry_tdk_stopped_sending_is_dropped(db):
    cache.save_reply(db, reply("abdal"), [ENTRIES["abdal"], ENTRIES["Abdal"]])
    cache.save_reply(db, reply("abdal"), [ENTRIES["abdal"]])
    assert [e["madde"] for e in cache.iter_entries(db)] == ["abdal"]
    assert db.execute("SELECT count(*) FROM senses WHERE madde_id = 11").fetchone() == (0,)


def test_a_failure_never_replaces_a_good_reply(db):
    cache.save_reply(db, reply("kitap", body="[...]"), [ENTRIES["kitap"]])
    cache.save_reply(db, reply("kitap", "failed", body="<html>", error="HTML", attempts=4))
    row = cache.get_reply(db, "kitap")
    assert (row["outcome"], row["body"], row["error"]) == ("ok", "[...]", "HTML")
    assert list(cache.iter_entries(db)) == [ENTRIES["kitap"]]


def test_failures_count_attempts_across_runs_and_are_due_again(db):
    cache.save_words(db, ["kalem", "kitap"], "test")
    cache.save_reply(db, reply("kalem", "failed", error="HTML", attempts=4))
    cache.save_reply(db, reply("kalem", "failed", error="HTML", attempts=4))
    assert cache.get_reply(db, "kalem")["attempts"] == 8
    assert cache.due_words(db, 30) == ["kalem", "kitap"]
    assert cache.fresh_queries(db, 30) == set()


def test_max_age_decides_what_is_fresh(db):
    cache.save_words(db, ["eski", "yeni", "massa"], "test")
    old = (datetime.now(timezone.utc) - timedelta(days=40)).isoformat(timespec="seconds")
    cache.save_reply(db, reply("eski", fetched_at=old), [])
    cache.save_reply(db, reply("yeni"), [])
    cache.save_reply(db, reply("massa", "not_found", body='{"error":"Sonuç bulunamadı"}'))
    assert cache.fresh_queries(db, 30) == {"yeni", "massa"}
    assert cache.due_words(db, 30) == ["eski"]
    assert cache.due_words(db, 0) == ["eski", "yeni", "massa"]
    assert cache.fresh_queries(db, None) == {"eski", "yeni", "massa"}


def test_stats(db):
    cache.save_words(db, ["adet", "massa", "kalem"], "sitemap")
    cache.save_words(db, ["adet"], "again")
    adet = [ENTRIES["âdet"], ENTRIES["adet"]]
    cache.save_reply(db, reply("adet", body="x"), adet)
    cache.save_reply(db, reply("massa", "not_found", body="y"))
    cache.save_reply(db, reply("kalem", "failed", error="HTML"))
    st = cache.cache_stats(db)
    assert st["replies"] == {"ok": 1, "not_found": 1, "failed": 1}
    assert st["entries"] == 2
    assert st["words"] == {"queued": 3, "done": 2, "pending": 1}
    assert st["oldest_fetch"] <= st["newest_fetch"]
    assert db["words"].get("adet")["source"] == "sitemap"


def test_body_hash_is_recorded(db):
    cache.save_reply(db, reply("massa", "not_found", body='{"error":"Sonuç bulunamadı"}'))
    import hashlib

    assert cache.get_reply(db, "massa")["sha256"] == hashlib.sha256(
        '{"error":"Sonuç bulunamadı"}'.encode()).hexdigest()


def test_every_real_sample_round_trips():
    if not SAMPLES.is_dir():
        pytest.skip("../shared/tdk-samples is not beside the repo")
    from crawler.classify import classify

    db = sqlite_utils.Database(memory=True)
    cache.MIGRATIONS.apply(db)
    sent = {}
    for path in sorted(SAMPLES.glob("gts-*.json")):
        c = classify(200, path.read_bytes())
        cache.save_reply(db, reply(path.stem, c.outcome, body=path.read_text()), c.entries)
        sent.update({int(e["madde_id"]): e for e in c.entries})
    assert list(cache.iter_entries(db)) == [sent[k] for k in sorted(sent)]
    assert {e["madde"] for e in cache.entries_for_word(db, "adet")} == {"âdet", "adet"}
    assert cache.get_reply(db, "gts-notfound-massa")["outcome"] == "not_found"


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(sorted(ENTRIES)), min_size=1, max_size=8))
def test_saving_in_any_order_keeps_one_copy_of_each_entry(names):
    db = sqlite_utils.Database(memory=True)
    cache.MIGRATIONS.apply(db)
    for i, name in enumerate(names):
        cache.save_reply(db, reply(f"q{i}"), [ENTRIES[name]])
    expected = sorted({ENTRIES[n]["madde_id"]: ENTRIES[n] for n in names}.items(),
                      key=lambda kv: int(kv[0]))
    assert list(cache.iter_entries(db)) == [e for _, e in expected]
    senses = sum(len(e.get("anlamlarListe", [])) for _, e in expected)
    assert db["senses"].count == senses


def test_sqlite_errors_while_open_are_not_swallowed(tmp_path):
    db = open_cache(tmp_path / "c.sqlite", create=True)
    db.close()
    with pytest.raises(sqlite3.ProgrammingError):
        cache.cache_stats(db)
