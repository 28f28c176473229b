"""Game profiles: what each game asks of the dictionary."""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import KelimeError

# kelimelik's letter values; sozce uses them too (its rules give none).
KELIMELIK_VALUES = {
    "a": 1, "b": 3, "c": 4, "ç": 4, "d": 3, "e": 1, "f": 8, "g": 5, "ğ": 7, "h": 5,
    "ı": 2, "i": 1, "j": 10, "k": 1, "l": 1, "m": 2, "n": 1, "o": 2, "ö": 6, "p": 7,
    "r": 2, "s": 3, "ş": 4, "t": 2, "u": 2, "ü": 3, "v": 7, "y": 3, "z": 4,
}
KELIMATIK_VALUES = {**KELIMELIK_VALUES, "l": 3}


@dataclass(frozen=True)
class Game:
    """One game's dictionary rules."""

    name: str
    min_length: int
    rack_size: int
    bingo_bonus: int = 0
    letter_values: dict[str, int] = field(default_factory=lambda: dict(KELIMELIK_VALUES))
    description: str = ""

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "min_length": self.min_length,
            "rack_size": self.rack_size,
            "bingo_bonus": self.bingo_bonus,
            "letter_values": self.letter_values,
            "description": self.description,
        }


GAMES: dict[str, Game] = {
    g.name: g
    for g in (
        Game("kelimelik", 2, 7, 50, description="Scrabble-like board game, 2 blanks"),
        Game("sozce", 2, 7, 49, description="Board game, jokers worth 0"),
        Game("kelimatik", 3, 10, 0, dict(KELIMATIK_VALUES),
             "10 shared tiles with one two-letter tile and a joker"),
        Game("harfbank", 3, 14, 0, description="Rummy-like: lay the whole hand out as words"),
    )
}
DEFAULT_GAME = "kelimelik"


class UnknownGame(KelimeError, ValueError):
    """A game name that kelime has no profile for."""


def get_game(name: str | None) -> Game:
    """The profile for `name` (default kelimelik); UnknownGame lists the known ones."""
    key = (name or DEFAULT_GAME).strip().lower()
    try:
        return GAMES[key]
    except KeyError:
        raise UnknownGame(f"unknown game {name!r}; known games: {', '.join(GAMES)}") from None
