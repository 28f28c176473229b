"""The TDK crawl cache: one SQLite file holding every reply and every entry TDK sent.

Core storage (no Scrapy, no httpx): the crawler and `kelime define` write through the
`save_*` functions, each call one transaction; the build reads `iter_entries`.

Tables (schema via sqlite-utils `Migrations`, set ``kelime.cache``; WAL on):

- ``replies``   one row per query (Turkish-lowercased word as sent): url, HTTP status,
                fetched_at (UTC ISO), outcome ``ok|not_found|failed``, the body as
                received with its sha256, the last error, and attempts (failures so far).
- ``entries``   one row per TDK entry, keyed by ``madde_id`` (homonyms and case or
                circumflex variants are separate entries); ``raw`` is the entry's JSON
                exactly as parsed, ``headword`` its ``normalize``d ``madde``.
- ``senses``, ``sense_tags``, ``tags``, ``examples``: the entry's senses flattened, for SQL.
- ``words``     the enumeration queue: word (= query) PK, where it came from, when.

Worked example, three words: after crawling ``adet``, ``âdet`` and ``massa``, ``replies``
has three rows (ok, ok, not_found), ``entries`` two (``âdet`` and ``adet``: both queries
return both) and ``words`` three.
"""

from __future__ import annotations

import hashlib
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterable, Iterator

import orjson
import sqlite_utils
from sqlite_utils.migrations import Migrations

from .normalize import normalize

MIGRATIONS = Migrations("kelime.cache")
OUTCOMES = ("ok", "not_found", "failed")


class CacheError(Exception):
    """The cache file is missing, not SQLite, corrupt, or not a kelime cache."""


@MIGRATIONS()
def m001_initial(db: sqlite_utils.Database) -> None:
    db["replies"].create({"query": str, "url": str, "status": int, "fetched_at": str,
                          "outcome": str, "body": str, "sha256": str, "error": str,
                          "attempts": int}, pk="query", not_null={"outcome"})
    db["entries"].create({"madde_id": int, "madde": str, "headword": str, "ozel_mi": str,
                          "cesit": str, "kelime_no": str, "query": str, "raw": str},
                         pk="madde_id", not_null={"raw"})
    db["entries"].create_index(["headword"])
    db["entries"].create_index(["query"])
    db["senses"].create({"anlam_id": int, "madde_id": int, "anlam_sira": int, "anlam": str,
                         "fiil": str}, pk="anlam_id", foreign_keys=[("madde_id", "entries")])
    db["senses"].create_index(["madde_id"])
    db["tags"].create({"ozellik_id": int, "tur": str, "tam_adi": str, "kisa_adi": str},
                      pk="ozellik_id")
    db["sense_tags"].create({"anlam_id": int, "ozellik_id": int},
                            pk=("anlam_id", "ozellik_id"),
                            foreign_keys=[("anlam_id", "senses"), ("ozellik_id", "tags")])
    db["examples"].create({"ornek_id": int, "anlam_id": int, "ornek_sira": int, "ornek": str,
                           "yazar": str}, pk="ornek_id", foreign_keys=[("anlam_id", "senses")])
    db["examples"].create_index(["anlam_id"])
    db["words"].create({"word": str, "source": str, "added_at": str}, pk="word")


# --- opening -------------------------------------------------------------------------------

def open_cache(path: str | Path, create: bool = False) -> sqlite_utils.Database:
    """Open (or with `create`, create) a cache; raise CacheError with a fix when it is unusable."""
    path = Path(path)
    if path.is_dir():
        raise CacheError(f"cache {path} is a folder; give the path of a .sqlite file")
    if not create and not path.exists():
        raise CacheError(f"cache {path} does not exist: run `kelime crawl --cache {path}` "
                         "first (or check --cache / KELIME_CACHE)")
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        db = sqlite_utils.Database(path)
        _check_ours(db, path, create)
        MIGRATIONS.apply(db)
        db.enable_wal()
        db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable against crashes, fast commits
        db.execute("PRAGMA busy_timeout=5000")
    except sqlite3.DatabaseError as e:
        raise CacheError(_explain(path, e)) from None
    return db


def _check_ours(db: sqlite_utils.Database, path: Path, create: bool) -> None:
    tables = set(db.table_names())  # raises DatabaseError when the file is not SQLite
    if not tables and create:
        return
    mine = {m.name for m in MIGRATIONS.applied(db)}
    if not mine:
        what = f"tables: {', '.join(sorted(tables))}" if tables else "it is empty"
        raise CacheError(f"{path} is an SQLite file but not a kelime cache ({what}); "
                         "pass the cache written by `kelime crawl`, or a new path")
    unknown = mine - {m.name for m in MIGRATIONS._migrations}
    if unknown:
        raise CacheError(f"cache {path} was written by a newer kelime (schema "
                         f"{', '.join(sorted(unknown))}); upgrade kelime to read it")


def _explain(path: Path, e: sqlite3.DatabaseError) -> str:
    text = str(e)
    if "not a database" in text or "file is encrypted" in text:
        return f"{path} is not an SQLite database (is it the right file?)"
    if "malformed" in text or "corrupt" in text:
        return (f"cache {path} is corrupt ({text}); move it aside and recrawl, or try "
                f"`sqlite3 {path} .recover`")
    if "readonly" in text or "unable to open" in text:
        return f"cannot write cache {path} ({text}); check the folder's permissions"
    return f"cache {path}: {text}"


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# --- writing -------------------------------------------------------------------------------

def save_words(db: sqlite_utils.Database, words: Iterable[str], source: str) -> int:
    """Queue words (queries) for fetching; already queued ones keep their source. Returns new."""
    rows = [{"word": w, "source": source, "added_at": now_iso()} for w in dict.fromkeys(words)]
    before = db["words"].count
    with db.atomic():
        db["words"].insert_all(rows, pk="word", ignore=True)
    return db["words"].count - before


def save_reply(db: sqlite_utils.Database, reply: dict, entries: list[dict] = ()) -> None:
    """Store one classified reply and its entries in one transaction.

    `reply` has query, url, status, outcome, body (str|None), error, attempts and
    optionally fetched_at. A failure never replaces an earlier good reply: it only
    records the error and counts the attempt, so nothing fetched is ever lost.
    """
    row = {k: reply.get(k) for k in ("query", "url", "status", "outcome", "body", "error",
                                     "attempts")}
    row["fetched_at"] = reply.get("fetched_at") or now_iso()
    row["sha256"] = hashlib.sha256(row["body"].encode()).hexdigest() if row["body"] else None
    with db.atomic():
        old = next(db["replies"].rows_where("query = ?", [row["query"]], limit=1), None)
        if row["outcome"] == "failed" and old and old["outcome"] != "failed":
            db["replies"].update(row["query"], {"error": row["error"],
                                                "attempts": (old["attempts"] or 0) + 1})
            return
        if row["outcome"] == "failed":
            row["attempts"] = (old["attempts"] if old else 0) + (row["attempts"] or 1)
        db["replies"].upsert(row, pk="query")
        if row["outcome"] != "failed":
            _drop_stale(db, row["query"], {int(e["madde_id"]) for e in entries})
            save_entries(db, entries, row["query"])


def _drop_stale(db: sqlite_utils.Database, query: str, keep: set[int]) -> None:
    """Entries this query delivered last time but no longer does (TDK removed them)."""
    for r in db.query("SELECT madde_id FROM entries WHERE query = ?", [query]):
        if r["madde_id"] not in keep:
            _delete_entry(db, r["madde_id"])
            db["entries"].delete(r["madde_id"])


def save_entries(db: sqlite_utils.Database, entries: Iterable[dict], query: str | None) -> None:
    """Upsert raw TDK entries (deduplicated by madde_id) and their senses, tags, examples."""
    with db.atomic():
        for entry in entries:
            madde_id = int(entry["madde_id"])
            _delete_entry(db, madde_id)
            db["entries"].upsert({
                "madde_id": madde_id, "madde": entry.get("madde"),
                "headword": normalize(entry.get("madde") or ""),
                "ozel_mi": entry.get("ozel_mi"), "cesit": entry.get("cesit"),
                "kelime_no": entry.get("kelime_no"), "query": query,
                "raw": orjson.dumps(entry).decode()}, pk="madde_id")
            _save_senses(db, madde_id, entry.get("anlamlarListe") or [])


def _save_senses(db: sqlite_utils.Database, madde_id: int, senses: list[dict]) -> None:
    rows, tags, links, examples = [], {}, [], []
    for s in senses:
        if not str(s.get("anlam_id") or "").isdigit():
            continue  # kept in raw; nothing to key the row on
        anlam_id = int(s["anlam_id"])
        rows.append({"anlam_id": anlam_id, "madde_id": madde_id,
                     "anlam_sira": _int(s.get("anlam_sira")), "anlam": s.get("anlam"),
                     "fiil": s.get("fiil")})
        for t in s.get("ozelliklerListe") or []:
            if str(t.get("ozellik_id") or "").isdigit():
                tags[int(t["ozellik_id"])] = {"ozellik_id": int(t["ozellik_id"]),
                                              "tur": t.get("tur"), "tam_adi": t.get("tam_adi"),
                                              "kisa_adi": t.get("kisa_adi")}
                links.append({"anlam_id": anlam_id, "ozellik_id": int(t["ozellik_id"])})
        for x in s.get("orneklerListe") or []:
            if str(x.get("ornek_id") or "").isdigit():
                authors = ", ".join((a.get("tam_adi") or "").strip() for a in x.get("yazar") or [])
                examples.append({"ornek_id": int(x["ornek_id"]), "anlam_id": anlam_id,
                                 "ornek_sira": _int(x.get("ornek_sira")), "ornek": x.get("ornek"),
                                 "yazar": authors or None})
    db["senses"].upsert_all(rows, pk="anlam_id")
    db["tags"].upsert_all(tags.values(), pk="ozellik_id")
    db["sense_tags"].insert_all(links, pk=("anlam_id", "ozellik_id"), ignore=True)
    db["examples"].upsert_all(examples, pk="ornek_id")


def _delete_entry(db: sqlite_utils.Database, madde_id: int) -> None:
    """Remove an entry's senses, sense tags and examples (before re-saving or dropping it)."""
    inner = "SELECT anlam_id FROM senses WHERE madde_id = ?"
    db.execute(f"DELETE FROM examples WHERE anlam_id IN ({inner})", [madde_id])
    db.execute(f"DELETE FROM sense_tags WHERE anlam_id IN ({inner})", [madde_id])
    db.execute("DELETE FROM senses WHERE madde_id = ?", [madde_id])


def _int(value) -> int | None:
    return int(value) if str(value or "").lstrip("-").isdigit() else None


# --- reading -------------------------------------------------------------------------------

def iter_entries(db: sqlite_utils.Database) -> Iterator[dict]:
    """Every cached entry as TDK sent it (the parsed JSON object), ordered by madde_id."""
    for (raw,) in db.execute("SELECT raw FROM entries ORDER BY madde_id"):
        yield orjson.loads(raw)


def entries_for_word(db: sqlite_utils.Database, normalized_word: str) -> list[dict]:
    """Raw entries whose normalised headword is `normalized_word` (âdet and adet for adet)."""
    rows = db.execute("SELECT raw FROM entries WHERE headword = ? ORDER BY madde_id",
                      [normalized_word])
    return [orjson.loads(raw) for (raw,) in rows]


def get_reply(db: sqlite_utils.Database, query: str) -> dict | None:
    """The cached reply row for a query, or None."""
    return next(db["replies"].rows_where("query = ?", [query], limit=1), None)


def _cutoff(max_age_days: float | None, now: datetime | None) -> str:
    if max_age_days is None:
        return ""  # every good reply counts as fresh
    now = now or datetime.now(timezone.utc)
    return (now - timedelta(days=max_age_days)).isoformat(timespec="seconds")


def fresh_queries(db: sqlite_utils.Database, max_age_days: float | None = None,
                  now: datetime | None = None) -> set[str]:
    """Queries with a good reply (ok or not_found) fetched within `max_age_days` (None: ever)."""
    rows = db.execute("SELECT query FROM replies WHERE outcome != 'failed' AND fetched_at > ?",
                      [_cutoff(max_age_days, now)])
    return {q for (q,) in rows}


def due_words(db: sqlite_utils.Database, max_age_days: float | None = None,
              now: datetime | None = None) -> list[str]:
    """Queued words without a fresh good reply, in the order they were queued."""
    rows = db.execute(
        "SELECT w.word FROM words w LEFT JOIN replies r ON r.query = w.word "
        "WHERE r.query IS NULL OR r.outcome = 'failed' OR r.fetched_at <= ? ORDER BY w.rowid",
        [_cutoff(max_age_days, now)])
    return [w for (w,) in rows]


def cache_stats(db: sqlite_utils.Database) -> dict:
    """Counts by outcome, entries, words queued/done/pending, oldest and newest fetch."""
    outcomes = dict.fromkeys(OUTCOMES, 0)
    outcomes.update(dict(db.execute("SELECT outcome, count(*) FROM replies GROUP BY outcome")))
    oldest, newest = db.execute("SELECT min(fetched_at), max(fetched_at) FROM replies "
                                "WHERE outcome != 'failed'").fetchone()
    queued = db["words"].count
    done = db.execute("SELECT count(*) FROM words w JOIN replies r ON r.query = w.word "
                      "WHERE r.outcome != 'failed'").fetchone()[0]
    return {"replies": outcomes, "entries": db["entries"].count,
            "words": {"queued": queued, "done": done, "pending": queued - done},
            "oldest_fetch": oldest, "newest_fetch": newest}
