"""One way for kelime's SQLite stores to open a file, take the write lock and say what
went wrong: the TDK crawl cache (`kelime.tdk.store`) and the players' reports
(`kelime.reports`), both through sqlite-utils.

- `connect`: a connection whose ``busy_timeout`` is the seconds a statement waits for
  another process's lock, in the journal mode the store wants (`set_journal`).
- `immediate`: one write transaction that takes the write lock first (``BEGIN
  IMMEDIATE``). A deferred BEGIN that reads and then writes cannot wait for the lock (WAL
  mode, or a rollback journal with another reader): SQLite answers "database is locked" at
  once, whatever busy_timeout says. Inside an open transaction it is a savepoint.
- `StoreKind.error`: an sqlite3 error as the store's own KelimeError, told by SQLite's
  result code (busy or locked, not a database, corrupt, denied, full, I/O), in words that
  name the file and what to do; a lock held longer than the caller waits becomes the
  store's "busy" subclass, which callers may answer with "try again" (HTTP 503).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.sqlite"
    >>> db = connect(path, timeout=1.0)
    >>> with immediate(db):
    ...     _ = db.execute("CREATE TABLE t (x)")
    >>> db.conn.in_transaction, db.table_names()
    (False, ['t'])
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import sqlite_utils

from .errors import KelimeError

# SQLite's primary result codes (an extended code & 0xff): https://sqlite.org/rescode.html
PERM, BUSY, LOCKED, READONLY, IOERR, CORRUPT, FULL, CANTOPEN, NOTADB = (
    3, 5, 6, 8, 10, 11, 13, 14, 26)
#: SQLITE_READONLY_DIRECTORY: a read-only open that cannot create its -shm/-wal file.
READONLY_DIRECTORY = 1544


def connect(path: str | Path, *, timeout: float, uri: bool = False, autocommit: bool = False,
            threads: bool = False) -> sqlite_utils.Database:
    """A connection to `path` (a file URI with `uri`) whose statements wait `timeout`
    seconds for another process's lock. `autocommit`: no implicit BEGIN before writes (a
    store that opens every transaction itself); `threads`: usable from other threads, one
    at a time."""
    conn = sqlite3.connect(str(path), timeout=timeout, uri=uri, check_same_thread=not threads,
                           isolation_level=None if autocommit else "DEFERRED")
    return sqlite_utils.Database(conn)


def set_journal(db: sqlite_utils.Database, mode: str, timeout: float) -> None:
    """Switch the file to journal `mode` (``wal``, ``delete``). SQLite may answer "database
    is locked" at once, without waiting, when processes race to create the same file (its
    deadlock rule for a reader asking to write); so try again, for up to `timeout` s."""
    deadline = time.monotonic() + timeout
    while db.journal_mode != mode:
        try:
            db.execute(f"PRAGMA journal_mode={mode}")
        except sqlite3.OperationalError as e:
            if not is_busy(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


@contextmanager
def immediate(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    """One write transaction that holds the write lock from its first statement (see the
    module's docstring), committed at the end, rolled back on any exception; a savepoint
    when a transaction is already open. sqlite3 errors pass through: the store turns them
    into its own (`StoreKind.errors`)."""
    conn = db.conn
    if conn.in_transaction:
        with db.atomic():
            yield db
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield db
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def code(e: sqlite3.Error) -> int:
    """SQLite's primary result code of `e` (0 when it carries none)."""
    return int(getattr(e, "sqlite_errorcode", 0) or 0) & 0xFF


def is_busy(e: sqlite3.Error) -> bool:
    """Another connection held a lock longer than this one waited."""
    return code(e) in (BUSY, LOCKED) or (not code(e) and ("locked" in str(e)
                                                          or "busy" in str(e)))


def file_of(db: sqlite_utils.Database) -> str:
    """The file `db` has open ("(unknown)" once it is closed)."""
    try:
        for _, name, file in db.conn.execute("PRAGMA database_list"):
            if name == "main":
                return str(file or ":memory:")
    except sqlite3.Error:
        pass
    return "(unknown)"


def busy_timeout(db: sqlite_utils.Database) -> float | None:
    """The seconds `db`'s statements wait for a lock (None once it is closed)."""
    try:
        return float(db.conn.execute("PRAGMA busy_timeout").fetchone()[0]) / 1000
    except sqlite3.Error:
        return None


@dataclass(frozen=True)
class StoreKind:
    """One kind of kelime SQLite file, as its errors name it and say what to do."""

    noun: str                       # "cache", "the report store": "{noun} {path} is busy"
    error: type[KelimeError]        # raised for a file that cannot be used
    busy: type[KelimeError]         # its subclass for a lock held too long
    holders: str                    # who may hold the lock
    when_busy: str                  # what to do about it
    when_damaged: str               # how to get out of a corrupt file ({path} is filled in)
    when_foreign: str               # what to do about a file that is not SQLite

    def error_for(self, path: str | Path, e: sqlite3.Error, timeout: float | None = None,
                  reading: bool = False) -> KelimeError:
        """`e` as this store's error (`busy` for a lock held too long), in words to act on."""
        kind = self.busy if is_busy(e) else self.error
        return kind(self.explain(path, e, timeout, reading))

    def explain(self, path: str | Path, e: sqlite3.Error, timeout: float | None = None,
                reading: bool = False) -> str:
        text, name, primary = str(e), f"{self.noun} {path}", code(e)
        if is_busy(e):
            held = f"for {timeout:g} s" if timeout is not None else "too long"
            return (f"{name} is busy: another process kept it locked {held} ({self.holders}) "
                    f"and nothing was {'read' if reading else 'saved'}. {self.when_busy}")
        if primary == NOTADB or "not a database" in text:
            return f"{name} is not an SQLite database ({text}): {self.when_foreign}"
        if primary == CORRUPT or "malformed" in text:
            return f"{name} is damaged ({text}): {self.when_damaged.format(path=path)}"
        verb = "read" if reading else "write"
        if primary in (PERM, READONLY, CANTOPEN):
            return (f"cannot {verb} {name} ({text}): check the permissions of the file and "
                    "its folder")
        if primary == FULL:
            return f"cannot write {name} ({text}): the disk is full; free some space"
        if primary == IOERR:  # reading too writes beside the file (its -shm, a journal)
            return f"cannot write {name} ({text}): free some space or check the disk"
        return f"{name} failed: {text}"

    @contextmanager
    def errors(self, db: sqlite_utils.Database, reading: bool = False) -> Iterator[None]:
        """sqlite3 errors inside the block as this store's (see `error_for`), naming the
        file `db` has open; a ProgrammingError (a closed connection: kelime's own bug, not
        the file's) passes through."""
        try:
            yield
        except sqlite3.ProgrammingError:
            raise
        except sqlite3.DatabaseError as e:
            raise self.error_for(file_of(db), e, busy_timeout(db), reading) from None
