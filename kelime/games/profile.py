"""One game's rules as plain data: tile values and counts, lengths, and how a word scores.

    >>> from kelime.games import get_game
    >>> kelimatik = get_game("kelimatik")
    >>> kelimatik.score(["k", "o", "l"]), kelimatik.score(["?o", "lm", "a", "z"])
    (18, 24)
    >>> get_game("kelimelik").score(["k", "i", "t", "a", "p", "?l", "a"])  # all 7 tiles: +50
    63
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .layout import BoardLayout

BLANK = "?"
SCORING_RULES = ("sum", "product")


#: The side of the board games' board (kelimelik's and Sözce's 15×15): the longest word
#: they can place.
BOARD_SIDE = 15


@dataclass(frozen=True)
class Game:
    """One game's dictionary rules; `scoring` is ``"sum"`` or ``"product"``.

    ``sum``: a word is worth the sum of its tile values, plus `bingo_bonus` when it takes
    `rack_size` tiles from the rack. ``product``: (sum of its tile values) × (tiles used).
    A blank/joker is worth `blank_value`; a letter the profile does not list is worth 0; a
    two-letter tile not in `two_letter_values` is worth `two_letter_default`, and a game
    whose `two_letter_default` is None has no two-letter tiles.
    """

    name: str
    min_length: int
    rack_size: int
    bingo_bonus: int = 0
    title: str = ""                       # the game's name for people
    lexicon: str | None = None            # the lexicon it is played with, when it says
    letter_values: dict[str, int] = field(default_factory=dict)
    description: str = ""
    letter_counts: dict[str, int] | None = None
    blanks: int = 0
    blank_value: int = 0
    scoring: str = "sum"
    two_letter_values: dict[str, int] = field(default_factory=dict)
    two_letter_default: int | None = None
    discard: int = 0
    composition: dict[str, int] | None = None
    blank_penalty: int | None = None      # a joker left in the hand; None: `blank_value`
    joker_finish_multiplier: int = 1      # the others' penalty, when a hand finishes by
                                          # throwing the joker (Harfbank: 2)
    min_hand_average: int | None = None   # points a hand must average to stay at the table
    fixed_hand: bool = False              # every hand holds rack_size tiles (+ `discard`
                                          # drawn); else at most, fewer when the bag runs out
    board: BoardLayout | None = None      # a board game's board (kelime.games.layout)

    @property
    def has_two_letter_tiles(self) -> bool:
        return self.two_letter_default is not None

    @property
    def longest_word(self) -> int:
        """The most letters one word of this game can have. A hand game (its hand dealt by
        `composition`, or laid out whole to finish, `discard`) lays at most its hand: each
        tile one letter, a two-letter tile two (Kelimatik: 10 tiles, one of them two-letter,
        11 letters; Harfbank, whose hand's two-letter tiles are not counted by its rules:
        14 tiles, every one of which may be two-letter, 28). A board game's word runs across
        the board: `BOARD_SIDE` letters."""
        if self.composition is None and not self.discard:
            return BOARD_SIDE
        two = ((self.composition or {}).get("two_letter", self.rack_size)
               if self.has_two_letter_tiles else 0)
        return self.rack_size + min(two, self.rack_size)

    @cached_property
    def tile_values(self) -> dict[str, int]:
        """The value of every listed tile: letters and two-letter tiles."""
        return {**self.letter_values, **self.two_letter_values}

    def unvalued(self, letters: str) -> list[str]:
        """The letters among `letters` (a lexicon's alphabet) this game gives no value: a
        Turkish profile scores Kurmanji's ê î û q w x as nothing, so it does not play them."""
        if not self.letter_values:
            return []
        return [ch for ch in letters if ch not in self.letter_values]

    def tile_value(self, tile: str) -> int:
        """A tile's value: ``"k"``, a blank ``"?"``/``"?k"``, a two-letter tile ``"lm"``."""
        value = self.tile_values.get(tile)
        if value is not None:
            return value
        if tile[0] == BLANK:
            return self.blank_value
        return 0 if len(tile) == 1 else self.two_letter_default or 0

    def score_parts(self, value: int, tiles: int, from_rack: int) -> int:
        """The score of a word whose `tiles` tiles are worth `value`, `from_rack` of them played."""
        base = value * tiles if self.scoring == "product" else value
        bingo = self.bingo_bonus if self.bingo_bonus and from_rack >= self.rack_size else 0
        return base + bingo

    def score(self, tiles: Sequence[str], board: int = 0) -> int:
        """The score of a word laid with `tiles`, `board` of them already on the board."""
        value = sum(map(self.tile_value, tiles))
        return self.score_parts(value, len(tiles), len(tiles) - board)

    def left_value(self, tile: str) -> int:
        """What one tile left in the hand costs: its value, a joker `blank_penalty`."""
        if tile == BLANK and self.blank_penalty is not None:
            return self.blank_penalty
        return self.tile_value(tile)

    def penalty(self, tiles: Sequence[str]) -> int:
        """What tiles left in the hand cost: the sum of their `left_value`s."""
        return sum(map(self.left_value, tiles))

    def others_multiplier(self, thrown: str | None) -> int:
        """What the other players' penalty is multiplied by when a hand finishes by
        throwing `thrown` (the joker: `joker_finish_multiplier`)."""
        return self.joker_finish_multiplier if thrown == BLANK else 1

    @property
    def score_formula(self) -> str:
        """The scoring rule in words, for people."""
        blank = f"a blank is worth {self.blank_value}"
        if self.scoring == "product":
            text = f"(sum of the tile values) × (number of tiles used); {blank}"
        else:
            text = f"sum of the tile values; {blank}"
        if self.bingo_bonus:
            text += f"; +{self.bingo_bonus} when all {self.rack_size} tiles are played at once"
        if self.discard:
            text += ("; in a split, the tiles left over count against the hand (their values"
                     f", a joker {self.left_value(BLANK)}) and {self.discard} tile is thrown "
                     "away to finish")
        if self.joker_finish_multiplier != 1:
            text += (f"; finishing by throwing the joker multiplies the other players' penalty "
                     f"by {self.joker_finish_multiplier}")
        return text

    def as_dict(self) -> dict[str, Any]:
        """The profile as JSON-ready data (what ``GET /v1/games`` lists)."""
        return {
            "name": self.name,
            "title": self.title or self.name,
            "lexicon": self.lexicon,
            "min_length": self.min_length,
            "rack_size": self.rack_size,
            "bingo_bonus": self.bingo_bonus,
            "letter_values": dict(self.letter_values),
            "description": self.description,
            "letter_counts": dict(self.letter_counts) if self.letter_counts is not None else None,
            "blanks": self.blanks,
            "blank_value": self.blank_value,
            "two_letter_tiles": self._two_letter_dict(),
            "discard": self.discard,
            "composition": dict(self.composition) if self.composition is not None else None,
            "blank_penalty": self.left_value(BLANK) if self.blanks else None,
            "joker_finish_multiplier": self.joker_finish_multiplier,
            "min_hand_average": self.min_hand_average,
            "fixed_hand": self.fixed_hand,
            "scoring": self.scoring,
            "score_formula": self.score_formula,
            "board": self.board.as_dict() if self.board is not None else None,
        }

    def _two_letter_dict(self) -> dict[str, Any] | None:
        if not self.has_two_letter_tiles:
            return None
        return {"values": dict(self.two_letter_values), "default_value": self.two_letter_default}
