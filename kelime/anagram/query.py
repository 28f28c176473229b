"""An anagram question, checked before it is answered (see `search` for the answer).

    >>> from kelime.games import get_game
    >>> q = make_query("KALE?[LM]", get_game("kelimatik"), what_if=True, exclude=["Kale"])
    >>> q.rack.tiles, q.exclude, q.limit, q.sort
    (('k', 'a', 'l', 'e', '?', 'lm'), frozenset({'kale'}), 100, 'score')

``mode``: ``build`` (any sub-multiset of the tiles) or ``exact`` (all of them);
``min_length``/``max_length`` in letters, a two-letter tile counting 2 (default: the
game's minimum); ``pattern`` a board slot (`rack.parse_pattern`); ``exclude`` words to
leave out; ``limit`` how many words to list (default and maximum from `Limits`); ``sort``
``score``, ``length`` or ``alpha``; ``what_if`` answers a rack the game cannot deal
(`deal`) rather than refusing it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import excerpt, number
from ..games import GAMES, Game
from ..normalize import TURKISH, Alphabet
from .deal import deal
from .errors import GameMismatch, OptionError, OverLimit, RackError
from .limits import Limits
from .rack import Pattern, Rack, parse_exclude, parse_pattern, parse_rack

MODES = ("build", "exact")
SORTS = ("score", "length", "alpha")


@dataclass(frozen=True)
class Query:
    """One anagram question, already checked (build it with `make_query`)."""

    rack: Rack
    mode: str = "build"
    min_length: int | None = None
    max_length: int | None = None
    pattern: Pattern | None = None
    exclude: frozenset[str] = frozenset()
    limit: int = 100
    sort: str = "score"


def _length(value: object, name: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise OptionError(f"{name} must be a whole number ≥ 1, not {excerpt(value)}")
    return value


def _limit(value: object, limits: Limits) -> int:
    if value is None:
        return limits.default_results
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise OptionError(f"limit must be a whole number ≥ 0, not {excerpt(value)}")
    if value > limits.results:
        raise OverLimit(f"limit {number(value)} is over the limit of {limits.results} results",
                        {"limit": limits.results})
    return value


def _choice(value: object, name: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise OptionError(f"{name} must be one of {', '.join(choices)}, not {excerpt(value)}")
    return value


def make_query(rack: str | Rack, game: Game, alphabet: Alphabet | None = None,
               limits: Limits = Limits(), *, mode: str = "build",
               min_length: int | None = None, max_length: int | None = None,
               pattern: str | None = None, exclude: Iterable[str] | None = None,
               limit: int | None = None, sort: str = "score", what_if: bool = False) -> Query:
    """A checked Query; AnagramError (RackError, RackNotDealt, PatternError, OptionError,
    OverLimit) if not."""
    alphabet = alphabet or TURKISH
    plays(game, alphabet)  # first: a rack of the game's letters is not "unreadable" (422)
    parsed = rack if isinstance(rack, Rack) else parse_rack(rack, alphabet, limits)
    fit(parsed, game, what_if)
    low, high = _length(min_length, "min_length"), _length(max_length, "max_length")
    # min_length over max_length is no error: like min_length 40, it asks for no word
    return Query(parsed, _choice(mode, "mode", MODES), low, high,
                 parse_pattern(pattern, alphabet, limits) if pattern is not None else None,
                 parse_exclude(exclude, alphabet, limits), _limit(limit, limits),
                 _choice(sort, "sort", SORTS))


def plays(game: Game, alphabet: Alphabet) -> None:
    """Refuse a game whose tiles are not the lexicon's letters: Turkish Kelimatik would
    score Kurmanji's ê î û q w x as nothing (the games keep the languages apart)."""
    missing = game.unvalued(alphabet.letters)
    if missing:
        fitting = [g.name for g in GAMES.values() if not g.unvalued(alphabet.letters)]
        also = f"; games for them: {', '.join(fitting)}" if fitting else ""
        raise GameMismatch(f"{game.name} gives no value to {', '.join(missing)}, letters of "
                          f"this lexicon{also}", {"game": game.name, "letters": missing,
                                                  "games": fitting})


def fit(rack: Rack, game: Game, what_if: bool = False) -> Rack:
    """The rack, when it is of the game's kinds of tiles (two-letter tiles: RackError, which
    nothing lifts) and the game could deal it (`deal.deal`: RackNotDealt, unless `what_if`).
    A rack the game cannot deal is refused rather than answered as if legal (14 tiles would
    give a kelimelik bingo to any 7 of them)."""
    if rack.multi and not game.has_two_letter_tiles:
        raise RackError(f"{game.name} has no two-letter tiles, but the rack has "
                        f"[{rack.multi[0]}]", {"tile": rack.multi[0]})
    return rack if what_if else deal(rack, game)


def bounds(query: Query, game: Game) -> tuple[int, int]:
    """The word lengths the query allows, in letters (never under the game's minimum: a
    shorter word is not valid in the game)."""
    low = max(query.min_length or 0, game.min_length)
    board = sum(query.pattern.board.values()) if query.pattern else 0
    high = min(query.max_length or 10**6, query.rack.letter_count + board)
    if query.pattern is not None:
        low, high = max(low, len(query.pattern)), min(high, len(query.pattern))
    return low, high
