"""Turning a validate request (JSON body or query string) into words, with clear refusals.

Pure functions over bytes: no HTTP here, so every refusal is tested without a server.

    >>> from kelime.service.settings import Settings
    >>> parse_body(b'{"words": ["kitap", "ev"], "game": "kelimatik"}', Settings())
    Ask(words=['kitap', 'ev'], lexicon=None, game='kelimatik', suggest=False)
    >>> parse_query(b"word=kitap&word=%C4%B0stanbul", Settings()).words
    ['kitap', 'İstanbul']
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote_plus, unquote_to_bytes

import orjson

from kelime.errors import EXCERPT, excerpt

from .errors import Invalid, TooLarge
from .settings import Settings

FIELDS = ("words", "lexicon", "game", "suggest")
QUERY_FIELDS = ("word", "lexicon", "game")
EXAMPLE = '{"words": ["kitap", "ev"]}'
SPLIT = "split the list into several requests"
POST_IT = "use POST /v1/validate for big batches"


@dataclass(frozen=True, slots=True)
class Ask:
    """One validation question: the words as sent, and the optional lexicon and game names."""

    words: list[str]
    lexicon: str | None = None
    game: str | None = None
    suggest: bool = False    # POST only: each invalid result also lists `suggestions`


_JSON_TYPES: dict[type, str] = {str: "string", list: "array", dict: "object"}


def json_type(value) -> str:
    """The JSON name of a parsed value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return _JSON_TYPES.get(type(value), type(value).__name__)


def a_json(value) -> str:
    """"a string", "an array", "null": the type with its article, for messages."""
    name = json_type(value)
    return name if name == "null" else ("an " if name[0] in "aeiou" else "a ") + name


def parse_body(body: bytes, limits: Settings) -> Ask:
    """The question in a POST /v1/validate body."""
    data = load_json(body)
    if type(data) is not dict:
        raise Invalid("invalid_request", f"the body must be a JSON object like {EXAMPLE}, "
                      f"not {a_json(data)}")
    refuse_unknown(data, FIELDS)
    if "words" not in data:
        raise Invalid("invalid_request", f"the body has no 'words': send {EXAMPLE}")
    words = data["words"]
    if type(words) is not list:
        raise Invalid("invalid_request", f"'words' must be an array of strings, not "
                      f"{a_json(words)}: send {EXAMPLE}")
    suggest = data.get("suggest", False)
    if type(suggest) is not bool:
        raise Invalid("invalid_request", f"'suggest' must be true or false, not "
                      f"{a_json(suggest)}", {"field": "suggest", "type": json_type(suggest)})
    if suggest and type(words) is list and len(words) > limits.max_suggest_words:
        raise TooLarge("too_many_words", f"{len(words):,} words with \"suggest\": true; the "
                       f"limit is {limits.max_suggest_words:,} (each invalid word is searched "
                       "for what it was meant to be): split the list, or leave suggest out",
                       {"count": len(words), "limit": limits.max_suggest_words})
    return Ask(check_words(words, limits), name_field(data, "lexicon"), name_field(data, "game"),
               suggest)


def refuse_unknown(data: dict, fields: tuple[str, ...]) -> None:
    """A 422 naming (the first few, cut short) fields of `data` that are not `fields`."""
    unknown = [key for key in data if key not in fields]
    if unknown:
        shown = ", ".join(map(excerpt, unknown[:5])) + (" …" if len(unknown) > 5 else "")
        raise Invalid("invalid_request", f"unknown field(s) {shown}; the fields are: "
                      f"{', '.join(fields)}", {"unknown": [k[:EXCERPT] for k in unknown[:20]],
                                                "count": len(unknown)})


def load_json(body: bytes, example: str = EXAMPLE):
    """Parsed JSON; a 422 that says whether the bytes or the syntax are wrong."""
    if body.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark: RFC 8259 lets us skip it
        body = body[3:]
    if not body.strip():
        raise Invalid("invalid_json",
                      f"the request body is empty: send a JSON object like {example}")
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as e:
        if "UTF-8" in str(e):
            raise not_utf8(body) from None
        raise Invalid("invalid_json", f"the body is not valid JSON ({e}): send a JSON object "
                      f"like {example}") from None


def not_utf8(data: bytes, what: str = "the request body") -> Invalid:
    try:
        data.decode("utf-8")
        where = ""
    except UnicodeDecodeError as e:
        where = f" (byte 0x{data[e.start]:02x} at offset {e.start})"
    return Invalid("invalid_encoding", f"{what} is not valid UTF-8{where}: send UTF-8 text")


def name_field(data: dict, key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return value
    if type(value) is str:
        return name_value(key, value, "null")
    raise Invalid("invalid_request", f"'{key}' must be a string (a {key} name) or null, "
                  f"not {a_json(value)}", {"field": key, "type": json_type(value)})


def name_value(key: str, value: str, default: str = "left out") -> str:
    """A `lexicon` or `game` name as sent; an empty one is refused rather than read as the
    default (the schema lists the names, and "" is none of them)."""
    if value:
        return value
    raise Invalid("invalid_request", f"'{key}' is empty: name a {key}, or send it {default} "
                  f"for the default", {"field": key})


def check_words(words: list, limits: Settings, most: int | None = None,
                advice: str = SPLIT) -> list[str]:
    """`words` itself when it is 1..most (default max_words) strings of at most
    max_word_chars each."""
    if not words:
        raise Invalid("invalid_request",
                      f"'words' is empty: send at least one word, like {EXAMPLE}")
    most = limits.max_words if most is None else most
    if len(words) > most:
        raise TooLarge("too_many_words", f"{len(words):,} words in one request; the limit is "
                       f"{most:,}: {advice}", {"count": len(words), "limit": most})
    longest = limits.max_word_chars
    try:
        "".join(words)  # a C loop that refuses anything but strings (JSON has no str subclass)
    except TypeError:
        pass
    else:
        if max(map(len, words)) <= longest:  # the usual case, checked in C: 27 µs, not 47
            return words
    for i, w in enumerate(words):
        if type(w) is not str:
            raise Invalid("invalid_request", f"words[{i}] is {a_json(w)}, not a string: "
                          "every word must be a JSON string", {"index": i, "type": json_type(w)})
        if len(w) > longest:
            raise TooLarge("word_too_long", f"words[{i}] has {len(w)} characters; the limit is "
                           f"{longest}", {"index": i, "length": len(w), "limit": longest})
    raise AssertionError("unreachable")  # pragma: no cover


def check_word(word: str, limits: Settings) -> str:
    """One word (GET /v1/words/{word}) within the length limit."""
    if len(word) > limits.max_word_chars:
        raise TooLarge("word_too_long", f"the word has {len(word)} characters; the limit is "
                       f"{limits.max_word_chars}",
                       {"length": len(word), "limit": limits.max_word_chars})
    return word


def check_raw_path(raw_path: bytes | None) -> None:
    """A 422 when the path, percent-decoded, is not UTF-8: the server decodes it with U+FFFD
    for each bad byte, and a verdict on "\ufffd" would answer a question nobody asked."""
    if not raw_path or b"%" not in raw_path:
        return
    data = unquote_to_bytes(raw_path)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Invalid("invalid_encoding", f"the path is not valid UTF-8 once percent-decoded "
                      f"(byte 0x{data[e.start]:02x}): encode the word as UTF-8 (%C4%B0 for İ)"
                      ) from None


def get_limit(limits: Settings) -> tuple[int, str]:
    """GET's word limit, and what to do over it (POST, when it takes more)."""
    if limits.max_get_words < limits.max_words:
        return limits.max_get_words, f"{POST_IT} (up to {limits.max_words:,} words)"
    return limits.max_words, SPLIT


def parse_query(query: bytes, limits: Settings) -> Ask:
    """The question in GET /v1/validate?word=a&word=b[&lexicon=..][&game=..]; GET has its own
    limits (max_get_words, max_query_bytes), under the HTTP server's own URL limit."""
    if len(query) > limits.max_query_bytes:
        raise TooLarge("query_too_large", f"the query string has {len(query):,} bytes; the "
                       f"limit for GET is {limits.max_query_bytes:,}: {POST_IT}",
                       {"size": len(query), "limit": limits.max_query_bytes})
    most, advice = get_limit(limits)
    pairs = query_pairs(query, most + len(QUERY_FIELDS), advice)
    words, names = [], {}
    for key, value in pairs:
        if key == "word":
            words.append(value)
        elif key in ("lexicon", "game") and key not in names:
            names[key] = name_value(key, value)
        else:
            what = "repeated" if key in names else "unknown"
            raise Invalid("invalid_request", f"{what} query parameter {excerpt(key)}; the "
                          "parameters are word (repeat it), lexicon and game",
                          {what: key[:EXCERPT]})
    if not words:
        raise Invalid("invalid_request", "no word to check: ask /v1/validate?word=kitap&word=ev")
    return Ask(check_words(words, limits, most, advice), names.get("lexicon"), names.get("game"))


def query_pairs(query: bytes, max_fields: int, advice: str = SPLIT,
                words: bool = True) -> list[tuple[str, str]]:
    """Form-decoded (key, value) pairs, like parse_qsl(keep_blank_values=True) but strict UTF-8.
    Empty fields (``a&&b``) are not parameters and are not counted; `words`: the limit is
    one of words (GET /v1/validate), else of parameters."""
    count = query.count(b"&") + 1
    if count > max_fields:  # the cheap count first; empty fields only when it is over
        count = sum(1 for field in query.split(b"&") if field)
    if count > max_fields:
        if not words:
            raise TooLarge("too_many_parameters", f"{count:,} query parameters; this route "
                           f"takes at most {max_fields}", {"count": count, "limit": max_fields})
        limit = max_fields - len(QUERY_FIELDS)
        raise TooLarge("too_many_words", f"{count:,} query parameters; the limit is {limit:,} "
                       f"words: {advice}", {"count": count, "limit": limit})
    try:
        return [(_unquote(key), _unquote(value)) for key, _, value in
                (field.partition("=") for field in query.decode("utf-8").split("&") if field)]
    except UnicodeDecodeError:
        raise Invalid("invalid_encoding", "the query string is not valid UTF-8 once "
                      "percent-decoded: encode words as UTF-8 (%C4%B0 for İ)") from None


def _unquote(text: str) -> str:
    if "%" in text or "+" in text:
        return unquote_plus(text, encoding="utf-8", errors="strict")
    return text



def refuse_query(scope) -> None:
    """For the routes that read no query: `POST /v1/validate?game=kelimatik` was answered for
    the default game, silently. A 422 names the parameter and where it belongs; costs
    nothing without a query string. Called once a route matched (so a wrong method is
    still a 405)."""
    query = scope.get("query_string")
    if not query:
        return
    pairs = query_pairs(query, 1000, words=False)
    if pairs:  # not only empty fields (`?&&`)
        key = pairs[0][0]
        where = ("in the JSON body" if scope["method"] == "POST"
                 else "nowhere: this route takes no query parameters")
        raise Invalid("invalid_request", f"unknown query parameter {excerpt(key)} on "
                      f"{scope['method'][:10]} {scope['path'][:80]}; it belongs {where}",
                      {"unknown": key[:EXCERPT]})
