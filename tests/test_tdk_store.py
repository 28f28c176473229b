"""kelime.tdk.store: the SQLite store of TDK replies and entries (no network here)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlite_utils
from hypothesis import given, settings
from hypothesis import strategies as st

from kelime.errors import CacheError
from kelime.normalize import normalize
from kelime.tdk import store as cache
from kelime.tdk.replies import classify
from kelime.tdk.store import open_cache, open_readonly

from .fake_tdk import builtin_entries
from .test_crawl_parts import SAMPLE_QUERIES

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "tdk-samples"
ENTRIES = {e["madde"]: e for e in builtin_entries()}
ADET = [ENTRIES["âdet"], ENTRIES["adet"]]  # madde_id 20 and 21: both queries return both
ALL_MIGRATIONS = ["m001_initial", "m002_reply_entries", "m003_words_seen", "m004_replies_final",
                  "m005_imports_enumerations", "m006_pacing_robots", "m007_enumerations_short"]


def reply(query, outcome="ok", body=None, **kw):
    return {"query": query, "url": f"http://tdk/gts?ara={query}", "status": 200,
            "outcome": outcome, "body": body, "error": kw.pop("error", None),
            "attempts": kw.pop("attempts", 1), **kw}


def links(db) -> set[tuple[str, int]]:
    return set(db.execute("SELECT query, madde_id FROM reply_entries"))


def ids(db) -> list[int]:
    return [int(e["madde_id"]) for e in cache.iter_entries(db)]


@pytest.fixture
def db(tmp_path):
    return open_cache(tmp_path / "c.sqlite", create=True)


def test_new_cache_has_the_schema_and_wal(db):
    assert {"replies", "entries", "reply_entries", "senses", "sense_tags", "tags", "examples",
            "words"} <= set(db.table_names())
    assert db.journal_mode == "wal"
    assert [m.name for m in cache.MIGRATIONS.applied(db)] == ALL_MIGRATIONS
    assert cache.declared_migrations() == ALL_MIGRATIONS
    assert "query" not in db["entries"].columns_dict  # the links live in reply_entries
    assert db["reply_entries"].pks == ["query", "madde_id"]


def test_reopening_applies_nothing_twice_and_writes_nothing(tmp_path):
    path = tmp_path / "c.sqlite"
    open_cache(path, create=True).close()
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    db = open_cache(path)
    assert len(cache.MIGRATIONS.applied(db)) == len(ALL_MIGRATIONS)
    db.close()
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


@pytest.mark.parametrize("make, words", [
    (lambda p: None, "does not exist"),
    (lambda p: p.write_bytes(b"hello, not a database" * 50), "not an SQLite database"),
    (lambda p: sqlite_utils.Database(p)["t"].insert({"a": 1}), "not a kelime cache"),
    (lambda p: p.mkdir(), "is a folder"),
])
@pytest.mark.parametrize("opener", [open_cache, open_readonly])
def test_unusable_files_raise_cache_error_with_a_fix(tmp_path, make, words, opener):
    path = tmp_path / "c.sqlite"
    make(path)
    with pytest.raises(CacheError, match=words):
        opener(path)


def test_a_foreign_sqlite_file_is_not_touched(tmp_path):
    path = tmp_path / "c.sqlite"
    sqlite_utils.Database(path)["t"].insert({"a": 1})
    before = path.read_bytes()
    with pytest.raises(CacheError, match="not a kelime cache"):
        open_cache(path, create=True)
    assert path.read_bytes() == before  # not switched to WAL, no migrations table


def test_a_cache_from_a_newer_kelime_is_refused(tmp_path):
    db = open_cache(tmp_path / "c.sqlite", create=True)
    db["_sqlite_migrations"].insert({"migration_set": "kelime.cache", "name": "m999_future",
                                     "applied_at": "2030"})
    db.close()
    for opener in (open_cache, open_readonly):
        with pytest.raises(CacheError, match="newer kelime"):
            opener(tmp_path / "c.sqlite")


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
    cache.save_reply(db, reply("adet", body=json.dumps(ADET)), ADET)
    cache.save_reply(db, reply("âdet", body=json.dumps(ADET)), ADET)
    assert db["replies"].count == 2 and db["entries"].count == 2
    assert links(db) == {("adet", 20), ("adet", 21), ("âdet", 20), ("âdet", 21)}
    assert list(cache.iter_entries(db)) == ADET  # exactly as sent, ordered by madde_id
    assert cache.entries_for_word(db, "adet") == ADET
    assert cache.entries_for_word(db, "âdet") == []  # takes a normalised word


# --- N:M links: an entry goes only when no reply lists it any more -----------------------

@pytest.mark.parametrize("first, second", [("adet", "âdet"), ("âdet", "adet")])
@pytest.mark.parametrize("refetch_last_saver_first", [True, False])
def test_an_entry_another_reply_still_lists_is_kept(db, first, second,
                                                    refetch_last_saver_first):
    """Both replies list both entries; TDK then stops sending `adet` (21) with either query.
    The entry stays while one stored reply still lists it and goes with the last link.
    (The old entries.query kept only the last saver: refetching it deleted 21 at once.)"""
    cache.save_reply(db, reply(first), ADET)
    cache.save_reply(db, reply(second), ADET)
    one, other = (second, first) if refetch_last_saver_first else (first, second)

    cache.save_reply(db, reply(one), [ENTRIES["âdet"]])
    assert ids(db) == [20, 21], f"{other}'s reply still lists entry 21"
    assert links(db) == {(first, 20), (second, 20), (other, 21)}
    assert cache.entries_for_word(db, "adet") == ADET

    cache.save_reply(db, reply(other), [ENTRIES["âdet"]])
    assert ids(db) == [20], "no reply lists entry 21 any more"
    assert links(db) == {(first, 20), (second, 20)}
    assert db.execute("SELECT count(*) FROM senses WHERE madde_id = 21").fetchone() == (0,)
    assert db.execute("SELECT count(*) FROM examples WHERE anlam_id = 2101").fetchone() == (0,)


def test_a_refetch_replaces_only_its_own_links(db):
    cache.save_reply(db, reply("abdal"), [ENTRIES["abdal"], ENTRIES["Abdal"]])
    cache.save_reply(db, reply("kitap"), [ENTRIES["kitap"]])
    cache.save_reply(db, reply("abdal"), [ENTRIES["abdal"]])
    assert links(db) == {("abdal", 10), ("kitap", 30)}
    assert [e["madde"] for e in cache.iter_entries(db)] == ["abdal", "kitap"]
    assert db.execute("SELECT count(*) FROM senses WHERE madde_id = 11").fetchone() == (0,)


def test_not_found_drops_the_links_a_failure_keeps_them(db):
    cache.save_reply(db, reply("adet"), ADET)
    cache.save_reply(db, reply("adet", "failed", error="HTML"))
    assert ids(db) == [20, 21] and len(links(db)) == 2
    cache.save_reply(db, reply("adet", "not_found", body='{"error":"Sonuç bulunamadı"}'))
    assert ids(db) == [] and links(db) == set()


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


# --- attempts: HTTP tries since the fetch that got the last good reply began --------------

def test_a_failure_never_replaces_a_good_reply(db):
    cache.save_reply(db, reply("kitap", body="[...]", attempts=2), [ENTRIES["kitap"]])
    assert cache.get_reply(db, "kitap")["attempts"] == 2  # the tries the good reply took
    cache.save_reply(db, reply("kitap", "failed", body="<html>", error="HTML", attempts=4))
    row = cache.get_reply(db, "kitap")
    assert (row["outcome"], row["body"], row["error"]) == ("ok", "[...]", "HTML")
    assert row["attempts"] == 6  # ok(2) → failed(4): 2 + 4, the ok reply kept
    assert list(cache.iter_entries(db)) == [ENTRIES["kitap"]]
    assert cache.fresh_queries(db) == {"kitap"}


def test_failures_add_their_tries_and_stay_due(db):
    cache.save_words(db, ["kalem", "kitap"], "test")
    cache.save_reply(db, reply("kalem", "failed", error="HTML", attempts=4))
    assert cache.get_reply(db, "kalem")["attempts"] == 4
    cache.save_reply(db, reply("kalem", "failed", error="HTTP 503", attempts=4))
    row = cache.get_reply(db, "kalem")
    assert (row["attempts"], row["error"]) == (8, "HTTP 503")  # failed(4) → failed(4)
    assert cache.due_words(db, 30) == ["kalem", "kitap"]
    assert cache.fresh_queries(db, 30) == set()


def test_a_good_reply_after_failures_starts_the_count_again(db):
    cache.save_reply(db, reply("kalem", "failed", error="HTML", attempts=4))
    cache.save_reply(db, reply("kalem", body="[]", attempts=1), [ENTRIES["kalem"]])
    row = cache.get_reply(db, "kalem")
    assert (row["outcome"], row["attempts"], row["error"]) == ("ok", 1, None)  # failed(4) → ok(1)


# --- the rest of the API --------------------------------------------------------------------

def test_max_age_decides_what_is_fresh(db):
    cache.save_words(db, ["eski", "yeni", "massa"], "test")
    old = (datetime.now(UTC) - timedelta(days=40)).isoformat(timespec="seconds")
    cache.save_reply(db, reply("eski", fetched_at=old), [])
    cache.save_reply(db, reply("yeni"), [])
    cache.save_reply(db, reply("massa", "not_found", body='{"error":"Sonuç bulunamadı"}'))
    assert cache.fresh_queries(db, 30) == {"yeni", "massa"}
    assert cache.due_words(db, 30) == ["eski"]
    assert cache.due_words(db, 0) == ["eski", "yeni", "massa"]
    assert cache.fresh_queries(db, None) == {"eski", "yeni", "massa"}


def test_stats(db):
    assert cache.save_words(db, ["adet", "massa", "kalem"], "sitemap") == 3
    assert cache.save_words(db, ["adet"], "again") == 0
    cache.save_reply(db, reply("adet", body="x"), ADET)
    cache.save_reply(db, reply("massa", "not_found", body="y"))
    cache.save_reply(db, reply("kalem", "failed", error="HTML"))
    st = cache.cache_stats(db)
    assert st["replies"] == {"ok": 1, "not_found": 1, "failed": 1, "disallowed": 0}
    assert st["entries"] == 2
    assert st["words"] == {"queued": 3, "done": 2, "pending": 1, "disallowed": 0, "gone": 0}
    assert st["oldest_fetch"] <= st["newest_fetch"]
    assert db["words"].get("adet")["source"] == "sitemap"


def test_body_hash_is_recorded(db):
    cache.save_reply(db, reply("massa", "not_found", body='{"error":"Sonuç bulunamadı"}'))
    assert cache.get_reply(db, "massa")["sha256"] == hashlib.sha256(
        '{"error":"Sonuç bulunamadı"}'.encode()).hexdigest()


def test_every_real_sample_round_trips():
    if not SAMPLES.is_dir():
        pytest.skip("../shared/tdk-samples is not beside the repo")
    db = sqlite_utils.Database(memory=True)
    cache.MIGRATIONS.apply(db)
    sent = {}
    for path in sorted(SAMPLES.glob("gts-*.json")):
        c = classify(200, path.read_bytes(), SAMPLE_QUERIES[path.stem])
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
    assert len(links(db)) == len(names)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["adet", "âdet", "abdal", "x"]),
                          st.sets(st.sampled_from([10, 11, 20, 21]))), min_size=1, max_size=10))
def test_an_entry_is_kept_exactly_while_some_reply_lists_it(saves):
    by_id = {int(e["madde_id"]): e for e in builtin_entries()}
    db = sqlite_utils.Database(memory=True)
    cache.MIGRATIONS.apply(db)
    listed: dict[str, set[int]] = {}
    for query, madde_ids in saves:
        cache.save_reply(db, reply(query), [by_id[m] for m in sorted(madde_ids)])
        listed[query] = set(madde_ids)
    assert set(ids(db)) == set().union(*listed.values())
    assert links(db) == {(q, m) for q, ms in listed.items() for m in ms}


def test_sqlite_errors_while_open_are_not_swallowed(tmp_path):
    db = open_cache(tmp_path / "c.sqlite", create=True)
    db.close()
    with pytest.raises(sqlite3.ProgrammingError):
        cache.cache_stats(db)


# --- busy: wait for the lock, then a CacheError a person can act on -------------------------

def test_a_writer_waits_for_the_lock_then_says_who_holds_it(tmp_path):
    path = tmp_path / "c.sqlite"
    open_cache(path, create=True).close()
    holder = sqlite3.connect(path)
    holder.execute("BEGIN IMMEDIATE")  # another process in the middle of a save
    db = open_cache(path, timeout=0.2)
    with pytest.raises(CacheError) as caught:
        cache.save_reply(db, reply("kitap"), [ENTRIES["kitap"]])
    message = str(caught.value)
    assert f"cache {path} is busy" in message and "0.2 s" in message
    assert "another process" in message and "-s KELIME_CACHE_BUSY_TIMEOUT=" in message
    assert "database is locked" not in message
    holder.rollback()
    holder.close()
    # the same connection still stores NEW rows: sqlite-utils' upsert probe, failing under
    # the old deferred BEGIN, made it fall back to INSERT OR IGNORE, which silently skips
    # rows with a NOT NULL column (replies.outcome, entries.raw)
    cache.save_reply(db, reply("kitap"), [ENTRIES["kitap"]])
    cache.save_reply(db, reply("kalem"), [ENTRIES["kalem"]])
    assert {r["query"] for r in db["replies"].rows} == {"kitap", "kalem"}
    assert ids(db) == [30, 100]


def test_the_busy_timeout_is_configurable(tmp_path):
    path = tmp_path / "c.sqlite"
    open_cache(path, create=True).close()
    assert open_cache(path).execute("PRAGMA busy_timeout").fetchone() == (30000,)
    assert open_cache(path, timeout=2.5).execute("PRAGMA busy_timeout").fetchone() == (2500,)
    with pytest.raises(CacheError, match="busy timeout of -1"):
        open_cache(path, timeout=-1)


def test_write_tx_is_immediate_and_rolls_back_on_error(db):
    with pytest.raises(ZeroDivisionError):
        with cache.write_tx(db):
            db.execute("INSERT INTO words (word) VALUES ('yarım')")
            1 / 0
    assert db["words"].count == 0 and not db.conn.in_transaction
    seen = []
    db.conn.set_trace_callback(seen.append)
    cache.save_words(db, ["tam"], "test")
    db.conn.set_trace_callback(None)
    assert seen[0] == "BEGIN IMMEDIATE" and seen[-1] == "COMMIT"


# --- migrating a cache written by the m001 schema ----------------------------------------

def old_save(db, query: str, entries: list[dict], body: str | None = "listed") -> None:
    """Save a reply the way kelime did before m002: `entries.query` = the last saver."""
    if body == "listed":
        body = json.dumps(entries, ensure_ascii=False)
    db["replies"].upsert({"query": query, "url": f"http://tdk/gts?ara={query}", "status": 200,
                          "fetched_at": cache.now_iso(), "outcome": "ok", "body": body,
                          "sha256": None, "error": None, "attempts": 1}, pk="query")
    for e in entries:
        db["entries"].upsert({"madde_id": int(e["madde_id"]), "madde": e["madde"],
                              "headword": normalize(e["madde"]), "ozel_mi": e["ozel_mi"],
                              "cesit": e["cesit"], "kelime_no": e["kelime_no"], "query": query,
                              "raw": json.dumps(e, ensure_ascii=False)}, pk="madde_id")
        for s in e.get("anlamlarListe", []):
            db["senses"].upsert({"anlam_id": int(s["anlam_id"]), "madde_id": int(e["madde_id"]),
                                 "anlam": s["anlam"]}, pk="anlam_id")


@pytest.fixture
def old_cache(tmp_path) -> Path:
    """A cache as kelime left it before m002: only m001 applied, rows saved the old way."""
    path = tmp_path / "old.sqlite"
    db = sqlite_utils.Database(path)
    cache.MIGRATIONS.apply(db, stop_before="m002_reply_entries")
    db.enable_wal()
    old_save(db, "adet", ADET)
    old_save(db, "âdet", ADET)  # both entries now say query = 'âdet'
    old_save(db, "kitap", [ENTRIES["kitap"]], body=None)  # no body: only the column tells
    db.close()
    return path


def test_an_old_cache_is_migrated_to_links(old_cache):
    db = open_cache(old_cache)
    assert [m.name for m in cache.MIGRATIONS.applied(db)] == ALL_MIGRATIONS
    assert "query" not in db["entries"].columns_dict
    assert "idx_entries_query" not in {i.name for i in db["entries"].indexes}
    # from the bodies: what each reply really listed; from the old column: kitap's link
    assert links(db) == {("adet", 20), ("adet", 21), ("âdet", 20), ("âdet", 21), ("kitap", 30)}
    assert ids(db) == [20, 21, 30]
    assert db.execute("SELECT count(*) FROM senses").fetchone() == (6,)
    # and the N:M behaviour holds for migrated rows: âdet alone no longer drops adet
    cache.save_reply(db, reply("âdet"), [ENTRIES["âdet"]])
    assert ids(db) == [20, 21, 30]
    cache.save_reply(db, reply("adet"), [ENTRIES["âdet"]])
    assert ids(db) == [20, 30]
    db.close()
    again = open_cache(old_cache)  # nothing pending any more
    assert [m.name for m in cache.MIGRATIONS.applied(again)] == ALL_MIGRATIONS


def test_two_processes_migrating_one_old_cache_at_once(old_cache):
    code = ("import sys; from kelime.tdk import store; "
            "store.open_cache(sys.argv[1]).close(); print('ok')")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(old_cache)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [o for o, _ in outs] == ["ok\n"] * 3, outs
    db = open_readonly(old_cache)
    assert [m.name for m in cache.MIGRATIONS.applied(db)] == ALL_MIGRATIONS
    assert len(links(db)) == 5


# --- readers: read-only, never migrate, never change the file ------------------------------

def fingerprint(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def test_a_read_only_open_of_an_old_cache_reads_it_as_it_is(old_cache):
    before = fingerprint(old_cache)
    db = open_readonly(old_cache)
    assert cache.entries_for_word(db, "adet") == ADET
    assert ids(db) == [20, 21, 30]
    assert cache.cache_stats(db)["entries"] == 3
    assert cache.get_reply(db, "kitap")["outcome"] == "ok"
    assert [m.name for m in cache.MIGRATIONS.applied(db)] == ["m001_initial"]
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        db.execute("INSERT INTO words (word) VALUES ('yazma')")
    db.close()
    assert fingerprint(old_cache) == before  # not migrated, not touched
    assert "reply_entries" not in sqlite_utils.Database(old_cache).table_names()


def test_a_read_only_open_never_changes_the_file(tmp_path):
    path = tmp_path / "c.sqlite"
    db = open_cache(path, create=True)
    cache.save_reply(db, reply("adet"), ADET)
    db.close()
    before = fingerprint(path)
    reader = open_readonly(path)
    assert cache.entries_for_word(reader, "adet") == ADET
    list(cache.iter_entries(reader))
    cache.cache_stats(reader)
    reader.close()
    assert fingerprint(path) == before


def test_readers_see_a_live_writer_s_commits(tmp_path):
    path = tmp_path / "c.sqlite"
    writer = open_cache(path, create=True)
    cache.save_reply(writer, reply("adet"), ADET)  # still in the -wal: writer stays open
    reader = open_readonly(path)
    assert ids(reader) == [20, 21]
    cache.save_reply(writer, reply("kitap"), [ENTRIES["kitap"]])
    assert ids(reader) == [20, 21, 30]


DROP_DAC = ["setpriv", "--inh-caps=-dac_override,-dac_read_search",
            "--bounding-set=-dac_override,-dac_read_search"]
READ = ("import sys, json; from kelime.tdk import store\n"
        "try:\n"
        "    db = store.open_readonly(sys.argv[1])\n"
        "    print(json.dumps([e['madde'] for e in store.iter_entries(db)]))\n"
        "except store.CacheError as e:\n"
        "    print('CacheError:', e)\n")


def read_as_unprivileged(path: Path) -> str:
    """Read the cache in a process that obeys file permissions (root drops CAP_DAC_*)."""
    prefix = []
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("running as root without setpriv: permissions cannot be obeyed")
        prefix = DROP_DAC
    done = subprocess.run([*prefix, sys.executable, "-c", READ, str(path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def read_only_folder(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "c.sqlite"
    db = open_cache(path, create=True)
    cache.save_reply(db, reply("adet"), ADET)
    db.close()  # the last connection: checkpointed, -wal and -shm removed
    yield path
    folder.chmod(0o755)
    for p in folder.iterdir():
        p.chmod(0o644)


def test_a_read_only_folder_is_read_immutable(read_only_folder):
    path = read_only_folder
    assert not Path(f"{path}-wal").exists() and not Path(f"{path}-shm").exists()
    before = fingerprint(path)
    path.chmod(0o444)
    path.parent.chmod(0o555)
    assert json.loads(read_as_unprivileged(path)) == ["âdet", "adet"]
    assert fingerprint(path) == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["c.sqlite"]


def test_a_read_only_folder_with_a_wal_left_behind_says_what_to_do(read_only_folder):
    path = read_only_folder
    Path(f"{path}-wal").write_bytes(b"")  # e.g. a writer that was killed, -shm lost
    path.parent.chmod(0o555)
    said = read_as_unprivileged(path)
    assert said.startswith("CacheError:") and "write-ahead log" in said, said
    assert f"kelime crawl status --cache {path}" in said


def test_a_failed_reply_keeps_an_excerpt_and_the_whole_body_s_hash(tmp_path):
    """Failed rows kept whole 50 MB bodies."""
    import hashlib

    db = cache.open_cache(tmp_path / "c.sqlite", create=True)
    body = "<html>" + "x" * 100_000
    cache.save_reply(db, {"query": "kitap", "url": "u", "status": 200, "outcome": "failed",
                          "body": body, "error": "html", "attempts": 1,
                          "sha256": hashlib.sha256(body.encode()).hexdigest()})
    row = cache.get_reply(db, "kitap")
    assert len(row["body"]) == cache.FAILED_BODY_KEPT and body.startswith(row["body"])
    assert row["sha256"] == hashlib.sha256(body.encode()).hexdigest()


@pytest.mark.slow
def test_a_corrupt_page_in_the_middle_is_a_cache_error_everywhere(tmp_path):
    """A corrupt page in the middle of the cache gave a raw sqlite3.DatabaseError in
    `crawl`, `--status` and `build`."""
    import random
    import subprocess
    import sys

    path = tmp_path / "tdk.sqlite"
    db = cache.open_cache(path, create=True)
    rng = random.Random(3)
    for i in range(400):
        word = f"kelime{i}"
        entry = {"madde_id": str(i + 1), "madde": word, "anlamlarListe": [
            {"anlam_id": str(i + 1), "anlam": "x" * rng.randint(200, 900)}]}
        cache.save_reply(db, {"query": word, "url": "u", "status": 200, "outcome": "ok",
                              "body": json.dumps([entry]), "error": None, "attempts": 1},
                         [entry])
    cache.save_words(db, [f"kelime{i}" for i in range(400)], "test")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.seek(size // 2 // 4096 * 4096)
        f.write(bytes(rng.getrandbits(8) for _ in range(65536)))  # pages of every table
    kelime = [sys.executable, "-c", "from kelime.cli import main; main()"]
    for args in (["crawl", "status"], ["build", "--force", "--out", str(tmp_path / "d")]):
        run = subprocess.run([*kelime, *args, "--cache", str(path)], capture_output=True,
                             text=True, timeout=60)
        assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
        assert "corrupt" in run.stdout + run.stderr, run.stdout + run.stderr


def test_refresh_slices_re_verify_every_reply_within_the_cycle(tmp_path):
    """A 0.5% sample of the oldest meant a changed entry could wait 200 refreshes. Each
    refresh now re-verifies the oldest 1/CYCLE: every reply within CYCLE refreshes, and
    the slice stays under 1% of the replies."""
    import math

    from kelime.crawler.run import CYCLE, refresh_plan

    db = cache.open_cache(tmp_path / "c.sqlite", create=True)
    n = 1000
    for i in range(n):
        cache.save_reply(db, reply(f"w{i}", "not_found", body="{}",
                                   fetched_at=f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}+00:00"))
    last_seen = {}
    for refresh in range(1, CYCLE + 1):
        queued, fresh = refresh_plan(db, None)
        assert len(queued) == math.ceil(n / CYCLE) and len(queued) <= 0.01 * n
        assert not set(queued) & fresh
        for query in queued:  # what the refresh does: asks again, stores the new reply
            cache.save_reply(db, reply(query, "not_found", body="{}",
                                       fetched_at=f"2026-02-01T{refresh // 60:02d}:"
                                                  f"{refresh % 60:02d}:00+00:00"))
            last_seen[query] = refresh
    assert len(last_seen) == n  # every reply re-verified within CYCLE refreshes


def test_the_politeness_clock_serves_one_request_at_a_time_and_whoever_waited_next(db):
    """One clock per cache: a look-up never starts beside a crawl's request, waits the gap
    after its end, and once it has waited the crawl lets it go first (a crawl's
    back-to-back requests starved it)."""
    assert cache.take_turn(db, "crawl", 100.0, 60) == 0  # claimed: in flight
    assert cache.take_turn(db, "crawl", 100.1, 60) == 0  # the crawl's own: never waits
    assert cache.take_turn(db, "define", 100.2, 60) == pytest.approx(60 - 0.1)
    cache.end_turn(db, "crawl", 101.0, 1.0)
    assert cache.take_turn(db, "define", 101.5, 60) == pytest.approx(0.5)  # the gap
    assert cache.take_turn(db, "crawl", 102.1, 60) > 0  # the define waited: it is next
    assert cache.take_turn(db, "define", 102.1, 60) == 0
    assert cache.take_turn(db, "crawl", 102.2, 60) == pytest.approx(60 - 0.1)


def test_a_crawl_starting_ends_a_dead_crawls_hold_but_not_a_look_ups(db):
    """A crawl killed mid-request held the clock for its whole lease: the next crawl (which
    holds the crawl lock, so no other crawl lives) waited it out, a minute, before its first
    request. `free_turns` ends a dead crawl's hold, and its place in line, one gap from now;
    a look-up's hold and its place in line stay."""
    assert cache.take_turn(db, "crawl pid 1", 100.0, 60) == 0  # then killed, in flight
    cache.free_turns(db, "crawl pid ", "crawl pid 2", 100.5 + 1.0)  # restarted at 100.5
    assert cache.take_turn(db, "crawl pid 2", 101.0, 60) == pytest.approx(0.5)  # the gap
    assert cache.take_turn(db, "crawl pid 2", 101.5, 60) == 0
    cache.free_turns(db, "crawl pid ", "crawl pid 2", 101.6)  # never its own
    assert cache.take_turn(db, "look-up pid 3", 101.7, 60) == pytest.approx(60 - 0.2)

    assert cache.take_turn(db, "look-up pid 3", 200.0, 60) == 0  # a look-up in flight
    assert cache.take_turn(db, "crawl pid 1", 200.1, 60) > 0  # waits: it is next in line
    cache.free_turns(db, "crawl pid ", "crawl pid 2", 201.0)  # crawl pid 1 killed waiting
    assert cache.take_turn(db, "crawl pid 2", 200.2, 60) == pytest.approx(60 - 0.2)
    cache.end_turn(db, "look-up pid 3", 200.5, 0.0)
    assert cache.take_turn(db, "crawl pid 2", 200.6, 60) == 0  # not behind the dead one


def test_an_enumeration_begun_right_after_an_import_still_retires_what_it_does_not_name(
        tmp_path):
    """Times are kept to the second: a refresh begun in the second an import wrote took the
    imported words for words it had named, and retired none the site had dropped (a flaky
    tests/test_crawl_coverage.py run). `next_second` begins it after every earlier write."""
    db = open_cache(tmp_path / "tdk.sqlite", create=True)
    cache.save_words(db, ["kitap", "kalem", "silgi"], "dump:tdk.jsonl")
    began = cache.next_second()
    cache.save_words(db, ["kitap", "kalem"], "sitemap")  # the enumeration names two of them
    assert cache.not_seen_since(db, began) == 1
    assert cache.mark_gone(db, began) == 1
    assert cache.seen_since(db, began) == 2
