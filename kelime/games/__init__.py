"""Game profiles: what each game asks of the dictionary. One TOML file per game in
``profiles/`` (kelimelik, sozce, kelimatik, kelimatik-ku, harfbank); a deployment adds or
replaces profiles with `load_games(folder)`.

    >>> get_game(" Kelimatik ").min_length, DEFAULT_GAME
    (3, 'kelimelik')
"""

from __future__ import annotations

from ..errors import KelimeError, excerpt
from .load import GameProfileError, load_games, parse_profile, read_profile
from .profile import BLANK, Game

DEFAULT_GAME = "kelimelik"
GAMES: dict[str, Game] = load_games()
# The tables the service and CLI knew before the profiles moved to TOML.
KELIMELIK_VALUES = dict(GAMES["kelimelik"].letter_values)
KELIMATIK_VALUES = dict(GAMES["kelimatik"].letter_values)


def longest_word(games: dict[str, Game] | None = None) -> int:
    """The most letters a word of any of `games` (default: kelime's) can have: a longer
    headword no game can lay (`kelime build` refuses it as ``too_long``).

    >>> longest_word(), longest_word({"kelimelik": GAMES["kelimelik"]})
    (28, 15)
    """
    return max(game.longest_word for game in (GAMES if games is None else games).values())


class UnknownGame(KelimeError, ValueError):
    """A game name that kelime has no profile for."""


def get_game(name: str | None, games: dict[str, Game] | None = None) -> Game:
    """The profile for `name` (default kelimelik); UnknownGame lists the known ones."""
    games = GAMES if games is None else games
    key = (name or DEFAULT_GAME).strip().lower()
    try:
        return games[key]
    except KeyError:
        raise UnknownGame(f"unknown game {excerpt(name)}; known games: {', '.join(games)}"
                          ) from None


__all__ = [
    "BLANK",
    "DEFAULT_GAME",
    "GAMES",
    "KELIMATIK_VALUES",
    "KELIMELIK_VALUES",
    "Game",
    "GameProfileError",
    "UnknownGame",
    "get_game",
    "load_games",
    "longest_word",
    "parse_profile",
    "read_profile",
]
