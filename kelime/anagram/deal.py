"""Racks a game can deal: a rack outside its profile's hand makeup is refused
(`RackNotDealt`, ``rack_not_dealt``) unless the question asks "what if" anyway.

What a profile says a game deals (kelime/games/profiles/*.toml):

- ``rack_size`` tiles, exactly when the hand is fixed (`Game.fixed_hand`: Kelimatik's 10,
  Harfbank's 14 or 15 with the tile drawn to throw away), else at most (kelimelik, Sözce:
  fewer at the end of a game, when the bag has run out);
- no more blanks than ``[blank] count``, and no more of a letter than its ``count`` when the
  bag's counts are known (kelimelik has one j);
- its ``[composition]``: consonants, vowels, two-letter tiles and blanks, exactly when the
  hand is fixed (Kelimatik: 5, 3, 1, 1), else at most.

    >>> from kelime.games import get_game
    >>> from kelime.anagram.rack import parse_rack
    >>> try:
    ...     deal(parse_rack("ka[lm][ar][ek]e?tnm"), get_game("kelimatik"))
    ... except RackNotDealt as e:
    ...     print(e.message.split("; fix")[0]); print(e.details)
    Kelimatik deals 1 two-letter tile; this rack has 3
    {'game': 'kelimatik', 'rule': 'two_letter', 'least': 1, 'most': 1, 'found': 3}
    >>> deal(parse_rack("kaletn?[lm]ıs"), get_game("kelimatik")).tiles[-1]
    's'
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from typing import Any

from ..games import Game
from .errors import RackNotDealt
from .rack import Rack

#: The vowels of the alphabets kelime knows (Turkish, Kurmanji); any other letter of a
#: rack is a consonant.
VOWELS = frozenset("aeıioöuüêîû")
#: What to do instead, in every refusal.
ANYWAY = ('; fix the rack, or ask anyway: "what_if": true in the API, --what-if in the '
          "CLI")

#: (a composition's key, the tiles of it for people: one, many).
KINDS = {"consonants": ("consonant", "consonants"), "vowels": ("vowel", "vowels"),
         "two_letter": ("two-letter tile", "two-letter tiles"), "blanks": ("joker", "jokers")}


def kinds(rack: Rack) -> dict[str, int]:
    """The rack's tiles by composition key: consonants, vowels, two_letter, blanks."""
    vowels = sum(n for letter, n in rack.letters.items() if letter in VOWELS)
    return {"consonants": sum(rack.letters.values()) - vowels, "vowels": vowels,
            "two_letter": len(rack.multi), "blanks": rack.blanks}


def _of(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _refusal(game: Game, rule: str, least: int, most: int, found: int, text: str,
             **more: Any) -> RackNotDealt:
    details = {"game": game.name, "rule": rule, "least": least, "most": most, "found": found,
               **more}
    return RackNotDealt(text + ANYWAY, details)


def _over(game: Game, rack: Rack) -> Iterator[RackNotDealt]:
    """More of a kind than the game deals: blanks, letters, two-letter tiles…"""
    title, found = game.title or game.name, kinds(rack)
    if rack.blanks > game.blanks:
        yield _refusal(game, "blanks", 0, game.blanks, rack.blanks,
                       f"{title} has {_of(game.blanks, 'joker', 'jokers')}; this rack has "
                       f"{rack.blanks}")
    for letter, n in sorted((game.letter_counts or {}).items()):
        if rack.letters.get(letter, 0) > n:
            yield _refusal(game, "letter", 0, n, rack.letters[letter],
                           f"{title}'s bag has {_of(n, letter, letter)}; this rack has "
                           f"{rack.letters[letter]}", letter=letter)
    for key, want in (game.composition or {}).items():
        if found[key] > want:
            yield _refusal(game, key, want if game.fixed_hand else 0, want, found[key],
                           f"{title} deals {_of(want, *KINDS[key])}; this rack has "
                           f"{found[key]}")


def _size(game: Game, rack: Rack) -> Iterator[RackNotDealt]:
    """More tiles than a hand holds, or fewer than a fixed hand."""
    title, most = game.title or game.name, game.rack_size + game.discard
    least = game.rack_size if game.fixed_hand else 0
    drawn = f" ({most} with the one drawn to throw away)" if game.discard else ""
    if not least <= len(rack) <= most:
        holds = ("deals" if game.fixed_hand else "gives a rack of at most")
        yield _refusal(game, "tiles", least, most, len(rack),
                       f"{title} {holds} {game.rack_size} tiles{drawn}; this rack has "
                       f"{len(rack)}")


def _under(game: Game, rack: Rack) -> Iterator[RackNotDealt]:
    """Fewer of a kind than a fixed hand always holds."""
    if not game.fixed_hand:
        return
    found = kinds(rack)
    for key, want in (game.composition or {}).items():
        if found[key] < want:
            yield _refusal(game, key, want, want, found[key],
                           f"{game.title or game.name} deals {_of(want, *KINDS[key])}; this "
                           f"rack has {found[key]}")


def deal(rack: Rack, game: Game) -> Rack:
    """The rack, when `game` can deal it; else RackNotDealt naming the first rule it breaks
    (too many of a kind first, then the number of tiles, then too few of a kind)."""
    refusal = next(chain(_over(game, rack), _size(game, rack), _under(game, rack)), None)
    if refusal is not None:
        raise refusal
    return rack
