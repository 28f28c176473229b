"""Board play for kelimelik and Sözce: check a whole play, and find the best moves.

Pure: plain functions over a `Position` (the board read for a game, `position`, or from
text, `text`), the tiles laid (`play`) or a rack (`moves`), and the lexicon's word graph
(`graph`); the game profile's ``[board]`` (`kelime.games.layout`) gives the bonus
squares. `errors` says what a question can do wrong. The tests hold the search to a brute
force written from the rules alone.
"""

from .errors import BoardError, BoardOverLimit, BoardRackError, BoardShapeError, TilesError
from .graph import word_graph
from .moves import BoardLimits, Found, move_dict, moves, read_rack
from .play import ACROSS, DOWN, REASONS, Play, Tile, Word, check, lay, read_tiles
from .position import Position, board_of
from .text import board_text, read_board

__all__ = [
    "ACROSS",
    "DOWN",
    "REASONS",
    "BoardError",
    "BoardLimits",
    "BoardOverLimit",
    "BoardRackError",
    "BoardShapeError",
    "Found",
    "Play",
    "Position",
    "Tile",
    "TilesError",
    "Word",
    "board_of",
    "board_text",
    "check",
    "lay",
    "move_dict",
    "moves",
    "read_board",
    "read_rack",
    "read_tiles",
    "word_graph",
]
