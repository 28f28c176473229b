"""`kelime moves` and `kelime play`: --json prints exactly what POST /v1/moves and
POST /v1/play answer, the board is read from a file, standard input or the API's JSON, a
bad board names its line and column (exit 2), and `play` exits 0, 1 or 2 as `check` does."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from kelime.cli import cli
from kelime.cli.board import read_tile_list, tiles_text
from kelime.games import GAMES
from kelime.service.app import create_app
from kelime.service.settings import Settings
from tests.service_helpers import TestClient


def turkish_upper(letter: str) -> str:
    return {"i": "İ", "ı": "I"}.get(letter, letter.upper())



KELIME = [sys.executable, "-c", "from kelime.cli import main; main()"]


def board_lines(**rows: str) -> list[str]:
    """An empty board's 15 lines, with rows given as `r7=".....kitap....."`."""
    lines = ["." * 15] * 15
    for key, line in rows.items():
        lines[int(key[1:])] = line
    return lines


KITAP = board_lines(r7=".....kitap.....")
#: The same board as the API takes it.
KITAP_JSON = [[ch if ch != "." else "" for ch in line] for line in KITAP]


@pytest.fixture
def board_file(tmp_path):
    def write(lines: list[str] | str, name: str = "board.txt"):
        path = tmp_path / name
        path.write_text(lines if isinstance(lines, str) else "\n".join(lines) + "\n",
                        encoding="utf-8")
        return str(path)
    return write


@pytest.fixture(scope="module")
def api(data_dir):
    with TestClient(create_app(Settings(data=data_dir))) as client:
        yield client


def kelime(data_dir, *args, input=None):
    return CliRunner().invoke(cli, [*args, "--data", str(data_dir)], input=input)


@pytest.mark.parametrize("rack, lines, body", [
    ("kitap", None, {"rack": "kitap"}),
    ("ev?", KITAP, {"rack": "ev?", "board": KITAP_JSON}),
    ("ilk?", KITAP, {"rack": "ilk?", "board": KITAP_JSON, "limit": 2}),
    ("kil?", board_lines(r7="......aT......."), {"rack": "kil?", "game": "sozce",
                                                 "board": [[""] * 15] * 7 + [
                                                     [""] * 6 + ["a", "?t"] + [""] * 7]
                                                 + [[""] * 15] * 7}),
])
def test_moves_json_is_the_api_answer(data_dir, api, board_file, rack, lines, body):
    args = ["moves", rack, *([board_file(lines)] if lines else []), "--json",
            "--game", body.get("game", "kelimelik")]
    if "limit" in body:
        args += ["--limit", str(body["limit"])]
    run = kelime(data_dir, *args)
    assert run.exit_code == 0, run.output
    reply = api.post("/v1/moves", json={"game": "kelimelik",
                                        "board": [[""] * 15 for _ in range(15)], **body})
    assert reply.status_code == 200, reply.text
    assert json.loads(run.output) == reply.json()
    assert reply.json()["count"] > 0


def test_a_rack_the_game_cannot_deal_exits_2_unless_what_if(data_dir, api, board_file):
    """Two j's (kelimelik's bag has one) are refused as POST /v1/moves refuses them: exit 2,
    the API's error object with --json, a sentence naming --what-if without; --what-if
    answers as `"what_if": true` does. More tiles than a rack holds are the search's bound,
    with --what-if or without (it was the deal's error, whose advice, --what-if, met the
    bound): exit 2, over_limit."""
    args = ["moves", "jjev", board_file(board_lines()), "--data", str(data_dir)]
    body = {"game": "kelimelik", "board": [[""] * 15 for _ in range(15)], "rack": "jjev"}
    run = subprocess.run([*KELIME, *args], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and run.stdout == "", run
    assert run.stderr.startswith("Error: Kelimelik's bag has 1 j; this rack has 2")
    assert "--what-if in the CLI" in run.stderr, run.stderr
    refused = kelime(data_dir, *args[:3], "--json")
    reply = api.post("/v1/moves", json=body)
    assert reply.status_code == 422 and reply.json()["error"]["code"] == "rack_not_dealt"
    assert refused.exit_code == 2 and json.loads(refused.output) == reply.json()
    answered = kelime(data_dir, *args[:3], "--what-if", "--json")
    reply = api.post("/v1/moves", json={**body, "what_if": True})
    assert reply.status_code == 200 and reply.json()["count"] > 0, reply.text
    assert answered.exit_code == 0 and json.loads(answered.output) == reply.json()
    for what_if in (["--what-if"], []):
        over = kelime(data_dir, "moves", "kitapeve", *what_if, "--json")
        assert over.exit_code == 2 and json.loads(over.output)["error"]["code"] == "over_limit"


@pytest.mark.parametrize("tiles, sent, status", [
    ("8,8,t", [{"row": 8, "col": 8, "letter": "t"}], 0),  # at, down from kitap's a
    ("8,8,T", [{"row": 8, "col": 8, "letter": "t", "blank": True}], 0),  # a blank t
    ("8,6,l 9,6,İ 10,6,k", [{"row": 8, "col": 6, "letter": "l"},
                            {"row": 9, "col": 6, "letter": "i", "blank": True},
                            {"row": 10, "col": 6, "letter": "k"}], 0),  # ilik, a blank i
    ("8,6,l 9,6,?i 10,6,k", [{"row": 8, "col": 6, "letter": "l"},
                             {"row": 9, "col": 6, "letter": "i", "blank": True},
                             {"row": 10, "col": 6, "letter": "k"}], 0),
    ("7,10,e", [{"row": 7, "col": 10, "letter": "e"}], 1),  # kitape: not a word
    ("6,9,?e 7,10,v", [{"row": 6, "col": 9, "letter": "e", "blank": True},
                       {"row": 7, "col": 10, "letter": "v"}], 1),  # not in one line
    ("9,8,t", [{"row": 9, "col": 8, "letter": "t"}], 1),  # touches nothing
])
def test_play_json_is_the_api_answer_and_its_status_the_verdict(
        data_dir, api, board_file, tiles, sent, status):
    run = kelime(data_dir, "play", board_file(KITAP), "--tiles", tiles, "--json")
    reply = api.post("/v1/play", json={"game": "kelimelik", "board": KITAP_JSON, "tiles": sent})
    assert reply.status_code == 200, reply.text
    assert json.loads(run.output) == reply.json()
    body = reply.json()
    assert run.exit_code == (0 if body["legal"] and all(w["valid"] for w in body["words"])
                             else 1) == status, run.output


@pytest.mark.parametrize("args, code, where", [
    (["--tiles", "7,7,e"], "invalid_tiles", "tile 0 (row 7, column 7) is on a taken square"),
    (["--tiles", "7,10,e;8,10,v"], "invalid_tiles", "tile 0 is '7,10,e;8,10,v': a tile is"),
    (["--tiles", "8,8,x"], "invalid_tiles", "'x' is not a letter of kelimelik"),
    (["--tiles", "15,8,e"], "invalid_tiles", "off the board"),
    (["--tiles", "1" * 5000 + ",8,e"], "invalid_tiles", "row or column is off the board"),
    (["--tiles", "\u0667,8,e"], "invalid_tiles", "a tile is ROW,COL,LETTER"),
])
def test_tiles_that_cannot_be_laid_exit_2_naming_the_tile(data_dir, board_file, args, code,
                                                          where):
    run = kelime(data_dir, "play", board_file(KITAP), *args)
    assert run.exit_code == 2 and where in run.output, run.output
    run = kelime(data_dir, "play", board_file(KITAP), *args, "--json")
    assert run.exit_code == 2 and json.loads(run.output)["error"]["code"] == code


@pytest.mark.parametrize("text, where", [
    ("\n".join(board_lines(r3="...x...........")), "line 4, column 4 (row 3, column 3) is 'x'"),
    ("\n".join(board_lines(r3="..............")), "line 4 (row 3) has 14 squares, not 15"),
    ("\n".join(board_lines()[:14]), "the board has 14 rows, not 15"),
    ("\n\n" + "\n".join(board_lines(r0="ê" + "." * 14)), "line 3, column 1 (row 0, column 0)"),
    ('{"rack": "a"}', 'the JSON object has no "board"'),
    ("[[]]", "the board must be 15 rows of 15 cells"),
    (json.dumps([[""] * 15] * 7 + [[""] * 7 + ["x"] + [""] * 7] + [[""] * 15] * 7),
     "the cell at row 7, column 7 is 'x'"),
])
@pytest.mark.parametrize("command", ["moves kitap BOARD", "play BOARD --tiles 7,7,e"])
def test_a_bad_board_exits_2_naming_where(data_dir, board_file, text, where, command):
    args = [board_file(text) if a == "BOARD" else a for a in command.split()]
    run = kelime(data_dir, *args)
    assert run.exit_code == 2, run.output
    assert run.output.startswith("Error: ") and where in run.output, run.output
    run = kelime(data_dir, *args, "--json")
    assert run.exit_code == 2 and json.loads(run.output)["error"]["code"] == "invalid_board"


def test_a_board_from_standard_input_or_json_is_the_same_board(data_dir, board_file):
    by_file = kelime(data_dir, "moves", "ev?", board_file(KITAP), "--json").output
    by_stdin = kelime(data_dir, "moves", "ev?", "-", "--json", input="\n".join(KITAP)).output
    by_json = kelime(data_dir, "moves", "ev?", board_file(json.dumps(KITAP_JSON), "b.json"),
                     "--json").output
    by_body = kelime(data_dir, "moves", "ev?", "--json",
                     board_file(json.dumps({"board": KITAP_JSON, "rack": "x"}), "body.json"),
                     ).output
    spaced = "\n\n".join(line + "   " for line in KITAP)  # blank lines, trailing spaces
    by_spaced = kelime(data_dir, "moves", "ev?", board_file(spaced, "s.txt"), "--json").output
    assert by_file == by_stdin == by_json == by_body == by_spaced
    assert json.loads(by_file)["count"] > 0


def test_the_table_lists_each_move_and_the_best_one_plays_as_listed(data_dir, board_file):
    answer = json.loads(kelime(data_dir, "moves", "kat??", board_file(KITAP), "--json").output)
    out = kelime(data_dir, "moves", "kat??", board_file(KITAP)).output.splitlines()
    assert out[0] == f"kat?? · kelimelik · {answer['count']} moves, the best 20"
    assert out[1].split() == ["score", "word", "row", "col", "direction", "tiles"]
    rows = out[2:2 + len(answer["moves"])]
    for line, move in zip(rows, answer["moves"]):
        score, word, row, col, direction, *tiles = line.split()
        assert (int(score), word, int(row), int(col), direction) == (
            move["score"], move["word"], move["row"], move["col"], move["direction"])
        assert tiles == [f"{t['row']},{t['col']},{'?' if t['blank'] else ''}{t['letter']}"
                         for t in move["tiles"]]
    best = answer["moves"][0]
    assert out[2 + len(rows)] == (f"the best move, {best['word']} for {best['score']}, its "
                                  f"tiles in brackets:")
    drawn = out[4 + len(rows):19 + len(rows)]
    laid = {(t["row"], t["col"]): t for t in best["tiles"]}
    for r, line in enumerate(drawn):
        cells = [line[3 + 3 * c:6 + 3 * c] for c in range(15)]
        for c, cell in enumerate(cells):
            if (r, c) in laid:
                t = laid[(r, c)]
                assert cell == f"[{turkish_upper(t['letter']) if t['blank'] else t['letter']}]"
            else:
                assert cell.strip() in ("", KITAP[r][c])
    # the tiles column is what `kelime play --tiles` takes: the same move, the same score
    played = kelime(data_dir, "play", board_file(KITAP), "--tiles", " ".join(rows[0].split()[5:]),
                    "--json")
    assert played.exit_code == 0, played.output
    assert json.loads(played.output)["score"] == best["score"]


def test_play_says_legal_or_why_not_each_word_and_the_total(data_dir, board_file):
    out = kelime(data_dir, "play", board_file(KITAP), "--tiles", "8,8,t").output.splitlines()
    assert out[:2] == ["kelimelik · legal · score 5", "✓  at  5"]
    assert out[2 + 1 + 8][3 + 3 * 8:6 + 3 * 8] == "[t]"
    run = kelime(data_dir, "play", board_file(KITAP), "--tiles", "7,10,e")
    assert run.exit_code == 1
    assert run.output.splitlines()[:2] == ["kelimelik · legal, but a word is not valid · score 0",
                                           "✗  kitape  13  not in the dictionary"]
    run = kelime(data_dir, "play", board_file(KITAP), "--tiles", "9,8,t")
    assert run.exit_code == 1
    assert run.output.splitlines()[0] == (
        "kelimelik · not legal (not_touching): no tile touches one already on the board (the "
        "tiles run from row 9, column 8 to row 9, column 8): a play joins the words there")


def test_a_search_cut_short_says_so(data_dir, board_file, monkeypatch):
    from kelime.board import BoardLimits
    from kelime.cli import board

    monkeypatch.setattr(board, "LIMITS", BoardLimits(work=5))
    answer = json.loads(kelime(data_dir, "moves", "ev??", board_file(KITAP), "--json").output)
    assert answer["complete"] is False
    out = kelime(data_dir, "moves", "ev??", board_file(KITAP)).output.splitlines()
    assert out[1] == ("the search was cut short by its work budget: these are the best of the "
                      "moves found so far, and there may be better ones")


def test_the_commands_run_as_a_real_process(data_dir):
    """`kelime moves RACK -` and `kelime play -` in a subprocess, the board on a pipe."""
    moves = subprocess.run([*KELIME, "moves", "ev?", "-", "--data", str(data_dir), "--json"],
                           input="\n".join(KITAP), capture_output=True, text=True, timeout=120)
    assert moves.returncode == 0, moves.stderr
    best = json.loads(moves.stdout)["moves"][0]
    tiles = " ".join(f"{t['row']},{t['col']},{'?' if t['blank'] else ''}{t['letter']}"
                     for t in best["tiles"])
    play = subprocess.run([*KELIME, "play", "-", "--tiles", tiles, "--data", str(data_dir)],
                          input="\n".join(KITAP), capture_output=True, text=True, timeout=120)
    assert play.returncode == 0, play.stderr
    assert play.stdout.splitlines()[0] == f"kelimelik · legal · score {best['score']}"
    bad = subprocess.run([*KELIME, "play", "-", "--tiles", "7,7,e", "--data", str(data_dir)],
                         input="\n".join(KITAP), capture_output=True, text=True, timeout=120)
    assert (bad.returncode, bad.stderr.strip()) == (
        2, "Error: tile 0 (row 7, column 7) is on a taken square: 't' is there already")


def test_no_move_and_no_move_listed_are_told_apart(data_dir, board_file):
    none = kelime(data_dir, "moves", "ğö", board_file(KITAP))  # (the bag has one ğ)
    assert none.exit_code == 0 and none.output.splitlines()[:2] == [
        "ğö · kelimelik · 0 moves",
        "  (no legal move: no word of the lexicon fits the board with these tiles)"]
    unlisted = kelime(data_dir, "moves", "kat??", board_file(KITAP), "--limit", "0")
    assert unlisted.exit_code == 0 and unlisted.output.splitlines()[0] == \
        "kat?? · kelimelik · 24 moves, the best 0"
    assert "no legal move" not in unlisted.output


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 14), st.integers(0, 14),
                          st.sampled_from(sorted(GAMES["kelimelik"].letter_values)),
                          st.booleans(), st.booleans()), max_size=7))
def test_the_tiles_as_moves_lists_them_read_back_as_themselves(tiles):
    """`kelime moves` lists a move's tiles as `kelime play --tiles` reads them (a blank as
    ?e, or in upper case when `cased`)."""
    game = GAMES["kelimelik"]
    sent = [{"row": r, "col": c, "letter": ch, "blank": blank} for r, c, ch, blank, _ in tiles]
    assert read_tile_list(tiles_text(sent), game) == sent
    cased = " ".join(f"{r},{c},{turkish_upper(ch) if blank and upper else '?' * blank + ch}"
                     for r, c, ch, blank, upper in tiles)
    assert read_tile_list(cased, game) == sent


def _at_most_1_gib() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero on this system")
def test_an_endless_board_file_is_refused_not_read_into_memory(data_dir):
    """/dev/zero (or an endless pipe) is read up to MAX_BOARD_CHARS, then refused: before,
    read() took it whole (5 GB from a pipe in 5 s), here a MemoryError under 1 GiB."""
    run = subprocess.run([*KELIME, "moves", "kale", "/dev/zero", "--data", str(data_dir)],
                         capture_output=True, text=True, timeout=120,
                         preexec_fn=_at_most_1_gib)
    assert (run.returncode, run.stderr.strip()) == (
        2, "Error: the board file /dev/zero goes on past 1,048,576 characters: a board is "
        "kelimelik's lines of squares ('.' an empty one) or the API's JSON board, a few KiB "
        "at most")


def test_a_closed_standard_input_is_said_not_a_traceback(data_dir):
    run = subprocess.run([*KELIME, "moves", "kale", "-", "--data", str(data_dir)],
                         capture_output=True, text=True, timeout=120,
                         preexec_fn=lambda: os.close(0))
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert "standard input is closed: pipe a board in" in run.stderr
