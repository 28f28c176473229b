"""Player word reports: "this word should be valid", "this is an insult", stored and counted
until a maintainer decides.

A report store is its own SQLite file (sqlite-utils), never the crawl cache or a lexicon,
or a PostgreSQL database every replica writes to (`kelime.reports_pg`, the same schema,
semantics and messages: `BaseReportStore` holds what the two share, the SQL included):
players write to it through ``POST /v1/reports``, maintainers read and close it with
``kelime reports``. One open report per (lexicon, word, kind): a duplicate adds a
submission and raises the count instead of a row. A submission keeps the word as sent,
the game, the note (plain text, never markup), the version of the lexicon the player was
answered from and, for one hour (the rate limit's window),
a keyed hash of the client's address (of its /64 network for IPv6); the address itself is
never stored, and the hash is erased by the first write after the hour (a report, a
decision, a server's start, `kelime reports`). Closing a report (accept, reject)
keeps the decision and the counts on the report and deletes its submissions, notes
included, so the space they took is used again.

Bounded three ways: a note's length, submissions per client per hour (`RateLimited`,
with the seconds to wait) and the file's size (`StoreFull`, also enforced by SQLite's
``max_page_count`` so that no write can grow the file past it). The file uses a rollback
journal, not WAL: everything committed is in the one file, so it can be moved aside at
any time (the server follows a moved store: `moved`); copy it with
``sqlite3 reports.sqlite ".backup copy.sqlite"``, which never catches half a commit.

    >>> import tempfile, pathlib
    >>> store = ReportStore(pathlib.Path(tempfile.mkdtemp()) / "reports.sqlite", create=True)
    >>> first = store.submit(word="kitapçık", sent="Kitapçık", kind="missing", lexicon="tr",
    ...                      client="198.51.100.7", now=1_000_000.0)
    >>> again = store.submit(word="kitapçık", sent="kitapçık", kind="missing", lexicon="tr",
    ...                      client="203.0.113.9", now=1_000_060.0)
    >>> (first.id == again.id, again.count, again.duplicate)
    (True, 2, True)
    >>> [(r["word"], r["count"], r["players"], r["kinds"]) for r in store.open_reports()]
    [('kitapçık', 2, 2, {'missing': 2})]
    >>> [r["id"] for r in store.decide("kitapçık", "tr", "accepted", "TDK lists it", "valid")]
    [1]
    >>> store.close()
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import math
import os
import secrets
import sqlite3
import sys
import time
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Self

import sqlite_utils

from .errors import KelimeError
from .normalize import sort_key
from .sqlite import FULL, StoreKind, busy_timeout, code, connect, immediate, set_journal

KINDS = ("missing", "wrong", "offensive")
#: What each kind claims, for messages, the page and --help.
KIND_MEANING = {"missing": "a real word the game refuses",
                "wrong": "a word the game accepts but should not (not a word, misspelt)",
                "offensive": "an insult or obscenity the game accepts"}
#: How a maintainer can accept a report: the word becomes valid, or is refused for a reason.
DECISIONS = ("valid", "obscene", "proper_name")
STATUSES = ("open", "accepted", "rejected")
SCHEMA_VERSION = 2  # the last of the numbered migrations (MIGRATIONS)
HOUR = 3600.0
NOTES_LISTED = 5        # the latest notes shown per word by `open_reports`
HISTORY_LISTED = 3      # earlier decisions on a word shown beside its open reports
BUSY_TIMEOUT = 5.0      # seconds a writer waits for another (workers share the file)
MIN_STORE_BYTES = 1024 * 1024  # an empty store takes ~40 KB
SLACK_PAGES = 16        # pages past the limit the hard fence allows: the last report's


@dataclass(frozen=True)
class ReportLimits:
    """The bounds of a store (the service sets them from KELIME_REPORTS_* variables).
    A maintainer's tools open a store without them (`limits=None`): closing reports must
    work on a full store, it is how it makes room."""

    note_chars: int = 500
    per_client_hour: int = 30
    store_bytes: int = 64 * 1024 * 1024


class ReportError(KelimeError):
    """The report store cannot be opened, read or written; the message says what to do."""


class ReportBusy(ReportError):
    """Another process held the store's lock longer than this one waits: try again."""


#: The report store's errors, in words to act on (kelime.sqlite).
REPORTS = StoreKind(
    noun="the report store", error=ReportError, busy=ReportBusy,
    holders="a server taking reports, or `kelime reports`",
    when_busy="Try again in a moment",
    when_damaged="move it aside (the server then creates a new one) and recover what you "
                 "can with `sqlite3 {path} .recover | sqlite3 RECOVERED.sqlite`",
    when_foreign="give --reports (KELIME_REPORTS) a file of its own, or move this one aside")


class RateLimited(KelimeError):
    """This client sent its hour's share of reports; `retry_after` is in whole seconds."""

    def __init__(self, message: str, retry_after: int, limit: int):
        super().__init__(message)
        self.retry_after, self.limit = retry_after, limit


class StoreFull(KelimeError):
    """The store has reached its size limit; no report is taken until a maintainer acts."""


class NoOpenReport(KelimeError):
    """`decide` was asked about a word with no open report (of the kinds asked)."""


@dataclass(frozen=True)
class Submitted:
    """What a submission became: its report's id and count, and whether it joined one."""

    id: int
    count: int
    duplicate: bool


#: The invisible format characters a note keeps: the joiners emoji and some scripts need.
JOINERS = frozenset("\u200c\u200d")


def _refused(ch: str) -> bool:
    """Controls (Cc), format characters (Cf: the bidi controls and marks, zero-width
    space, soft hyphen, tag characters …) and line or paragraph separators, but for
    newline, carriage return, tab and the joiners."""
    if ch in "\n\r\t" or ch in JOINERS:
        return False
    return unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")


def note_problem(note: str) -> str | None:
    """Why `note` cannot be stored as a plain-text note, or None. Control characters other
    than newline, carriage return and tab (terminal escapes, NUL), line and paragraph
    separators, bidi controls, which would reorder what a maintainer reads, and the other
    invisible format characters (zero-width space, soft hyphen, tag characters), which
    would hide text from them, are refused; the joiners and everything else are kept."""
    for i, ch in enumerate(note):
        if _refused(ch):
            return f"character {i + 1} is U+{ord(ch):04X}, an invisible or control character"
    return None


@lru_cache(maxsize=1)
def refused_ranges() -> tuple[tuple[int, int], ...]:
    """The code points `note_problem` refuses, as (first, last) ranges (for the API's
    schema; 0.5 s once)."""
    ranges: list[list[int]] = []
    for cp in range(sys.maxunicode + 1):
        if 0xD800 <= cp <= 0xDFFF or not _refused(chr(cp)):
            continue
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return tuple((a, b) for a, b in ranges)


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")

Row = dict[str, Any]  # a row of the store, by column name


def _sqlite_v1(db: sqlite_utils.Database) -> None:
    db.table("reports").create({"id": int, "lexicon": str, "word": str, "kind": str, "status": str,
                          "count": int, "players": int, "first_at": str, "last_at": str,
                          "closed_at": str, "decision": str, "why": str}, pk="id", not_null={
                              "lexicon", "word", "kind", "status", "count", "players"})
    db.execute("CREATE UNIQUE INDEX one_open_report ON reports (lexicon, word, kind) "
               "WHERE status = 'open'")
    db.execute("CREATE INDEX reports_by_word ON reports (lexicon, word)")
    db.table("submissions").create({"id": int, "report_id": int, "at": float, "client": str,
                              "game": str, "sent": str, "note": str}, pk="id",
                             foreign_keys=[("report_id", "reports", "id")],
                             not_null={"report_id", "at"})
    db.execute("CREATE INDEX submissions_by_client ON submissions (client, at)")
    db.execute("CREATE INDEX submissions_by_report ON submissions (report_id)")
    db.execute("CREATE INDEX submissions_keyed ON submissions (at) WHERE client IS NOT NULL")


#: Migrations both stores run as they are (SQL the two dialects agree on), by the schema
#: version they make; a store's own first one makes the tables (`_sqlite_v1`, and
#: `kelime.reports_pg`'s). 2: the version of the lexicon a player was answered from (on
#: the submission, and the latest on its report).
SHARED_MIGRATIONS: dict[int, tuple[str, ...]] = {
    2: ("ALTER TABLE reports ADD COLUMN version TEXT",
        "ALTER TABLE submissions ADD COLUMN version TEXT"),
}


#: The bounds a store is opened with unless told otherwise (the service's defaults).
DEFAULT_LIMITS = ReportLimits()
#: The addresses of a report store on PostgreSQL (`kelime.reports_pg`); any other is a file.
PG_SCHEMES = ("postgresql://", "postgres://")


def is_url(target: str | Path) -> bool:
    """Whether a report store's address (--reports, KELIME_REPORTS) is PostgreSQL's."""
    return isinstance(target, str) and target.startswith(PG_SCHEMES)


def shown(target: str | Path) -> str:
    """A store's address for messages and logs: a URL without its password, wherever the
    URL puts it (``user:pass@``, an ``@`` in it not encoded, ``?password=``): the user, host,
    port and database, and ``?…`` for any query::

        >>> shown("postgresql://kelime:p@ss:/w@db:5432/reports?password=x&sslmode=require")
        'postgresql://kelime:***@db:5432/reports?…'
    """
    if not is_url(target):
        return str(target)
    scheme, _, rest = str(target).partition("://")
    rest, ask, _ = rest.partition("?")
    userinfo, at, place = rest.rpartition("@")  # (a password's own `@` or `/` unencoded)
    user, colon, _ = userinfo.partition(":")
    return (f"{scheme}://" + (f"{user}{':***' if colon else ''}@" if at else "") + place
            + ("?…" if ask else ""))


def client_network(address: str) -> str:
    """What the rate limit counts as one client: an IPv4 address, an IPv6 /64 network (one
    host is given a whole /64), or the string as it came when it is no address."""
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return address
    if ip.version == 6:
        if ip.ipv4_mapped is not None:  # ::ffff:1.2.3.4 is 1.2.3.4
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


class BaseReportStore:
    """What every report store does, in SQL the SQLite and PostgreSQL stores share (`?`
    marks the parameters; PostgreSQL's store turns them into its own). The server's route
    and `kelime reports` use only these methods. A store says where it is (`where`, for
    messages) and gives: `_run` (one statement on the connection of the transaction or read
    under way), `_tx` (one write transaction, writers one at a time, as SQLite's BEGIN
    IMMEDIATE makes them: the rate check and the insert it allows are one step for every
    replica), `_errors` (a read, its driver's errors as ReportError), `_size`, `_tables`,
    `_first_migration` (the tables, in its dialect), `_compact`, `close` and `moved`."""

    where: str
    limits: ReportLimits | None
    timeout: float
    #: whether a long-lived store is opened anew after a failed write (SQLite: a file that
    #: was locked or moved); PostgreSQL's pool reconnects by itself.
    reopen_after_error = True
    _secret: bytes

    # --- what each store gives ------------------------------------------------------------

    def _run(self, sql: str, args: Any = ()) -> Any:
        raise NotImplementedError

    def _tx(self, wait: float | None = None) -> AbstractContextManager[None]:
        raise NotImplementedError

    def _errors(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def _size(self) -> int:
        """The bytes the store's reports and submissions take."""
        raise NotImplementedError

    def _tables(self) -> set[str]:
        raise NotImplementedError

    def _first_migration(self) -> None:
        raise NotImplementedError

    def _compact(self) -> None:
        """Give the space of deleted rows back (after `prune`)."""

    def close(self) -> None:
        raise NotImplementedError

    def moved(self) -> bool:
        """Whether the store this one has open is no longer the one its address names
        (a moved SQLite file): a long-lived store must then be opened again."""
        return False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- opening -------------------------------------------------------------------------

    def _open(self, create: bool) -> None:
        """Check (or make, with `create`) the schema, run the migrations it lacks, read
        the key of the client hashes."""
        with self._errors():
            tables = self._tables()
            if not tables:
                if not create:
                    raise ReportError(f"{self.where} is empty, not a kelime report store: "
                                      "the server makes one when started with --reports "
                                      "(KELIME_REPORTS) naming it")
                with self._tx():
                    if not self._tables():  # another process may have made it meanwhile
                        self._migrate(0)
                        for key, value in (("format", "kelime-reports"),
                                           ("version", str(SCHEMA_VERSION)),
                                           ("secret", secrets.token_hex(16))):
                            self._run("INSERT INTO meta (key, value) VALUES (?, ?)",
                                      [key, value])
                tables = self._tables()
            if "meta" not in tables or self._meta("format") != "kelime-reports":
                raise ReportError(f"{self.where} {self._not_ours}")
            if not {"reports", "submissions"} <= tables:
                raise ReportError(f"{self.where} is a kelime report store with tables missing "
                                  "(it was edited): move it aside, and a new one is created")
            raw = self._meta("version")
            if raw is None or not raw.isdigit():
                raise ReportError(f"{self.where} says it is report store version {raw!r}, "
                                  "which no kelime writes: it was edited; move it aside")
            if int(raw) > SCHEMA_VERSION:
                raise ReportError(f"{self.where} was written by a newer kelime (report store "
                                  f"version {raw}; this one reads {SCHEMA_VERSION}): upgrade")
            if int(raw) < SCHEMA_VERSION:
                with self._tx():
                    now = self._meta("version") or raw  # another process may have done it
                    if int(now) < SCHEMA_VERSION:
                        self._migrate(int(now))
                        self._run("UPDATE meta SET value = ? WHERE key = 'version'",
                                  [str(SCHEMA_VERSION)])
            self._secret = self._read_secret()

    _not_ours = ("holds tables but is not a kelime report store: give --reports "
                 "(KELIME_REPORTS) a store of its own")

    def _migrate(self, since: int) -> None:
        """The numbered migrations after version `since`, in order (in a transaction)."""
        if since < 1:
            self._first_migration()
        for number in sorted(SHARED_MIGRATIONS):
            if number > since:
                for statement in SHARED_MIGRATIONS[number]:
                    self._run(statement)

    def _read_secret(self) -> bytes:
        try:
            secret = bytes.fromhex(self._meta("secret") or "")
        except (TypeError, ValueError):
            secret = b""
        if len(secret) < 16:
            raise ReportError(f"{self.where} has no usable key for its client hashes (its meta "
                              "table was edited): move it aside and a new store is created")
        return secret

    def _meta(self, key: str) -> str | None:
        row = self._run("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
        return row[0] if row else None

    def check_writable(self) -> None:
        """Write to the store once (what a server does before it takes reports): a store
        that opens but cannot be written fails here, not on the first player's report.
        Client keys over an hour old are erased on the way."""
        with self._tx():
            self._run("INSERT INTO meta (key, value) VALUES ('checked_at', ?) ON CONFLICT "
                      "(key) DO UPDATE SET value = excluded.value", [iso(time.time())])
            self._forget_keys(time.time())

    def forget_keys(self, now: float | None = None, wait: float | None = None) -> None:
        """Erase the client keys the rate limit no longer needs (over an hour old). Every
        write does it: a report, a decision, a server's start, `kelime reports`. `wait`:
        seconds to wait for another process's write instead of the store's timeout."""
        with self._tx(wait):
            self._forget_keys(time.time() if now is None else now)

    def _forget_keys(self, now: float) -> None:
        self._run("UPDATE submissions SET client = NULL WHERE client IS NOT NULL AND at <= ?",
                  [now - HOUR])

    # --- players ---------------------------------------------------------------------------

    def client_key(self, address: str) -> str:
        """A keyed hash of a client's network (`client_network`), kept for an hour. The key
        is in the store: whoever holds it can test guesses of an address (IPv4 has few),
        which is why no key outlives the hour the rate limit needs it for."""
        network = client_network(address)
        return hmac.new(self._secret, network.encode(), hashlib.sha256).hexdigest()[:24]

    def _full(self, limit: int) -> StoreFull:
        size = self._size()
        return StoreFull(f"the report store is full ({size:,} bytes in use; its limit is "
                         f"{limit:,}): no more reports are taken until a maintainer closes "
                         "some (`kelime reports accept|reject` frees their space; `kelime "
                         "reports prune` deletes old closed ones) or raises "
                         "KELIME_REPORTS_MAX_BYTES")

    def submit(self, *, word: str, sent: str, kind: str, lexicon: str, client: str,
               game: str | None = None, note: str | None = None,
               version: str | None = None, now: float | None = None) -> Submitted:
        """Store one player's report of `word` (normalised; `sent` is how it was typed),
        answered from `version` of the lexicon.

        RateLimited when `client` (an address, hashed here) sent `per_client_hour` reports
        in the last hour; StoreFull at the size limit; ValueError for a kind or note the
        caller should have refused. Returns once the report is committed."""
        if kind not in KINDS:
            raise ValueError(f"kind {kind!r} is not one of {KINDS}")
        limits = self.limits or ReportLimits(per_client_hour=2**62, store_bytes=2**62)
        if note is not None and (len(note) > limits.note_chars or note_problem(note)):
            raise ValueError("the note is over the limit or holds control characters")
        now = time.time() if now is None else now
        key = self.client_key(client)
        run = self._run
        with self._tx():
            self._forget_keys(now)
            self._check_rate(key, now, limits.per_client_hour)
            if self._size() >= limits.store_bytes:
                raise self._full(limits.store_bytes)
            row = run("SELECT id, count FROM reports WHERE lexicon = ? AND word = ? AND "
                      "kind = ? AND status = 'open'", [lexicon, word, kind]).fetchone()
            stamp = iso(now)
            # a new player of the word (whatever kind), as far as the hour's keys tell
            new_player = 0 if run(
                "SELECT 1 FROM submissions s JOIN reports r ON r.id = s.report_id WHERE "
                "r.lexicon = ? AND r.word = ? AND r.status = 'open' AND s.client = ? LIMIT 1",
                [lexicon, word, key]).fetchone() else 1
            if row:
                report_id, count = row[0], row[1] + 1
                run("UPDATE reports SET count = ?, players = players + ?, last_at = ?, "
                    "version = ? WHERE id = ?", [count, new_player, stamp, version, report_id])
            else:
                report_id = run(
                    "INSERT INTO reports (lexicon, word, kind, status, count, players, "
                    "first_at, last_at, version) VALUES (?, ?, ?, 'open', 1, ?, ?, ?, ?) "
                    "RETURNING id",
                    [lexicon, word, kind, new_player, stamp, stamp, version]).fetchone()[0]
                count = 1
            run("INSERT INTO submissions (report_id, at, client, game, sent, note, version) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [report_id, now, key, game, sent, note or None, version])
        return Submitted(report_id, count, duplicate=row is not None)

    def _check_rate(self, key: str, now: float, limit: int) -> None:
        count = self._run("SELECT count(*) FROM submissions WHERE client = ? AND at > ?",
                          [key, now - HOUR]).fetchone()[0]
        if count >= limit:
            # the submission whose ageing out brings the count under the limit (the oldest
            # one, unless the limit was lowered since)
            freeing = self._run(
                "SELECT at FROM submissions WHERE client = ? AND at > ? ORDER BY at "
                "LIMIT 1 OFFSET ?", [key, now - HOUR, count - limit]).fetchone()[0]
            wait = max(1, math.ceil(freeing + HOUR - now))
            raise RateLimited(f"{count} reports from this address in the last hour; the limit "
                              f"is {limit}: send the next in {wait} s", wait, limit)

    # --- maintainers -----------------------------------------------------------------------

    def open_reports(self, lexicon: str | None = None, word: str | None = None) -> list[Row]:
        """Open reports grouped by (lexicon, word), most reported first: counts by kind,
        players (client addresses new to the word: one sending again within the hour its
        key is kept counts once), games (most reported first), the lexicon versions the
        players were answered from (most reported first), first and last time, report
        ids, the latest notes, and the
        `history` of earlier decisions on the word. `lexicon`, `word`: only theirs."""
        where, args = "status = 'open'", []
        if lexicon:
            where, args = where + " AND lexicon = ?", [lexicon]
        if word is not None:
            where, args = where + " AND word = ?", [*args, word]
        with self._errors():
            rows = self._run(
                f"SELECT lexicon, word, id, kind, count, players, first_at, last_at "
                f"FROM reports WHERE {where} ORDER BY id", args).fetchall()
            groups: dict[tuple[str, str], Row] = {}
            try:  # a row of another type than kelime writes: the store was edited
                for lex, said, rid, kind, count, players, first, last in rows:
                    group = groups.setdefault((lex, said), {
                        "lexicon": lex, "word": said, "count": 0, "players": 0, "kinds": {},
                        "ids": [], "games": [], "versions": [], "sent": [],
                        "first_at": first, "last_at": last, "notes": [], "history": []})
                    group["count"] += count
                    group["players"] += players
                    group["kinds"][kind] = group["kinds"].get(kind, 0) + count
                    group["ids"].append(rid)
                    group["first_at"], group["last_at"] = (min(group["first_at"], first),
                                                           max(group["last_at"], last))
                for group in groups.values():
                    self._fill(group)
            except (TypeError, ValueError, OverflowError) as e:
                raise ReportError(f"the report store {self.where} holds rows kelime did not "
                                  f"write ({e}): it was edited; move it aside") from None
        return sorted(groups.values(), key=lambda g: (-g["count"], sort_key(g["word"])))

    def _fill(self, group: Row) -> None:
        marks = ",".join("?" * len(group["ids"]))
        ids = group["ids"]
        group["games"] = [g for (g,) in self._run(
            f"SELECT game FROM submissions WHERE report_id IN ({marks}) AND game IS NOT NULL "
            "GROUP BY game ORDER BY count(*) DESC, game", ids)]
        group["versions"] = [v for (v,) in self._run(
            f"SELECT version FROM submissions WHERE report_id IN ({marks}) AND version IS NOT "
            "NULL GROUP BY version ORDER BY count(*) DESC, version", ids)]
        group["sent"] = [s for (s,) in self._run(
            f"SELECT DISTINCT sent FROM submissions WHERE report_id IN ({marks}) ORDER BY sent "
            "LIMIT 5", ids)]
        group["notes"] = self._notes(ids)
        group["history"] = [
            {"id": rid, "kind": kind, "status": status, "decision": decision, "why": why,
             "closed_at": closed, "count": count, "version": version}
            for rid, kind, status, decision, why, closed, count, version in self._run(
                "SELECT id, kind, status, decision, why, closed_at, count, version FROM "
                "reports WHERE lexicon = ? AND word = ? AND status != 'open' ORDER BY "
                f"closed_at DESC, id DESC LIMIT {HISTORY_LISTED}",
                [group["lexicon"], group["word"]])]

    def _notes(self, ids: list[int]) -> list[Row]:
        marks = ",".join("?" * len(ids))
        return [{"at": iso(at), "kind": kind, "note": note} for at, kind, note in
                self._run(
            f"SELECT s.at, r.kind, s.note FROM submissions s JOIN reports r ON r.id = "
            f"s.report_id WHERE s.report_id IN ({marks}) AND s.note IS NOT NULL "
            f"ORDER BY s.at DESC LIMIT {NOTES_LISTED}", ids)]

    def decide(self, word: str, lexicon: str, status: str, why: str,
               decision: str | None = None, now: float | None = None,
               then: Callable[[list[Row]], None] | None = None,
               kinds: tuple[str, ...] = KINDS) -> list[Row]:
        """Close the open reports of `word` in `lexicon` of these `kinds` as `status`
        (accepted, with the `decision`, or rejected), with the maintainer's `why`; the
        reports closed. Each keeps its counts; its submissions are deleted.

        `then(reports)` runs inside the same transaction, before it commits: when it
        raises (a policy list that cannot be written), the reports stay open."""
        if status not in ("accepted", "rejected"):
            raise ValueError(f"status {status!r}")
        now = time.time() if now is None else now
        with self._tx():
            self._forget_keys(now)
            rows = [dict(zip(("id", "kind", "count"), r)) for r in self._run(
                "SELECT id, kind, count FROM reports WHERE lexicon = ? AND word = ? AND "
                "status = 'open' ORDER BY id", [lexicon, word]).fetchall() if r[1] in kinds]
            if not rows:
                raise NoOpenReport(f"no open report of {word!r} in lexicon {lexicon!r}"
                                   + (f" of kind {', '.join(kinds)}" if kinds != KINDS else "")
                                   + ": `kelime reports` lists the open ones")
            for row in rows:
                self._run("UPDATE reports SET status = ?, decision = ?, why = ?, "
                          "closed_at = ? WHERE id = ?",
                          [status, decision, why, iso(now), row["id"]])
                self._run("DELETE FROM submissions WHERE report_id = ?", [row["id"]])
            if then is not None:
                then(rows)
        return rows

    def prune(self, closed_before: str) -> int:
        """Delete the reports closed at `closed_before` (an ISO time) or earlier
        and give their space back to the disk; how many were deleted. Their decisions are
        in the policy lists' comments (accepted) or gone (rejected)."""
        with self._tx():
            gone: int = self._run("DELETE FROM reports WHERE status != 'open' AND "
                                  "closed_at <= ?", [closed_before]).rowcount
        self._compact()
        return gone

    def report(self, report_id: int) -> Row | None:
        with self._errors():
            cursor = self._run("SELECT * FROM reports WHERE id = ?", [report_id])
            row = cursor.fetchone()
            if row is None:
                return None
            names = [d[0] for d in cursor.description]
        return dict(zip(names, row))

    def counts(self) -> dict[str, int]:
        """Reports by status, and the bytes the store uses, for summaries."""
        with self._errors():
            found = dict(self._run("SELECT status, count(*) FROM reports GROUP BY status")
                         .fetchall())
            return {**{s: found.get(s, 0) for s in STATUSES}, "bytes": self._size()}


class ReportStore(BaseReportStore):
    """One report file (SQLite), opened (and created, with `create`) with its schema
    checked and migrated."""

    _not_ours = ("is a SQLite file but not a kelime report store (a crawl cache?): give "
                 "--reports (KELIME_REPORTS) a file of its own")

    def __init__(self, path: str | Path, *, create: bool = False,
                 limits: ReportLimits | None = ReportLimits(), timeout: float = BUSY_TIMEOUT,
                 shared: bool = False):
        """`limits` None: no size fence and no rate limit (a maintainer's tools). `shared`:
        the connection may be used from other threads, one at a time (the caller holds a
        lock), as the service does."""
        self.path, self.limits, self.timeout = Path(path), limits, timeout
        self.where = str(self.path)
        if self.path.is_dir():  # else SQLite's "unable to open", read as permissions
            raise ReportError(f"the report store {self.path} is a folder: give the path of a "
                              f"file in it, e.g. {self.path / 'reports.sqlite'} (--reports, "
                              "KELIME_REPORTS)")
        if not create and not self.path.exists():
            raise ReportError(f"no report store at {self.path}: the server creates it when "
                              "started with --reports FILE (KELIME_REPORTS); pass that FILE")
        if create and not self.path.parent.is_dir():
            raise ReportError(f"the folder of the report store {self.path} does not exist: "
                              "create it, or give --reports (KELIME_REPORTS) another path")
        try:
            self.db = connect(self.path, timeout=timeout, autocommit=True, threads=shared)
        except sqlite3.Error as e:
            raise REPORTS.error_for(self.path, e, timeout) from None
        conn = self.db.conn
        try:
            with self._errors():
                # A rollback journal: what is committed is in this one file (see above).
                set_journal(self.db, "delete", timeout)
                conn.execute("PRAGMA foreign_keys=ON")
                self._page_size: int = conn.execute("PRAGMA page_size").fetchone()[0]
                if not self.db.table_names() and not create:
                    raise ReportError(f"{self.path} is an empty file, not a kelime report "
                                      "store")
            self._open(create)
            with self._errors():
                if limits is not None:
                    # The hard fence under the polite check in `submit`: SQLite itself
                    # refuses to grow the file past the limit (SQLITE_FULL), whatever writes.
                    pages = max(limits.store_bytes // self._page_size, 1) + SLACK_PAGES
                    conn.execute(f"PRAGMA max_page_count={int(pages)}")
                self._inode = os.stat(self.path).st_ino
        except BaseException:
            conn.close()
            raise

    def _run(self, sql: str, args: Any = ()) -> sqlite3.Cursor:
        return self.db.conn.execute(sql, args)

    def _tables(self) -> set[str]:
        return set(self.db.table_names())

    def _first_migration(self) -> None:
        _sqlite_v1(self.db)
        self.db.table("meta").create({"key": str, "value": str}, pk="key")

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.ProgrammingError:
            raise
        except sqlite3.DatabaseError as e:
            if (code(e) == FULL and self.limits is not None
                    and self._size() >= self.limits.store_bytes - SLACK_PAGES * self._page_size):
                raise self._full(self.limits.store_bytes) from None
            raise REPORTS.error_for(self.path, e, busy_timeout(self.db)) from None

    @contextmanager
    def _tx(self, wait: float | None = None) -> Iterator[None]:
        """One write transaction that takes the write lock first (BEGIN IMMEDIATE), so
        that the rate check and the insert it allows are one step for every worker.
        `wait`: seconds to wait for another process's write instead of `timeout`."""
        conn = self.db.conn
        if wait is not None:
            conn.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
        try:
            with self._errors(), immediate(self.db):
                yield
        finally:
            if wait is not None:
                conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")

    def _compact(self) -> None:
        with self._errors():
            self.db.conn.execute("VACUUM")

    def close(self) -> None:
        self.db.conn.close()

    def moved(self) -> bool:
        """Whether the path no longer names the file this store has open (moved aside,
        replaced, deleted): a long-lived store must then be opened again, or its writes
        would go to a file nobody reads."""
        try:
            return os.stat(self.path).st_ino != self._inode
        except OSError:
            return True

    def _size(self) -> int:
        """The bytes in use: the file's pages but those free for reuse."""
        used = self.db.execute("SELECT (SELECT page_count FROM pragma_page_count()) - "
                               "(SELECT freelist_count FROM pragma_freelist_count())")
        pages: int = used.fetchone()[0]
        return pages * self._page_size
