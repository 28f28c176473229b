"""Game profiles from TOML: one file per game, shipped in ``kelime/games/profiles/``, plus
the files of a folder a deployment names. The packaged files document every key::

    name = "kelimelik"          # the file's stem: the id requests name
    title = "Kelimelik"         # optional: the game's name for people (default: name)
    order = 1                   # optional: where the game is listed (then by name)
    lexicon = "ku"              # optional: the lexicon the game is played with; its letters
                                #   (Kurmanji for "ku", else Turkish) are the tiles' letters
    description = "…"
    rack_size = 7               # tiles in a full rack
    min_length = 2              # letters (a two-letter tile counts 2)
    scoring = "sum"             # "sum" | "product"
    bingo_bonus = 50            # optional: for playing rack_size tiles at once
    discard = 1                 # optional: tiles thrown away to finish a split
    joker_finish_multiplier = 2 # optional: the others' penalty when a hand finishes by
                                #   throwing the joker (default 1)
    min_hand_average = 100      # optional: points a player must average a hand
    fixed_hand = true           # optional: every hand holds exactly rack_size tiles (and
                                #   `discard` more drawn); default false: at most rack_size,
                                #   fewer at the end of a game when the bag runs out
    [blank]                     # optional: value (default 0) and count of blanks/jokers, and
                                #   left_penalty: a joker left in the hand (default: value)
    [composition]               # optional: what a hand holds: consonants, vowels,
                                #   two_letter, blanks (exactly, with fixed_hand; else at most)
    [two_letter]                # optional: the game has two-letter tiles
    default_value = 1           #   value of a two-letter tile not listed below
    [two_letter.tiles]          #   "lm" = { value = 1 }
    [tiles]                     # every letter: "a" = { value = 1, count = 12 } (count optional)
    [board]                     # optional: a board game's board (kelime.games.layout):
    size = 15                   #   squares a side
    layout = "K3 .. H2 …"       #   the bonus squares (a multi-line string), a line a row; or
    layout_from = "kelimelik"   #   another game's layout
"""

from __future__ import annotations

import tomllib
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import KelimeError
from ..normalize import KURMANJI, TURKISH, Alphabet, normalize
from .layout import BoardLayout, parse_layout
from .profile import SCORING_RULES, Game

KEYS = {"name", "title", "order", "lexicon", "description", "rack_size", "min_length", "scoring",
        "bingo_bonus", "discard", "joker_finish_multiplier", "min_hand_average", "fixed_hand",
        "blank", "composition", "two_letter", "tiles", "board"}
BLANK_KEYS = {"value", "count", "left_penalty"}
#: What a `[composition]` counts (kelime.anagram.deal checks a rack against it).
COMPOSITION_KEYS = ("consonants", "vowels", "two_letter", "blanks")
BOARD_KEYS = {"size", "layout", "layout_from"}
#: The letters of a profile's `lexicon`, for the lexicons kelime builds offline.
ALPHABETS = {"ku": KURMANJI}


class GameProfileError(KelimeError, ValueError):
    """A game profile file that cannot be read; the message names the file and the key."""


def _int(data: dict[str, Any], key: str, where: str, default: int | None = None,
         low: int = 0) -> int:
    value = data.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise GameProfileError(f"{where}: `{key}` must be a whole number ≥ {low}, not {value!r}")
    return value


def _table(data: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise GameProfileError(f"{where}: `{key}` must be a table")
    return value


def _tile_key(key: str, letters: int, where: str, alphabet: Alphabet = TURKISH) -> str:
    if normalize(key, alphabet) != key or len(key) != letters or \
            not set(key) <= alphabet.letter_set:
        raise GameProfileError(f"{where}: tile {key!r} must be {letters} lower-case letter(s) "
                               f"of {alphabet.letters}")
    return key


def _tiles(table: dict[str, Any], letters: int, where: str,
           alphabet: Alphabet = TURKISH) -> tuple[dict[str, int], dict[str, int]]:
    """({tile: value}, {tile: count}) of a ``tiles`` table; counts all given or none."""
    values, counts = {}, {}
    for key, entry in table.items():
        spot = f"{where}: tile {key!r}"
        if not isinstance(entry, dict) or set(entry) - {"value", "count"}:
            raise GameProfileError(f"{spot} must be {{ value = N }} or {{ value = N, count = N }}")
        values[_tile_key(key, letters, where, alphabet)] = _int(entry, "value", spot)
        if "count" in entry:
            counts[key] = _int(entry, "count", spot)
    if counts and len(counts) != len(values):
        raise GameProfileError(f"{where}: give every tile a count, or none")
    return values, counts


def parse_profile(data: dict[str, Any], where: str) -> Game:
    """A `Game` from a profile's parsed TOML; GameProfileError says what is wrong and where."""
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise GameProfileError(f"{where}: unknown key(s) {', '.join(unknown)}")
    if data.get("scoring") not in SCORING_RULES:
        raise GameProfileError(f"{where}: `scoring` must be one of {', '.join(SCORING_RULES)}")
    if not isinstance(data.get("name"), str) or not data["name"]:
        raise GameProfileError(f"{where}: `name` must be the game's name")
    for key in ("title", "lexicon"):
        if key in data and (not isinstance(data[key], str) or not data[key].strip()):
            raise GameProfileError(f"{where}: `{key}` must be a non-empty string")
    alphabet = ALPHABETS.get(data.get("lexicon", ""), TURKISH)
    values, counts = _tiles(_table(data, "tiles", where), 1, where, alphabet)
    blank = _table(data, "blank", where)
    if set(blank) - BLANK_KEYS:
        raise GameProfileError(f"{where}: unknown key(s) in [blank]: "
                               f"{', '.join(sorted(set(blank) - BLANK_KEYS))}")
    two = _table(data, "two_letter", where) if "two_letter" in data else None
    two_values, _ = (_tiles(_table(two, "tiles", where), 2, where, alphabet) if two is not None
                     else ({}, {}))
    composition = _table(data, "composition", where) or None
    if composition and set(composition) - set(COMPOSITION_KEYS):
        raise GameProfileError(f"{where}: unknown key(s) in [composition]: "
                               f"{', '.join(sorted(set(composition) - set(COMPOSITION_KEYS)))}"
                               f"; it counts {', '.join(COMPOSITION_KEYS)}")
    if not isinstance(data.get("fixed_hand", False), bool):
        raise GameProfileError(f"{where}: `fixed_hand` must be true or false")
    game = Game(
        name=data["name"], title=data.get("title", data["name"]), lexicon=data.get("lexicon"),
        min_length=_int(data, "min_length", where, low=1),
        rack_size=_int(data, "rack_size", where, low=1),
        bingo_bonus=_int(data, "bingo_bonus", where, 0),
        letter_values=values, description=str(data.get("description", "")),
        letter_counts=counts or None, blanks=_int(blank, "count", where, 0),
        blank_value=_int(blank, "value", where, 0), scoring=data["scoring"],
        two_letter_values=two_values,
        two_letter_default=_int(two, "default_value", where, 0) if two is not None else None,
        discard=_int(data, "discard", where, 0),
        composition={k: _int(composition, k, where) for k in composition} if composition else None,
        blank_penalty=_int(blank, "left_penalty", where) if "left_penalty" in blank else None,
        joker_finish_multiplier=_int(data, "joker_finish_multiplier", where, 1, low=1),
        min_hand_average=(_int(data, "min_hand_average", where)
                          if "min_hand_average" in data else None),
        fixed_hand=data.get("fixed_hand", False),
        board=_board(data, where) if "board" in data else None,
    )
    _check_values(game, where)
    return game


def _board(data: dict[str, Any], where: str) -> BoardLayout:
    """The ``[board]`` table: a size and a layout, or the game whose layout it copies."""
    table = _table(data, "board", where)
    if set(table) - BOARD_KEYS:
        raise GameProfileError(f"{where}: unknown key(s) in [board]: "
                               f"{', '.join(sorted(set(table) - BOARD_KEYS))}")
    size = _int(table, "size", f"{where}: [board]", low=2)
    source = table.get("layout_from")
    if ("layout" in table) == (source is not None):
        raise GameProfileError(f"{where}: [board] needs `layout` or `layout_from`, one of them")
    if source is not None:
        if not isinstance(source, str) or not source:
            raise GameProfileError(f"{where}: [board] `layout_from` must be a game's name")
        return BoardLayout(size, (), source)
    rows = parse_layout(str(table["layout"]), size)
    if isinstance(rows, str):
        raise GameProfileError(f"{where}: [board] {rows}")
    return BoardLayout(size, rows)


def _layouts(games: dict[str, Game]) -> dict[str, Game]:
    """`games` with every ``layout_from`` board given the named game's bonus squares."""
    for game in list(games.values()):
        board = game.board
        if board is None or board.layout_from is None or board.bonuses:
            continue  # no board, its own layout, or one copied already
        source = games.get(board.layout_from)
        if source is None or source.board is None or not source.board.bonuses:
            raise GameProfileError(f"{game.name}: [board] `layout_from` names "
                                   f"{board.layout_from!r}, which is not a game with a layout")
        if source.board.size != board.size:
            raise GameProfileError(f"{game.name}: [board] is {board.size} squares a side but "
                                   f"{source.name}'s layout is {source.board.size}")
        games[game.name] = replace(game, board=replace(board, bonuses=source.board.bonuses))
    return games


def _check_values(game: Game, where: str) -> None:
    """A real tile must be worth at least a blank: the search spends blanks only when it must."""
    cheap = [t for t, v in {**game.letter_values, **game.two_letter_values}.items()
             if v < game.blank_value]
    if cheap or (game.two_letter_default or game.blank_value) < game.blank_value:
        raise GameProfileError(f"{where}: tiles worth less than a blank ({game.blank_value}): "
                               f"{', '.join(cheap) or 'two_letter.default_value'}")


def read_profile(text: str, where: str, stem: str | None = None) -> Game:
    """Parse one profile file's text; its `name` must be the file's stem."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise GameProfileError(f"{where}: not valid TOML ({e})") from None
    game = parse_profile(data, where)
    if stem is not None and game.name != stem:
        raise GameProfileError(f"{where}: `name` is {game.name!r} but the file is {stem}.toml")
    return game


def _order(text: str, where: str) -> int:
    order = tomllib.loads(text).get("order", 10**6)
    if not isinstance(order, int) or isinstance(order, bool):
        raise GameProfileError(f"{where}: `order` must be a whole number")
    return order


def packaged_profiles() -> list[Game]:
    """The profiles shipped with kelime, in their `order`."""
    folder = resources.files("kelime.games") / "profiles"
    found = []
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".toml")), key=lambda f: f.name)
    for f in files:
        text, where = f.read_text("utf-8"), f"profiles/{f.name}"
        found.append((_order(text, where), f.name, read_profile(text, where, f.name[:-5])))
    return [game for _, _, game in sorted(found, key=lambda t: t[:2])]


def folder_profiles(folder: Path) -> list[Game]:
    """The profiles in a deployment's folder (``*.toml``), by file name."""
    if not folder.is_dir():
        raise GameProfileError(f"{folder}: no such folder of game profiles")
    files = sorted(folder.glob("*.toml"))
    return [read_profile(p.read_text("utf-8"), str(p), p.stem) for p in files]


def load_games(extra_dir: Path | None = None) -> dict[str, Game]:
    """name → Game: the packaged profiles, then `extra_dir`'s, which replace a packaged
    profile of the same name (in its place) or come after them."""
    games = _layouts({g.name: g for g in packaged_profiles()})  # a deployment's kelimelik
    if extra_dir is not None:                                    # leaves Sözce's board
        games.update((g.name, g) for g in folder_profiles(Path(extra_dir)))
    return _layouts(games)
