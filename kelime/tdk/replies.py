"""What a TDK `/gts?ara=` reply means, judged by its BODY (TDK sends JSON as text/html).

Pure functions shared by the Scrapy crawl and `kelime define` (no network here):

    >>> classify(200, b'[{"madde_id":"1","madde":"kitap"}]', "kitap").outcome
    'ok'
    >>> classify(200, '{"error":"Sonuç bulunamadı"}'.encode(), "massa").outcome
    'not_found'
    >>> c = classify(200, b'<!doctype html><html>...', "kitap"); (c.outcome, c.kind, c.transient)
    ('failed', 'html', True)
    >>> classify(200, "çağlayan".encode("iso-8859-9"), "çağlayan").kind
    'not_utf8'

A reply is about the word asked (`off_word`): every entry's headword, normalised as the build
normalises it, is the query normalised (``Âdet`` and ``adet`` for ``adet``, ``İstanbul`` for
``istanbul``), written in characters TDK writes headwords in, and no more entries than a real
reply has. Anything else is a failure, final (the same body would come again), its reason
beginning with ``refused (<kind>):`` so that `kelime crawl status` can show it:

    >>> c = classify(200, b'[{"madde_id":"9","madde":"zehirkelime"}]', "okul"); c.kind, c.final
    ('wrong_word', True)
    >>> c = classify(200, b'[{"madde_id":"9","madde":"ok\\u200bul"}]', "okul")
    >>> c.kind, "U+200B ZERO WIDTH SPACE" in c.error
    ('odd_characters', True)

Only a body that is UTF-8 JSON of the expected shape and types (`shape.problem`) is a good
reply. A UTF-8 byte order mark is allowed and skipped (RFC 8259 §8.1 lets a parser ignore
it; the text is still UTF-8). JSON is parsed with orjson, which refuses nesting deeper than
1,024 levels with an error instead of Python's RecursionError (a body of 200,000 ``[``).
"""

from __future__ import annotations

import string
import unicodedata
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import orjson

from ..normalize import normalize, turkish_lower
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
#: Replies refused as not about the word asked (`off_word`, `redirected`) or not in TDK's
#: exact not-found shape: final too. Their error reads ``refused (<kind>): …``; `REFUSED` is
#: that prefix, for the store to find them.
REFUSED_KINDS = frozenset({"wrong_word", "odd_characters", "odd_case", "too_many_entries",
                           "odd_not_found"})
FINAL_KINDS = frozenset({"bad_shape", "too_deep"}) | REFUSED_KINDS
REFUSED = "refused ("
#: The most entries one reply may hold. The largest real reply holds 5: no normalised
#: headword has more than five entries among the 99,227 of TDK's autocomplete list (2026-01:
#: bar, bel, gen, sur, ya), and the samples hold at most 2 (adet: âdet, adet). Ten times that
#: leaves room for an edition with more homonyms; 1,920 invented entries in a 1.2 MB reply
#: took a 20-word build to 1,940 words.
MAX_ENTRIES = 50
#: Compatibility characters (changed by NFKC) that TDK's own headwords hold: the ellipsis of
#: `anasını sattığımın …`, `… süsü vermek` (3 of the 99,227 autocomplete rows). Any other is
#: refused: a full-width ``ｏｋｕｌ`` or a ligature looks like a word and is not one.
TDK_COMPATIBILITY = frozenset("\u2026")
#: Characters `odd_character` need not look up one by one (letters, U+0020, punctuation of
#: TDK's headwords): NFC and NFKC leave each alone, none is invisible.
_PLAIN = frozenset(string.ascii_letters + "çğıöşüÇĞİÖŞÜâîûÂÎÛ -'.,()!?/:;\"’") | TDK_COMPATIBILITY
BOM = "\ufeff"


def query_for(word: str) -> str:
    """The query TDK gets for a word: NFC, trimmed, Turkish-lowercased (İ→i, I→ı)."""
    return turkish_lower(unicodedata.normalize("NFC", word).strip())


def gts_url(base_url: str, query: str) -> str:
    """`base/gts?ara=<query>` with the query URL-encoded (spaces, commas, quotes too)."""
    return f"{base_url.rstrip('/')}/gts?ara={quote(query, safe='')}"


def redirected(url: str, target: str) -> Classified | None:
    """A redirect of `url` (``/gts?ara=okul``) to `target` that would change the word asked
    (``/gts?ara=kitap``), as the failure it is; None when the word stays (or `url` asks
    none). Not followed: the other word's reply would be stored under this one's query.

    >>> redirected("https://s/gts?ara=okul", "https://s/gts?ara=kitap").kind
    'wrong_word'
    >>> redirected("https://s/gts?ara=okul", "https://s/gts?ara=okul&v=2") is None
    True
    """
    asked, told = (parse_qs(urlsplit(u).query).get("ara") for u in (url, target))
    if not asked or not told or [normalize(w) for w in told] == [normalize(w) for w in asked]:
        return None
    return _refused("wrong_word", f"TDK redirected {_path(url)} to {_path(target)}, another "
                    f"word: not followed (its reply would be stored as the reply for {asked[0]!r})")


def _path(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


def classify(status: int, body: bytes, query: str) -> Classified:
    """Classify one reply to `/gts?ara=<query>` by status and body; never trusts Content-Type."""
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
    return parse_json(text, query)


def parse_json(text: str, query: str) -> Classified:
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
    return _classify_json(data, text, query)


def _too_deep() -> Classified:
    return Classified("failed", "too_deep", error="JSON nested hundreds of levels deep: no "
                      "dictionary reply is; not stored")


def _classify_json(data: object, text: str, query: str) -> Classified:
    if data == {"error": NOT_FOUND_TEXT} or data == []:  # [] is the new API's "not found"
        return Classified("not_found")
    if isinstance(data, dict) and data.get("error") == NOT_FOUND_TEXT:
        # Final, not transient: the same body would come at once again. It speaks of the word
        # in a shape kelime does not know: a question for the maintainer, not for a retry.
        return _refused("odd_not_found", f"a not-found reply with other fields "
                        f"({text[:120]}), where TDK's is exactly {{\"error\": "
                        f"\"{NOT_FOUND_TEXT}\"}}")
    if isinstance(data, list) and data and all(isinstance(e, dict) and "madde_id" in e
                                               for e in data):
        wrong = problem(data)  # entries, but not in the shape kelime can store
        if wrong is not None:
            return Classified("failed", "bad_shape", error=f"entries in an unexpected shape "
                              f"({wrong[:200]}): not stored")
        return off_word(query, data) or Classified("ok", entries=data)
    return Classified("failed", "unexpected_json", transient=True,
                      error=f"unexpected JSON: {text[:120]}")


def off_word(query: str, entries: list[dict[str, Any]]) -> Classified | None:
    """Why the reply `entries` to `query` is not about the word asked (a final failure), or
    None when it is: at most `MAX_ENTRIES`, each headword in characters TDK writes
    headwords in (`odd_character`), in TDK's case (`odd_case`), and normalised as the build
    normalises it (NFC, Turkish lower case, circumflex folded) equal to the query."""
    if len(entries) > MAX_ENTRIES:
        return _refused("too_many_entries", f"the reply for {query!r} lists {len(entries):,} "
                        f"entries, more than the {MAX_ENTRIES} any reply may (TDK's largest "
                        "holds 5 homonyms)")
    want = normalize(query)
    for n, entry in enumerate(entries, 1):
        madde = entry.get("madde") or ""
        where = f"the headword {madde!r} (entry {n} of {len(entries)} for {query!r})"
        if odd := odd_character(madde):
            return _refused("odd_characters", f"{where} holds {odd}, which no TDK headword "
                            "holds")
        if normalize(madde) != want:
            return _refused("wrong_word", f"the reply for {query!r} lists an entry for "
                            f"{madde!r} (entry {n} of {len(entries)}): a reply names only the "
                            "word asked, up to case and circumflex")
        if odd := odd_case(madde):
            return _refused("odd_case", f"{where} {odd}")
    return None


def _refused(kind: str, why: str) -> Classified:
    return Classified("failed", kind, error=f"{REFUSED}{kind}): {why}; not stored (kept: any "
                      "earlier good reply). It is not TDK's answer for this word, or TDK's "
                      "answers changed: check --base-url")


def odd_character(headword: str) -> str | None:
    """The first character no TDK headword holds, described (``U+200B ZERO WIDTH SPACE,
    invisible``), or None. Refused: a headword not in NFC (none of TDK's 99,227 is), a
    format, control or private-use character, a space other than U+0020, and a compatibility
    character (one NFKC changes: full-width letters) other than `TDK_COMPATIBILITY`."""
    if _PLAIN.issuperset(headword):
        return None
    if not unicodedata.is_normalized("NFC", headword):
        mark = next((ch for ch in headword if unicodedata.combining(ch)), headword[0])
        return f"{_named(mark)}, not composed (the headword is not in NFC)"
    for ch in headword:
        category = unicodedata.category(ch)
        if category[0] == "C" or (category[0] == "Z" and ch != " "):
            return f"{_named(ch)}, invisible or a control character"
        if ch not in TDK_COMPATIBILITY and unicodedata.normalize("NFKC", ch) != ch:
            plain = unicodedata.normalize("NFKC", ch)
            return f"{_named(ch)}, a compatibility character (NFKC: {plain!r})"
    return None


def odd_case(headword: str) -> str | None:
    """Why a one-word headword's capitals are not TDK's, or None. TDK capitalises the first
    letter of a proper name and of each part of a hyphenated one (``İstanbul``, ``Iğdır``,
    ``Ural-Altay``, the symbol ``Cm``); of the 99,227 rows of its autocomplete list, the only
    one-word headword with a capital after a part's first letter is the two-letter symbol
    ``pH``. Phrases keep TDK's abbreviations (``SAT komandosu``, ``HES kodu``) and never
    become game words, so only single words are checked."""
    word = headword.strip(" ")
    if " " in word or not any(len(part) > 2 and any(ch.isupper() for ch in part[1:])
                              for part in word.split("-")):
        return None
    return (f"has capitals after its first letter, as no one-word TDK headword has (TDK "
            f"capitalises a proper name's first letter: {word[0]}{turkish_lower(word[1:])})")


def _named(ch: str) -> str:
    return f"U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed')}"
