"""Turning an anagram or split request body into the core's question, with clear refusals.

Pure functions over bytes, like `parse`: the JSON must be an object of known fields with
the right types; what the values mean (a rack, a pattern, a limit) the core checks.

    >>> from kelime.service.settings import Settings
    >>> parse_anagram(b'{"rack": "kale?", "game": "kelimatik", "limit": 5}', Settings())
    AnagramAsk(rack='kale?', lexicon=None, game='kelimatik', options={'limit': 5})
    >>> parse_split(b'{"rack": "kalemkitap?"}', Settings()).rack
    'kalemkitap?'
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kelime.errors import excerpt
from kelime.normalize import WHITESPACE
from kelime.reports import KIND_MEANING, KINDS, note_problem

from .errors import Invalid, TooLarge
from .parse import a_json, json_type, load_json, name_field, refuse_unknown
from .settings import Settings

ANAGRAM_EXAMPLE = '{"rack": "kale?[lm]", "game": "kelimatik"}'
SPLIT_EXAMPLE = '{"rack": "kalemkitapsilg?"}'
#: Field → the JSON types it takes (the core checks the values).
OPTIONS = {"mode": (str,), "min_length": (int, type(None)), "max_length": (int, type(None)),
           "pattern": (str, type(None)), "exclude": (list, type(None)), "limit": (int, type(None)),
           "sort": (str,)}
ANAGRAM_FIELDS = ("rack", "lexicon", "game", *OPTIONS)
SPLIT_FIELDS = ("rack", "lexicon", "game")
_NAMES = {str: "a string", int: "a whole number", list: "an array of strings",
          type(None): "null"}


@dataclass(frozen=True, slots=True)
class AnagramAsk:
    """One anagram (or split) question as sent: the rack, names, and the core's options."""

    rack: str
    lexicon: str | None = None
    game: str | None = None
    options: dict = field(default_factory=dict)


def _object(body: bytes, fields: tuple[str, ...], example: str) -> dict:
    data = load_json(body, example)
    if type(data) is not dict:
        raise Invalid("invalid_request", f"the body must be a JSON object like {example}, "
                      f"not {a_json(data)}")
    refuse_unknown(data, fields)
    rack = data.get("rack")
    if type(rack) is not str:
        what = "has no 'rack'" if "rack" not in data else f"has 'rack' as {a_json(rack)}"
        raise Invalid("invalid_rack", f"the body {what}: send the tiles as a string, like "
                      f"{example}")
    return data


def _option(data: dict, key: str):
    value, kinds = data[key], OPTIONS[key]
    if type(value) in kinds and not isinstance(value, bool):
        return value
    if int in kinds and type(value) is float and value.is_integer():
        return int(value)  # JSON has numbers, not ints: 5.0 is 5 (JSON Schema's integer too)
    wanted = " or ".join(_NAMES[k] for k in kinds)
    raise Invalid("invalid_option", f"'{key}' must be {wanted}, not {a_json(value)}",
                  {"field": key, "type": json_type(value)})


def _exclude(words: list, limits: Settings) -> list:
    for i, w in enumerate(words[:limits.max_exclude_words]):
        if type(w) is not str:
            raise Invalid("invalid_option", f"exclude[{i}] is {a_json(w)}, not a string: "
                          "exclude lists words already played", {"index": i})
        if len(w) > limits.max_word_chars:
            raise TooLarge("word_too_long", f"exclude[{i}] has {len(w)} characters; the "
                           f"limit is {limits.max_word_chars}",
                           {"index": i, "length": len(w), "limit": limits.max_word_chars})
    return words  # the core counts them against max_exclude_words


def parse_anagram(body: bytes, limits: Settings) -> AnagramAsk:
    """The question in a POST /v1/anagram body."""
    data = _object(body, ANAGRAM_FIELDS, ANAGRAM_EXAMPLE)
    options = {key: _option(data, key) for key in OPTIONS if key in data}
    options = {key: value for key, value in options.items() if value is not None}
    if "exclude" in options:
        _exclude(options["exclude"], limits)
    return AnagramAsk(data["rack"], name_field(data, "lexicon"), name_field(data, "game"),
                      options)


def parse_split(body: bytes, limits: Settings) -> AnagramAsk:
    """The question in a POST /v1/split body."""
    data = _object(body, SPLIT_FIELDS, SPLIT_EXAMPLE)
    return AnagramAsk(data["rack"], name_field(data, "lexicon"), name_field(data, "game"))


REPORT_EXAMPLE = '{"word": "kitapçık", "kind": "missing", "game": "kelimelik"}'
REPORT_FIELDS = ("word", "kind", "game", "lexicon", "note")


@dataclass(frozen=True, slots=True)
class ReportAsk:
    """One player's report as sent: the word, what is wrong with its verdict, a note."""

    word: str
    kind: str
    lexicon: str | None = None
    game: str | None = None
    note: str | None = None


def parse_report(body: bytes, limits: Settings) -> ReportAsk:
    """The report in a POST /v1/reports body: a word (within max_word_chars), a kind, and
    an optional plain-text note (within max_note_chars, no control characters)."""
    data = load_json(body, REPORT_EXAMPLE)
    if type(data) is not dict:
        raise Invalid("invalid_request", f"the body must be a JSON object like "
                      f"{REPORT_EXAMPLE}, not {a_json(data)}")
    refuse_unknown(data, REPORT_FIELDS)
    word, kind, note = data.get("word"), data.get("kind"), data.get("note")
    if type(word) is not str or not word.strip(WHITESPACE):
        what = "no 'word'" if word is None else f"'word' as {a_json(word)}" \
            if type(word) is not str else "an empty 'word'"
        raise Invalid("invalid_request", f"the body has {what}: send the word reported, like "
                      f"{REPORT_EXAMPLE}", {"field": "word"})
    if len(word) > limits.max_word_chars:
        raise TooLarge("word_too_long", f"the word has {len(word)} characters; the limit is "
                       f"{limits.max_word_chars}", {"length": len(word),
                                                    "limit": limits.max_word_chars})
    if kind not in KINDS:
        raise Invalid("invalid_request", f"'kind' must be one of {', '.join(KINDS)} "
                      f"({'; '.join(f'{k}: {KIND_MEANING[k]}' for k in KINDS)}), not "
                      f"{excerpt(kind) if type(kind) is str else a_json(kind)}",
                      {"field": "kind", "allowed": list(KINDS)})
    if note is not None:
        if type(note) is not str:
            raise Invalid("invalid_request", f"'note' must be a string or null, not "
                          f"{a_json(note)}", {"field": "note", "type": json_type(note)})
        if len(note) > limits.max_note_chars:
            raise TooLarge("note_too_long", f"the note has {len(note):,} characters; the "
                           f"limit is {limits.max_note_chars:,}",
                           {"length": len(note), "limit": limits.max_note_chars})
        problem = note_problem(note)
        if problem:
            raise Invalid("invalid_request", f"the note cannot be stored as plain text: "
                          f"{problem}; send text only", {"field": "note"})
        note = note.strip() or None
    return ReportAsk(word, kind, name_field(data, "lexicon"), name_field(data, "game"), note)
