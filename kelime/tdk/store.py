"""The TDK crawl cache: one SQLite file holding every reply and every entry TDK sent.

Core storage (no Scrapy, no httpx): the crawler and `kelime define` write through the
`save_*` functions, each call one transaction; the build and the service read through
`open_readonly`, which never migrates and never writes.

Tables (schema via sqlite-utils `Migrations`, set ``kelime.cache``; WAL on):

- ``replies``   one row per query (Turkish-lowercased word as sent): url, HTTP status,
                fetched_at (UTC ISO), outcome ``ok|not_found|failed``, the body as
                received with its sha256, the last error, and ``attempts``: the HTTP
                tries made for this query since the fetch that got its last good reply
                began. A good reply (ok or not_found) sets it to the tries that fetch
                took (1: the first try answered); every failure adds its tries and never
                replaces a good reply (it only records ``error``). So ok(2) → failed(4)
                gives 6 with the ok reply kept, failed(4) → failed(4) gives 8, and
                failed(4) → ok(1) gives 1.
- ``entries``   one row per TDK entry, keyed by ``madde_id`` (homonyms and case or
                circumflex variants are separate entries); ``raw`` is the entry's JSON
                exactly as parsed, ``headword`` its ``normalize``d ``madde``. An entry has
                one owner: a reply listing a madde_id held under another headword, and not
                linked to it already, is refused (`owned_elsewhere`, ``entry_owned``).
- ``reply_entries`` (query, madde_id), both the key: which good reply listed which
                entry. Queries and entries are N:M (``adet`` and ``âdet`` both return
                both entries). A good reply replaces its query's links; an entry is
                dropped only when no reply links it any more (TDK stopped sending it).
- ``senses``, ``sense_tags``, ``tags``, ``examples``: the entry's senses flattened, for SQL.
- ``words``     the enumeration queue: word (= query) PK, where it came from, when, when
                the site's list last named it (``seen_at``) and since when it no longer
                does (``gone_at``).
- ``imports``   each dump import (sha256, file, started_at, finished_at: NULL while it has
                not finished; a build refuses the cache then).
- ``pacing``    one row: the politeness clock every process asking TDK for this cache
                shares (`take_turn`, `end_turn`); ``robots``: robots.txt as the look-ups
                outside the crawl last read it.
- ``enumerations`` each complete reading of the site's list by a refresh: its size, what it
                retired, whether it was accepted (the shrink guard's reference); and each
                by a first crawl (never accepted: it retires nothing), with ``short``: why
                the reading is known to be short (a build refuses the cache then).

Migrations: ``m001_initial`` (entries had a ``query`` column: only the LAST query that
saved the entry), ``m002_reply_entries`` (the link table, filled from every stored good
reply body and from that old column, which it then drops). `open_cache` applies what is
pending; `open_readonly` never does, and reads an older schema as it is.

Concurrency: any number of readers and writers, in threads or processes. Every write
transaction opens with ``BEGIN IMMEDIATE`` (`write_tx`), so it waits for the write lock
(``busy_timeout``: 30 s, or `open_cache(timeout=…)`; the crawl's setting
``KELIME_CACHE_BUSY_TIMEOUT``)
instead of failing at once when a read turns into a write; a lock still held after that
raises CacheError saying who to wait for. Never wrap save_* in sqlite-utils' ``atomic()``
(a deferred BEGIN): use `write_tx`.

Worked example, three words: after crawling ``adet``, ``âdet`` and ``massa``, ``replies``
has three rows (ok, ok, not_found), ``entries`` two (``âdet`` and ``adet``: both queries
return both), ``reply_entries`` four and ``words`` three.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import sqlite_utils
from sqlite_utils.migrations import Migrations

from ..errors import CacheBusy, CacheError
from ..normalize import normalize
from ..sqlite import (
    CANTOPEN,
    READONLY,
    READONLY_DIRECTORY,
    StoreKind,
    code,
    connect,
    immediate,
    set_journal,
)
from .replies import REFUSED

MIGRATIONS = Migrations("kelime.cache")
Row = dict[str, Any]  # a row, or an entry as TDK sent it, by field name
#: ``disallowed``: robots.txt forbids asking (no request made; robots.txt is read again on
#: every run, so it is asked as soon as it is allowed). A state of its own: never pending.
OUTCOMES = ("ok", "not_found", "failed", "disallowed")
GOOD = ("ok", "not_found")
_GOOD_IN = "IN (" + ", ".join(f"'{o}'" for o in GOOD) + ")"
_GOOD = f"outcome {_GOOD_IN}"
#: Outcomes that never replace a good reply (they record their error beside it).
_NOT_ANSWERS = ("failed", "disallowed")
#: Seconds a writer waits for another one's lock before giving up (CacheError).
BUSY_TIMEOUT = 30.0
BUSY_TIMEOUT_SETTING = "KELIME_CACHE_BUSY_TIMEOUT"  # the crawl's Scrapy setting
#: The cache's errors, in words to act on (kelime.sqlite).
CACHE = StoreKind(
    noun="cache", error=CacheError, busy=CacheBusy,
    holders="a crawl, `kelime define` or a build writing to it?",
    when_busy="Try again once it is done, or let the crawl's writer wait longer with "
              f"-s {BUSY_TIMEOUT_SETTING}=SECONDS",
    when_damaged="move the corrupt file aside and recrawl, or recover what you can with "
                 "`sqlite3 {path} .recover`",
    when_foreign="is it the right file? Give --cache (KELIME_CACHE) the file `kelime crawl` "
                 "writes, or a new path")


@MIGRATIONS()
def m001_initial(db: sqlite_utils.Database) -> None:
    db.table("replies").create({"query": str, "url": str, "status": int, "fetched_at": str,
                          "outcome": str, "body": str, "sha256": str, "error": str,
                          "attempts": int}, pk="query", not_null={"outcome"})
    db.table("entries").create({"madde_id": int, "madde": str, "headword": str, "ozel_mi": str,
                          "cesit": str, "kelime_no": str, "query": str, "raw": str},
                         pk="madde_id", not_null={"raw"})
    db.table("entries").create_index(["headword"])
    db.table("entries").create_index(["query"])
    db.table("senses").create({"anlam_id": int, "madde_id": int, "anlam_sira": int, "anlam": str,
                         "fiil": str}, pk="anlam_id", foreign_keys=[("madde_id", "entries")])
    db.table("senses").create_index(["madde_id"])
    db.table("tags").create({"ozellik_id": int, "tur": str, "tam_adi": str, "kisa_adi": str},
                      pk="ozellik_id")
    db.table("sense_tags").create({"anlam_id": int, "ozellik_id": int},
                            pk=("anlam_id", "ozellik_id"),
                            foreign_keys=[("anlam_id", "senses"), ("ozellik_id", "tags")])
    db.table("examples").create({"ornek_id": int, "anlam_id": int, "ornek_sira": int, "ornek": str,
                           "yazar": str}, pk="ornek_id", foreign_keys=[("anlam_id", "senses")])
    db.table("examples").create_index(["anlam_id"])
    db.table("words").create({"word": str, "source": str, "added_at": str}, pk="word")


@MIGRATIONS()
def m002_reply_entries(db: sqlite_utils.Database) -> None:
    """Queries ↔ entries become N:M: links from every good reply's body (what TDK really
    listed) plus the old ``entries.query`` (the last saver), then that column goes."""
    db.table("reply_entries").create({"query": str, "madde_id": int}, pk=("query", "madde_id"),
                               foreign_keys=[("query", "replies"), ("madde_id", "entries")])
    db.table("reply_entries").create_index(["madde_id"])
    known = {m for (m,) in db.execute("SELECT madde_id FROM entries")}
    links = set(db.execute("SELECT query, madde_id FROM entries WHERE query IS NOT NULL"))
    for query, body in db.execute("SELECT query, body FROM replies WHERE outcome = 'ok' "
                                  "AND body IS NOT NULL").fetchall():
        links.update((query, m) for m in _listed_ids(body) if m in known)
    db.conn.executemany("INSERT OR IGNORE INTO reply_entries (query, madde_id) VALUES (?, ?)",
                        sorted(links))
    db.execute("DROP INDEX IF EXISTS idx_entries_query")
    db.table("entries").transform(drop={"query"})


@MIGRATIONS()
def m003_words_seen(db: sqlite_utils.Database) -> None:
    """When the site's list last named a word (``seen_at``), and since when it no longer
    does (``gone_at``: kept in the cache, left out of builds; `--refresh` sets both)."""
    db.table("words").add_column("seen_at", str)
    db.table("words").add_column("gone_at", str)


@MIGRATIONS()
def m004_replies_final(db: sqlite_utils.Database) -> None:
    """``final`` = 1 on a failure that asking again soon would only repeat (a reply over the
    size limit, entries in a shape the store cannot take): not due again until --max-age."""
    db.table("replies").add_column("final", int)


@MIGRATIONS()
def m005_imports_enumerations(db: sqlite_utils.Database) -> None:
    """``imports``: each dump import, begun and (once every entry is stored) finished: a
    build refuses a cache with an unfinished one. ``enumerations``: each complete reading
    of the site's list (a refresh's), its size, how many words it retired, and whether it
    was accepted: the next one is measured against the last accepted one."""
    db.table("imports").create({"sha256": str, "file": str, "started_at": str, "finished_at": str,
                          "entries": int, "queries": int}, pk="sha256")
    db.table("enumerations").create({"began": str, "ended": str, "words": int, "gone": int,
                               "accepted": int}, pk="began")


@MIGRATIONS()
def m006_pacing_robots(db: sqlite_utils.Database) -> None:
    """``pacing``: one row, the cache's politeness clock shared by every process that asks
    TDK for it (a crawl, `kelime define`, `kelime reports check`): who asked last and when
    the next request may start. ``robots``: robots.txt as last read, per site, for the
    look-ups outside the crawl (the crawl reads its own)."""
    db.table("pacing").create({"id": int, "next_at": float, "holder": str, "waiting": str,
                         "waiting_at": float}, pk="id")
    db.table("robots").create({"site": str, "fetched_at": str, "status": int, "body": str},
                        pk="site")


@MIGRATIONS()
def m007_enumerations_short(db: sqlite_utils.Database) -> None:
    """``enumerations.short``: why a reading of the site's list is known to be short (a
    sitemap listing no word while others did), NULL when it is not known to be."""
    db.table("enumerations").add_column("short", str)


def declared_migrations() -> list[str]:
    """The migrations this kelime declares, in order: on an empty database all are pending
    (sqlite-utils' public `pending`; the list itself is private to `Migrations`)."""
    empty = sqlite_utils.Database(memory=True)
    try:
        return [m.name for m in MIGRATIONS.pending(empty)]
    finally:
        empty.close()


def _listed_ids(body: str) -> list[int]:
    """The madde_ids a stored /gts body lists ([] when it is not a JSON list of entries)."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return []
    if not isinstance(data, list):
        return []
    return [int(e["madde_id"]) for e in data
            if isinstance(e, dict) and str(e.get("madde_id") or "").isdigit()]


# --- opening -------------------------------------------------------------------------------

def open_cache(path: str | Path, create: bool = False, *,
               timeout: float | None = None) -> sqlite_utils.Database:
    """Open (or with `create`, create) a cache for writing, applying pending migrations.

    Safe against other processes doing the same at the same moment (the migrations run
    under the write lock). `timeout`: seconds to wait for another writer's lock (default
    BUSY_TIMEOUT, 30). Raises CacheError with a fix when unusable.
    """
    path = Path(path)
    _check_path(path, must_exist=not create)
    timeout = _busy_timeout(timeout)
    if create:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise CacheError(f"cannot create the folder of cache {path}: {e}") from None
    db = None
    try:
        db = connect(path, timeout=timeout)
        _check_ours(db, path, create)
        set_journal(db, "wal", timeout)
        if MIGRATIONS.pending(db):
            with write_tx(db):
                MIGRATIONS.apply(db)  # re-reads what is pending, now under the lock
        set_journal(db, "wal", timeout)  # a process racing to create it may have kept it from WAL
        db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable against crashes, fast commits
    except sqlite3.DatabaseError as e:
        _close(db)
        raise CACHE.error_for(path, e, timeout) from None
    except BaseException:
        _close(db)
        raise
    return db


def crawl_lock(path: str | Path) -> AbstractContextManager[None]:
    """Held for a crawl's whole life: one crawl per cache. Two crawls on one file fetched
    every word twice, two requests in flight and no gap between them. A second crawl
    refuses at once, naming the holder; the lock is ``<cache>.lock`` beside the file (the
    kernel drops it when the crawl exits, however it exits)."""
    from ..locks import exclusive

    path = Path(path)
    lock = path.with_name(path.name + ".lock")
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        lock.touch()
    except OSError as e:
        raise CacheError(f"cannot create the crawl lock {lock}: {e.strerror or e}") from None
    return exclusive(lock, 0, busy=lambda holder: CacheError(
        f"another crawl is writing {path} ({holder}): one crawl per cache; wait for it to "
        "finish (or stop it) and run this one again"))


def open_readonly(path: str | Path, *, timeout: float | None = None) -> sqlite_utils.Database:
    """Open an existing cache for reading only: never migrates, never writes the file.

    An older schema is read as it is (every read here works on each schema). In a folder
    this process cannot write, a cache with no ``-wal`` file (no writer connected, nothing
    uncheckpointed) is opened ``immutable=1``: SQLite could not create its ``-shm`` there.
    """
    path = Path(path)
    _check_path(path, must_exist=True)
    timeout = _busy_timeout(timeout)
    db = None
    try:
        db = _connect_ro(path, timeout, immutable=False)
        try:
            _check_ours(db, path, False)
        except sqlite3.OperationalError as e:
            if not _folder_readonly(path, e):
                raise
            _close(db)
            db = None
            if Path(f"{path}-wal").exists():
                raise CacheError(
                    f"cannot read cache {path}: it has a write-ahead log ({path.name}-wal) "
                    "but SQLite cannot create its shared-memory file in that folder "
                    f"({e}). Open it once where it can be written (`kelime crawl status "
                    f"--cache {path}` folds the log in), or make the folder writable") from None
            db = _connect_ro(path, timeout, immutable=True)
            _check_ours(db, path, False)
    except sqlite3.DatabaseError as e:
        _close(db)
        raise CACHE.error_for(path, e, timeout, reading=True) from None
    except BaseException:
        _close(db)
        raise
    return db


def _folder_readonly(path: Path, e: sqlite3.OperationalError) -> bool:
    """Did a read-only open fail only because SQLite cannot create -shm/-wal there?"""
    if getattr(e, "sqlite_errorcode", 0) == READONLY_DIRECTORY:
        return True
    return code(e) in (CANTOPEN, READONLY) and not os.access(path.parent, os.W_OK)


def _connect_ro(path: Path, timeout: float, immutable: bool) -> sqlite_utils.Database:
    uri = path.resolve().as_uri() + ("?mode=ro&immutable=1" if immutable else "?mode=ro")
    return connect(uri, uri=True, timeout=timeout, threads=True)


def _check_path(path: Path, must_exist: bool) -> None:
    if path.is_dir():
        raise CacheError(f"cache {path} is a folder; give the path of a .sqlite file")
    if must_exist and not path.exists():
        raise CacheError(f"cache {path} does not exist: run `kelime crawl run --cache {path}` "
                         "first (or check --cache / KELIME_CACHE)")


def _busy_timeout(timeout: float | None) -> float:
    if timeout is None:
        return BUSY_TIMEOUT
    if not timeout >= 0:
        raise CacheError(f"a cache busy timeout of {timeout!r} s: give the seconds a writer "
                         f"may wait for the cache's lock, e.g. {BUSY_TIMEOUT:g}")
    return float(timeout)


def _close(db: sqlite_utils.Database | None) -> None:
    if db is not None:
        try:
            db.close()
        except sqlite3.Error:
            pass


def _check_ours(db: sqlite_utils.Database, path: Path, create: bool) -> None:
    tables = set(db.table_names())  # raises DatabaseError when the file is not SQLite
    mine = {m.name for m in MIGRATIONS.applied(db)}
    if create and not mine and tables <= {MIGRATIONS.migrations_table}:
        return  # new (an older kelime, racing, may have left an empty migrations table)
    if not mine:
        what = f"tables: {', '.join(sorted(tables))}" if tables else "it is empty"
        raise CacheError(f"{path} is an SQLite file but not a kelime cache ({what}); "
                         "pass the cache written by `kelime crawl`, or a new path")
    unknown = mine - set(declared_migrations())
    if unknown:
        raise CacheError(f"cache {path} was written by a newer kelime (schema "
                         f"{', '.join(sorted(unknown))}); upgrade kelime to read it")


@contextmanager
def reading(db: sqlite_utils.Database) -> Iterator[None]:
    """Reads of a damaged cache (a corrupt page in the middle of the file) raise CacheError
    naming the file and the way out, not a bare sqlite3.DatabaseError from deep inside."""
    with CACHE.errors(db, reading=True):
        yield


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def next_second() -> str:
    """`now_iso()` once the clock has passed into the next second. Times are kept to the
    second, so a refresh that began in the second an import (or another crawl) last wrote
    would take that import's words for words its own enumeration named, and retire none of
    the ones the site dropped: every row written before this call is older than what it
    returns, every row written after it at least as new."""
    now = time.time()
    time.sleep(int(now) + 1 - now + 0.01)
    return now_iso()


# --- writing -------------------------------------------------------------------------------

@contextmanager
def write_tx(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    """One write transaction that takes the write lock first (``BEGIN IMMEDIATE``).

    A deferred BEGIN that reads and then writes cannot wait for the lock in WAL mode: it
    fails at once with "database is locked" whatever busy_timeout says. Taking the lock
    up front makes it wait (busy_timeout); a lock still held then, and an unwritable
    file, raise CacheError. Nested inside an open transaction: a savepoint.
    """
    with CACHE.errors(db), immediate(db):
        yield db


def save_words(db: sqlite_utils.Database, words: Iterable[str], source: str) -> int:
    """Queue words (queries) for fetching; already queued ones keep their source. Returns new."""
    now = now_iso()
    words = list(dict.fromkeys(words))
    rows = [(w, source, now, now) for w in words]
    with write_tx(db):
        before = db.conn.total_changes
        db.conn.executemany("INSERT OR IGNORE INTO words (word, source, added_at, seen_at) "
                            "VALUES (?, ?, ?, ?)", rows)
        added = db.conn.total_changes - before
        db.conn.executemany("UPDATE words SET seen_at = ?, gone_at = NULL WHERE word = ?",
                            [(now, w) for w in words])  # named again: not gone
        return added


#: Characters of a failed reply's body kept (its sha256 covers the whole of it): failed rows
#: kept whole 50 MB bodies.
FAILED_BODY_KEPT = 4096
_REPLY_COLUMNS = ("query", "url", "status", "fetched_at", "outcome", "body", "sha256", "error",
                  "attempts", "final")
_UPSERT_REPLY = (f"INSERT INTO replies ({', '.join(_REPLY_COLUMNS)}) VALUES "
                 f"({', '.join('?' * len(_REPLY_COLUMNS))}) ON CONFLICT (query) DO UPDATE SET "
                 + ", ".join(f"{c} = excluded.{c}" for c in _REPLY_COLUMNS[1:]))


def save_reply(db: sqlite_utils.Database, reply: Row, entries: Sequence[Row] = ()) -> str:
    """Store one classified reply and its entries in one transaction.

    `reply` has query, url, status, outcome, body (str|None), error, attempts (the HTTP
    tries this fetch made) and optionally fetched_at. A good reply replaces the query's
    row and its links to entries (see the module doc); a failure never replaces an earlier
    good reply: it records the error and adds its tries to ``attempts``. An ok reply listing
    an entry that is another word's (`owned_elsewhere`) is refused: stored as a final
    failure with the reason (``entry_owned: …``). Returns the outcome as stored.
    """
    return save_replies(db, [(reply, entries)])[0]


def save_replies(db: sqlite_utils.Database,
                 replies: Iterable[tuple[Row, Sequence[Row]]]) -> list[str]:
    """Store many (reply, entries) pairs in ONE transaction, in order: the same rows as
    `save_reply` on each in turn (give each reply its fetched_at to keep its time), at one
    commit's cost. All or nothing: a failure stores none of them. Returns each reply's
    outcome as stored: ``failed`` for a good one refused (`OWNED`)."""
    with write_tx(db):
        return [_save_reply(db, reply, entries) for reply, entries in replies]


#: The error of a reply refused because an entry it lists is another word's: it begins so.
OWNED = "entry_owned"


def owned_elsewhere(db: sqlite_utils.Database, query: str, entries: Iterable[Row]) -> str | None:
    """Why `query`'s reply may not store `entries`, or None. An entry has one owner: a
    madde_id stored under another headword (``normalize``d) belongs to the words whose
    replies list it, and only a reply already linked to it may rename it (TDK renaming its
    own entry). Keyed by madde_id alone, a reply for ``kalem`` carrying ``kitap``'s id
    replaced ``kitap``'s entry, and ``kitap`` left the build through a reply it never sent."""
    for entry in entries:
        madde_id, headword = int(entry["madde_id"]), normalize(entry.get("madde") or "")
        row = db.execute("SELECT headword FROM entries WHERE madde_id = ?", [madde_id]).fetchone()
        if row is None or row[0] == headword:
            continue
        owners = [q for (q,) in db.execute("SELECT query FROM reply_entries WHERE madde_id = ? "
                                           "ORDER BY query", [madde_id])]
        if not owners or query in owners:
            continue  # no one's (kept from an old reply) or its own: a rename
        return (f"{OWNED}: the reply for {query!r} lists madde_id {madde_id} as "
                f"{entry.get('madde')!r}, but the cache holds madde_id {madde_id} as "
                f"{row[0]!r}, listed by the reply for {', '.join(map(repr, owners[:3]))}: "
                f"refused (an entry has one owner), the reply stored before is kept. If TDK "
                f"renumbered its entries, fetch {owners[0]!r} again first (`kelime crawl run "
                f"--words FILE --max-age 0`, the file naming {owners[0]!r}), then {query!r}")
    return None


def _save_reply(db: sqlite_utils.Database, reply: Row, entries: Sequence[Row]) -> str:
    row: Row = {k: reply.get(k) for k in _REPLY_COLUMNS}
    if row["outcome"] == "ok" and (why := owned_elsewhere(db, row["query"], entries)):
        row.update(outcome="failed", error=why, final=True)
    row["fetched_at"] = reply.get("fetched_at") or now_iso()
    if not row["sha256"]:  # the caller's hash is of the bytes as received
        row["sha256"] = hashlib.sha256(row["body"].encode()).hexdigest() if row["body"] else None
    if row["outcome"] == "failed" and row["body"] and len(row["body"]) > FAILED_BODY_KEPT:
        row["body"] = row["body"][:FAILED_BODY_KEPT]  # an excerpt: enough to see what it was
    attempts = reply.get("attempts")
    tries = int(attempts) if attempts is not None else 1
    old = db.execute("SELECT outcome, attempts FROM replies WHERE query = ?",
                     [row["query"]]).fetchone()
    if row["outcome"] in _NOT_ANSWERS:
        tries += (old[1] or 0) if old else 0
        if old and old[0] in GOOD:  # keep the good reply
            db.execute("UPDATE replies SET error = ?, attempts = ? WHERE query = ?",
                       [row["error"], tries, row["query"]])
            return str(row["outcome"])
    row["final"] = 1 if row["outcome"] == "failed" and row.get("final") else None
    row["attempts"] = tries
    db.execute(_UPSERT_REPLY, [row[c] for c in _REPLY_COLUMNS])
    if row["outcome"] in GOOD:
        _link(db, row["query"], entries)
    return str(row["outcome"])


def _link(db: sqlite_utils.Database, query: str, entries: Iterable[Row]) -> None:
    """Make `entries` exactly the ones `query` lists; drop entries no reply lists any more."""
    entries = list(entries)
    keep = {int(e["madde_id"]) for e in entries}
    before = {m for (m,) in db.execute("SELECT madde_id FROM reply_entries WHERE query = ?",
                                       [query])}
    _save_entries(db, entries, query)  # inside save_replies' transaction: no savepoint
    gone = sorted(before - keep)
    db.conn.executemany("DELETE FROM reply_entries WHERE query = ? AND madde_id = ?",
                        [(query, m) for m in gone])
    for madde_id in gone:
        if db.execute("SELECT 1 FROM reply_entries WHERE madde_id = ? LIMIT 1",
                      [madde_id]).fetchone() is None:
            _delete_entry(db, madde_id)
            db.execute("DELETE FROM entries WHERE madde_id = ?", [madde_id])


def save_entries(db: sqlite_utils.Database, entries: Iterable[Row], query: str | None) -> None:
    """Upsert raw TDK entries (deduplicated by madde_id) and their senses, tags, examples;
    with a `query`, also link them to it (other links of that query stay: see save_reply)."""
    with write_tx(db):
        _save_entries(db, entries, query)


def _save_entries(db: sqlite_utils.Database, entries: Iterable[Row], query: str | None) -> None:
    """`save_entries` inside a transaction the caller holds."""
    for entry in entries:
        madde_id = int(entry["madde_id"])
        _delete_entry(db, madde_id)
        db.execute(
            "INSERT INTO entries (madde_id, madde, headword, ozel_mi, cesit, kelime_no, raw) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (madde_id) DO UPDATE SET "
            "madde = excluded.madde, headword = excluded.headword, ozel_mi = "
            "excluded.ozel_mi, cesit = excluded.cesit, kelime_no = excluded.kelime_no, "
            "raw = excluded.raw",
            [madde_id, entry.get("madde"), normalize(entry.get("madde") or ""),
             entry.get("ozel_mi"), entry.get("cesit"), entry.get("kelime_no"),
             orjson.dumps(entry).decode()])
        if query is not None:
            db.execute("INSERT OR IGNORE INTO reply_entries (query, madde_id) VALUES (?, ?)",
                       [query, madde_id])
        _save_senses(db, madde_id, entry.get("anlamlarListe") or [])


def _save_senses(db: sqlite_utils.Database, madde_id: int, senses: list[Row]) -> None:
    rows, tags, links, examples = [], {}, set(), []
    for s in senses:
        if not str(s.get("anlam_id") or "").isdigit():
            continue  # kept in raw; nothing to key the row on
        anlam_id = int(s["anlam_id"])
        rows.append((anlam_id, madde_id, _int(s.get("anlam_sira")), s.get("anlam"),
                     s.get("fiil")))
        for t in s.get("ozelliklerListe") or []:
            if str(t.get("ozellik_id") or "").isdigit():
                tag_id = int(t["ozellik_id"])
                tags[tag_id] = (tag_id, t.get("tur"), t.get("tam_adi"), t.get("kisa_adi"))
                links.add((anlam_id, tag_id))
        for x in s.get("orneklerListe") or []:
            if str(x.get("ornek_id") or "").isdigit():
                authors = ", ".join((a.get("tam_adi") or "").strip() for a in x.get("yazar") or [])
                examples.append((int(x["ornek_id"]), anlam_id, _int(x.get("ornek_sira")),
                                 x.get("ornek"), authors or None))
    many = db.conn.executemany
    many("INSERT OR REPLACE INTO senses (anlam_id, madde_id, anlam_sira, anlam, fiil) "
         "VALUES (?, ?, ?, ?, ?)", rows)
    many("INSERT OR REPLACE INTO tags (ozellik_id, tur, tam_adi, kisa_adi) VALUES (?, ?, ?, ?)",
         list(tags.values()))
    many("INSERT OR IGNORE INTO sense_tags (anlam_id, ozellik_id) VALUES (?, ?)", sorted(links))
    many("INSERT OR REPLACE INTO examples (ornek_id, anlam_id, ornek_sira, ornek, yazar) "
         "VALUES (?, ?, ?, ?, ?)", examples)


def _delete_entry(db: sqlite_utils.Database, madde_id: int) -> None:
    """Remove an entry's senses, sense tags and examples (before re-saving or dropping it)."""
    inner = "SELECT anlam_id FROM senses WHERE madde_id = ?"
    db.execute(f"DELETE FROM examples WHERE anlam_id IN ({inner})", [madde_id])
    db.execute(f"DELETE FROM sense_tags WHERE anlam_id IN ({inner})", [madde_id])
    db.execute("DELETE FROM senses WHERE madde_id = ?", [madde_id])


def _int(value: Any) -> int | None:  # a JSON field, of any type
    return int(value) if str(value or "").lstrip("-").isdigit() else None


# --- reading (each works on every schema since m001) ---------------------------------------

def iter_entries(db: sqlite_utils.Database) -> Iterator[Row]:
    """Every cached entry as TDK sent it (the parsed JSON object), ordered by madde_id,
    but those listed only by words the site no longer names (``gone_at``)."""
    with reading(db):
        yield from _iter_entries(db)


def _iter_entries(db: sqlite_utils.Database) -> Iterator[Row]:
    sql = "SELECT raw FROM entries ORDER BY madde_id"
    if "gone_at" in db["words"].columns_dict:  # an older cache has no such column
        sql = ("SELECT raw FROM entries e WHERE NOT EXISTS (SELECT 1 FROM reply_entries r "
               "WHERE r.madde_id = e.madde_id) OR EXISTS (SELECT 1 FROM reply_entries r LEFT "
               "JOIN words w ON w.word = r.query WHERE r.madde_id = e.madde_id AND "
               "w.gone_at IS NULL) ORDER BY madde_id")
    for (raw,) in db.execute(sql):
        yield orjson.loads(raw)


def good_replies(db: sqlite_utils.Database) -> int:
    """How many replies are good (ok or not_found)."""
    return _count(db, f"SELECT count(*) FROM replies WHERE {_GOOD}")


def _count(db: sqlite_utils.Database, sql: str, params: Sequence[object] = ()) -> int:
    """The number a ``SELECT count(*)`` answers."""
    n: int = db.execute(sql, params).fetchone()[0]
    return n


def oldest_good(db: sqlite_utils.Database, count: int) -> dict[str, str | None]:
    """The `count` queries whose good reply is the oldest (a refresh's rotating sample),
    oldest first, each with what it says (`reply_digest`: to tell later whether it changed)."""
    rows = db.execute(f"SELECT query, outcome, body FROM replies WHERE {_GOOD} ORDER BY "
                      "fetched_at, query LIMIT ?", [count])
    return {query: reply_digest(outcome, body) for query, outcome, body in rows}


def reply_digests(db: sqlite_utils.Database, queries: Iterable[str]) -> dict[str, str | None]:
    """What each query's reply says now (`reply_digest`; a query with no reply is left out)."""
    queries = list(queries)
    found: dict[str, str | None] = {}
    for start in range(0, len(queries), 500):  # SQLite's bound on parameters
        part = queries[start:start + 500]
        rows = db.execute(f"SELECT query, outcome, body FROM replies WHERE query IN "
                          f"({','.join('?' * len(part))})", part)
        found.update((query, reply_digest(outcome, body)) for query, outcome, body in rows)
    return found


#: `reply_digest` of a not-found reply.
NOT_FOUND = "not_found"


def reply_digest(outcome: str, body: str | None) -> str | None:
    """What a stored reply says, the same however its body was written: NOT_FOUND, the
    sha256 of its entries as canonical JSON (sorted by madde_id, keys sorted) for an ok
    one, None for anything else. A dump's entries are stored re-serialised (no ``\\/``,
    other spacing) and TDK's as sent: their bodies' bytes always differed, so every
    refresh after an import said 100% of its replies changed, hiding the real changes."""
    if outcome == "not_found":
        return NOT_FOUND
    if outcome != "ok" or body is None:
        return None
    try:
        data = orjson.loads(body.removeprefix("\ufeff"))
    except orjson.JSONDecodeError:
        return None
    if not isinstance(data, list):
        return None
    data.sort(key=lambda e: str(e.get("madde_id")) if isinstance(e, dict) else "")
    return hashlib.sha256(orjson.dumps(data, option=orjson.OPT_SORT_KEYS)).hexdigest()


def not_seen_since(db: sqlite_utils.Database, since: str) -> int:
    """How many words still in the dictionary a complete enumeration begun at `since` did
    not name (what `mark_gone` would retire)."""
    return _count(db, "SELECT count(*) FROM words WHERE gone_at IS NULL AND (seen_at IS NULL "
                  "OR seen_at < ?)", [since])


def seen_since(db: sqlite_utils.Database, since: str) -> int:
    """How many words an enumeration begun at `since` named."""
    return _count(db, "SELECT count(*) FROM words WHERE seen_at >= ?", [since])


def mark_gone(db: sqlite_utils.Database, since: str) -> int:
    """Words that a complete enumeration begun at `since` no longer named: gone (kept, left
    out of builds), whatever their source: a word imported from a dump or given in a word
    list is retired like one from a sitemap. Returns how many became gone."""
    with write_tx(db):
        before = db.conn.total_changes
        db.execute("UPDATE words SET gone_at = ? WHERE gone_at IS NULL AND "
                   "(seen_at IS NULL OR seen_at < ?)", [now_iso(), since])
        return db.conn.total_changes - before


def record_enumeration(db: sqlite_utils.Database, began: str, words: int, gone: int,
                       accepted: bool, short: str | None = None) -> None:
    """Remember a complete enumeration: its size, what it retired, whether it was accepted,
    and why it is known to be short (None: it is not)."""
    with write_tx(db):
        db.execute("INSERT OR REPLACE INTO enumerations (began, ended, words, gone, accepted, "
                   "short) VALUES (?, ?, ?, ?, ?, ?)",
                   [began, now_iso(), words, gone, int(accepted), short])


def short_reading(db: sqlite_utils.Database) -> Row | None:
    """The newest reading of the site's list, {began, words, short}, when it is known to be
    short (a later whole reading clears it); None otherwise."""
    if "short" not in db["enumerations"].columns_dict:
        return None
    row = db.execute("SELECT began, words, short FROM enumerations ORDER BY began DESC "
                     "LIMIT 1").fetchone()
    return dict(zip(("began", "words", "short"), row)) if row and row[2] else None


def last_enumeration(db: sqlite_utils.Database) -> Row | None:
    """The last accepted enumeration ({began, ended, words, gone}), or None."""
    if "enumerations" not in db.table_names():
        return None
    row = db.execute("SELECT began, ended, words, gone FROM enumerations WHERE accepted = 1 "
                     "ORDER BY began DESC LIMIT 1").fetchone()
    return dict(zip(("began", "ended", "words", "gone"), row)) if row else None


def take_turn(db: sqlite_utils.Database, me: str, now: float, lease: float) -> float:
    """Claim the cache's politeness clock for one request by `me` at `now` (Unix time): 0.0
    when claimed (no one else may start one for `lease` seconds, or until `end_turn`),
    else the seconds to wait before trying again. `me`'s own claims never make it wait
    (a crawl paces its own requests), but one who had to wait is next (``waiting``, for
    `lease` seconds at most): a crawl's back-to-back requests starved a look-up."""
    with write_tx(db):
        row = db.execute("SELECT next_at, holder, waiting, waiting_at FROM pacing "
                         "WHERE id = 1").fetchone()
        next_at, holder, waiting, since = row or (0.0, None, None, None)
        queued = waiting not in (None, me) and now - (since or 0.0) < lease
        if holder != me and next_at > now:
            if not queued:
                db.execute("UPDATE pacing SET waiting = ?, waiting_at = ? WHERE id = 1",
                           [me, now])
            return next_at - now
        if queued:  # the clock is free, and someone else asked first
            return 0.05
        until = max(now + lease, next_at if holder == me else 0.0)
        db.execute("INSERT INTO pacing (id, next_at, holder, waiting) VALUES (1, ?, ?, NULL) "
                   "ON CONFLICT (id) DO UPDATE SET next_at = excluded.next_at, holder = "
                   "excluded.holder, waiting = NULL", [until, me])
        return 0.0


def free_turns(db: sqlite_utils.Database, prefix: str, me: str, until: float) -> None:
    """The holders named ``prefix…`` but `me` are gone: their hold on the clock, and their
    place in line, end by `until` at the latest. (A crawl starts holding the cache's crawl
    lock, so no other crawl lives: one killed mid-request left its lease behind, and the
    next crawl waited out the rest of it, a minute by default, before its first request.)"""
    with write_tx(db):
        db.execute("UPDATE pacing SET next_at = min(next_at, :until), holder = NULL "
                   "WHERE id = 1 AND holder != :me AND substr(holder, 1, :n) = :prefix",
                   {"until": until, "me": me, "n": len(prefix), "prefix": prefix})
        db.execute("UPDATE pacing SET waiting = NULL, waiting_at = NULL WHERE id = 1 AND "
                   "waiting != :me AND substr(waiting, 1, :n) = :prefix",
                   {"me": me, "n": len(prefix), "prefix": prefix})


def end_turn(db: sqlite_utils.Database, me: str, now: float, gap: float) -> None:
    """`me`'s request ended at `now`: no one may start another for `gap` seconds."""
    with write_tx(db):
        db.execute("INSERT INTO pacing (id, next_at, holder) VALUES (1, ?, ?) ON CONFLICT "
                   "(id) DO UPDATE SET next_at = excluded.next_at, holder = excluded.holder",
                   [now + gap, me])


def longer_turn(db: sqlite_utils.Database, me: str, now: float, gap: float) -> None:
    """`me`'s last request, still the last on the clock, is followed by `gap` seconds from
    `now` at least (robots.txt's Crawl-delay, read once its reply ended); nothing when
    someone else has the clock since."""
    with write_tx(db):
        db.execute("UPDATE pacing SET next_at = max(next_at, ?) WHERE id = 1 AND holder = ?",
                   [now + gap, me])


def get_robots(db: sqlite_utils.Database, site: str) -> Row | None:
    """robots.txt of `site` as last read ({fetched_at, status, body}), or None."""
    if "robots" not in db.table_names():
        return None
    return next(db["robots"].rows_where("site = ?", [site], limit=1), None)


def save_robots(db: sqlite_utils.Database, site: str, status: int, body: str) -> None:
    with write_tx(db):
        db.execute("INSERT OR REPLACE INTO robots (site, fetched_at, status, body) VALUES "
                   "(?, ?, ?, ?)", [site, now_iso(), status, body])


def begin_import(db: sqlite_utils.Database, sha256: str, file: str) -> None:
    """An import of the dump with this sha256 begins: unfinished until `finish_import`."""
    with write_tx(db):
        db.execute("INSERT INTO imports (sha256, file, started_at) VALUES (?, ?, ?) ON "
                   "CONFLICT (sha256) DO UPDATE SET file = excluded.file, started_at = "
                   "excluded.started_at, finished_at = NULL", [sha256, file, now_iso()])


def finish_import(db: sqlite_utils.Database, sha256: str, entries: int, queries: int) -> None:
    with write_tx(db):
        db.execute("UPDATE imports SET finished_at = ?, entries = ?, queries = ? WHERE "
                   "sha256 = ?", [now_iso(), entries, queries, sha256])


def imports(db: sqlite_utils.Database) -> list[Row]:
    """Every dump import: file, sha256, started_at, finished_at (None: it never finished)."""
    if "imports" not in db.table_names():
        return []
    rows = db.execute("SELECT file, sha256, started_at, finished_at, entries FROM imports "
                      "ORDER BY started_at")
    return [dict(zip(("file", "sha256", "started_at", "finished_at", "entries"), r))
            for r in rows]


def entries_for_word(db: sqlite_utils.Database, normalized_word: str) -> list[Row]:
    """Raw entries whose normalised headword is `normalized_word` (âdet and adet for adet)."""
    rows = db.execute("SELECT raw FROM entries WHERE headword = ? ORDER BY madde_id",
                      [normalized_word])
    return [orjson.loads(raw) for (raw,) in rows]


def get_reply(db: sqlite_utils.Database, query: str) -> Row | None:
    """The cached reply row for a query, or None."""
    return next(db["replies"].rows_where("query = ?", [query], limit=1), None)


def _cutoff(max_age_days: float | None, now: datetime | None) -> str:
    if max_age_days is None:
        return ""  # every good reply counts as fresh
    now = now or datetime.now(UTC)
    return (now - timedelta(days=max_age_days)).isoformat(timespec="seconds")


#: A reply not to ask again now: good (ok or not_found), or a final failure, fetched after
#: the cutoff (one `?`). `fresh_queries` and `due_words` are its two sides.
FRESH = f"(r.outcome {_GOOD_IN} OR coalesce(r.final, 0) = 1) AND r.fetched_at > ?"


def fresh_queries(db: sqlite_utils.Database, max_age_days: float | None = None,
                  now: datetime | None = None) -> set[str]:
    """Queries not to ask again now: a good reply (ok or not_found), or a final failure, fetched
    within `max_age_days` (None: ever)."""
    with reading(db):
        rows = db.execute(f"SELECT r.query FROM replies r WHERE {FRESH}",
                          [_cutoff(max_age_days, now)])
        return {q for (q,) in rows}


def due_words(db: sqlite_utils.Database, max_age_days: float | None = None,
              now: datetime | None = None) -> list[str]:
    """Queued words without a fresh reply (`FRESH`), in the order they were queued."""
    with reading(db):
        rows = db.execute(
            f"SELECT w.word FROM words w LEFT JOIN replies r ON r.query = w.word WHERE "
            f"r.query IS NULL OR NOT ({FRESH}) ORDER BY w.rowid", [_cutoff(max_age_days, now)])
        return [w for (w,) in rows]


def _refused(db: sqlite_utils.Database) -> Row:
    """The queries whose last reply was refused (an earlier good reply of the query is kept
    beside it): as not about the word asked (its error begins with `replies.REFUSED`) or as
    listing an entry another word owns (`OWNED`). How many, how many of each kind, one not
    about its word (query and reason; a refusal beside a good reply keeps that reply's
    fetched_at, so "the latest" cannot be told), and the first five owned elsewhere."""
    rows = db.execute("SELECT query, error FROM replies WHERE substr(error, 1, ?) = ? OR "
                      "substr(error, 1, ?) = ? ORDER BY fetched_at DESC, rowid DESC",
                      [len(REFUSED), REFUSED, len(OWNED), OWNED]).fetchall()
    kinds: dict[str, int] = {}
    owned, off_word = [], []
    for query, error in rows:
        if error.startswith(OWNED):
            kind = OWNED
            owned.append({"query": query, "error": error})
        else:
            kind = error[len(REFUSED):].split(")", 1)[0]
            off_word.append({"query": query, "error": error})
        kinds[kind] = kinds.get(kind, 0) + 1
    owned.sort(key=lambda row: row["query"])
    return {"count": len(rows), "kinds": kinds, "example": off_word[0] if off_word else None,
            OWNED: len(owned), "first": owned[:5]}


def cache_stats(db: sqlite_utils.Database) -> Row:
    """Counts by outcome, entries, words (those the site still lists: queued, done,
    disallowed by robots.txt, pending; and gone), the replies refused as not about their
    word or listing an entry another word owns (``refused``: `_refused`), the dump
    imports, the short reading of the site's list if any, the last accepted enumeration,
    oldest and newest fetch."""
    with reading(db):
        return _cache_stats(db)


def _cache_stats(db: sqlite_utils.Database) -> Row:
    outcomes = dict.fromkeys(OUTCOMES, 0)
    outcomes.update(dict(db.execute("SELECT outcome, count(*) FROM replies GROUP BY outcome")))
    oldest, newest = db.execute("SELECT min(fetched_at), max(fetched_at) FROM replies "
                                f"WHERE {_GOOD}").fetchone()
    live = "w.gone_at IS NULL" if "gone_at" in db["words"].columns_dict else "1"
    counts = db.execute(
        f"SELECT count(*), sum(r.outcome {_GOOD_IN}), "
        f"sum(r.outcome = 'disallowed') FROM words w LEFT JOIN replies r ON r.query = w.word "
        f"WHERE {live}").fetchone()
    queued, done, disallowed = counts[0], counts[1] or 0, counts[2] or 0
    gone = db.execute(f"SELECT count(*) FROM words w WHERE NOT ({live})").fetchone()[0]
    entries = db.execute("SELECT count(*) FROM entries").fetchone()[0]
    return {"replies": outcomes, "entries": entries, "refused": _refused(db),
            "words": {"queued": queued, "done": done, "disallowed": disallowed,
                      "pending": queued - done - disallowed, "gone": gone},
            "imports": imports(db), "enumeration": last_enumeration(db),
            "short_reading": short_reading(db),
            "oldest_fetch": oldest, "newest_fetch": newest}
