"""The OpenAPI schema, exact: what a generated client needs to send only what is accepted.

FastAPI generates the schema of its own routes; `document` adds what it cannot know:

- the paths of the plain Starlette routes (validate, anagram, split), their bodies written
  here and their replies from the pydantic models of `schemas`;
- the error shape on every error status of every route;
- the limits, from the settings (`KELIME_MAX_WORDS=500` makes `maxItems` 500);
- an explicit operationId for every operation, a named component for every request body
  and reply, `Retry-After` on every 429 and 503;
- what each game lets a rack hold: the rack and pattern syntax as regular expressions over
  its tiles' letters (every character that normalises to one of them, upper case too),
  the racks it deals (the tiles a hand holds, its blanks, its makeup, its bag's counts),
  unless the body asks `"what_if": true`, two-letter tiles only in games that have them.

`lexicon` and `game` are plain strings (a pattern, not an enum of what is loaded): the
schema is the same on every replica whatever it has loaded, during a rollout too; GET
/v1/lexicons and /v1/games list what a server has. Replies are open to new fields (no
`additionalProperties: false`): a client ignores the fields it does not know.

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

from kelime.anagram.deal import VOWELS
from kelime.games import DEFAULT_GAME, GAMES, Game
from kelime.normalize import KURMANJI, TURKISH, WHITESPACE, Alphabet, normalize

from .errors import ERROR_RESPONSES, ERROR_SCHEMA
from .models import (
    AnagramAsk,
    Ask,
    Body,
    MovesAsk,
    PlayAsk,
    ReportAsk,
    SplitAsk,
    body_schema,
    merge,
)
from .parse import get_limit
from .responses import JSON
from .routes import anagram, board, reports, validate
from .schemas import PLAIN_ROUTE_MODELS
from .settings import Settings

REF = "#/components/schemas/{model}"
LAST_TYPED = 0xFFFF  # the last code point typed_letters asks about
SPLIT_GAME = "harfbank"
#: The alphabets a game's tiles are read in (`game_alphabet`).
KNOWN_ALPHABETS = (TURKISH, KURMANJI)


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


def rack_pattern(letters: str, tiles: int, pairs: bool, least: int = 1) -> str:
    """least..tiles tiles: a letter, `?` a blank, `[lm]` a two-letter tile (when `pairs`),
    spaces around them allowed (they are trimmed)."""
    letter = _class(letters)
    unit = f"{letter}|\\?" + (f"|\\[{letter}{letter}\\]" if pairs else "")
    return f"^{_spaces()}(?:{unit}){{{max(least, 1)},{tiles}}}{_spaces()}$"


def counted(chars: str, least: int, most: int) -> str:
    """A pattern: least..most single tiles of `chars` (a two-letter tile's letters are not
    counted), anything else between them."""
    other = f"(?:\\[[^\\]]*\\]|[^{_class(chars)[1:-1]}\\[])"
    return f"^{other}*(?:{_class(chars)}{other}*){{{least},{most}}}$"


def brackets(least: int, most: int) -> str:
    """A pattern: least..most two-letter tiles (`[`)."""
    return f"^[^\\[]*(?:\\[[^\\[]*){{{least},{most}}}$"


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


def game_alphabet(game: Game) -> Alphabet:
    """The alphabet of a game's tiles: the known one that holds them all (Turkish, Kurmanji),
    else one of its own letters."""
    letters = set(game.letter_values)
    return next((a for a in KNOWN_ALPHABETS if letters <= a.letter_set),
                Alphabet("".join(sorted(letters))))


def _by_game(games: dict[str, Game]) -> dict[Alphabet, list[str]]:
    groups: dict[Alphabet, list[str]] = {}
    for name, game in games.items():
        groups.setdefault(game_alphabet(game), []).append(name)
    return groups


def _dealt(game: Game, settings: Settings) -> tuple[str, ...]:
    """The patterns of the racks `game` deals (`kelime.anagram.deal`): its tiles, exactly
    its hand when fixed, its blanks, its makeup, no more of a letter than its bag has."""
    most = min(settings.max_rack_tiles, game.rack_size + game.discard)
    pairs = game.has_two_letter_tiles and settings.max_two_letter_tiles > 0
    return (rack_pattern(typed_letters(game_alphabet(game)), most, pairs,
                         game.rack_size if game.fixed_hand else 1),
            at_most("?", min(settings.max_blanks, game.blanks)), *_makeup(game, most))


def _makeup(game: Game, most: int) -> tuple[str, ...]:
    """The patterns of a rack's makeup in `game` (`kelime.anagram.deal`): its kinds of tiles
    (exactly when the hand is fixed), no more of a letter than its bag has (when that is
    fewer than `most`, the tiles a rack may hold)."""
    alphabet, fixed = game_alphabet(game), game.fixed_hand
    typed = typed_letters(alphabet)
    vowels = "".join(c for c in typed if normalize(c, alphabet) in VOWELS)
    kinds = {"vowels": vowels, "consonants": "".join(c for c in typed if c not in vowels),
             "blanks": "?"}
    found = []
    for key, n in (game.composition or {}).items():
        least = n if fixed else 0
        found.append(brackets(least, n) if key == "two_letter" else counted(kinds[key], least, n))
    for letter, n in sorted((game.letter_counts or {}).items()):
        if n < most:
            found.append(counted("".join(c for c in typed if normalize(c, alphabet) == letter),
                                 0, n))
    return tuple(found)


def _rack_rules(games: dict[str, Game], default: str, settings: Settings) -> list[dict]:
    """Per game: its tiles' letters (Kürtçe Kelimatik's are Kurmanji's) and kinds (two-letter
    tiles); and, unless the body asks `what_if`, the racks it deals (`_dealt`)."""
    groups: dict[tuple[tuple[str, ...], Alphabet, bool], list[str]] = {}
    for name, game in games.items():
        pairs = game.has_two_letter_tiles and settings.max_two_letter_tiles > 0
        key = (_dealt(game, settings), game_alphabet(game), pairs)
        groups.setdefault(key, []).append(name)
    rules = []
    for (patterns, alphabet, pairs), names in groups.items():
        typed = typed_letters(alphabet)
        rules.append(_when("game", names, default, {"properties": {
            "rack": {"pattern": rack_pattern(typed, settings.max_rack_tiles, pairs)},
            "pattern": {"pattern": f"^{_class(typed + '.' + WHITESPACE)}*$"}}}))
        dealt = _when("game", names, default, {"properties": {
            "rack": {"allOf": [{"pattern": p} for p in patterns]}}})
        dealt["if"]["properties"]["what_if"] = {"const": False}
        rules.append(dealt)
    return rules


def word_pattern(letters: str) -> str:
    """One word of these letters, spaces around it allowed (trimmed), none inside."""
    return f"^{_spaces()}{_class(letters)}+{_spaces()}$"


def _word_rules(games: dict[str, Game], default: str) -> list[dict]:
    """With games of different alphabets, each game's reported word uses its own."""
    groups = _by_game(games)
    if len(groups) < 2:
        return []
    return [_when("game", names, default, {"properties": {"word": {
        "pattern": word_pattern(typed_letters(alphabet))}}})
        for alphabet, names in groups.items()]


def board_rack(typed: str, tiles: int) -> str:
    """A board game's rack: 1 to `tiles` tiles, letters or `?` (spaces around trimmed)."""
    return f"^{_spaces()}(?:{_class(typed)}|\\?){{1,{tiles}}}{_spaces()}$"


def board_bodies(play: dict, moves: dict, games: dict[str, Game]) -> None:
    """What the board games allow, merged into the bodies of /v1/play and /v1/moves: the
    board's size, the letters of a cell, a tile and a rack, the blanks of a rack; and, per
    game, unless the moves body asks `what_if`, the racks it deals (`_makeup`: kelimelik's
    bag has one j). A tile on a taken square, or two on one square, no schema can say: the
    message does (422)."""
    boards = [g for g in games.values() if g.board is not None and g.board.bonuses]
    if not boards:
        return
    sizes = {g.board.size for g in boards if g.board is not None}
    letters = _class("".join(dict.fromkeys(c for g in boards for c in g.letter_values)))
    side = {"minItems": min(sizes), "maxItems": max(sizes)}
    board = {**side, "items": {**side, "items": {"pattern": f"^(?:\\??{letters})?$"}}}
    tiles = max(g.rack_size for g in boards)
    square = {"minimum": 0, "maximum": max(sizes) - 1}
    merge(play, {"properties": {"board": board, "tiles": {"maxItems": tiles, "items": {
        "properties": {"row": square, "col": square, "letter": {"pattern": f"^{letters}$"}}}}}})
    typed = "".join(dict.fromkeys(c for g in boards for c in typed_letters(game_alphabet(g))))
    merge(moves, {"properties": {"board": board, "rack": {  # read as anagram's: either case
        "pattern": board_rack(typed, tiles),
        "allOf": [{"pattern": at_most("?", max(g.blanks for g in boards))}]}}})
    groups: dict[tuple[str, ...], list[str]] = {}
    for g in boards:  # the racks each game deals: the search's bound is the hard one above
        dealt = (board_rack(typed_letters(game_alphabet(g)), g.rack_size),
                 at_most("?", g.blanks), *_makeup(g, g.rack_size))
        groups.setdefault(dealt, []).append(g.name)
    for patterns, names in groups.items():
        rule = _when("game", names, DEFAULT_GAME, {"properties": {
            "rack": {"allOf": [{"pattern": p} for p in patterns]}}})
        rule["if"]["properties"]["what_if"] = {"const": False}
        merge(moves, {"allOf": [rule]})


def plain_paths(settings: Settings, games: dict[str, Game]) -> dict:
    """The OpenAPI paths of validate, anagram, split and reports: their bodies are the
    models' schemas (`models.body_schema`, with the settings' limits), to which this adds
    what the games allow (their tiles, their letters)."""
    letters = "".join(dict.fromkeys(c for a in _by_game(games) for c in typed_letters(a)))
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
        anagram_rules=_rack_rules(games, DEFAULT_GAME, settings),
        split_rules=_rack_rules(games, SPLIT_GAME, settings),
        replies={"anagram": ref("AnagramReply"), "split": ref("SplitReply")})
    reports_paths = (reports.openapi(settings, body(ReportAsk), word_pattern(letters),
                                     _word_rules(games, DEFAULT_GAME))
                     if settings.reports else {})
    play_body, moves_body = body(PlayAsk), body(MovesAsk)
    board_bodies(play_body, moves_body, games)
    board_paths = board.openapi(play_body, moves_body,
                                replies={"play": ref("PlayReply"), "moves": ref("MovesReply")})
    return {**validate_paths, **anagram_paths, **board_paths, **reports_paths}


def ref(model: str) -> dict:
    return {"$ref": REF.format(model=model)}


def document(app: FastAPI, settings: Settings) -> None:
    """Make `app.openapi()` the exact schema (see the module docstring), cached per set of
    games (what the lexicons loaded are does not change it)."""
    generate = app.openapi
    made: dict[tuple[str, ...], dict[str, Any]] = {}

    def openapi() -> dict:
        kelime = getattr(app.state, "kelime", None)
        games = kelime.games if kelime is not None else dict(GAMES)
        key = tuple(games)
        if key not in made:
            made.clear()
            made[key] = make(app, generate, settings, games)
        app.openapi_schema = made[key]
        return app.openapi_schema

    # FastAPI's documented way to extend its schema ("Extending OpenAPI" in its docs)
    app.openapi = openapi  # type: ignore[method-assign]


#: Every operation's id, explicit and stable: the names generated clients give their
#: functions (FastAPI's own, `readyz_readyz_get`, change with the path).
OPERATION_IDS = {
    ("post", "/v1/validate"): "validateWords",
    ("get", "/v1/validate"): "validateWordsQuery",
    ("get", "/v1/words/{word}"): "getWord",
    ("post", "/v1/anagram"): "findAnagrams",
    ("post", "/v1/split"): "splitRack",
    ("post", "/v1/reports"): "reportWord",
    ("post", "/v1/play"): "checkPlay",
    ("post", "/v1/moves"): "findMoves",
    ("get", "/v1/lexicons"): "listLexicons",
    ("get", "/v1/lexicons/{name}/words"): "downloadLexiconWords",
    ("get", "/v1/games"): "listGames",
    ("get", "/healthz"): "getHealth",
    ("get", "/readyz"): "getReadiness",
    ("get", "/metrics"): "getMetrics",
    ("post", "/v1/admin/reload"): "reloadLexicons",
}
#: The request bodies, by path: named components, so generated clients have their models.
REQUEST_BODIES = {"/v1/validate": "ValidateRequest", "/v1/anagram": "AnagramRequest",
                  "/v1/split": "SplitRequest", "/v1/reports": "ReportRequest",
                  "/v1/play": "PlayRequest", "/v1/moves": "MovesRequest"}
#: The statuses that may come with Retry-After (`busy`, `too_many_reports`, ...).
RETRY_STATUSES = ("429", "503")
RETRY_AFTER = {"description": "Seconds to wait before sending the request again; sent with "
                              "`busy`, `too_many_reports`, `too_many_tries`, `reports_full` "
                              "and `reports_unavailable`.",
               "required": False, "schema": {"type": "integer", "minimum": 0}}
#: What a `lexicon` names, and a `game`: plain strings, the same schema on every replica
#: whatever it has loaded (`/v1/lexicons` and `/v1/games` list what it has).
NAME_CHARS = 64  # what GET /v1/words reads of a name (routes/words.py)
LEXICON_NAME: dict[str, Any] = {
    "type": "string", "maxLength": NAME_CHARS,
    "pattern": r"^[a-z0-9][a-z0-9_-]*(?:@[0-9a-f]{12})?$",
    "description": "A lexicon: its name (`tr`: the version served now) or `name@version` "
                   "(`tr@d4323d22aa28`: that build, version = 12 lowercase hex digits). GET "
                   "/v1/lexicons lists what this server has."}
GAME_NAME: dict[str, Any] = {
    "type": "string", "maxLength": NAME_CHARS, "pattern": r"^[a-z0-9][a-z0-9_-]*$",
    "description": "A game profile's name (`kelimelik`, `kelimatik-ku`). GET /v1/games "
                   "lists what this server has."}
NAMES: dict[str, dict[str, Any]] = {"lexicon": LEXICON_NAME, "game": GAME_NAME}


def make(app: FastAPI, generate, settings: Settings, games: dict[str, Game]) -> dict:
    """One schema: FastAPI's, plus the plain routes, errors, limits, names and ids."""
    app.openapi_schema = None  # FastAPI caches its own; make it again
    schema = generate()
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    _, defs = models_json_schema([(m, "serialization") for m in PLAIN_ROUTE_MODELS],
                                 ref_template=REF)
    components.update(defs.get("$defs", {}))
    components["Error"] = ERROR_SCHEMA
    errors = {str(status): reply for status, reply in ERROR_RESPONSES.items()}
    for path, operations in plain_paths(settings, games).items():
        for operation in operations.values():
            own = operation["responses"]
            operation["responses"] = {**errors, **{
                status: {**errors.get(status, {}), **reply} for status, reply in own.items()}}
        schema["paths"][path] = operations
    for path in (anagram.ANAGRAM, anagram.SPLIT, board.PLAY, board.MOVES,  # what the schema
                 reports.PATH):                                             # cannot
        if path not in schema["paths"]:                             # know beforehand
            continue
        schema["paths"][path]["post"]["responses"]["409"] = {
            "description": "Conflict: the game's tiles are not the lexicon's letters "
                           "(`game_not_for_lexicon`; `details.games` lists those that fit).",
            "content": {JSON: {"schema": ref("Error")}}}
    word_limits(schema, settings)
    caching_headers(schema)
    name_strings(schema["paths"])
    for parameter in schema["paths"]["/v1/lexicons/{name}/words"]["get"]["parameters"]:
        if parameter["name"] == "name":
            parameter["schema"] = dict(LEXICON_NAME)
    for (method, path), operation_id in OPERATION_IDS.items():
        if method in schema["paths"].get(path, {}):
            schema["paths"][path][method]["operationId"] = operation_id
    for path, operations in schema["paths"].items():
        for operation in operations.values():
            named_body(operation, REQUEST_BODIES.get(path), components)
            for status in RETRY_STATUSES:
                if status in operation["responses"]:
                    reply = operation["responses"][status] = dict(operation["responses"][status])
                    reply["headers"] = {"Retry-After": RETRY_AFTER, **reply.get("headers", {})}
    return schema


def named_body(operation: dict, name: str | None, components: dict) -> None:
    """The operation's JSON body as the component `name`, referred to."""
    content = operation.get("requestBody", {}).get("content", {}).get(JSON)
    if name is None or content is None or "$ref" in content["schema"]:
        return
    components[name] = content["schema"]
    content["schema"] = ref(name)


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


def name_strings(node) -> None:
    """Every `lexicon` and `game` field (body) and parameter (query) is a string of `NAMES`
    (in a body, null or absent means the default, as the parsers take it); the names in
    the `if` of a rule stay as they are."""
    if isinstance(node, list):
        for item in node:
            name_strings(item)
        return
    if not isinstance(node, dict):
        return
    for key, named in NAMES.items():
        properties = node.get("properties")
        if isinstance(properties, dict) and isinstance(properties.get(key), dict) \
                and "enum" not in properties[key]:
            old = properties[key]
            properties[key] = {"anyOf": [dict(named), {"type": "null"}],
                               "description": named["description"] + " Null or absent: "
                               "the default.", **{k: old[k] for k in ("default",) if k in old}}
        if node.get("in") == "query" and node.get("name") == key:
            node["schema"] = {**dict(named), **{k: v for k, v in node["schema"].items()
                                                if k == "default"}}
    for value in node.values():
        name_strings(value)
