"""The board's text format (`kelime.board.text`), read by `kelime play`/`moves` and the
page's paste box: a board written as text reads back as itself, a blank's upper case is
Turkish (İ a blank i, I a blank ı), and a board that cannot be read names its line and
column."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kelime.board import BoardShapeError, Position, board_text, read_board
from kelime.games import GAMES

KELIMELIK = GAMES["kelimelik"]
LETTERS = sorted(KELIMELIK.letter_values)
CELLS = st.one_of(st.just(""), st.sampled_from(LETTERS),
                  st.sampled_from(LETTERS).map(lambda ch: "?" + ch))
BOARDS = st.lists(st.lists(CELLS, min_size=15, max_size=15), min_size=15, max_size=15)


@settings(max_examples=200, deadline=None)
@given(BOARDS, st.sampled_from(["kelimelik", "sozce"]))
def test_a_board_written_as_text_reads_back_as_itself(board, game):
    spot = Position.read(board, GAMES[game])
    text = board_text(spot)
    assert read_board(text, GAMES[game]) == spot
    assert read_board(json.dumps(board), GAMES[game]) == spot
    lines = text.splitlines()
    assert len(lines) == 15 and all(len(line) == 15 for line in lines)


@settings(max_examples=50, deadline=None)
@given(BOARDS, st.lists(st.sampled_from(["", "   ", "\t"]), min_size=15, max_size=15))
def test_blank_lines_and_trailing_spaces_are_ignored(board, ends):
    spot = Position.read(board, KELIMELIK)
    text = "\n\n".join(line + end for line, end in zip(board_text(spot).splitlines(), ends))
    assert read_board("\n" + text + "\n\n", KELIMELIK) == spot


def test_upper_case_is_a_blank_by_turkish_casing():
    text = "\n".join(["." * 15] * 7 + ["....İIkalŞÇ...."] + ["." * 15] * 7)
    spot = read_board(text, KELIMELIK)
    assert spot.rows()[7][4:10] == ["?i", "?ı", "k", "a", "l", "?ş"]
    assert board_text(spot).splitlines()[7] == "....İIkalŞÇ...."
    decomposed = text.replace("İ", "I\u0307")  # İ as I + a combining dot: the same İ
    assert read_board(decomposed, KELIMELIK) == spot


def test_an_empty_text_is_an_empty_board():
    assert read_board("", KELIMELIK).empty and read_board("\n \n", KELIMELIK).empty


@pytest.mark.parametrize("text, message, details", [
    ("\n".join(["." * 15] * 3 + ["...q..........."] + ["." * 15] * 11),
     "line 4, column 4 (row 3, column 3) is 'q'", {"line": 4, "column": 4, "row": 3, "col": 3}),
    ("\n".join(["." * 15] * 2 + ["." * 16] + ["." * 15] * 12),
     "line 3 (row 2) has 16 squares, not 15", {"line": 3, "row": 2, "size": 15}),
    ("\n".join(["." * 15] * 16), "line 16 is a row too many", {"line": 16, "size": 15}),
    ("\n".join(["." * 15] * 3), "the board has 3 rows, not 15", {"rows": 3, "size": 15}),
    ("[[", "the board is not JSON: Expecting value at line 1, column 3",
     {"line": 1, "column": 3}),
])
def test_a_board_that_cannot_be_read_names_the_line_and_column(text, message, details):
    with pytest.raises(BoardShapeError) as e:
        read_board(text, KELIMELIK)
    assert message in str(e.value) and e.value.details == details


def test_a_game_without_a_board_is_refused():
    with pytest.raises(BoardShapeError, match="kelimatik is not played on a board"):
        read_board("", GAMES["kelimatik"])
