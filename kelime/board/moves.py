"""The legal moves of a rack on a board, best first: Appel & Jacobson's search ("The
World's Fastest Scrabble Program", 1988), as Quackle, wolges and MAGPIE run it.

For each line (the rows, then the columns as rows of the transposed board): the letters
each empty square may take so that the word across it the other way is valid (its
cross-check set: any letter when nothing lies above or below it); the anchors, the empty
squares next to a tile (the centre on an empty board), where every move touches the
board; and from each anchor, every left part of rack tiles on the empty squares before it
(at most up to the previous anchor, so that each move is found from its first anchor,
once) or the tiles already there, extended rightwards through the anchor as long as the
letters so far begin a word of the lexicon: a walk down its word graph
(`kelime.board.graph`, built once per loaded lexicon), which gives the letters that may
follow at once (a trie's ``has_keys_with_prefix`` per letter was ~10× slower with blanks).

A move is one placement: the same tiles on the same squares once; a blank standing for
another letter is another move. A one-tile move is found across and down and kept once,
in the direction of the longer word it forms (across when equally long). Each move is
scored by `kelime.board.play.lay`, the rule POST /v1/play applies. The search is bounded:
at most `work` steps (`BoardLimits.work`), after which the answer says it is incomplete.

Order: score, highest first; then row, column, across before down, the word, and the
tiles (row, column, letter, blank) — a stable order for equal scores.

    >>> from kelime.board.graph import word_graph
    >>> from kelime.games import get_game
    >>> from kelime.board.position import Position
    >>> spot = Position.read([[""] * 15 for _ in range(15)], get_game("kelimelik"))
    >>> found = moves(spot, "kale", word_graph(["kale", "ak", "el", "kel"]))
    >>> [(m.main.word, m.main.row, m.main.col, m.main.direction, m.score)
    ...  for m in found.moves[:2]], found.count, found.complete
    ([('kale', 4, 7, 'down', 8), ('kale', 5, 7, 'down', 8)], 22, True)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..errors import KelimeError
from ..games import BLANK
from .errors import BoardError, BoardOverLimit, BoardRackError
from .graph import END, Node, walk
from .play import ACROSS, DOWN, Play, Tile, lay
from .position import Position


@dataclass(frozen=True)
class BoardLimits:
    """How big a moves question may be, and how much work its search may do."""

    results: int = 1000          # the largest `limit`
    default_results: int = 20    # `limit` when the question names none
    work: int = 2_000_000        # search steps (a square tried with a letter) before the
                                 # answer is cut short: ~1 s of CPU at worst


@dataclass(frozen=True)
class Found:
    """The moves found, best first; `count` of them in all, `complete` unless cut short."""

    moves: list[Play]
    count: int
    complete: bool

    def as_dict(self, limit: int) -> dict[str, Any]:
        return {"count": self.count, "truncated": self.count > limit,
                "complete": self.complete, "moves": [move_dict(m) for m in self.moves[:limit]]}


def move_dict(play: Play) -> dict[str, Any]:
    """A move as POST /v1/moves lists it."""
    main = play.words[0]
    return {"row": main.row, "col": main.col, "direction": main.direction, "word": main.word,
            "tiles": [t.as_dict() for t in play.tiles],
            "words": [{"word": w.word, "score": w.score} for w in play.words],
            "score": play.score, "bingo": play.bingo}


def read_rack(rack: str, spot: Position) -> Counter[str]:
    """A rack's tiles (letters of the game, ``?`` a blank); BoardRackError says what is wrong."""
    game = spot.game
    odd = sorted({ch for ch in rack if ch != BLANK and ch not in game.letter_values})
    if odd:
        raise BoardRackError(f"the rack {rack!r} has {', '.join(map(repr, odd))}: a rack is "
                             f"lower-case letters of {game.name} "
                             f"({''.join(game.letter_values)}) and ? for a blank",
                             {"rack": rack[:40]})
    if len(rack) > game.rack_size or rack.count(BLANK) > game.blanks:
        raise BoardOverLimit(f"the rack {rack!r} has {len(rack)} tiles and "
                             f"{rack.count(BLANK)} blanks; a {game.name} rack holds at most "
                             f"{game.rack_size} tiles, {game.blanks} of them blanks",
                             {"rack": rack[:40], "rack_size": game.rack_size,
                              "blanks": game.blanks})
    return Counter(rack)


class _Cut(KelimeError):
    """The search has done its `work` (caught in `moves`, which says it is incomplete)."""


class _Line:
    """One line's search, in the across frame: `letters` the board (transposed for down)."""

    def __init__(self, letters: list[list[str]], root: Node, rack: Counter[str],
                 min_length: int, budget: list[int]):
        self.letters, self.root, self.rack = letters, root, rack
        self.size, self.min_length, self.budget = len(letters), min_length, budget
        self.found: list[list[tuple[int, int, str, bool]]] = []
        self.row_at, self.grid = 0, letters[0]
        self.cross: list[set[str] | None] = []

    def cross_set(self, row: int, col: int) -> set[str] | None:
        """The letters (row, col) may take for the word across it the other way; None: any."""
        grid = self.letters
        up, r = "", row - 1
        while r >= 0 and grid[r][col]:
            up, r = grid[r][col] + up, r - 1
        down, r = "", row + 1
        while r < self.size and grid[r][col]:
            down, r = down + grid[r][col], r + 1
        if not up and not down:
            return None
        node = walk(self.root, up)
        if node is None or len(up) + len(down) + 1 < self.min_length:
            return set()
        return {ch for ch, child in node.items()
                if ch != END and END in (walk(child, down) or ())}

    def row(self, row: int, anchors: list[int]) -> None:
        grid = self.letters[row]
        self.row_at, self.grid = row, grid
        self.cross = [None if grid[c] else self.cross_set(row, c) for c in range(self.size)]
        previous = -1
        for anchor in anchors:
            if anchor > 0 and grid[anchor - 1]:
                start = anchor - 1
                while start > 0 and grid[start - 1]:
                    start -= 1
                node = walk(self.root, "".join(grid[start:anchor]))
                if node is not None:
                    self.extend(node, start, anchor, anchor, [])
            else:
                self.left(self.root, anchor, anchor - previous - 1, [])
            previous = anchor

    def options(self, node: Node, col: int) -> list[tuple[str, bool, Node]]:
        """(letter, blank, next node) the rack can lay on `col`, its cross-check allowing."""
        allowed, rack, out = self.cross[col], self.rack, []
        for ch, child in node.items():
            if ch == END or (allowed is not None and ch not in allowed):
                continue
            if rack[ch]:
                out.append((ch, False, child))
            if rack[BLANK]:
                out.append((ch, True, child))
        self.budget[0] -= len(out)
        if self.budget[0] < 0:
            raise _Cut
        return out

    def left(self, node: Node, anchor: int, room: int, placed: list[tuple[str, bool]]) -> None:
        """Every left part of `room` squares at most before `anchor`, then extended."""
        start = anchor - len(placed)
        self.extend(node, start, anchor, anchor,
                    [(self.row_at, start + i, ch, b) for i, (ch, b) in enumerate(placed)])
        if room == 0:
            return
        for ch, blank, child in self.options(node, start - 1):
            tile = BLANK if blank else ch
            self.rack[tile] -= 1
            self.left(child, anchor, room - 1, [*placed, (ch, blank)])
            self.rack[tile] += 1

    def extend(self, node: Node, start: int, col: int, anchor: int,
               placed: list[tuple[int, int, str, bool]]) -> None:
        """The letters from `start` to before `col` lead to `node`; lay on `col` onwards."""
        grid = self.grid
        if col >= self.size or not grid[col]:
            if col > anchor and END in node and col - start >= self.min_length:
                self.found.append(placed)
            if col >= self.size:
                return
        if grid[col]:
            child = node.get(grid[col])
            if child is not None:
                self.extend(child, start, col + 1, anchor, placed)
            return
        for ch, blank, child in self.options(node, col):
            tile = BLANK if blank else ch
            self.rack[tile] -= 1
            self.extend(child, start, col + 1, anchor, [*placed, (self.row_at, col, ch, blank)])
            self.rack[tile] += 1


def _anchors(letters: list[list[str]], row: int, empty: bool) -> list[int]:
    size = len(letters)
    if empty:
        return [size // 2] if row == size // 2 else []
    near = []
    for c in range(size):
        if letters[row][c]:
            continue
        if any(0 <= row + a < size and 0 <= c + b < size and letters[row + a][c + b]
               for a, b in ((0, 1), (1, 0), (0, -1), (-1, 0))):
            near.append(c)
    return near


def _search(spot: Position, root: Node, rack: Counter[str], budget: list[int],
            transposed: bool, out: list[tuple[Tile, ...]]) -> None:
    """The moves along the rows (the columns when `transposed`) into `out`, those found
    so far included when the work runs out (`_Cut`)."""
    grid = [list(row) for row in spot.letters]
    if transposed:
        grid = [list(col) for col in zip(*grid)]
    line = _Line(grid, root, Counter(rack), spot.game.min_length, budget)
    try:
        for row in range(spot.size):
            if anchors := _anchors(grid, row, spot.empty):
                line.row(row, anchors)
    finally:
        out.extend(tuple(sorted(Tile(c, r, ch, b) if transposed else Tile(r, c, ch, b)
                                for r, c, ch, b in placed)) for placed in line.found)


def moves(spot: Position, rack: str | Counter[str], root: Node,
          limits: BoardLimits = BoardLimits()) -> Found:
    """Every legal move of `rack` on `spot` whose words are all in the word graph `root`
    (`kelime.board.graph.word_graph`), best first."""
    tiles = read_rack(rack, spot) if isinstance(rack, str) else rack
    budget = [limits.work]
    found: list[tuple[Tile, ...]] = []
    complete = True
    try:
        for transposed in (False, True):
            _search(spot, root, tiles, budget, transposed, found)
    except _Cut:
        complete = False
    plays = [lay(spot, placed) for placed in dict.fromkeys(found)]
    if any(not p.legal for p in plays):
        raise BoardError("the search found an illegal move: a bug")  # pragma: no cover
    plays.sort(key=order)
    return Found(plays, len(plays), complete)


def order(play: Play) -> tuple[Any, ...]:
    """Best first: score, then row, column, across before down, word, tiles."""
    main = play.words[0]
    return (-play.score, main.row, main.col, main.direction != ACROSS, main.word, play.tiles)


__all__ = ["ACROSS", "DOWN", "BoardLimits", "Found", "move_dict", "moves", "read_rack"]
