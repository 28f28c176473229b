"""Turning a validate request (JSON body or query string) into words, with clear refusals.

Pure functions over bytes: no HTTP here, so every refusal is tested without a server.

    >>> from kelime.service.settings import Settings
    >>> parse_body(b'{"words": ["kitap", "ev"], "game": "kelimatik"}', Settings())
    Ask(words=['kitap', 'ev'], lexicon=None, game='kelimatik', suggest=False)
    >>> parse_query(b"word=kitap&word=%C4%B0stanbul", Settings()).words
    ['kitap', 'İstanbul']
"""

from __future__ import annotations

from urllib.parse import unquote_plus, unquote_to_bytes

from kelime.errors import EXCERPT, excerpt

from .errors import Invalid, TooLarge
from .models import POST_IT, SPLIT, Ask, check_name, decode, json_type
from .settings import Settings

__all__ = ["Ask", "json_type", "parse_body", "parse_query"]

QUERY_FIELDS = ("word", "lexicon", "game")


def parse_body(body: bytes, limits: Settings) -> Ask:
    """The question in a POST /v1/validate body (`models.Ask`)."""
    return decode(Ask, body, limits)


def name_value(key: str, value: str, default: str = "left out") -> str:
    """A `lexicon` or `game` name as sent, refused when empty (`models.check_name`)."""
    check_name(key, value, default)
    return value


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
    ask = Ask(words, names.get("lexicon"), names.get("game"))
    ask.check(limits, most, advice)
    return ask


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
