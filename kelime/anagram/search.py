"""Answering an anagram question: which words can these tiles make, worth how much.

    >>> from kelime.anagram.index import AnagramIndex, build_index
    >>> index = AnagramIndex.from_buffer(build_index(["kitap", "kat", "tak", "at"]))
    >>> anagram(index, "tak?").as_dict()["words"][0]
    {'word': 'kat', 'score': 4, 'tiles': ['k', 'a', 't']}
    >>> anagram(index, "ia", pattern="k.t.p").as_dict()["words"]
    [{'word': 'kitap', 'score': 12, 'tiles': ['k', 'i', 't', 'a', 'p']}]

Rules (beyond the question's, see `query`):

- A two-letter tile is laid only as a unit, on two side-by-side letters; a word may also
  take those letters from single tiles. Each word gets its best-scoring way to be laid:
  a real tile before a blank, a two-letter tile only when it scores more.
- ``pattern``: the word fills the slot exactly; board letters are not taken from the rack,
  and they count in the score at face value (as the board game counts them) but not
  towards the bingo, which needs `rack_size` tiles from the rack.
- ``sort``: ``score`` (highest first, then Turkish order), ``length`` (longest first, then
  Turkish order) or ``alpha`` (Turkish order). ``count`` counts every answer; the first
  `limit` are listed and ``truncated`` says whether any were left out.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import repeat
from operator import mul, sub
from typing import Any, NamedTuple

from ..games import DEFAULT_GAME, Game, get_game
from .bits import Ids, from_ids
from .index import AnagramIndex
from .limits import Limits
from .plan import Plan, plans
from .query import Query, bounds, make_query
from .rack import BLANK, Rack
from .rank import best_scores, pick, plan_scores
from .select import candidates
from .tiles import lay, lay_singles, place


class Hit(NamedTuple):
    """One word of an answer, with its score and its tiles in word order."""

    word: str
    score: int
    tiles: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"word": self.word, "score": self.score, "tiles": list(self.tiles)}


@dataclass(frozen=True)
class Answer:
    """What ``POST /v1/anagram`` answers, without the ``lexicon`` the service adds."""

    count: int
    truncated: bool
    words: tuple[Hit, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"count": self.count, "truncated": self.truncated,
                "words": [h.as_dict() for h in self.words]}


def _excluded(index: AnagramIndex, query: Query, game: Game) -> int:
    """The ids of the words to exclude that the rack might make: finding a word's id costs
    ~35-130 µs, telling that the rack cannot make it 1-4 µs (its length, or the letters it
    lacks against every letter the question brings, rack, two-letter tiles and board, more
    than the blanks). 1,000 excluded words cost 34-50 ms before, 8-9 ms now (mostly reading
    them: `make_query` normalises each)."""
    low, high = bounds(query, game)
    have = Counter("".join(t for t in query.rack.tiles if t != BLANK))
    if query.pattern is not None:
        have.update(query.pattern.board)
    blanks, letters = query.rack.blanks, set(have)
    maybe = (w for w in query.exclude if low <= len(w) <= high and len(set(w) - letters)
             <= blanks and (Counter(w) - have).total() <= blanks)
    found = (index.id_of(w) for w in maybe)
    return from_ids((i for i in found if i is not None), index.nbytes)


def _laying(word: str, squares: str | None, plan: Plan, rack: Rack, game: Game,
            check: bool = True) -> tuple[list[str], int] | None:
    """(tiles, score) of `word` laid under `plan`, or None when the plan cannot lay it.

    A plan lays the word when its two-letter tiles find their places and real-first laying
    needs no more blanks than the rack has: exactly the plan's set of words. Without
    `check`, the word is known to be one of them.
    """
    if squares is None and not plan.multi:
        tiles, value = lay_singles(word, rack.letters, game.tile_values, game.blank_value)
        score = game.score_parts(value, len(tiles), len(tiles))
    else:
        starts = place(word, squares, plan.multi)
        if starts is None:
            return None
        tiles = lay(word, squares, plan.multi, starts, rack.letters)
        score = game.score(tiles, plan.on_board)
    if check and sum(t[0] == BLANK for t in tiles) > rack.blanks:
        return None
    return tiles, score


def _hit(index: AnagramIndex, game: Game, query: Query, planned: Planned, i: int) -> Hit:
    """Word `i` laid the best way among the plans that can lay it."""
    word, squares = index.word(i), query.pattern.squares if query.pattern else None
    best: Hit | None = None
    for plan, _ in planned:
        laid = _laying(word, squares, plan, query.rack, game, check=len(planned) > 1)
        if laid is not None and (best is None or laid[1] > best.score):
            best = Hit(word, laid[1], tuple(laid[0]))
    assert best is not None  # `i` is a word some plan lays (`choose` chose it)
    return best


def rank(sort: str, size: int, scores: list[int], lengths: list[int],
         ids: list[int]) -> list[int]:
    """The answer's order as one int a word, smallest first: by `sort` (the words'
    `scores`, or their `lengths` in letters), then Turkish order (their `ids`, below `size`)."""
    by = scores if sort == "score" else lengths if sort == "length" else repeat(0)
    return list(map(sub, ids, map(mul, by, repeat(size))))


def _order(hits: list[tuple[Hit, int]], sort: str, size: int) -> list[Hit]:
    """Hits (with their ids: Turkish order) in the query's order."""
    keys = rank(sort, size, [h.score for h, _ in hits], [len(h.word) for h, _ in hits],
                [i for _, i in hits])
    return [hits[j][0] for j in sorted(range(len(hits)), key=keys.__getitem__)]


Planned = list[tuple[Plan, int]]  # each plan and the set of words it lays


def planned(index: AnagramIndex, query: Query, game: Game) -> Planned:
    """Each plan with the set of words it lays (plans that lay none left out)."""
    low, high = bounds(query, game)
    squares = query.pattern.squares if query.pattern else None
    excluded = _excluded(index, query, game) if query.exclude else 0
    found: Planned = []
    for plan in plans(query.rack, query.pattern, query.mode == "exact"):
        members = candidates(index, query.rack, plan, low, high, query.mode == "exact", squares)
        members ^= members & excluded
        if members:
            found.append((plan, members))
    return found


def scores(index: AnagramIndex, query: Query, game: Game, found: Planned,
           everyone: int) -> list[int]:
    """Every word's best score, bit-sliced (see `rank`)."""
    low, high = bounds(query, game)
    return best_scores([plan_scores(index, game, query.rack, p, m, low, high)
                        for p, m in found], everyone)


def choose(index: AnagramIndex, query: Query, game: Game) -> tuple[Planned, int, Ids]:
    """(each plan with its words, every word of the answer, the ids of those listed)."""
    found = planned(index, query, game)
    everyone = 0
    for _, members in found:
        everyone |= members
    ranked = None
    if query.sort == "score" and query.limit and everyone:
        ranked = scores(index, query, game, found, everyone)
    low, high = bounds(query, game)
    return found, everyone, pick(index, everyone, query.sort, query.limit, low, high, ranked)


def answer(index: AnagramIndex, query: Query, game: Game, found: Planned, everyone: int,
           chosen: Ids) -> Answer:
    """The Answer `choose` chose, each listed word laid its best way."""
    hits = [(_hit(index, game, query, found, i), i) for i in chosen.tolist()]
    count = everyone.bit_count()
    return Answer(count, count > len(hits), tuple(_order(hits, query.sort, len(index))))


def search(index: AnagramIndex, query: Query, game: Game) -> Answer:
    """The answer to `query` from `index`, scored by `game`."""
    return answer(index, query, game, *choose(index, query, game))


def question(index: AnagramIndex, rack: str | Rack | Query, game: Game | str | None = None,
             limits: Limits = Limits(), **options: Any) -> tuple[Query, Game]:
    """The checked Query and the Game of `anagram`'s arguments."""
    game = get_game(game or DEFAULT_GAME) if not isinstance(game, Game) else game
    if isinstance(rack, Query):
        if options:
            raise TypeError(f"a Query carries its options; got {', '.join(options)} too")
        return rack, game
    return make_query(rack, game, index.alphabet, limits, **options), game


def anagram(index: AnagramIndex, rack: str | Rack | Query, game: Game | str | None = None,
            limits: Limits = Limits(), **options: Any) -> Answer:
    """Parse, check and answer in one call: ``anagram(index, "kale?[lm]", "kelimatik")``;
    or answer a Query already made (and checked) with `make_query`, with no options."""
    return search(index, *question(index, rack, game, limits, **options))
