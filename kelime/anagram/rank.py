"""Every candidate's score at once, bit-sliced, and the ids a sorted, limited answer shows.

Under one plan a word's tile value is the sum, over the rack's single letters, of the
letter's value times the real tiles it takes: the c-th copy of a letter beyond the plan's
forced ones is taken by exactly the words in plane "at least forced + c", so the value is
one weighted plane per single tile of the rack. The plan's two-letter tiles and board
letters add a constant; the game's rule then adds its bingo (a length plane) or multiplies
by the tiles used (itself bit-sliced, from the length planes). A word in several plans
keeps its best. Scores need no word to be looked at.
"""

from __future__ import annotations

import numpy as np

from ..games import Game
from .bits import Ids, add, maximum, members, product, top
from .index import AnagramIndex
from .plan import Plan
from .rack import Rack


def _values(index: AnagramIndex, game: Game, rack: Rack, plan: Plan, members: int) -> list[int]:
    """The value of the tiles every member takes under `plan`, bit-sliced."""
    slices: list[int] = []
    for letter, n in rack.letters.items():
        weight, forced = game.tile_value(letter), plan.forced.get(letter, 0)
        for c in range(forced + 1, forced + n + 1):
            taking = index.plane(letter, c) & members
            if not taking or not weight:
                break
            add(slices, taking, weight)
    fixed = sum(game.tile_value(t) for t in plan.multi)
    fixed += sum(n * game.tile_value(letter) for letter, n in plan.board.items())
    add(slices, members, fixed)
    return slices


def _tiles_used(index: AnagramIndex, plan: Plan, members: int, low: int, high: int) -> list[int]:
    """How many tiles every member takes, bit-sliced: its letters less the plan's extras."""
    used: list[int] = []
    for n in range(low, high + 1):
        part = members & index.length_between(n, n)
        if part:  # a word of n letters holds at least `extra` two-letter tiles' worth
            add(used, part, n - plan.extra)
    return used


def plan_scores(index: AnagramIndex, game: Game, rack: Rack, plan: Plan, members: int,
                low: int, high: int) -> list[int]:
    """The score of every member under `plan`, bit-sliced."""
    values = _values(index, game, rack, plan, members)
    if game.scoring == "product":
        values = product(values, _tiles_used(index, plan, members, low, high))
    if game.bingo_bonus:
        bingo = index.length_at_least(game.rack_size + plan.on_board + plan.extra)
        add(values, members & bingo, game.bingo_bonus)
    return values


def best_scores(per_plan: list[list[int]], everyone: int) -> list[int]:
    """Per word, the best of its scores under the plans (a word outside a plan scores 0)."""
    best: list[int] = []
    for scores in per_plan:
        best = maximum(best, scores, everyone) if best else scores
    return best


def pick(index: AnagramIndex, everyone: int, sort: str, limit: int, low: int, high: int,
         scores: list[int] | None) -> Ids:
    """The ids of the answer's first `limit` words, in the answer's order for `alpha` and
    `length`; for `score`, those scoring above the last listed, then those tied with it,
    each in Turkish order: sorted by score alone, stably, they are in the answer's order."""
    if limit <= 0 or not everyone:
        return np.empty(0, np.intp)
    if sort == "score":
        above, tied, need = top(scores or [], everyone, limit)
        return np.concatenate((members(above), members(tied)[:need])) if need else members(above)
    if sort == "alpha":
        return members(everyone)[:limit]
    chosen: list[Ids] = []
    for n in range(high, low - 1, -1):
        if limit <= 0:
            break
        chosen.append(members(everyone & index.length_between(n, n))[:limit])
        limit -= len(chosen[-1])
    return np.concatenate(chosen) if chosen else np.empty(0, np.intp)
