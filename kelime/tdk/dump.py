"""Start from a dump, not from zero: a JSON-lines dump of TDK entries into the crawl cache.

The public 12th-edition dump (a mongoexport: one entry a line, TDK's own fields plus Mongo's
``_id``; 99,236 entries) holds what a full crawl would fetch in a day of polite requests.
`import_dump` stores it as the crawl would have: each entry under the query TDK answers it
for (`query_for` its headword), one reply per query marked with where it came from
(``url`` = ``dump:<file>``) and when (``fetched_at`` = the dump's date), so a build reads it
at once and a later crawl only refreshes what is older than its ``--max-age``.

The file is read twice, line by line: once for each query's line offsets, once for the
entries of each query in turn, so memory holds offsets, never the whole dump. A line that
is not an entry (bad JSON, no ``madde``, an id that is no number) is skipped and counted,
with the first few reasons kept for the summary: the lines after it show that the file
went on, and it costs that one entry. The LAST line is different: one that is not
complete JSON means the file was cut off (an interrupted download or copy: a third of
the dump imported as if whole), and everything after it is missing, so the import is
refused, naming the line and its byte offset.

A dump declares no count of its own (a mongoexport has no header, no trailer, no
sidecar), so a file cut off at a line's end is told by what the cache held before: an
import of fewer entries than `KEEP` of the last finished import's is refused unless
``accept_fewer`` (TDK's dictionary really shrank), and so is a file with more lines that
are not entries than `SKIP_SHARE` of its lines and `SKIP_MOST` (a damaged file: 2 of every
5 lines overwritten imported 120 of 200 entries, exit 0). Both counts are in `Imported`.

What is not JSON lines is refused before anything is stored, saying how to convert it: a
gzipped file, one JSON array, a pretty-printed dump (one entry over many lines: its nested
objects, read line by line, looked like entries: a proverb was stored as a headword). A
file with no entry at all is refused too. An import is resumable and visibly unfinished
until its last entry is stored: ``imports`` records it begun, then finished; a build
refuses a cache with an import that never finished (killed, a full disk).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import sqlite_utils

from ..errors import CacheError
from . import store
from .replies import query_for
from .shape import problem

BATCH = 500         # queries a transaction
GZIP = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"  # allowed before the first line, as in a /gts reply
KEEP = 0.99         # an import holding fewer entries than this share of the last one's is refused
SKIP_SHARE, SKIP_MOST = 0.01, 10  # more lines skipped than both refuses the import (damaged)


@dataclass
class Imported:
    entries: int = 0
    queries: int = 0
    skipped: int = 0
    problems: list[str] = field(default_factory=list)  # the first few, "line N: why"
    sha256: str = ""  # of the dump, read on the first pass: what was imported, exactly
    previous: dict[str, Any] | None = None  # the last finished import (file, entries, …)

    def skip(self, line: int, why: str) -> None:
        self.skipped += 1
        if len(self.problems) < 10:
            self.problems.append(f"line {line}: {why}")


def _entry(raw: bytes) -> tuple[dict[str, Any] | None, str]:
    """The entry a dump line holds (Mongo's `_id` dropped), or None and why not."""
    try:
        entry = orjson.loads(raw.removeprefix(BOM))
    except orjson.JSONDecodeError as e:
        return None, f"not JSON ({e})"
    if not isinstance(entry, dict):
        return None, "not a JSON object"
    entry.pop("_id", None)
    wrong = problem([entry])  # the shape a crawled reply must have, checked the same way
    if wrong is not None:
        return None, wrong.removeprefix("entry 1: ")
    if not entry["madde"].strip():
        return None, "madde: an empty headword"
    return entry, ""


def _reread(raw: bytes, path: Path) -> dict[str, Any]:
    """A line the first pass found to be an entry, read again (no second shape check)."""
    try:
        entry: dict[str, Any] = orjson.loads(raw.removeprefix(BOM))  # a dict the first time
        entry.pop("_id", None)
    except (orjson.JSONDecodeError, AttributeError):
        raise CacheError(f"the dump {path} changed while it was being imported: import it "
                         "again once it is written") from None
    return entry


def not_json_lines(path: Path, head: bytes) -> str | None:
    """Why a file beginning with `head` is no JSON-lines dump (and how to make one), or None."""
    convert = f"jq -c '.[]' {path} > {path.with_suffix('.jsonl').name}"
    if head.startswith(GZIP):
        return (f"{path} is gzip-compressed: unpack it first (`gunzip -k {path}`) and import "
                "the .json file")
    first, ended, _ = head.lstrip(b"\xef\xbb\xbf \t\r\n").partition(b"\n")
    first = first.strip()
    if first.startswith(b"["):
        return (f"{path} is one JSON array, not JSON lines (one entry a line): convert it "
                f"with `{convert}`")
    if first == b"{" or (ended and first.startswith(b"{") and not first.endswith(b"}")):
        return _pretty_printed(path)
    return None


def _pretty_printed(path: Path) -> str:
    return (f"{path} is pretty-printed (an entry spreads over several lines): JSON lines "
            f"has one entry a line; convert it with `jq -c . {path} > "
            f"{path.with_suffix('.jsonl').name}`")


def _indented(raw: bytes) -> bool:
    """A line of a pretty-printed file (indented JSON), not an entry of its own."""
    return raw[:1] in (b" ", b"\t") and raw.strip()[:1] in (b'"', b"{", b"[", b"}", b"]")


def _cut_off(path: Path, number: int, offset: int, why: str, count: int) -> CacheError:
    return CacheError(f"{path} is cut off: its last line (line {number:,}, from byte "
                      f"{offset:,}) ends without a newline and is not complete JSON "
                      f"({why.removeprefix('not JSON (').removesuffix(')')}); "
                      f"nothing imported ({count:,} entries before it). The download or copy "
                      "stopped early: fetch the dump again (compare its size or sha256 with "
                      "the source's) and import it again")


def _fewer(path: Path, entries: int, previous: dict[str, Any]) -> CacheError:
    held = previous["entries"]
    return CacheError(
        f"{path} holds {entries:,} entries, {entries / held:.1%} of the {held:,} the last "
        f"import into this cache held ({previous['file']}, finished "
        f"{previous['finished_at']}; at least {KEEP:.0%} expected): nothing imported. A dump "
        "cut off at a line's end looks like this: fetch it again and compare its size or "
        "sha256 with the source's. If TDK's dictionary really has fewer entries now, import "
        "it with --accept-fewer")


def last_import(db: sqlite_utils.Database) -> dict[str, Any] | None:
    """The last finished import into the cache (file, sha256, finished_at, entries), or None."""
    done = [i for i in store.imports(db) if i["finished_at"] and i["entries"]]
    return max(done, key=lambda i: i["finished_at"]) if done else None


def import_dump(db: sqlite_utils.Database, path: str | Path, fetched_at: str,
                progress: Callable[[int, int], None] | None = None, *,
                accept_fewer: bool = False) -> Imported:
    """Store every entry of the dump at `path` into the open cache `db` (see the module doc);
    `progress(queries done, queries)` after each batch. CacheError when the file is no
    JSON-lines dump, holds no entry, is cut off, or holds under `KEEP` of the last
    import's entries without `accept_fewer` (nothing stored then)."""
    path = Path(path)
    found, result, digest = defaultdict(list), Imported(), hashlib.sha256()
    try:
        with open(path, "rb") as f:
            wrong = not_json_lines(path, f.read(65536))
            if wrong:
                raise CacheError(wrong)
            f.seek(0)
            offset, number, count = 0, 0, 0
            for raw in f:
                number += 1
                digest.update(raw)
                if _indented(raw):
                    raise CacheError(_pretty_printed(path) + f" (line {number} is "
                                     "indented)")
                if raw.strip():
                    entry, why = _entry(raw)
                    if entry is None and not raw.endswith(b"\n") and why.startswith("not JSON"):
                        raise _cut_off(path, number, offset, why, count)
                    if entry is None:
                        result.skip(number, why)
                    else:
                        found[query_for(entry["madde"])].append((offset, len(raw)))
                        count += 1
                offset += len(raw)
            result.sha256 = digest.hexdigest()
            queries = list(found)
            if not queries:
                shown = "; ".join(result.problems[:3]) or "the file is empty"
                raise CacheError(f"{path} holds no TDK entry ({number:,} line(s): {shown}): "
                                 "nothing imported. A dump has one JSON entry a line, with "
                                 "at least madde_id and madde")
            if not accept_fewer and result.skipped > max(SKIP_MOST, SKIP_SHARE * number):
                raise CacheError(
                    f"{path}: {result.skipped:,} of its {number:,} lines are not entries "
                    f"(over {SKIP_SHARE:.0%}; first: {'; '.join(result.problems[:2])}): nothing "
                    f"imported ({count:,} entries). A damaged download or copy: fetch the dump "
                    "again and import it again; if those lines really hold no entry, import "
                    "with --accept-fewer")
            result.previous = last_import(db)
            if (result.previous is not None and not accept_fewer
                    and count < KEEP * result.previous["entries"]):
                raise _fewer(path, count, result.previous)
            source = f"dump:{path.name}"
            store.begin_import(db, result.sha256, path.name)
            for start in range(0, len(queries), BATCH):
                batch = queries[start:start + BATCH]
                with store.write_tx(db):
                    for query in batch:
                        entries = []
                        for at, size in found[query]:
                            f.seek(at)
                            entries.append(_reread(f.read(size), path))
                        body = orjson.dumps(entries).decode()
                        store.save_reply(db, {"query": query, "url": source, "status": 200,
                                              "fetched_at": fetched_at, "outcome": "ok",
                                              "body": body, "error": None, "attempts": 1},
                                         entries)
                        result.entries += len(entries)
                    store.save_words(db, batch, source)
                result.queries += len(batch)
                if progress is not None:
                    progress(result.queries, len(queries))
            store.finish_import(db, result.sha256, result.entries, result.queries)
    except OSError as e:
        raise CacheError(f"cannot read the dump {path}: {e.strerror or e}") from None
    return result

