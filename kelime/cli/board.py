"""`kelime moves RACK [BOARD]` and `kelime play BOARD --tiles …`: the best moves of a rack
on a board, and the verdict on one play, as POST /v1/moves and POST /v1/play answer them.

The board is read from a file or standard input in the text format of `kelime.board.text`
(or the API's JSON); the tiles of a play are ``ROW,COL,LETTER`` each, separated by spaces,
a blank's letter as ``?e`` or in upper case — the way `kelime moves` lists a move's tiles.
"""

from __future__ import annotations

import re
import sys

import click

from ..board import BoardLimits, TilesError
from ..errors import excerpt
from ..games import BLANK
from .common import (
    data_option,
    game_profile,
    json_flag,
    lexicon_option,
    open_lexicon,
    print_json,
    what_if_option,
)

LIMITS = BoardLimits()
TILE = re.compile(r"([0-9]+),([0-9]+),(\??)(\w)")   # ASCII digits: ٧ is not a row
#: The most characters a board file is read for: a board is 15 lines of 15 squares (or its
#: JSON, a few KiB); more is not a board, and /dev/zero or an endless pipe must not fill
#: the memory.
MAX_BOARD_CHARS = 1 << 20

game_option = click.option("--game", "-g", default="kelimelik", show_default=True,
                           help="A board game: kelimelik or sozce.")


def read_board_file(stream, game):
    """The position in an open board file ('-': standard input); empty: an empty board."""
    from ..board import BoardShapeError, read_board

    try:
        text = stream.read(MAX_BOARD_CHARS + 1) if stream is not None else ""
    except UnicodeDecodeError as e:
        raise BoardShapeError(f"the board file is not UTF-8 text (byte {e.start}): save it "
                              f"as UTF-8", {"byte": e.start}) from None
    if len(text) > MAX_BOARD_CHARS:
        raise BoardShapeError(f"the board file {stream.name} goes on past "
                              f"{MAX_BOARD_CHARS:,} characters: a board is {game.name}'s "
                              f"lines of squares ('.' an empty one) or the API's JSON board, "
                              f"a few KiB at most", {"limit": MAX_BOARD_CHARS})
    return read_board(text, game)


def read_tile_list(text: str, game) -> list[dict]:
    """``"7,10,e 8,10,?v"`` → the API's tiles (a blank as ``?v`` or ``V``, Turkish casing)."""
    import unicodedata

    from ..board.text import letter_of

    tiles = []
    for i, token in enumerate(unicodedata.normalize("NFC", text).split()):
        found = TILE.fullmatch(token)
        if found is None:
            raise TilesError(f"tile {i} is {token!r}: a tile is ROW,COL,LETTER (rows and "
                             f"columns from 0), a blank's letter as ?e or E, tiles separated "
                             f"by spaces: --tiles '7,7,k 7,8,?a'", {"tile": i})
        row, col, blank, letter = found.groups()
        if max(len(row), len(col)) > 4:  # (and int() refuses over 4,300 digits)
            raise TilesError(f"tile {i} is {excerpt(token)}: its row or column is off the "
                             f"board (they count from 0 to {game.board.size - 1})", {"tile": i})
        if (read := letter_of(letter, game)) is None:
            raise TilesError(f"tile {i} is {token!r}: {letter!r} is not a letter of "
                             f"{game.name} ({''.join(game.letter_values)}); a blank's letter "
                             f"is ?e or E", {"tile": i})
        lower, cased = read
        tiles.append({"row": int(row), "col": int(col), "letter": lower,
                      "blank": bool(blank) or cased})
    return tiles


def tiles_text(tiles: list[dict]) -> str:
    """The API's tiles as --tiles takes them: ``7,7,k 7,8,?a``."""
    return " ".join(f"{t['row']},{t['col']},{BLANK if t['blank'] else ''}{t['letter']}"
                    for t in tiles)


class BoardFile(click.File):
    """A board file, or - for standard input, which must be open (`kelime moves … <&-`)."""

    def convert(self, value, param, ctx):
        if value == "-" and sys.stdin is None:
            self.fail("standard input is closed: pipe a board in (cat board.txt | kelime "
                      "moves RACK -) or name a board file", param, ctx)
        return super().convert(value, param, ctx)


board_argument = BoardFile("r", encoding="utf-8", lazy=False)


@click.command()
@click.argument("rack")
@click.argument("board", type=board_argument, required=False)
@game_option
@click.option("--limit", "-n", type=click.IntRange(0, LIMITS.results),
              default=LIMITS.default_results, show_default=True, help="How many moves to list.")
@what_if_option
@lexicon_option
@data_option
@json_flag("Print exactly what POST /v1/moves answers (an error as its error object).")
def moves(rack, board, game, limit, what_if, lexicon, data, as_json) -> None:
    """The best moves of RACK on the board in BOARD (a file, or - for standard input).

    RACK is the game's letters, ? a blank (quote it): a rack the game deals (two j's in
    kelimelik, whose bag has one, are refused, exit 2) unless --what-if; more tiles or
    blanks than a rack holds are refused either way. BOARD is 15 lines of 15 squares: .
    an empty one, a letter a tile, an upper-case letter a blank (İ a blank i, I a blank ı);
    or the API's JSON board. Without BOARD (or with an empty one) it is the first play.
    Each move: its score, word, first square and direction, the tiles to lay (as `kelime
    play --tiles` takes them) and bingo when it lays all 7; then the board with the best
    move's tiles in brackets. A search cut short by its work budget says so.

    \b
    Example:
      kelime moves 'kale?ab' board.txt --limit 5
      kelime moves kalemi                 (the first play)
      cat board.txt | kelime moves 'kale?ab' - --json
    """
    from ..anagram.query import plays
    from ..board import moves as find_moves
    from ..board import read_rack

    profile = game_profile(game)
    spot = read_board_file(board, profile)
    lex = open_lexicon(data, lexicon, profile)
    plays(profile, lex.alphabet)
    tiles = read_rack(rack, spot, what_if)
    found = find_moves(spot, tiles, lex.board_graph, LIMITS)
    answer = {"lexicon": lex.info, **found.as_dict(limit)}
    if as_json:
        print_json(answer)
        return
    from .pretty import print_moves

    print_moves(answer, spot, rack, profile.name)


@click.command()
@click.argument("board", type=board_argument)
@click.option("--tiles", "-t", "tile_text", required=True,
              help="The tiles laid: ROW,COL,LETTER each (from 0), separated by spaces; a "
                   "blank's letter as ?e or in upper case (İ a blank i).")
@game_option
@lexicon_option
@data_option
@json_flag("Print exactly what POST /v1/play answers (an error as its error object).")
def play(board, tile_text, game, lexicon, data, as_json) -> None:
    """Check one play: exit 0 when it is legal and every word valid, 1 when not, 2 when it
    cannot be checked (a bad board, tiles off the board or on a taken square).

    BOARD is a board file (- for standard input), as `kelime moves` reads it. It says
    whether the placement is legal (or why not, naming the square), each word it forms
    (the main word first) valid or not with its score, and the play's score.

    \b
    Example:
      kelime play board.txt --tiles '7,10,l 7,11,I 7,12,k'   (I: a blank ı)
      kelime play board.txt --tiles '10,8,k 10,9,?a' --json
    """
    from ..anagram.query import plays
    from ..board import check, read_tiles

    profile = game_profile(game)
    spot = read_board_file(board, profile)
    lex = open_lexicon(data, lexicon, profile)
    plays(profile, lex.alphabet)
    laid = read_tile_list(tile_text, profile)
    tiles = read_tiles(laid, spot)
    min_length = profile.min_length
    answer = {"lexicon": lex.info,
              **check(spot, tiles, lambda w: lex.judge(w, min_length)[1])}
    if as_json:
        print_json(answer)
    else:
        from .pretty import print_play

        print_play(answer, spot, [t.as_dict() for t in tiles], profile.name)
    sys.exit(0 if answer["legal"] and all(w["valid"] for w in answer["words"]) else 1)
