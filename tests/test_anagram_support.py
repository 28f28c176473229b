"""Shared by the anagram tests (holds no tests): hypothesis strategies for small lexicons,
racks and questions, and checkers that re-derive an answer's claims from its tiles alone."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from hypothesis import strategies as st

from kelime.anagram.brute import layings
from kelime.anagram.index import AnagramIndex, build_index
from kelime.anagram.query import Query, make_query
from kelime.anagram.rack import BLANK, FREE
from kelime.games import GAMES, Game

LETTERS = "aeıklmrş"   # few letters, so that small lexicons share many of them
BIGRAMS = ["lm", "ar", "ke", "ış"]

words = st.text(alphabet=LETTERS, min_size=1, max_size=6)
lexicons = st.lists(words, min_size=3, max_size=60)
# Besides the real games, two small ones whose bingo small lexicons can reach.
MINI = replace(GAMES["kelimelik"], name="mini", rack_size=4, bingo_bonus=10)
MINI_PRODUCT = replace(GAMES["kelimatik"], name="miniproduct", rack_size=4, bingo_bonus=5,
                       two_letter_values={"lm": 4, "ar": 0})
# (Turkish games: Kurdish Kelimatik's tiles are Kurmanji letters, these racks Turkish ones.)
TURKISH_GAMES = sorted((g for g in GAMES.values() if g.lexicon is None), key=lambda g: g.name)
games = st.sampled_from(TURKISH_GAMES + [MINI, MINI_PRODUCT])


def rack_text(tiles: list[str]) -> str:
    return "".join(f"[{t}]" if len(t) > 1 else t for t in tiles)


@st.composite
def questions(draw, lexicon: list[str], game: Game, max_blanks: int = 2):
    """(rack tiles, pattern or None) aimed at a lexicon word: its letters (those on open
    squares when there is a pattern), some turned into blanks or two-letter tiles, some
    dropped, plus spare letters and blanks; never more tiles or blanks than the game deals."""
    target = draw(st.sampled_from(lexicon))
    pattern = None
    if draw(st.integers(0, 2)) == 0:
        keep = draw(st.lists(st.booleans(), min_size=len(target), max_size=len(target)))
        pattern = "".join(ch if k else FREE for ch, k in zip(target, keep))
        pattern = pattern if FREE in pattern else FREE + pattern[1:]
    open_ = [i for i, s in enumerate(pattern or FREE * len(target)) if s == FREE]
    tiles, i = [], 0
    while i < len(open_):
        at = open_[i]
        pair = i + 1 < len(open_) and open_[i + 1] == at + 1
        if pair and game.has_two_letter_tiles and draw(st.integers(0, 3)) == 0:
            tiles.append(target[at:at + 2])
            i += 2
            continue
        choice = draw(st.integers(0, 9))
        tiles += [] if choice == 0 else [BLANK] if choice == 1 else [target[at]]
        i += 1
    tiles += draw(st.lists(st.sampled_from(LETTERS), max_size=3))
    tiles += [BLANK] * draw(st.integers(0, 1))
    if game.has_two_letter_tiles:
        tiles += draw(st.lists(st.sampled_from(BIGRAMS), max_size=1))
    for _ in range(max(0, tiles.count(BLANK) - min(max_blanks, game.blanks))):
        tiles.remove(BLANK)
    return draw(st.permutations(tiles))[:game.rack_size + game.discard] or [BLANK], pattern


@st.composite
def asked(draw, options=lambda lexicon: st.just({})):
    """(lexicon, game, the lexicon's index, a checked Query): a rack and pattern drawn by
    `questions`, with the options `options(lexicon)` draws."""
    lexicon, game = draw(lexicons), draw(games)
    tiles, pattern = draw(questions(lexicon, game))
    index = AnagramIndex.from_buffer(build_index(lexicon))
    query = make_query(rack_text(tiles), game, index.alphabet, pattern=pattern, what_if=True,
                       **draw(options(lexicon)))
    return lexicon, game, index, query


def square_spans(tiles) -> list[tuple[int, int]]:
    """(first square, squares covered) of each tile."""
    spans, at = [], 0
    for tile in tiles:
        size = len(tile) - (tile[0] == BLANK)
        spans.append((at, size))
        at += size
    return spans


def rack_kind(tile: str) -> str:
    return BLANK if tile[0] == BLANK else tile


def check_hit(hit, query: Query, game: Game, lexicon: set[str]) -> None:
    """Everything a hit claims holds: a word of the lexicon, laid with the rack's tiles."""
    assert hit.word in lexicon and hit.word not in query.exclude
    tiles = list(hit.tiles)
    assert "".join(t[1:] if t[0] == BLANK else t for t in tiles) == hit.word
    squares = query.pattern.squares if query.pattern else None
    used, board = Counter(), 0
    for tile, (at, size) in zip(tiles, square_spans(tiles)):
        if squares is not None and any(squares[at + i] != FREE for i in range(size)):
            assert size == 1 and tile == squares[at], (hit, squares)
            board += 1
        else:
            used[rack_kind(tile)] += 1
    if squares is not None:
        assert len(hit.word) == len(squares)
    rack = Counter(query.rack.tiles)
    assert not used - rack, (hit, query.rack)
    if query.mode == "exact":
        assert used == rack
    low = query.min_length or game.min_length
    assert low <= len(hit.word) <= (query.max_length or 99)
    assert hit.score == game.score(tiles, board)


def check_layout(answer, hand: list[str], game: Game, lexicon: set[str]) -> None:
    """A split's words use the hand's tiles exactly once; discarded and penalty add up."""
    used = Counter()
    for laid in answer.words:
        assert laid.word in lexicon and len(laid.word) >= game.min_length
        assert "".join(t[1:] if t[0] == BLANK else t for t in laid.tiles) == laid.word
        used.update(rack_kind(t) for t in laid.tiles)
    thrown = [answer.thrown] if answer.thrown is not None else []
    assert used + Counter(answer.discarded) + Counter(thrown) == Counter(hand)
    assert not thrown or len(hand) == game.rack_size + 1
    left = list(answer.discarded)
    assert answer.penalty == game.penalty(left)
    assert answer.found == (not left)
    assert answer.others_penalty_multiplier == (
        None if left else game.joker_finish_multiplier if answer.thrown == BLANK else 1)


def best_split(hand: list[str], game: Game, lexicon: list[str]) -> tuple[int, int]:
    """The least (penalty, tiles left) over every layout, by trying them all (small hands)."""
    tiles = Counter(hand)
    options = {tuple(sorted((+Counter(hand) - left).elements()))
               for w in lexicon if len(w) >= game.min_length
               for _, left in layings(w, None, Counter(tiles))}
    throws = [None] if len(hand) <= game.rack_size else sorted(set(hand))

    def best(left: Counter) -> tuple[int, int]:
        result = (game.penalty(list(left.elements())), sum(left.values()))
        for option in options:
            need = Counter(option)
            if not need - left:
                result = min(result, best(left - need))
        return result

    return min(best(tiles - Counter([t] if t else [])) for t in throws)


def plain_best(hand: list[str], usages, game: Game) -> tuple[int, int]:
    """The least (penalty, tiles left) by a plain memoised search over the given usages: no
    bounds, no pruning; the reference for hands too big to try every layout of."""
    kinds = sorted(set(hand))
    vectors = {tuple(u.takes.get(k, 0) for k in kinds) for u in usages}
    starting = {i: [v for v in vectors if next(j for j, n in enumerate(v) if n) == i]
                for i in range(len(kinds))}
    memo: dict[tuple, tuple[int, int]] = {}

    def best(m: tuple) -> tuple[int, int]:
        if not any(m):
            return 0, 0
        if m not in memo:
            k = next(i for i, n in enumerate(m) if n)
            penalty, left = best(m[:k] + (m[k] - 1,) + m[k + 1:])
            result = (penalty + game.tile_value(kinds[k]), left + 1)
            for v in starting[k]:
                if all(a >= b for a, b in zip(m, v)):
                    result = min(result, best(tuple(a - b for a, b in zip(m, v))))
            memo[m] = result
        return memo[m]

    full = tuple(hand.count(k) for k in kinds)
    if len(hand) <= game.rack_size:
        return best(full)
    return min(best(full[:i] + (full[i] - 1,) + full[i + 1:]) for i in range(len(kinds)))
