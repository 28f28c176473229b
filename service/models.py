"""The request bodies, declared once as msgspec Structs: parsed, checked and documented.

msgspec decodes a body straight into its Struct, checking every type in C (no dict is
built and walked by hand); the OpenAPI schema of each body is msgspec's JSON Schema of the
Struct (`body_schema`). What a type cannot say lives next to each Struct: its `check`
(limits that come from the settings at run time, empty names, the words of a report) and
its `limits` (the same limits as JSON Schema, merged into the Struct's schema).

A body that does not decode is explained by `refusal` in the words of the rest of the API:
the field named, what it must be, what was sent, what to send; the code is the field's
(`invalid_rack` for the rack, `invalid_option` for an anagram option, else
`invalid_request`).

    >>> from kelime.service.settings import Settings
    >>> decode(Ask, b'{"words": ["kitap"], "game": "kelimatik"}', Settings())
    Ask(words=['kitap'], lexicon=None, game='kelimatik', suggest=False)
    >>> try:
    ...     decode(Ask, b'{"words": "kitap"}', Settings())
    ... except Invalid as e:
    ...     print(e.code, e.message.split(":")[0])
    invalid_request 'words' must be an array of strings, not a string
"""

from __future__ import annotations

import re
from functools import cache
from typing import Annotated, Any, ClassVar, TypeVar

import msgspec
import orjson
from msgspec import UNSET, Meta, Struct, UnsetType

from kelime.board import BoardLimits
from kelime.errors import EXCERPT, excerpt
from kelime.normalize import WHITESPACE
from kelime.reports import KIND_MEANING, KINDS, note_problem

from .errors import Invalid, TooLarge
from .settings import Settings

SPLIT = "split the list into several requests"
POST_IT = "use POST /v1/validate for big batches"
BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark: RFC 8259 lets a parser skip it

Model = TypeVar("Model", bound="Body")


class Body(Struct, forbid_unknown_fields=True):
    """A request body: a JSON object of these fields and no other."""

    example: ClassVar[str]          # a body to show in messages
    codes: ClassVar[dict[str, str]] = {}     # field → its error code (else invalid_request)
    items: ClassVar[dict[str, str]] = {}     # list field → what its items are, for messages

    def check(self, limits: Settings) -> None:
        """What the types cannot say: limits from the settings, empty names."""

    @classmethod
    def limits(cls, settings: Settings) -> dict[str, Any]:
        """`check`'s limits as JSON Schema, merged into the Struct's schema."""
        return {}


Name = Annotated[str | None, Meta(description="Name; null or absent: the default.")]


def check_name(key: str, value: str | None, default: str = "null") -> None:
    """A `lexicon` or `game` name as sent; an empty one is refused rather than read as the
    default (the schema lists the names, and "" is none of them)."""
    if value == "":
        raise Invalid("invalid_request", f"'{key}' is empty: name a {key}, or send it "
                      f"{default} for the default", {"field": key})


class Ask(Body):
    """One validation question: the words as sent, and the optional lexicon and game names
    (POST /v1/validate's body; GET's query asks the same)."""

    example: ClassVar[str] = '{"words": ["kitap", "ev"]}'
    items: ClassVar[dict[str, str]] = {"words": "every word must be a JSON string"}

    words: list[str]
    lexicon: Name = None
    game: Annotated[str | None, Meta(description="Game profile: sets the minimum length.")
                    ] = None
    suggest: Annotated[bool, Meta(description=(
        "Each invalid result also lists `suggestions`: valid words it was probably meant to "
        "be (KITAP → kitap, cay → çay)."))] = False

    def check(self, limits: Settings, most: int | None = None, advice: str = SPLIT) -> None:
        """1..most (default max_words; max_suggest_words with suggest) words of at most
        max_word_chars each."""
        words = self.words
        if not words:
            raise Invalid("invalid_request", f"'words' is empty: send at least one word, "
                          f"like {self.example}")
        if self.suggest and len(words) > limits.max_suggest_words:
            raise TooLarge("too_many_words", f"{len(words):,} words with \"suggest\": true; "
                           f"the limit is {limits.max_suggest_words:,} (each invalid word is "
                           "searched for what it was meant to be): split the list, or leave "
                           "suggest out", {"count": len(words), "limit": limits.max_suggest_words})
        most = limits.max_words if most is None else most
        if len(words) > most:
            raise TooLarge("too_many_words", f"{len(words):,} words in one request; the limit "
                           f"is {most:,}: {advice}", {"count": len(words), "limit": most})
        longest = limits.max_word_chars
        if max(map(len, words)) > longest:  # the usual case, checked in C
            i, w = next((i, w) for i, w in enumerate(words) if len(w) > longest)
            raise TooLarge("word_too_long", f"words[{i}] has {len(w)} characters; the limit "
                           f"is {longest}", {"index": i, "length": len(w), "limit": longest})
        check_name("lexicon", self.lexicon)
        check_name("game", self.game)

    @classmethod
    def limits(cls, settings: Settings) -> dict[str, Any]:
        return {"properties": {"words": {
            "minItems": 1, "maxItems": settings.max_words,
            "items": {"maxLength": settings.max_word_chars}}, "game": {"default": "kelimelik"}},
            "allOf": [{"if": {"properties": {"suggest": {"const": True}},
                              "required": ["suggest"]},
                       "then": {"properties": {"words": {
                           "maxItems": settings.max_suggest_words}}}}]}


#: What `"what_if": true` does, for both questions' schemas.
WHAT_IF = ("true: answer a rack the game cannot deal (a Kelimatik rack that is not 5 "
           "consonants, 3 vowels, 1 two-letter tile and 1 joker; a Harfbank hand of other than "
           "14 or 15 tiles; more kelimelik tiles than a rack or its bag holds) as if it "
           "could; false or absent: refuse it, 422 `rack_not_dealt`.")


class AnagramAsk(Body):
    """One anagram question as sent: the rack, names, and the core's options (what the
    values mean, the core checks: `kelime.anagram.make_query`)."""

    example: ClassVar[str] = '{"rack": "kaletn?[lm]ıs", "game": "kelimatik"}'
    #: The fields that are the core's options, passed on when sent and not null.
    OPTIONS: ClassVar[tuple[str, ...]] = ("mode", "min_length", "max_length", "pattern",
                                          "exclude", "limit", "sort", "what_if")
    codes: ClassVar[dict[str, str]] = {"rack": "invalid_rack",
                                       **dict.fromkeys(OPTIONS, "invalid_option")}
    items: ClassVar[dict[str, str]] = {"exclude": "exclude lists words already played"}

    rack: Annotated[str, Meta(description=(
        "One letter per tile (either case), `?` a blank, `[lm]` a two-letter tile in the "
        "games that have them."))]
    lexicon: Name = None
    game: str | None = None
    mode: Annotated[str, Meta(description="build: words from some of the tiles; exact: all "
                                          "of them.")] | UnsetType = UNSET
    min_length: int | None | UnsetType = UNSET
    max_length: int | None | UnsetType = UNSET
    pattern: Annotated[str | None, Meta(description=(
        "A board slot: `.` a square the rack fills, a letter a tile already on the board "
        "(`k.t.p`)."))] | UnsetType = UNSET
    exclude: Annotated[list[str] | None, Meta(description="Words already played.")
                       ] | UnsetType = UNSET
    limit: int | None | UnsetType = UNSET
    sort: str | UnsetType = UNSET
    what_if: Annotated[bool, Meta(description=WHAT_IF)] | UnsetType = UNSET

    @property
    def options(self) -> dict[str, Any]:
        """The options sent (not null), for `make_query`."""
        return {key: value for key in self.OPTIONS
                if (value := getattr(self, key)) is not UNSET and value is not None}

    def check(self, limits: Settings) -> None:
        check_name("lexicon", self.lexicon, "left out")
        check_name("game", self.game, "left out")
        for i, w in enumerate((self.exclude or [])[:limits.max_exclude_words]):
            if len(w) > limits.max_word_chars:  # the core counts them against the limit
                raise TooLarge("word_too_long", f"exclude[{i}] has {len(w)} characters; the "
                               f"limit is {limits.max_word_chars}",
                               {"index": i, "length": len(w), "limit": limits.max_word_chars})

    @classmethod
    def limits(cls, settings: Settings) -> dict[str, Any]:
        word = {"type": "string", "maxLength": settings.max_word_chars}
        return {"properties": {
            "mode": {"enum": ["build", "exact"], "default": "build"},
            "sort": {"enum": ["score", "length", "alpha"], "default": "score"},
            "what_if": {"default": False},
            "game": {"default": "kelimelik"},
            "min_length": {"anyOf": [{"minimum": 1}, {}]},
            "max_length": {"anyOf": [{"minimum": 1}, {}]},
            "pattern": {"anyOf": [{"maxLength": settings.max_pattern_length}, {}]},
            "exclude": {"anyOf": [{"maxItems": settings.max_exclude_words, "items": word},
                                  {}]},
            "limit": {"anyOf": [{"minimum": 0, "maximum": settings.max_results}, {}],
                      "default": min(settings.default_results, settings.max_results)}}}


class SplitAsk(Body):
    """One split question (Harfbank: lay the hand out whole) as sent."""

    example: ClassVar[str] = '{"rack": "kalemkitapsilg?"}'
    codes: ClassVar[dict[str, str]] = {"rack": "invalid_rack"}

    rack: Annotated[str, Meta(description=(
        "One letter per tile (either case), `?` a blank, `[lm]` a two-letter tile in the "
        "games that have them: a hand the game deals (Harfbank: 14 tiles, or 15 with the "
        "one to throw away), unless `what_if`."))]
    lexicon: Name = None
    game: str | None = None
    what_if: Annotated[bool, Meta(description=WHAT_IF)] = False

    def check(self, limits: Settings) -> None:
        check_name("lexicon", self.lexicon, "left out")
        check_name("game", self.game, "left out")

    @classmethod
    def limits(cls, settings: Settings) -> dict[str, Any]:
        return {"properties": {"game": {"default": "harfbank"}}}


KIND_HELP = "; ".join(f"`{k}`: {KIND_MEANING[k]}" for k in KINDS)


class ReportAsk(Body):
    """One player's report as sent: the word, what is wrong with its verdict, a note."""

    example: ClassVar[str] = '{"word": "kitapçık", "kind": "missing", "game": "kelimelik"}'

    word: Annotated[str, Meta(description="One word as the player typed it (either case).")]
    kind: Annotated[str, Meta(description=KIND_HELP)]
    lexicon: Name = None
    game: str | None = None
    note: Annotated[str | None, Meta(description=(
        "Why, in the player's words: stored and shown as plain text only, never as "
        "markup."))] = None

    def check(self, limits: Settings) -> None:
        """A word (within max_word_chars), a kind, and an optional plain-text note (within
        max_note_chars, no control characters), stripped."""
        if not self.word.strip(WHITESPACE):
            raise Invalid("invalid_request", f"the body has an empty 'word': send the word "
                          f"reported, like {self.example}", {"field": "word"})
        if len(self.word) > limits.max_word_chars:
            raise TooLarge("word_too_long", f"the word has {len(self.word)} characters; the "
                           f"limit is {limits.max_word_chars}",
                           {"length": len(self.word), "limit": limits.max_word_chars})
        if self.kind not in KINDS:
            raise Invalid("invalid_request", f"'kind' must be one of {', '.join(KINDS)} "
                          f"({'; '.join(f'{k}: {KIND_MEANING[k]}' for k in KINDS)}), not "
                          f"{excerpt(self.kind)}", {"field": "kind", "allowed": list(KINDS)})
        check_name("lexicon", self.lexicon)
        check_name("game", self.game)
        if self.note is not None:
            if len(self.note) > limits.max_note_chars:
                raise TooLarge("note_too_long", f"the note has {len(self.note):,} characters; "
                               f"the limit is {limits.max_note_chars:,}",
                               {"length": len(self.note), "limit": limits.max_note_chars})
            problem = note_problem(self.note)
            if problem:
                raise Invalid("invalid_request", f"the note cannot be stored as plain text: "
                              f"{problem}; send text only", {"field": "note"})
            self.note = self.note.strip() or None

    @classmethod
    def limits(cls, settings: Settings) -> dict[str, Any]:
        return {"properties": {
            "word": {"minLength": 1, "maxLength": settings.max_word_chars},
            "kind": {"enum": list(KINDS)},
            "game": {"default": "kelimelik"},
            "note": {"anyOf": [{"maxLength": settings.max_note_chars}, {}]}}}


class PlacedTile(Struct, forbid_unknown_fields=True):
    """A tile laid from the rack: its square and the letter it stands for."""

    row: int
    col: int
    letter: str
    blank: Annotated[bool, Meta(description="Whether the tile is a blank standing for "
                                            "`letter`.")] = False


Board = Annotated[list[list[str]], Meta(description=(
    "The board, row by row from row 0 at the top (15 × 15 in kelimelik and sozce): a cell "
    "is \"\" (empty), a letter of the game (`ş`), or `?` and a letter (a blank played as "
    "that letter)."))]


class PlayAsk(Body):
    """One play to check (POST /v1/play): the board before it and the tiles laid."""

    example: ClassVar[str] = ('{"game": "kelimelik", "board": [["", …] × 15] × 15, '
                              '"tiles": [{"row": 7, "col": 7, "letter": "e"}, …]}')
    codes: ClassVar[dict[str, str]] = {"board": "invalid_board", "tiles": "invalid_tiles"}

    board: Board
    tiles: list[PlacedTile]
    lexicon: Name = None
    game: str | None = None

    def check(self, limits: Settings) -> None:
        check_name("lexicon", self.lexicon, "left out")
        check_name("game", self.game, "left out")

    @classmethod
    def limits(cls, settings: Settings) -> dict[str, Any]:
        return {"properties": {"game": {"default": "kelimelik"}}}


class MovesAsk(Body):
    """One moves question (POST /v1/moves): the board and the rack."""

    example: ClassVar[str] = ('{"game": "kelimelik", "board": [["", …] × 15] × 15, '
                              '"rack": "kale?ab"}')
    codes: ClassVar[dict[str, str]] = {"board": "invalid_board", "rack": "invalid_rack",
                                       "limit": "invalid_option", "what_if": "invalid_option"}

    board: Board
    rack: Annotated[str, Meta(description=(
        "The rack: letters of the game (either case), `?` a blank; one the game deals (at "
        "most 7 tiles, no more of a letter or blanks than its bag has), unless `what_if`."))]
    limit: Annotated[int | None, Meta(description="Moves to list, best first.")] = None
    lexicon: Name = None
    game: str | None = None
    what_if: Annotated[bool, Meta(description=WHAT_IF)] = False

    def check(self, limits: Settings) -> None:
        check_name("lexicon", self.lexicon, "left out")
        check_name("game", self.game, "left out")
        most = BoardLimits().results
        if self.limit is not None and not 0 <= self.limit <= most:
            raise Invalid("invalid_option", f"'limit' is {excerpt(self.limit)}: ask for 0 to "
                          f"{most} moves", {"field": "limit", "maximum": most})

    @classmethod
    def limits(cls, settings: Settings) -> dict[str, Any]:
        board = BoardLimits()
        return {"properties": {"game": {"default": "kelimelik"}, "limit": {
            "anyOf": [{"minimum": 0, "maximum": board.results}, {}],
            "default": board.default_results}}}


# --- decoding, and refusals in the API's words ------------------------------------------

#: Bodies longer than this are parsed by orjson and then converted, shorter ones decoded
#: by msgspec in one pass: msgspec reads non-ASCII strings at half orjson's speed, and
#: a 1,000-word body of Turkish words took 170 µs instead of 105 (benchmarks/parse.py).
ONE_PASS_BYTES = 2048


def decode(model: type[Model], body: bytes, limits: Settings) -> Model:
    """The body as `model`, checked; or the 422/413 that says what to send."""
    if body[:3] == BOM:
        body = body[3:]
    ask: Model
    try:
        if len(body) <= ONE_PASS_BYTES:
            ask = _decoder(model).decode(body)
        else:
            ask = msgspec.convert(orjson.loads(body), model)
    except (msgspec.DecodeError, orjson.JSONDecodeError) as e:  # ValidationError included
        ask = _lenient(model, body, e)
    ask.check(limits)
    return ask


@cache
def _decoder(model: type[Model]) -> msgspec.json.Decoder[Model]:
    return msgspec.json.Decoder(model)


def _lenient(model: type[Model], body: bytes, error: Exception) -> Model:
    """The body as `model` when its only fault is a whole number written as one (JSON has
    numbers, not ints: 5.0 is 5, as in JSON Schema); else `refusal`."""
    data = load_json(body, model.example)
    if isinstance(error, msgspec.ValidationError) and type(data) is dict:
        whole = {k: int(v) for k, v in data.items()
                 if type(v) is float and v.is_integer() and k in model.__struct_fields__}
        if whole:
            try:
                return msgspec.convert({**data, **whole}, model)
            except msgspec.ValidationError as again:
                error = again
    raise refusal(model, data, str(error))


_AT = re.compile(r"at `\$\.(\w+)(?:\[(\d+)\])?")
#: msgspec's words about a value inside a list's item: ``Expected `int`, got `bool` - at
#: `$.tiles[0].row```, ``… - at `$.board[7][7]```, ``Object missing required field `letter`
#: - at `$.tiles[0]```, ``Object contains unknown field `x` - at `$.tiles[0]```.
_DEEP = re.compile(r"^(?:Expected `(?P<wanted>\w+)`, got `\w+`|Object (?P<what>missing required|"
                   r"contains unknown) field `(?P<field>[^`]*)`) - at `\$\.(?P<path>\w+\[\d+\]"
                   r"(?:\[\d+\]|\.\w+)*)`$")
_STEP = re.compile(r"\[(\d+)\]|\.(\w+)")
_MSGSPEC_TYPES = {"str": "a string", "int": "a whole number", "bool": "true or false",
                  "array": "an array", "object": "an object", "float": "a number"}


def _deep_refusal(model: type[Body], code: str, data: Any, deep: re.Match[str]) -> Invalid:
    """The refusal of a value inside an item of a list field (`_DEEP`), naming its path."""
    path = deep["path"]
    value = data
    for index, name in _STEP.findall("." + path):
        value = value[int(index)] if index else value[name]
    details = {"field": path.split("[", 1)[0], "at": path}
    if deep["what"] == "missing required":
        return Invalid(code, f"{path} has no '{deep['field']}': send {model.example}", details)
    if deep["what"] is not None:
        return Invalid(code, f"{path} has an unknown field {excerpt(deep['field'])}: send "
                       f"{model.example}", details)
    wanted = _MSGSPEC_TYPES.get(deep["wanted"], deep["wanted"])
    return Invalid(code, f"{path} is {a_json(value)}{_shown(value)}, not {wanted}: send "
                   f"{model.example}", {**details, "type": json_type(value)})


def refusal(model: type[Body], data: Any, said: str) -> Invalid:
    """Why `data` (parsed JSON) is not a `model`, msgspec having `said` so: the field named,
    what it must be, what was sent, what to send."""
    example = model.example
    if type(data) is not dict:
        return Invalid("invalid_request", f"the body must be a JSON object like {example}, "
                       f"not {a_json(data)}")
    fields = model.__struct_fields__
    unknown = [key for key in data if key not in fields]
    if unknown:
        shown = ", ".join(map(excerpt, unknown[:5])) + (" …" if len(unknown) > 5 else "")
        return Invalid("invalid_request", f"unknown field(s) {shown}; the fields are: "
                       f"{', '.join(fields)}", {"unknown": [k[:EXCERPT] for k in unknown[:20]],
                                                "count": len(unknown)})
    missing = next((key for key in model.__struct_fields__
                    if key in _required(model) and key not in data), None)
    at = _AT.search(said)
    key = missing or (at.group(1) if at else None)
    if key is None:  # not a message this knows: msgspec's own words, still in the shape
        return Invalid("invalid_request", f"the body does not fit: {said}; send a JSON "
                       f"object like {example}")
    code = model.codes.get(key, "invalid_request")
    if missing:
        return Invalid(code, f"the body has no '{key}': send {example}", {"field": key})
    value = data[key]
    deep = _DEEP.search(said)
    if deep is not None and (deep["wanted"] != "str" or not deep["path"].endswith("]")
                             or deep["path"].count("[") > 1):  # a board's cell, a tile's row
        return _deep_refusal(model, code, data, deep)
    if at is not None and at.group(2) is not None:
        i = int(at.group(2))
        item = value[i]
        return Invalid(code, f"{key}[{i}] is {a_json(item)}, not a string: "
                       f"{model.items.get(key, 'send strings')}",
                       {"index": i, "type": json_type(item)})
    wanted = _wanted(_info(model).fields[fields.index(key)].type)
    return Invalid(code, f"'{key}' must be {wanted}, not {a_json(value)}: send {example}",
                   {"field": key, "type": json_type(value)})


def _shown(value: Any) -> str:
    """A scalar as JSON writes it, in brackets after its type (a huge one by its size)."""
    if value is None or isinstance(value, (dict, list)):
        return ""
    if isinstance(value, str) or (not isinstance(value, bool) and abs(value) >= 10 ** 15):
        return f" ({excerpt(value)})"
    return f" ({orjson.dumps(value).decode()})"


@cache
def _info(model: type[Body]) -> msgspec.inspect.StructType:
    return msgspec.inspect.type_info(model)  # type: ignore[return-value]


def _required(model: type[Body]) -> set[str]:
    return {f.name for f in _info(model).fields if f.required}


_WANTED: dict[type, str] = {
    msgspec.inspect.StrType: "a string", msgspec.inspect.IntType: "a whole number",
    msgspec.inspect.BoolType: "true or false", msgspec.inspect.NoneType: "null",
    msgspec.inspect.FloatType: "a number"}


def _wanted(kind: msgspec.inspect.Type) -> str:
    """What a field's type takes, in words: "an array of strings or null"."""
    if isinstance(kind, msgspec.inspect.Metadata):  # Annotated: a description
        return _wanted(kind.type)
    if isinstance(kind, msgspec.inspect.UnionType):
        return " or ".join(map(_wanted, kind.types))
    if isinstance(kind, msgspec.inspect.ListType):
        return f"an array of {_wanted(kind.item_type)[2:]}s"
    return _WANTED.get(type(kind), "something else")


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    names: dict[type, str] = {str: "string", list: "array", dict: "object"}
    return names.get(type(value), type(value).__name__)


def a_json(value: Any) -> str:
    """"a string", "an array", "null": the type with its article, for messages."""
    name = json_type(value)
    return name if name == "null" else ("an " if name[0] in "aeiou" else "a ") + name


def load_json(body: bytes, example: str) -> Any:
    """Parsed JSON; a 422 that says whether the bytes or the syntax are wrong."""
    if body.startswith(BOM):
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


# --- the schema --------------------------------------------------------------------------

def body_schema(model: type[Body], settings: Settings) -> dict[str, Any]:
    """`model`'s JSON Schema (msgspec's), with `limits` merged in: the OpenAPI request body."""
    (_, ), components = msgspec.json.schema_components([model])
    schema = components[model.__name__]
    for key in ("title", "description"):
        schema.pop(key, None)
    return merge(_inline(schema, components), model.limits(settings))


def _inline(node: Any, components: dict[str, Any]) -> Any:
    """`node` with the references to the Structs it holds (a play's tiles) replaced by
    their schemas: a body's schema is one piece (openapi.py names it)."""
    if isinstance(node, list):
        return [_inline(item, components) for item in node]
    if not isinstance(node, dict):
        return node
    if set(node) == {"$ref"}:
        inner = dict(components[node["$ref"].rsplit("/", 1)[1]])
        inner.pop("title", None)
        return _inline(inner, components)
    return {key: _inline(value, components) for key, value in node.items()}


def merge(schema: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """`extra` merged into `schema`: dicts key by key, an `anyOf`'s first choice into the
    schema's first (the value of a nullable field), lists added."""
    for key, value in extra.items():
        old = schema.get(key)
        if key == "anyOf" and isinstance(old, list):
            for mine, theirs in zip(old, value, strict=False):
                merge(mine, theirs)
        elif isinstance(old, dict) and isinstance(value, dict):
            merge(old, value)
        elif isinstance(old, list) and isinstance(value, list):
            schema[key] = old + value
        else:
            schema[key] = value
    return schema


def parse_anagram(body: bytes, limits: Settings) -> AnagramAsk:
    """The question in a POST /v1/anagram body."""
    return decode(AnagramAsk, body, limits)


def parse_split(body: bytes, limits: Settings) -> SplitAsk:
    """The question in a POST /v1/split body."""
    return decode(SplitAsk, body, limits)


def parse_report(body: bytes, limits: Settings) -> ReportAsk:
    """The report in a POST /v1/reports body."""
    return decode(ReportAsk, body, limits)


def parse_play(body: bytes, limits: Settings) -> PlayAsk:
    """The play in a POST /v1/play body."""
    return decode(PlayAsk, body, limits)


def parse_moves(body: bytes, limits: Settings) -> MovesAsk:
    """The question in a POST /v1/moves body."""
    return decode(MovesAsk, body, limits)
