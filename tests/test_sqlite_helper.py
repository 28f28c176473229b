"""kelime.sqlite, the one helper both stores (the TDK cache, the report store) open, lock and
explain their SQLite files with: on real files, with a real second connection holding the
lock."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from kelime.errors import CacheBusy, CacheError, KelimeError
from kelime.reports import ReportBusy, ReportError, ReportStore
from kelime.sqlite import StoreKind, connect, immediate, set_journal
from kelime.tdk import store as cache


class ToyError(KelimeError):
    pass


class ToyBusy(ToyError):
    pass


TOY = StoreKind(noun="the toy store", error=ToyError, busy=ToyBusy, holders="another toy",
                when_busy="Try again later", when_damaged="restore {path} from a copy",
                when_foreign="give it a toy store")


@pytest.fixture
def path(tmp_path: Path) -> Path:
    made = tmp_path / "toy.sqlite"
    db = connect(made, timeout=1.0)
    db.execute("CREATE TABLE t (x)")
    db.close()
    return made


def rows(path: Path) -> list[int]:
    with sqlite3.connect(path) as db:
        return [x for (x,) in db.execute("SELECT x FROM t ORDER BY x")]


def test_a_lock_held_past_the_timeout_is_the_stores_busy_error(path):
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
    db = connect(path, timeout=0.2)
    try:
        with pytest.raises(ToyBusy) as caught, TOY.errors(db), immediate(db):
            db.execute("INSERT INTO t VALUES (1)")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    said = str(caught.value)
    assert said.startswith(f"the toy store {path} is busy: another process kept it locked")
    assert "for 0.2 s (another toy)" in said and said.endswith("Try again later")
    assert "database is locked" not in said and not db.conn.in_transaction
    with TOY.errors(db), immediate(db):  # the same connection writes once the lock is free
        db.execute("INSERT INTO t VALUES (2)")
    assert rows(path) == [2]


def test_a_writer_waits_for_the_lock_and_then_reads_what_the_holder_committed(path):
    """In WAL mode, as the cache is: the writer (another thread, its own connection) waits
    for the holder's write lock instead of failing, and its read inside the transaction
    sees the holder's commit (the write lock is taken before the read)."""
    db = connect(path, timeout=30.0, threads=True)
    set_journal(db, "wal", 30.0)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO t VALUES (1)")
    started = threading.Event()  # the writer has sent its BEGIN IMMEDIATE
    db.conn.set_trace_callback(lambda sql: sql == "BEGIN IMMEDIATE" and started.set())
    done: list[Exception | None] = []

    def write() -> None:
        try:
            with TOY.errors(db), immediate(db):
                seen = db.execute("SELECT count(*) FROM t").fetchone()[0]
                db.execute("INSERT INTO t VALUES (?)", [10 + seen])
            done.append(None)
        except (KelimeError, sqlite3.Error) as e:  # handed to the test's thread
            done.append(e)

    writer = threading.Thread(target=write)
    writer.start()
    started.wait(30)
    holder.execute("COMMIT")  # the writer was waiting for this, not failing
    writer.join(60)
    holder.close()
    assert done == [None]
    assert rows(path) == [1, 11]  # it counted the holder's row: the lock came before the read


def test_an_error_rolls_back_and_a_nested_transaction_is_a_savepoint(path):
    db = connect(path, timeout=1.0)
    seen: list[str] = []
    db.conn.set_trace_callback(seen.append)
    with immediate(db):
        db.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(ZeroDivisionError), immediate(db):
            db.execute("INSERT INTO t VALUES (2)")
            1 / 0
    db.conn.set_trace_callback(None)
    assert seen[0] == "BEGIN IMMEDIATE" and seen[-1] == "COMMIT"
    assert rows(path) == [1] and not db.conn.in_transaction
    with pytest.raises(ZeroDivisionError), immediate(db):
        db.execute("INSERT INTO t VALUES (3)")
        1 / 0
    assert rows(path) == [1] and not db.conn.in_transaction


def test_a_file_that_is_not_sqlite_or_is_damaged_says_so_and_what_to_do(tmp_path, path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not SQLite at all " * 300)
    db = connect(junk, timeout=1.0)
    with pytest.raises(ToyError) as caught, TOY.errors(db):
        db.execute("SELECT * FROM sqlite_master").fetchall()
    assert not isinstance(caught.value, ToyBusy)
    assert str(caught.value).startswith(f"the toy store {junk} is not an SQLite database (")
    assert str(caught.value).endswith(": give it a toy store")

    many = connect(path, timeout=1.0)
    many.conn.executemany("INSERT INTO t VALUES (?)", [(str(i) * 50,) for i in range(2000)])
    many.conn.commit()
    many.close()
    data = bytearray(path.read_bytes())
    data[4096 * 2:4096 * 6] = b"\xff" * (4096 * 4)  # pages of the table, overwritten
    path.write_bytes(bytes(data))
    db = connect(path, timeout=1.0)
    with pytest.raises(ToyError) as caught, TOY.errors(db, reading=True):
        db.execute("SELECT count(*), max(length(x)) FROM t").fetchall()
    assert f"the toy store {path} is damaged (" in str(caught.value)
    assert str(caught.value).endswith(f"restore {path} from a copy")


def test_a_read_only_file_says_to_check_its_permissions(path):
    db = connect(path.resolve().as_uri() + "?mode=ro", uri=True, timeout=1.0)
    with pytest.raises(ToyError, match=f"^cannot write the toy store {path} .attempt to write "
                                       "a readonly database.: check the permissions"), \
            TOY.errors(db), immediate(db):
        db.execute("INSERT INTO t VALUES (1)")


def test_kelimes_own_bugs_are_not_blamed_on_the_file(path):
    db = connect(path, timeout=1.0)
    db.close()
    with pytest.raises(sqlite3.ProgrammingError), TOY.errors(db):
        db.execute("SELECT 1")


def test_both_stores_name_their_busy_error(tmp_path):
    """The cache and the report store, with a second connection holding their lock: each
    raises its own busy error (CacheBusy, ReportBusy), which callers answer with "try
    again", and keeps what was there."""
    reports = tmp_path / "reports.sqlite"
    ReportStore(reports, create=True).close()
    holder = sqlite3.connect(reports, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with ReportStore(reports, timeout=0.1) as store, pytest.raises(ReportBusy) as caught:
            store.submit(word="ev", sent="ev", kind="wrong", lexicon="tr", client="1.2.3.4")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert isinstance(caught.value, ReportError) and "locked for 0.1 s" in str(caught.value)
    with ReportStore(reports) as store:
        assert store.open_reports() == []

    tdk = tmp_path / "tdk.sqlite"
    cache.open_cache(tdk, create=True).close()
    holder = sqlite3.connect(tdk, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    db = cache.open_cache(tdk, timeout=0.1)
    try:
        with pytest.raises(CacheBusy) as busy:
            cache.save_words(db, ["ev"], "test")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert isinstance(busy.value, CacheError) and f"cache {tdk} is busy" in str(busy.value)
    assert cache.cache_stats(db)["words"]["queued"] == 0
