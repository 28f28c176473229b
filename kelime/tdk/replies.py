"""What a TDK `/gts?ara=` reply means, judged by its BODY (TDK sends JSON as text/html).

Pure functions shared by the Scrapy crawl and `kelime define` (no network here):

    >>> classify(200, b'[{"madde_id":"1","madde":"kitap"}]').outcome
    'ok'
    >>> classify(200, '{"error":"Sonuç bulunamadı"}'.encode()).outcome
    'not_found'
    >>> c = classify(200, b'<!doctype html><html>...'); (c.outcome, c.kind, c.transient)
    ('failed', 'html', True)
    >>> classify(200, "çağlayan".encode("iso-8859-9")).kind
    'not_utf8'

Only a body that is UTF-8 JSON of the expected shape and types (`shape.problem`) is a good
reply. A UTF-8 byte order mark is allowed and skipped (RFC 8259 §8.1 lets a parser ignore
it; the text is still UTF-8). JSON is parsed with orjson, which refuses nesting deeper than
1,024 levels with an error instead of Python's RecursionError (a body of 200,000 ``[``).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import orjson

from ..normalize import turkish_lower
from .shape import problem

NOT_FOUND_TEXT = "Sonuç bulunamadı"
#: Statuses worth another try later (with backoff); everything else non-200 is final.
TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504, 520, 521, 522, 524})


@dataclass(frozen=True)
class Classified:
    """outcome ok|not_found|failed; kind names the failure; transient ones are retried;
    final ones are not asked again until they are old (asking again would only repeat)."""

    outcome: str
    kind: str = ""
    entries: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    transient: bool = False

    @property
    def final(self) -> bool:
        return self.kind in FINAL_KINDS


#: Failures in what the body IS (not in how it came): the same body would come again.
FINAL_KINDS = frozenset({"bad_shape", "too_deep"})
BOM = "\ufeff"


def query_for(word: str) -> str:
    """The query TDK gets for a word: NFC, trimmed, Turkish-lowercased (İ→i, I→ı)."""
    return turkish_lower(unicodedata.normalize("NFC", word).strip())


def gts_url(base_url: str, query: str) -> str:
    """`base/gts?ara=<query>` with the query URL-encoded (spaces, commas, quotes too)."""
    return f"{base_url.rstrip('/')}/gts?ara={quote(query, safe='')}"


def classify(status: int, body: bytes) -> Classified:
    """Classify one reply by status and body; never trusts Content-Type."""
    if status == 403:
        return Classified("failed", "forbidden", error="HTTP 403 Forbidden: TDK refuses us "
                          "(User-Agent, rate or IP block)")
    if status != 200:
        return Classified("failed", f"http_{status}", error=f"HTTP {status}",
                          transient=status in TRANSIENT_STATUSES)
    try:
        text = body.decode("utf-8").removeprefix(BOM).strip()
    except UnicodeDecodeError as e:
        return Classified("failed", "not_utf8", error=f"the body is not UTF-8 (byte "
                          f"{body[e.start]:#04x} at offset {e.start}): TDK sends UTF-8 JSON, "
                          "so this is not TDK's answer or it was garbled on the way; not stored")
    if not text:
        return Classified("failed", "empty", error="empty body", transient=True)
    if text[0] == "<":
        return Classified("failed", "html", error="HTML instead of JSON (the site's SPA "
                          "page: the route moved or we are being refused)", transient=True)
    return parse_json(text)


def parse_json(text: str) -> Classified:
    """A JSON text's meaning; never raises (deep nesting, bad JSON: failed with a reason)."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as e:
        if "depth" in str(e) or "recursion" in str(e).lower():
            return _too_deep()
        return Classified("failed", "bad_json", error=f"broken JSON ({e})", transient=True)
    try:
        orjson.dumps(data)  # what the store will do with it: deeper than 255 levels fails
    except TypeError:
        return _too_deep()
    return _classify_json(data, text)


def _too_deep() -> Classified:
    return Classified("failed", "too_deep", error="JSON nested hundreds of levels deep: no "
                      "dictionary reply is; not stored")


def _classify_json(data: object, text: str) -> Classified:
    if isinstance(data, dict) and data.get("error") == NOT_FOUND_TEXT:
        return Classified("not_found")
    if data == []:  # the new API's way of saying "not found"
        return Classified("not_found")
    if isinstance(data, list) and data and all(isinstance(e, dict) and "madde_id" in e
                                               for e in data):
        wrong = problem(data)  # entries, but not in the shape kelime can store
        if wrong is None:
            return Classified("ok", entries=data)
        return Classified("failed", "bad_shape", error=f"entries in an unexpected shape "
                          f"({wrong[:200]}): not stored")
    return Classified("failed", "unexpected_json", transient=True,
                      error=f"unexpected JSON: {text[:120]}")
