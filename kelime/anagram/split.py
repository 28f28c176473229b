"""Harfbank's question: can this hand be laid out entirely as words, and if not, which
layout leaves the least penalty?

Every tile goes into at most one word of at least the game's minimum length; the tiles
left over cost their values. A hand one tile over the game's `rack_size` (Harfbank's 15th
tile) throws one tile away, free; finishing with the joker multiplies the others' penalty
(the profile's `joker_finish_multiplier`, 2 in Harfbank, stated in the answer's
`others_penalty_multiplier`), so the joker is the first tile tried for throwing.

The search (see `cover`) is exact; it starts from a quick greedy layout, and at
`deadline` it answers its best layout so far with ``complete: false``.

Ranking: least penalty, then fewest tiles left over (a leftover joker costs the profile's
`blank.left_penalty`, 0 in Harfbank, but still leaves the hand unfinished).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from ..games import Game, get_game
from ..normalize import sort_key
from .cover import MOST, Cover, OutOfTime
from .errors import OverLimit
from .index import AnagramIndex
from .limits import Limits
from .query import fit, plays
from .rack import BLANK, Rack, parse_rack
from .usages import Row, Usage, hand_kinds, hand_rows, usage

SCALE = 32  # a leftover tile costs value × SCALE + 1: its value first, then the count


@dataclass(frozen=True)
class Laid:
    """One word of a layout."""

    word: str
    tiles: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        return {"word": self.word, "tiles": list(self.tiles)}


@dataclass(frozen=True)
class Split:
    """What ``POST /v1/split`` answers, without the ``lexicon`` the service adds.

    `discarded`: the tiles left over (not laid out, not thrown); `penalty`: their values;
    `thrown`: the tile thrown away to finish, or None; `others_penalty_multiplier`: what the
    other players' penalty is multiplied by when this hand finishes (2 in Harfbank when the
    joker is thrown, else 1), None when it does not finish.
    """

    found: bool
    complete: bool
    words: tuple[Laid, ...]
    discarded: tuple[str, ...]
    penalty: int
    thrown: str | None = None
    others_penalty_multiplier: int | None = None

    def as_dict(self) -> dict[str, object]:
        return {"found": self.found, "complete": self.complete,
                "words": [w.as_dict() for w in self.words], "discarded": list(self.discarded),
                "penalty": self.penalty, "thrown": self.thrown,
                "others_penalty_multiplier": self.others_penalty_multiplier}


def _throws(rack: Rack, game: Game, kinds: list[str]) -> list[str | None]:
    """The tiles that may be thrown away: none, or each kind (the joker first)."""
    if len(rack) <= game.rack_size:  # a hand of at most rack_size keeps every tile
        return [None]
    return [*sorted(kinds, key=lambda k: (k != BLANK, -game.left_value(k), k))]


def _answer(game: Game, laid: list[Usage], left: list[str], thrown: str | None,
            complete: bool) -> Split:
    words = tuple(Laid(u.word, u.tiles) for u in sorted(laid, key=lambda u: (sort_key(u.word),
                                                                             u.tiles)))
    discarded = sorted(left, key=lambda t: (t == BLANK, t))
    return Split(not left, complete, words, tuple(discarded), game.penalty(left), thrown,
                 None if left else game.others_multiplier(thrown))


#: A layout: (cost, usages, leftover kinds, the tile thrown away).
Layout = tuple[int, list[Row], list[str], str | None]


def _search(search: Cover, full: int, throws: list[str | None]) -> tuple[Layout, bool]:
    """(the best layout found, complete)."""
    best: Layout | None = None
    try:
        for thrown in throws:
            m = full - search.pack({thrown: 1}) if thrown else full
            if best is None:
                best = (*search.greedy(m), thrown)
            got = search.solve(m, best[0])
            if got < best[0]:
                best = (got, *search.layout(m), thrown)
            if best[0] == 0:
                break
    except OutOfTime:
        assert best is not None  # the greedy layout comes before any look at the clock
        return best, False
    assert best is not None  # there is always a first throw (None: none)
    return best, True


def check_hand(rack: Rack, game: Game, what_if: bool = False) -> Rack:
    """The hand, when a split can take it: the game's kinds of tiles, a hand it deals (14 or
    15 Harfbank tiles; any hand with `what_if`), fewer than 32 of a kind; RackError,
    RackNotDealt or OverLimit if not. Cheap, so a server checks it before the question waits
    for its turn."""
    fit(rack, game, what_if)  # the game's tiles, a hand it deals (see `deal`)
    most = max(Counter(rack.tiles).values(), default=0)
    if most > MOST:
        raise OverLimit(f"the hand holds {most} tiles of one kind; a split takes at most "
                        f"{MOST}", {"limit": MOST})
    return rack


def split_rack(index: AnagramIndex, rack: Rack, game: Game, *, deadline: float,
               clock: Callable[[], float] = time.monotonic, what_if: bool = False) -> Split:
    """The best layout of a parsed hand (see `split`)."""
    check_hand(rack, game, what_if)
    cut = []  # set when the clock ran out while the hand's words were still being listed

    def late() -> bool:
        if clock() > deadline:
            cut.append(True)
        return bool(cut)

    rows = hand_rows(index, rack, game.min_length, late)
    kinds = hand_kinds(rack)
    search = Cover.of_rows(kinds, [game.left_value(k) * SCALE + 1 for k in kinds], rows, clock,
                           deadline)
    (cost, laid, left, thrown), complete = _search(search, search.pack(Counter(rack.tiles)),
                                                   _throws(rack, game, kinds))
    complete = complete and (not cut or cost == 0)  # a perfect layout is the best anyway
    return _answer(game, [usage(index, row) for row in laid], left, thrown, complete)


def split(index: AnagramIndex, rack: str | Rack, game: Game | str | None = None,
          limits: Limits = Limits(), *, clock: Callable[[], float] = time.monotonic,
          deadline: float | None = None, what_if: bool = False) -> Split:
    """Lay the hand out as words: ``split(index, "kalem?[lm]…", "harfbank")``.

    `deadline` is a `clock()` reading (default: now plus ``limits.time_budget``); `what_if`
    lays out a hand the game cannot deal (`deal`) rather than refusing it.
    """
    game = get_game(game or "harfbank") if not isinstance(game, Game) else game
    parsed = rack if isinstance(rack, Rack) else parse_rack(rack, index.alphabet, limits)
    plays(game, index.alphabet)
    if deadline is None:
        deadline = clock() + limits.time_budget
    return split_rack(index, parsed, game, deadline=deadline, clock=clock, what_if=what_if)
