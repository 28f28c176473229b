"""The OpenAPI schema, exact: what a generated client needs to send only what is accepted.

FastAPI generates the schema of its own routes; `document` adds what it cannot know:

- the paths of the plain Starlette routes (validate, anagram, split), their bodies written
  here and their replies from the pydantic models of `schemas`;
- the error shape on every error status of every route;
- the limits, from the settings (`KELIME_MAX_WORDS=500` makes `maxItems` 500);
- the names a server has loaded (lexicons, games) as enums, and what each game and
  lexicon lets a rack hold: the rack and pattern syntax as regular expressions over the
  lexicon's letters (every character that normalises to one of them, upper case too),
  the tiles a hand may hold per game, two-letter tiles only in games that have them.

The schema is made again when a reload changes the lexicons (and their alphabets).

    >>> from kelime.normalize import TURKISH
    >>> "I" in typed_letters(TURKISH) and "â" in typed_letters(TURKISH)
    True
    >>> import re
    >>> bool(re.fullmatch(rack_pattern("kaleKALE", 4, pairs=False), "KaLe"))
    True
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from fastapi import FastAPI
from pydantic.json_schema import models_json_schema

from kelime.games import DEFAULT_GAME, GAMES, Game
from kelime.normalize import TURKISH, WHITESPACE, Alphabet, normalize

from .errors import ERROR_RESPONSES, ERROR_SCHEMA
from .models import AnagramAsk, Ask, Body, ReportAsk, SplitAsk, body_schema, merge
from .parse import get_limit
from .routes import anagram, reports, validate
from .schemas import PLAIN_ROUTE_MODELS
from .settings import Settings

REF = "#/components/schemas/{model}"
LAST_TYPED = 0xFFFF  # the last code point typed_letters asks about
SPLIT_GAME = "harfbank"


@lru_cache(maxsize=16)
def typed_letters(alphabet: Alphabet) -> str:
    """Every character a person may type for one letter of `alphabet`: the letters, their
    capitals (I for ı, İ for i), circumflexed vowels that fold; found by asking `normalize`
    of every code point of the Basic Multilingual Plane once, so the schema says exactly what
    the parser reads. Beyond U+FFFF no code point composes or lower-cases to a letter of
    these alphabets (tests/test_schema.py checks it against the whole code space); the
    whole space took 0.6–5 s on the first GET /openapi.json, the plane takes a 17th."""
    letters = alphabet.letter_set
    return "".join(ch for ch in map(chr, range(0x20, LAST_TYPED + 1))
                   if not "\ud800" <= ch <= "\udfff" and normalize(ch, alphabet) in letters)


def _class(chars: str) -> str:
    return "[" + "".join(re.escape(c) if c in "\\]^-[" else c for c in chars) + "]"


def _spaces() -> str:
    """Unicode White_Space, which normalisation trims from both ends."""
    return "[" + "".join(f"\\u{ord(c):04x}" for c in WHITESPACE) + "]*"


def rack_pattern(letters: str, tiles: int, pairs: bool) -> str:
    """1..tiles tiles: a letter, `?` a blank, `[lm]` a two-letter tile (when `pairs`),
    spaces around them allowed (they are trimmed)."""
    letter = _class(letters)
    unit = f"{letter}|\\?" + (f"|\\[{letter}{letter}\\]" if pairs else "")
    return f"^{_spaces()}(?:{unit}){{1,{tiles}}}{_spaces()}$"


def at_most(char: str, count: int) -> str:
    """A pattern: `char` at most `count` times."""
    c = re.escape(char)
    return f"^[^{c}]*(?:{c}[^{c}]*){{0,{count}}}$"


def board_pattern(letters: str) -> str:
    """A board slot: letters already there and at least one `.` square the rack fills."""
    square = _class(letters + ".")
    return f"^{_spaces()}{square}*\\.{square}*{_spaces()}$"


def _when(field: str, names: list[str], default: str, then: dict) -> dict:
    """`then` for a body whose `field` is one of `names` (absent or null: `default`)."""
    known = [*names, None] if default in names else list(names)
    condition: dict[str, Any] = {"properties": {field: {"enum": known}}}
    if default not in names:
        condition["required"] = [field]
    return {"if": condition, "then": then}


def _when_lexicon(names: list[str], games: dict[str, Game], default: str, default_game: str,
                  then: dict) -> dict:
    """`then` for a body played with one of the lexicons `names`: the one it names, else its
    game's own (`Kelime.played`: Kürtçe Kelimatik is played with `ku`), else `default`. (A
    rule on the named lexicon alone took `{"game": "kelimatik-ku"}` for a Turkish body: its
    schema-valid reports of Turkish words were refused, 422 `not_a_word`.)"""
    own = {name: game.lexicon or default for name, game in games.items()}
    unnamed = _when("game", [g for g, lexicon in own.items() if lexicon in names],
                    default_game, {})["if"]
    unnamed["properties"]["lexicon"] = {"enum": [None]}  # absent or null
    named = {"properties": {"lexicon": {"enum": list(names)}}, "required": ["lexicon"]}
    return {"if": {"anyOf": [named, unnamed]}, "then": then}


def _rack_rules(games: dict[str, Game], default: str, settings: Settings,
                letters: str) -> list[dict]:
    """Per game: the tiles a rack may hold (the hand, plus one a split throws away), the
    blanks its bag has, and whether two-letter tiles are allowed (`anagram.query.fit`)."""
    groups: dict[tuple[int, int, bool], list[str]] = {}
    for name, game in games.items():
        most = min(settings.max_rack_tiles, game.rack_size + game.discard)
        blanks = min(settings.max_blanks, game.blanks)
        pairs = game.has_two_letter_tiles and settings.max_two_letter_tiles > 0
        groups.setdefault((most, blanks, pairs), []).append(name)
    return [_when("game", names, default, {"properties": {"rack": {"allOf": [
        {"pattern": rack_pattern(letters, most, pairs)}, {"pattern": at_most("?", blanks)}]}}})
        for (most, blanks, pairs), names in sorted(groups.items())]


def _game_rules(games: dict[str, Game], alphabets: dict[str, Alphabet], lexicon: str,
                game: str) -> list[dict]:
    """Per lexicon: the games whose tiles are its letters (`anagram.query.plays`; a Turkish
    game gives Kurmanji's ê î û q w x no value)."""
    rules = []
    for alphabet, names in _by_alphabet(alphabets).items():
        fitting = [n for n, g in games.items() if not g.unvalued(alphabet.letters)]
        if len(fitting) == len(games):
            continue
        then: dict = {"properties": {"game": {"enum": fitting}}}
        if game not in fitting:
            then["required"] = ["game"]
        rules.append(_when_lexicon(names, games, lexicon, game, then))
    return rules


def word_pattern(letters: str) -> str:
    """One word of these letters, spaces around it allowed (trimmed), none inside."""
    return f"^{_spaces()}{_class(letters)}+{_spaces()}$"


def _by_alphabet(alphabets: dict[str, Alphabet]) -> dict[Alphabet, list[str]]:
    groups: dict[Alphabet, list[str]] = {}
    for name, alphabet in alphabets.items():
        groups.setdefault(alphabet, []).append(name)
    return groups


def _alphabet_rules(alphabets: dict[str, Alphabet], games: dict[str, Game], default: str,
                    default_game: str) -> list[dict]:
    """With lexicons of different alphabets, each lexicon's racks and patterns use its own."""
    groups = _by_alphabet(alphabets)
    if len(groups) < 2:
        return []
    rules = []
    for alphabet, names in groups.items():
        typed = typed_letters(alphabet)
        rules.append(_when_lexicon(names, games, default, default_game, {"properties": {
            "rack": {"pattern": f"^{_class(typed + '?[]' + WHITESPACE)}*$"},
            "pattern": {"pattern": f"^{_class(typed + '.' + WHITESPACE)}*$"}}}))
    return rules


def _word_rules(alphabets: dict[str, Alphabet], games: dict[str, Game], default: str
                ) -> list[dict]:
    """With lexicons of different alphabets, each lexicon's reported word uses its own."""
    groups = _by_alphabet(alphabets)
    if len(groups) < 2:
        return []
    return [_when_lexicon(names, games, default, DEFAULT_GAME, {"properties": {"word": {
        "pattern": word_pattern(typed_letters(alphabet))}}})
        for alphabet, names in groups.items()]


def plain_paths(settings: Settings, games: dict[str, Game],
                alphabets: dict[str, Alphabet]) -> dict:
    """The OpenAPI paths of validate, anagram, split and reports: their bodies are the
    models' schemas (`models.body_schema`, with the settings' limits), to which this adds
    what the loaded lexicons and games allow."""
    letters = "".join(dict.fromkeys(c for a in alphabets.values() for c in typed_letters(a)))
    default_lexicon = settings.default_lexicon

    def body(model: type[Body]) -> dict:
        schema = body_schema(model, settings)
        schema["properties"]["lexicon"] = {"type": "string", "default": default_lexicon,
                                           "description": "Lexicon name."}
        return schema

    get_words = get_limit(settings)[0]
    word = {"type": "string", "maxLength": settings.max_word_chars}
    validate_paths = validate.openapi(
        body(Ask), query_words={"type": "array", "minItems": 1, "maxItems": get_words,
                                "items": word},
        reply=ref("ValidateReply"), settings=settings)
    rack = {"allOf": [{"pattern": at_most("?", settings.max_blanks)},
                      {"pattern": at_most("[", settings.max_two_letter_tiles)}],
            "pattern": rack_pattern(letters, settings.max_rack_tiles,
                                    settings.max_two_letter_tiles > 0)}
    anagram_body, split_body = body(AnagramAsk), body(SplitAsk)
    merge(anagram_body, {"properties": {"rack": rack, "pattern": {"anyOf": [
        {"pattern": board_pattern(letters)}, {}]}}})
    merge(split_body, {"properties": {"rack": dict(rack)}})
    anagram_paths = anagram.openapi(
        anagram_body, split_body,
        anagram_rules=(_rack_rules(games, DEFAULT_GAME, settings, letters)
                       + _alphabet_rules(alphabets, games, default_lexicon, DEFAULT_GAME)
                       + _game_rules(games, alphabets, default_lexicon, DEFAULT_GAME)),
        split_rules=(_rack_rules(games, SPLIT_GAME, settings, letters)
                     + _alphabet_rules(alphabets, games, default_lexicon, SPLIT_GAME)
                     + _game_rules(games, alphabets, default_lexicon, SPLIT_GAME)),
        replies={"anagram": ref("AnagramReply"), "split": ref("SplitReply")})
    reports_paths = (reports.openapi(settings, body(ReportAsk), word_pattern(letters),
                                     _word_rules(alphabets, games, default_lexicon))
                     if settings.reports else {})
    return {**validate_paths, **anagram_paths, **reports_paths}


def ref(model: str) -> dict:
    return {"$ref": REF.format(model=model)}


def document(app: FastAPI, settings: Settings) -> None:
    """Make `app.openapi()` the exact schema (see the module docstring), cached per set of
    loaded names."""
    generate = app.openapi
    made: dict[tuple[Any, ...], dict[str, Any]] = {}

    def openapi() -> dict:
        kelime = getattr(app.state, "kelime", None)
        games = kelime.games if kelime is not None else dict(GAMES)
        alphabets = ({name: lex.alphabet for name, lex in kelime.lexicons.items()}
                     if kelime is not None and kelime.lexicons
                     else {settings.default_lexicon: TURKISH})
        key = (tuple(sorted(kelime.lexicons)) if kelime is not None else (),
               tuple(games), tuple(sorted((n, a.letters) for n, a in alphabets.items())))
        if key not in made:
            made.clear()
            made[key] = make(app, generate, settings, games, alphabets,
                             None if kelime is None else key[0])
        app.openapi_schema = made[key]
        return app.openapi_schema

    # FastAPI's documented way to extend its schema ("Extending OpenAPI" in its docs)
    app.openapi = openapi  # type: ignore[method-assign]


def make(app: FastAPI, generate, settings: Settings, games: dict[str, Game],
         alphabets: dict[str, Alphabet], lexicons: tuple[str, ...] | None) -> dict:
    """One schema: FastAPI's, plus the plain routes, errors, limits and names."""
    app.openapi_schema = None  # FastAPI caches its own; make it again
    schema = generate()
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    _, defs = models_json_schema([(m, "serialization") for m in PLAIN_ROUTE_MODELS],
                                 ref_template=REF)
    components.update(defs.get("$defs", {}))
    components["Error"] = ERROR_SCHEMA
    errors = {str(status): reply for status, reply in ERROR_RESPONSES.items()}
    for path, operations in plain_paths(settings, games, alphabets).items():
        for operation in operations.values():
            own = operation["responses"]
            operation["responses"] = {**errors, **{
                status: {**errors.get(status, {}), **reply} for status, reply in own.items()}}
        schema["paths"][path] = operations
    word_limits(schema, settings)
    caching_headers(schema)
    if lexicons is not None:
        name_enums(schema["paths"], {"lexicon": lexicons, "game": tuple(games)})  # requests
        for parameter in schema["paths"]["/v1/lexicons/{name}/words"]["get"]["parameters"]:
            if parameter["name"] == "name":
                parameter["schema"] = {"type": "string", "enum": list(lexicons)}
    return schema


#: The GET routes whose replies carry an ETag (If-None-Match → 304), and a Cache-Control.
ETAGGED = ("/v1/validate", "/v1/words/{word}", "/v1/lexicons", "/v1/games",
           "/v1/lexicons/{name}/words")
CACHED = ("/v1/validate", "/v1/lexicons/{name}/words")


def caching_headers(schema: dict) -> None:
    """The ETag (and Cache-Control) of the cacheable GETs, and their 304."""
    tag = {"description": "Names this reply: the lexicon build and the question. Send it "
                          "back in If-None-Match for a 304 while it holds.",
           "required": True, "schema": {"type": "string"}}
    cache = {"description": "How long a cache may keep the reply (KELIME_CACHE_MAX_AGE).",
             "required": True, "schema": {"type": "string"}}
    for path in ETAGGED:
        responses = schema["paths"][path]["get"]["responses"]
        responses["200"]["headers"] = {"ETag": tag, **({"Cache-Control": cache}
                                                       if path in CACHED else {})}
        responses["304"] = {"description": "The client's copy (its ETag in If-None-Match) "
                                           "is current; no body."}


def word_limits(schema: dict, settings: Settings) -> None:
    """The one-word path parameter's length, from the settings (FastAPI cannot know it)."""
    for parameter in schema["paths"]["/v1/words/{word}"]["get"]["parameters"]:
        if parameter["name"] == "word":
            parameter["schema"] = {"type": "string", "minLength": 1,
                                   "maxLength": settings.max_word_chars,
                                   "pattern": "[^" + _spaces()[1:-2] + "]"}  # not only spaces


def name_enums(node, names: dict[str, tuple[str, ...]]) -> None:
    """Every `lexicon` and `game` field (body) and parameter (query) becomes an enum of the
    names this server knows; in a body `null` means the default, as the parsers take it."""
    if isinstance(node, list):
        for item in node:
            name_enums(item, names)
        return
    if not isinstance(node, dict):
        return
    for key, known in names.items():
        properties = node.get("properties")
        if isinstance(properties, dict) and isinstance(properties.get(key), dict) \
                and "enum" not in properties[key]:
            old = properties[key]
            properties[key] = {"enum": [*known, None], "description": old.get(
                "description", f"{key.capitalize()} name; null or absent: the default."),
                **{k: old[k] for k in ("default",) if k in old}}
        if node.get("in") == "query" and node.get("name") == key:
            node["schema"] = {"type": "string", "enum": list(known)}
    for value in node.values():
        name_enums(value, names)
