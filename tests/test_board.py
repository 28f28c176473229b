"""Board play (kelime.board): the move search equals a brute force written from the rules
(tests/board_brute.py) move for move and score for score, `check` agrees with it on every
move and refuses each kind of illegal placement, and scoring follows "Puan Hesaplama"."""

from __future__ import annotations

import random
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kelime.board import (
    BoardRackError,
    BoardShapeError,
    Position,
    Tile,
    TilesError,
    check,
    lay,
    move_dict,
    moves,
    read_tiles,
    word_graph,
)
from kelime.board.moves import BoardLimits, order
from kelime.games import GAMES
from kelime.lexicon import Lexicon
from tests.board_brute import Lexicon as BruteLexicon
from tests.board_brute import brute_moves

KELIMELIK, SOZCE = GAMES["kelimelik"], GAMES["sozce"]
SIZE = 15


def empty_board() -> list[list[str]]:
    return [[""] * SIZE for _ in range(SIZE)]


def cells(grid, blanks):
    return [["?" + ch if (r, c) in blanks else ch for c, ch in enumerate(row)]
            for r, row in enumerate(grid)]


@pytest.fixture(scope="module")
def tr_words(offline_lexicons) -> list[str]:
    return list(Lexicon.load(offline_lexicons / "tr").words.keys())


def small_lexicon(words: list[str], seed: int) -> list[str]:
    """Every two-letter word and a few hundred others of 3–7 letters: dense enough for
    crossings, small enough for the brute force."""
    rng = random.Random(seed)
    return sorted(w for w in words if len(w) == 2 or (len(w) <= 7 and rng.random() < 0.008))


def engine_moves(found) -> dict:
    return {frozenset((t.row, t.col, t.letter, t.blank) for t in m.tiles):
            (m.main.row, m.main.col, m.main.direction, m.main.word, m.score,
             tuple((w.word, w.score) for w in m.words)) for m in found.moves}


def compare(grid, blanks, game, words, graph, brute_lexicon, rack):
    """The engine's moves are the brute force's, in the documented order, and `check`
    scores each the same; returns the brute force's moves."""
    spot = Position.read(cells(grid, blanks), game)
    found = moves(spot, rack, graph)
    expected = brute_moves(grid, blanks, game, brute_lexicon, rack)
    assert found.complete
    assert engine_moves(found) == expected, (rack, cells(grid, blanks))
    assert found.count == len(found.moves) == len(expected)
    assert found.moves == sorted(found.moves, key=order)
    for move in found.moves:
        said = check(spot, move.tiles, lambda w: None if w in words else "not_in_dictionary")
        assert said["legal"] and said["score"] == move.score
        assert [w["word"] for w in said["words"]] == [w.word for w in move.words]
    return expected


def rack_of(rng, game, blanks):
    bag = "".join(ch * n for ch, n in (KELIMELIK.letter_counts or {}).items())
    return "".join(rng.sample(bag, game.rack_size - blanks)) + "?" * blanks


def play_games(words, seed, positions, game_names=("kelimelik", "sozce"), turns=8,
               blank_counts=(0, 1, 2)):
    """`positions` positions: empty boards and the boards of random legal moves (chosen
    from the brute force's list), racks with 0, 1 and 2 blanks, both games."""
    rng, graph, brute = random.Random(seed), word_graph(words), BruteLexicon(words)
    seen = 0
    while seen < positions:
        game = GAMES[game_names[seen % len(game_names)]]
        grid, blanks = empty_board(), set()
        for turn in range(turns):
            rack = rack_of(rng, game, blanks=blank_counts[(seen + turn) % len(blank_counts)])
            found = compare(grid, blanks, game, set(words), graph, brute, rack)
            seen += 1
            if not found or seen >= positions:
                break
            for r, c, ch, blank in rng.choice(sorted(found, key=sorted)):
                grid[r][c] = ch
                if blank:
                    blanks.add((r, c))
    return seen


def test_moves_equal_the_brute_force_on_300_positions(tr_words):
    assert play_games(small_lexicon(tr_words, 1), seed=7, positions=300) == 300


def test_moves_equal_the_brute_force_on_the_offline_lexicon(tr_words):
    """Fewer positions, racks without blanks and with one: the brute force reads 40,000
    words a slot."""
    assert play_games(tr_words, seed=3, positions=4, turns=2, blank_counts=(0, 1)) == 4


def test_the_best_moves_asked_are_the_first_of_all_moves(tr_words):
    """With a `limit` the search keeps only the best moves (and counts the rest): the same
    count and the same first moves, on mid-game boards where 2 blanks make thousands."""
    rng, graph = random.Random(5), word_graph(tr_words)
    grid = empty_board()
    for turn in range(6):
        spot = Position.read(grid, KELIMELIK)
        rack = rack_of(rng, KELIMELIK, blanks=turn % 3)
        every = moves(spot, rack, graph)
        for limit in (0, 1, 20):
            best = moves(spot, rack, graph, limit=limit)
            assert (best.count, best.keys, best.complete) == (
                every.count, every.keys[:limit], every.complete), (rack, limit)
        assert best.as_dict(20) == every.as_dict(20)
        for t in rng.choice(every.best(30)).tiles:
            grid[t.row][t.col] = t.letter


def test_a_one_tile_move_is_listed_once_in_its_longer_words_direction():
    grid = empty_board()
    grid[7][6:8] = ["e", "v"]        # "a" after ev: eva across, nothing down
    words = word_graph(["ev", "eva", "at", "ta", "ev"])
    spot = Position.read(grid, KELIMELIK)
    one = [m for m in moves(spot, "a", words).moves if len(m.tiles) == 1]
    assert [(m.main.word, m.main.direction) for m in one] == [("eva", "across")]


def test_illegal_placements_of_each_kind():
    grid = empty_board()
    first = Position.read(grid, KELIMELIK)
    def valid(word: str) -> None:  # every word valid: only the placement is judged
        return None

    def reason(spot, *tiles):
        said = check(spot, [Tile(*t) for t in tiles], valid)
        assert not said["legal"] and said["score"] == 0 and said["message"]
        return said["reason"], said["message"]

    assert reason(first, (7, 5, "k"), (7, 6, "a")) == (
        "off_centre", "the first play must cover the centre (row 7, column 7)")
    assert reason(first, (7, 7, "o"))[0] == "one_letter"
    assert reason(first, (7, 7, "e"), (7, 9, "v")) == (
        "gap", "row 7, column 8 is empty between the tiles at row 7, column 7 and row 7, "
               "column 9: a play is contiguous")
    assert reason(first, (7, 7, "e"), (8, 8, "v"))[0] == "not_in_line"
    grid[7][6:8] = ["e", "v"]
    later = Position.read(grid, KELIMELIK)
    assert reason(later, (2, 2, "a"), (2, 3, "t"))[0] == "not_touching"
    assert reason(later)[0] == "no_tiles"
    with pytest.raises(TilesError, match="row 7, column 7.* is on a taken square: 'v'"):
        read_tiles([{"row": 7, "col": 7, "letter": "a"}], later)


def test_a_malformed_board_or_rack_says_where():
    grid = empty_board()
    grid[3][4] = "X"
    with pytest.raises(BoardShapeError, match="row 3, column 4 is 'X'"):
        Position.read(grid, KELIMELIK)
    with pytest.raises(BoardShapeError, match="must be 15 rows of 15 cells .*not 14"):
        Position.read(grid[:14], KELIMELIK)
    with pytest.raises(BoardShapeError, match="kelimatik is not played on a board"):
        Position.read(empty_board(), GAMES["kelimatik"])
    with pytest.raises(BoardRackError, match="'x'"):
        moves(Position.read(empty_board(), KELIMELIK), "kalex", word_graph(["kale"]))


def test_a_letter_in_another_unicode_form_is_that_letter():
    """ş sent decomposed (s + U+0327, as macOS writes it) is the letter ş on the board and
    in a tile, not "'ş' is not a letter of kelimelik (…ş…)"."""
    decomposed = unicodedata.normalize("NFD", "ş")
    grid = empty_board()
    grid[7][7], grid[7][8] = "k", "?" + decomposed
    spot = Position.read(grid, KELIMELIK)
    assert spot.letters[7][7:9] == ("k", "ş") and (7, 8) in spot.blanks
    assert read_tiles([{"row": 8, "col": 7, "letter": decomposed}], spot) == (Tile(8, 7, "ş"),)


def test_a_search_over_its_work_says_it_is_incomplete():
    spot = Position.read(empty_board(), KELIMELIK)
    words = word_graph(["kale", "ak", "el", "kel", "elak", "kaleler"])
    full, cut = moves(spot, "kale??", words), moves(spot, "kale??", words, BoardLimits(work=60))
    assert full.complete and not cut.complete and 0 < cut.count < full.count
    assert move_dict(full.moves[0])["score"] == full.moves[0].score


# Scoring: "Puan Hesaplama" in kelimelik-style-rules.tr.txt, sentence by sentence.

def score_of(grid, *tiles, game=KELIMELIK):
    play = lay(Position.read(grid, game), [Tile(*t) for t in tiles])
    assert play.legal
    return [(w.word, w.score) for w in play.words], play.score


def test_the_rules_worked_examples():
    # "Merkez hücre çifte kelime bonusu sağlar": kale over the centre, (1+1+1+1) × 2.
    board = empty_board()
    assert score_of(board, (7, 7, "k"), (7, 8, "a"), (7, 9, "l"), (7, 10, "e")) == (
        [("kale", 8)], 8)
    # "Boş harfler puan sağlamaz ancak … kelime bonus puanı kazanılır": a blank k, (0+1+1+1) × 2.
    assert score_of(board, (7, 7, "k", True), (7, 8, "a"), (7, 9, "l"), (7, 10, "e")) == (
        [("kale", 6)], 6)
    # "Bir kelime birden fazla kelime bonusundan geçiyorsa çarpanlar üst üste çarpılır":
    # row 7 from the K2 at column 2 to the centre's K2: (1+1+1+1+2+1) × 2 × 2.
    assert score_of(board, *[(7, c, ch) for c, ch in zip(range(2, 8), "kalemi")])[1] == 28
    # "tüm 7 harfi … ekstra 50 puan" once the words are scored (Sözce: 7 × 7 = 49).
    seven = [(7, c, ch) for c, ch in zip(range(1, 8), "kalemle")]
    assert score_of(board, *seven)[1] == 8 * 4 + 50
    assert score_of(board, *seven, game=SOZCE)[1] == 8 * 4 + 49
    # "önce harf bonusu hesaplanır ve sonra kelime bonusu o hesapla çarpılır", and "bonus,
    # üstünden geçen bütün kelimelere uygulanır": row 0 from the K3 (0, 2) to the H2 (0, 5),
    # its k also making "ka" down with the a at (1, 2).
    board[1][2] = "a"
    assert score_of(board, (0, 2, "k"), (0, 3, "a"), (0, 4, "l"), (0, 5, "e")) == (
        [("kale", (1 + 1 + 1 + 1 * 2) * 3), ("ka", (1 + 1) * 3)], 15 + 6)


def test_a_bonus_counts_only_in_the_play_that_covers_it():
    board = empty_board()
    board[7][7:10] = ["k", "a", "l"]         # kal, played over the centre's K2
    assert score_of(board, (7, 10, "e")) == ([("kale", 4)], 4)   # no K2 again: 1+1+1+1
    # The H2 at (6, 8) under a new o counts in both words through it, the old tiles plain.
    assert score_of(board, (6, 8, "o"), (6, 9, "n")) == (
        [("on", 2 * 2 + 1), ("oa", 2 * 2 + 1), ("nl", 1 + 1)], 12)


LETTERS = sorted(KELIMELIK.letter_values)


@settings(max_examples=60, deadline=None)
@given(word=st.lists(st.sampled_from(LETTERS), min_size=2, max_size=7),
       col=st.integers(0, 8), blanks=st.lists(st.booleans(), min_size=7, max_size=7))
def test_an_across_word_scores_by_the_rules(word, col, blanks):
    """Row 7 through the centre: Σ value × letter bonus (a blank 0), × every word bonus."""
    start = min(col, 7)
    if start + len(word) <= 7:
        start = 8 - len(word)
    tiles = [(7, start + i, ch, blanks[i]) for i, ch in enumerate(word)]
    layout, letters, times = KELIMELIK.board, 0, 1
    for r, c, ch, blank in tiles:
        bonus = layout.bonus(r, c)
        value = 0 if blank else KELIMELIK.letter_values[ch]
        letters += value * (int(bonus[1]) if bonus[:1] == "H" else 1)
        times *= int(bonus[1]) if bonus[:1] == "K" else 1
    bingo = 50 if len(word) == 7 else 0
    assert score_of(empty_board(), *tiles)[1] == letters * times + bingo


@settings(max_examples=40, deadline=None)
@given(word=st.lists(st.sampled_from(LETTERS), min_size=2, max_size=7), shift=st.integers(0, 6))
def test_across_and_down_score_alike(word, shift):
    """The layout is symmetric about its diagonal: a play turned a quarter scores the same."""
    start = max(0, min(7, 7 - shift))
    if start + len(word) <= 7:
        start = 8 - len(word)
    across = [(7, start + i, ch) for i, ch in enumerate(word)]
    down = [(c, r, ch) for r, c, ch in across]
    assert score_of(empty_board(), *across)[1] == score_of(empty_board(), *down)[1]
