"""Brute force: the reference the fast search is tested and measured against.

Every word of the list is tried by laying it square by square with every tile that fits
(single tile, two-letter tile, blank), keeping the best score. Slow and plain on purpose.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

from ..games import Game
from ..normalize import sort_key
from .query import Query
from .rack import BLANK, FREE
from .search import Answer, Hit

Laid = Iterator[tuple[list[str], Counter[str]]]  # (tiles laid, tiles left), each way


def layings(word: str, squares: str | None, tiles: Counter[str]) -> Laid:
    """Every way to lay `word` with `tiles` (and the board's squares): (tiles laid, tiles left)."""
    if squares is not None and len(squares) != len(word):
        return
    yield from _lay(word, 0, squares, tiles, [])


def _lay(word: str, i: int, squares: str | None, left: Counter[str], laid: list[str]) -> Laid:
    if i == len(word):
        yield list(laid), +left
        return
    ch = word[i]
    if squares is not None and squares[i] != FREE:
        if squares[i] == ch:
            yield from _with(word, i, 1, squares, left, laid, ch, None)
        return
    if left[ch] > 0:
        yield from _with(word, i, 1, squares, left, laid, ch, ch)
    for tile in sorted(t for t in left if len(t) > 1 and left[t] > 0):
        if word.startswith(tile, i) and (squares is None or squares[i:i + len(tile)] ==
                                          FREE * len(tile)):
            yield from _with(word, i, len(tile), squares, left, laid, tile, tile)
    if left[BLANK] > 0:
        yield from _with(word, i, 1, squares, left, laid, BLANK + ch, BLANK)


def _with(word: str, i: int, step: int, squares: str | None, left: Counter[str],
          laid: list[str], shown: str, used: str | None) -> Laid:
    if used is not None:
        left[used] -= 1
    laid.append(shown)
    yield from _lay(word, i + step, squares, left, laid)
    laid.pop()
    if used is not None:
        left[used] += 1


def best_laying(word: str, query: Query, game: Game) -> Hit | None:
    """The best-scoring way to lay `word` for the query, or None."""
    squares = query.pattern.squares if query.pattern else None
    board = sum(1 for s in squares if s != FREE) if squares else 0
    best = None
    for laid, left in layings(word, squares, Counter(query.rack.tiles)):
        if query.mode == "exact" and left:
            continue
        score = game.score(laid, board)
        if best is None or score > best.score:
            best = Hit(word, score, tuple(laid))
    return best


def _letters(query: Query) -> tuple[dict[str, int], int]:
    """Every letter the rack and the board could give a word, and the blanks."""
    letters: Counter[str] = Counter()
    for tile in query.rack.tiles:
        if tile != BLANK:
            letters.update(tile)
    if query.pattern is not None:
        letters.update(ch for ch in query.pattern.squares if ch != FREE)
    return dict(letters), query.rack.blanks


def could_lay(word: str, letters: dict[str, int], blanks: int) -> bool:
    """A quick necessary condition: the word's letters, less the blanks, are all available."""
    seen: dict[str, int] = {}
    for ch in word:
        seen[ch] = n = seen.get(ch, 0) + 1
        if n > letters.get(ch, 0):
            blanks -= 1
            if blanks < 0:
                return False
    return True


def brute_search(words: Iterable[str], query: Query, game: Game) -> Answer:
    """The answer `search` must give, found by trying every word."""
    low = max(query.min_length or 0, game.min_length)  # a shorter word is not valid there
    high = query.max_length or 10**6
    letters, blanks = _letters(query)
    hits = []
    for word in set(words):
        if low <= len(word) <= high and word not in query.exclude and could_lay(word, letters,
                                                                                   blanks):
            hit = best_laying(word, query, game)
            if hit is not None:
                hits.append(hit)
    keys = {"score": lambda h: (-h.score, sort_key(h.word)),
            "length": lambda h: (-len(h.word), sort_key(h.word)),
            "alpha": lambda h: sort_key(h.word)}
    hits.sort(key=keys[query.sort])
    return Answer(len(hits), len(hits) > query.limit, tuple(hits[:query.limit]))
