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
Below or above a tile, only the left parts that a letter the anchor's cross-check allows
may follow are tried (the parts are indexed by the letters that may come next).
Before a tile, where most left parts lead nowhere (2 % of them made a move), the word grows
leftwards from the anchor instead (`Graph.before`, the first half of a GADDAG). A placement
is scored once, each choice of the tiles that are blanks by what those would have added;
with a `limit`, the moves are counted but only the best kept, and a placement that cannot
be among them is not laid out (2 blanks on mid-game boards: ~4× less time in all).

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

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from itertools import combinations
from typing import Any

from ..anagram.deal import deal
from ..anagram.rack import Rack
from ..errors import KelimeError, excerpt
from ..games import BLANK
from ..normalize import normalize
from .errors import BoardOverLimit, BoardRackError
from .graph import END, START, Graph, Node, walk
from .play import ACROSS, DOWN, Play, Tile, lay
from .position import Position
from .text import alphabet_of


@dataclass(frozen=True)
class BoardLimits:
    """How big a moves question may be, and how much work its search may do."""

    results: int = 1000          # the largest `limit`
    default_results: int = 20    # `limit` when the question names none
    work: int = 150_000          # search steps (a letter tried on a square) before the
                                 # answer is cut short: ~1 s of CPU at worst (2 blanks on
                                 # 30 mid-game boards, benchmarks/board.py: 36,511 steps
                                 # at the median, 66,038 at most, 14,199 moves)


#: A tile as the search lays it: (row, column, letter, blank), ordered as `Tile`.
Laid = tuple[int, int, str, bool]
#: A move as the search scores it: its order key (-score, row, column, down?, word, tiles).
Key = tuple[int, int, int, bool, str, tuple[Laid, ...]]


@dataclass(frozen=True)
class Found:
    """The moves found, best first (`keys`: all of them, or the best `limit` asked of
    `moves`); `count` of them in all, `complete` unless cut short. Only the moves listed
    are laid out whole (`lay`: their words and scores)."""

    spot: Position
    keys: list[Key]
    complete: bool
    count: int

    def best(self, limit: int | None = None) -> list[Play]:
        """The first `limit` moves (all of them without one), laid out: words and scores."""
        plays = [lay(self.spot, [Tile(*t) for t in key[5]]) for key in self.keys[:limit]]
        if any(not p.legal or p.score != -key[0] for p, key in zip(plays, self.keys)):
            raise RuntimeError(f"the search and kelime.board.play disagree on a move of "
                               f"{self.spot.rows()}: a bug to report")
        return plays

    @cached_property
    def moves(self) -> list[Play]:
        """Every move found, laid out."""
        return self.best()

    def as_dict(self, limit: int) -> dict[str, Any]:
        return {"count": self.count, "truncated": self.count > limit,
                "complete": self.complete, "moves": [move_dict(m) for m in self.best(limit)]}


def move_dict(play: Play) -> dict[str, Any]:
    """A move as POST /v1/moves lists it."""
    main = play.words[0]
    return {"row": main.row, "col": main.col, "direction": main.direction, "word": main.word,
            "tiles": [t.as_dict() for t in play.tiles],
            "words": [{"word": w.word, "score": w.score} for w in play.words],
            "score": play.score, "bingo": play.bingo}


def read_rack(rack: str, spot: Position, what_if: bool = False) -> Counter[str]:
    """A rack's tiles (letters of the game, ``?`` a blank), read as the anagram's racks are
    (NFC, trimmed, Turkish lower case, circumflexes folded: ``KALÂ?`` is ``kala?``) and
    refused as theirs are when the game cannot deal it (`kelime.anagram.deal`: RackNotDealt,
    ``rack_not_dealt``, unless `what_if`: two j's in kelimelik); BoardRackError or
    BoardOverLimit (the search's own bound, checked first, as the anagram checks its own:
    8 tiles or 3 blanks, `what_if` or not) says what else is wrong, quoting at most the
    rack's start."""
    game = spot.game
    rack = normalize(rack, alphabet_of(game))
    if not rack:  # (as the anagram's: no tiles is no question, not "no move")
        raise BoardRackError(f"the rack is empty: a rack is letters of {game.name} "
                             f"({''.join(game.letter_values)}) and ? for a blank", {"rack": ""})
    odd = sorted({ch for ch in rack if ch != BLANK and ch not in game.letter_values})
    if odd:
        raise BoardRackError(f"the rack {excerpt(rack)} has {', '.join(map(repr, odd[:10]))}: "
                             f"a rack is letters of {game.name} "
                             f"({''.join(game.letter_values)}) and ? for a blank",
                             {"rack": rack[:40]})
    if len(rack) > game.rack_size or rack.count(BLANK) > game.blanks:
        raise BoardOverLimit(f"the rack {excerpt(rack)} has {len(rack)} tiles and "
                             f"{rack.count(BLANK)} blanks; a {game.name} rack holds at most "
                             f"{game.rack_size} tiles, {game.blanks} of them blanks",
                             {"rack": rack[:40], "rack_size": game.rack_size,
                              "blanks": game.blanks})
    if not what_if:  # after the bound, as the anagram's: `what_if` could not lift that one
        deal(Rack(tuple(rack)), game)  # one tile a character: a board game's are letters
    return Counter(rack)


class _Cut(KelimeError):
    """The search has done its `work` (caught in `moves`, which says it is incomplete)."""


#: A left part: the node its letters lead to, its tiles (letter, blank), the tiles it uses.
Part = tuple[Node, list[tuple[str, bool]], dict[str, int]]


class _LeftParts:
    """Every left part the rack can lay, shortest first, made as far as the anchors ask: the
    squares before an anchor up to the previous one touch nothing, so the parts are the same
    before every anchor of both directions, made once a question."""

    def __init__(self, root: Node, rack: Counter[str], budget: list[int]):
        self.rack, self.tiles, self.budget = defaultdict(int, rack), rack.total(), budget
        self.lengths: list[list[Part]] = [[(root, [], {})]]
        self.indexes: list[dict[str, list[Part]]] = []

    def upto(self, room: int) -> Iterator[Part]:
        """The parts of at most `room` tiles (one fewer than the rack's: the anchor needs one)."""
        for length in range(min(room, self.tiles - 1) + 1):
            yield from self.of_length(length)

    def of_length(self, length: int) -> list[Part]:
        while length >= len(self.lengths):
            self.lengths.append(self.longer(self.lengths[-1]))
        return self.lengths[length]

    def before(self, room: int) -> Iterator[dict[str, list[Part]]]:
        """For each length of part up to `room` (as `upto`): letter → the parts it may follow
        in a word, so that an anchor whose cross-check allows a few letters meets only the
        parts that may go on through it."""
        for length in range(min(room, self.tiles - 1) + 1):
            if length == len(self.indexes):
                index: dict[str, list[Part]] = defaultdict(list)
                for part in self.of_length(length):
                    for ch in part[0]:
                        if ch != END:
                            index[ch].append(part)
                self.indexes.append(index)
            yield self.indexes[length]

    def longer(self, parts: list[Part]) -> list[Part]:
        """The parts one tile longer than `parts`: a letter's own tile while the rack has
        one, else a blank."""
        rack, out = self.rack, []
        for node, placed, used in parts:
            self.budget[0] -= len(node)
            for ch, child in node.items():
                if ch == END:
                    continue
                tile = ch if rack[ch] > used.get(ch, 0) else BLANK
                if rack[tile] > used.get(tile, 0):
                    out.append((child, [*placed, (ch, tile == BLANK)],
                                {**used, tile: used.get(tile, 0) + 1}))
        return out


#: The choices of a placement's tiles that are blanks (`blank_choices`), kept by the
#: placement's shape (and how short of each letter it is).
Memo = dict[tuple[Any, ...], list[tuple[int, ...]]]


@dataclass
class _Kept:
    """The moves of two tiles or more found so far: `count` in all, and all of them or (with
    a `limit`) at least the best `limit` (`found`): the rest need not outlive the search,
    nor be laid out once `bar` shows they cannot be among the best (a move whose first key,
    -score, is over it)."""

    limit: int | None
    found: list[Key] = field(default_factory=list)
    count: int = 0
    bar: float = math.inf

    def add(self, key: Key) -> None:
        self.count += 1
        self.found.append(key)
        if self.limit is not None and len(self.found) > 4 * self.limit + 100:
            self.found.sort()
            del self.found[self.limit:]
            self.bar = self.found[-1][0] if self.found else -math.inf


class _Line:
    """One line's search, in the across frame: `letters` the board (transposed for down)."""

    def __init__(self, letters: list[list[str]], root: Graph, rack: Counter[str],
                 spot: Position, transposed: bool, budget: list[int], parts: _LeftParts,
                 kept: _Kept, memo: Memo):
        # (a defaultdict: a Counter's missing letter is a call to its Python __missing__)
        self.letters, self.root, self.rack = letters, root, defaultdict(int, rack)
        self.before = root.before
        self.size, self.min_length, self.budget = len(letters), spot.game.min_length, budget
        self.game, n, layout = spot.game, spot.size, spot.layout

        def at(r: int, c: int) -> tuple[int, int]:
            return (c, r) if transposed else (r, c)

        self.values = [[spot.value(*at(r, c)) if letters[r][c] else 0 for c in range(n)]
                       for r in range(n)]
        self.letter_times = [[layout.letter_multiplier(*at(r, c)) for c in range(n)]
                             for r in range(n)]
        self.word_times = [[layout.word_multiplier(*at(r, c)) for c in range(n)]
                           for r in range(n)]
        self.transposed, self.kept = transposed, kept  # the moves of two tiles or more
        self.ones: list[tuple[Key, int]] = []           # one tile's, with its other word's length
        self.row_at, self.grid = 0, letters[0]
        self.cross: list[set[str] | None] = []
        self.cross_order: list[list[str] | None] = []  # (its letters, in the game's order)
        self.alphabet = list(spot.game.letter_values)
        self.cross_sum: list[int | None] = []
        self.cross_length: list[int] = []
        self.parts = parts
        self.choices = memo  # (both directions': one rack)
        # a blank never scores more than the letter it stands for (0 against 1 or more):
        # a placement scoring under the best kept has no choice of blanks among them
        self.blanks_cost = all(v >= spot.game.blank_value for v in spot.game.letter_values.values())
        self.full = defaultdict(int, rack)

    def cross_set(self, row: int, col: int) -> set[str] | None:
        """The letters (row, col) may take for the word across it the other way; None: any.
        Notes the value of that word's other letters (`cross_sum`) and its length."""
        grid, values = self.letters, self.values
        up, r, total = "", row - 1, 0
        while r >= 0 and grid[r][col]:
            up, total, r = grid[r][col] + up, total + values[r][col], r - 1
        down, r = "", row + 1
        while r < self.size and grid[r][col]:
            down, total, r = down + grid[r][col], total + values[r][col], r + 1
        self.cross_length[col] = len(up) + len(down) + 1
        if not up and not down:
            return None
        self.cross_sum[col] = total
        node = walk(self.root, up)
        if node is None or len(up) + len(down) + 1 < self.min_length:
            return set()
        return {ch for ch, child in node.items()
                if ch != END and END in (walk(child, down) or ())}

    def row(self, row: int, anchors: list[int]) -> None:
        grid = self.letters[row]
        self.row_at, self.grid = row, grid
        self.cross_sum, self.cross_length = [None] * self.size, [1] * self.size
        self.cross = [None if grid[c] else self.cross_set(row, c) for c in range(self.size)]
        self.cross_order = [None if a is None else [ch for ch in self.alphabet if ch in a]
                            for a in self.cross]
        previous = -1
        for anchor in anchors:
            if anchor > 0 and grid[anchor - 1]:
                start = anchor - 1
                while start > 0 and grid[start - 1]:
                    start -= 1
                node = walk(self.root, "".join(grid[start:anchor]))
                if node is not None:
                    self.extend(node, start, anchor, anchor, [])
            elif anchor + 1 < self.size and grid[anchor + 1]:
                self.leftwards(anchor, anchor - previous - 1)
            elif (allowed := self.cross_order[anchor]) is None:  # the first move
                for node, placed, _ in self.parts.upto(anchor - previous - 1):
                    self.through(node, anchor - len(placed), anchor, anchor, placed)
            else:
                self.before_anchor(anchor, anchor - previous - 1, allowed)
            previous = anchor

    def before_anchor(self, anchor: int, room: int, letters: list[str]) -> None:
        """The moves through `anchor` (a tile above or below it, none beside it): each left
        part that a letter its cross-check allows may follow, that letter on the anchor
        (a tile the part left in the rack: the letter's own, else a blank), extended."""
        rack, budget = self.rack, self.budget
        for index in self.parts.before(room):
            for ch in letters:
                for node, placed, used in index.get(ch, ()):
                    if rack[ch] > used.get(ch, 0):
                        blank = False
                    elif rack[BLANK] > used.get(BLANK, 0):
                        blank = True
                    else:
                        continue
                    budget[0] -= 1
                    if budget[0] < 0:
                        raise _Cut
                    self.through(node[ch], anchor - len(placed), anchor + 1, anchor,
                                 [*placed, (ch, blank)])

    def leftwards(self, anchor: int, room: int) -> None:
        """The moves through `anchor` when a tile lies right of it. Trying every left part
        there is mostly waste (2 % of them made a move): the word grows leftwards instead,
        from the anchor's letter and the tiles after it, one letter the lexicon has before
        that piece (`Graph.before`) at a time, up to `room` squares; each piece that begins
        a word is extended rightwards past the tiles, down the word graph."""
        grid, end, allowed = self.grid, anchor + 1, self.cross[anchor]
        while end < self.size and grid[end]:
            end += 1
        after = "".join(grid[anchor + 1:end])
        letters = self.game.letter_values if allowed is None else allowed
        for ch, blank in self.tiles(ch for ch in letters if ch + after in self.before):
            self.grow(ch + after, anchor, room, end, [(self.row_at, anchor, ch, blank)])

    def grow(self, piece: str, col: int, room: int, end: int,
             placed: list[tuple[int, int, str, bool]]) -> None:
        """`piece` lies from `col` to before `end`, `placed` its tiles from the rack; the
        anchor is the last of them, `room` the empty squares left of `col` still free."""
        rack, before = self.rack, self.before[piece]
        tile = BLANK if placed[0][3] else placed[0][2]
        rack[tile] -= 1
        try:
            if START in before and (node := walk(self.root, piece)) is not None:
                self.extend(node, col, end, placed[-1][1], placed)
            if room:  # (each letter before it a tile as `tiles` gives them, inline)
                budget, row = self.budget, self.row_at
                for ch in before:
                    if ch == START:
                        continue
                    if rack[ch]:
                        blank = False
                    elif rack[BLANK]:
                        blank = True
                    else:
                        continue
                    budget[0] -= 1
                    if budget[0] < 0:
                        raise _Cut
                    self.grow(ch + piece, col - 1, room - 1, end,
                              [(row, col - 1, ch, blank), *placed])
        finally:
            rack[tile] += 1

    def tiles(self, letters: Iterable[str]) -> list[tuple[str, bool]]:
        """(letter, blank): a letter's own tile while the rack has one, else a blank."""
        rack, out = self.rack, []
        for ch in letters:
            if rack[ch]:
                out.append((ch, False))
            elif rack[BLANK]:
                out.append((ch, True))
        self.budget[0] -= len(out)
        if self.budget[0] < 0:
            raise _Cut
        return out

    def record(self, start: int, end: int, placed: list[tuple[int, int, str, bool]]) -> None:
        """Every move that lays these letters (`placed` in column order), scored by the rules
        (as `kelime.board.play.lay` scores it: `Found.best` checks the two agree): each
        choice of the tiles that are blanks (at most the rack's blanks, at least where its
        own tiles run out) scores the word of real tiles less what the chosen ones add."""
        row, game, rack, cross_sum = self.row_at, self.game, self.full, self.cross_sum
        values, letter_times = self.values[row], self.letter_times[row]
        word_times, letter_values = self.word_times[row], game.letter_values
        total, times, crosses = sum(values[start:end]), 1, 0  # (an empty square's value: 0)
        for _, c, ch, _ in placed:
            value = letter_values[ch] * letter_times[c]
            total += value
            times *= word_times[c]
            if (cross := cross_sum[c]) is not None:
                crosses += (cross + value) * word_times[c]
        score = total * times + crosses
        if len(placed) >= game.rack_size:
            score += game.bingo_bonus
        kept, many = self.kept, len(placed) > 1  # (a one-tile move is merged: always kept)
        if not rack[BLANK]:
            if many and -score > kept.bar:
                kept.count += 1
            else:
                self.keep((-score, *self.first(start), self.transposed,
                           self.word(start, end, placed), self.laid(placed, ())))
            return
        # the letters its own tiles ran short of are the tiles laid as blanks: at least as
        # many of those letters' tiles must be blanks (labelled 0, 1… in `blank_choices`)
        forced = [p[2] for p in placed if p[3]]
        labels = {x: str(i) for i, x in enumerate(dict.fromkeys(forced))}
        shape, short = "".join([labels.get(p[2], BLANK) for p in placed]), [
            forced.count(x) for x in labels]
        if (choices := self.choices.get((shape, *short))) is None:
            choices = self.choices[(shape, *short)] = blank_choices(
                shape, dict(zip(labels.values(), short)), rack[BLANK])
        if many and self.blanks_cost and -score > kept.bar:
            kept.count += len(choices)  # none of them among the best, blanks or not
            return
        blank_value = game.blank_value  # what a blank there would take off: its letter's
        loss = [(letter_values[ch] - blank_value) * letter_times[c]  # value, in each word
                * (times + (0 if cross_sum[c] is None else word_times[c]))
                for _, c, ch, _ in placed]
        if many and sum(x for x in loss if x < 0) - score > kept.bar:
            kept.count += len(choices)
            return
        first, text = self.first(start), self.word(start, end, placed)
        for chosen in choices:
            less = sum(loss[i] for i in chosen)
            if many and less - score > kept.bar:
                kept.count += 1
            else:
                self.keep((less - score, *first, self.transposed, text,
                           self.laid(placed, chosen)))

    def first(self, start: int) -> tuple[int, int]:
        """The board square (row, column) of the line's `start`."""
        return (start, self.row_at) if self.transposed else (self.row_at, start)

    def word(self, start: int, end: int, placed: list[tuple[int, int, str, bool]]) -> str:
        """The main word: the line from `start` to before `end`, `placed` laid on it."""
        cells = self.grid[start:end]
        for _, c, ch, _ in placed:
            cells[c - start] = ch
        return "".join(cells)

    def laid(self, placed: list[tuple[int, int, str, bool]],
             blanks: tuple[int, ...]) -> tuple[Laid, ...]:
        """The tiles on the board (not transposed), those at the indexes `blanks` blanks."""
        if self.transposed:
            return tuple((c, r, ch, i in blanks) for i, (r, c, ch, _) in enumerate(placed))
        return tuple((r, c, ch, i in blanks) for i, (r, c, ch, _) in enumerate(placed))

    def keep(self, key: Key) -> None:
        if len(key[5]) > 1:
            self.kept.add(key)
        else:
            col = key[5][0][0] if self.transposed else key[5][0][1]
            self.ones.append((key, self.cross_length[col]))

    def through(self, node: Node, start: int, col: int, anchor: int,
                placed: list[tuple[str, bool]]) -> None:
        """Tiles laid from `start` to before `col` (a left part; the anchor's too when `col`
        is past it), extended from `col`."""
        rack = self.rack
        for ch, blank in placed:
            rack[BLANK if blank else ch] -= 1
        try:
            self.extend(node, start, col, anchor,
                        [(self.row_at, start + i, ch, b) for i, (ch, b) in enumerate(placed)])
        finally:
            for ch, blank in placed:
                rack[BLANK if blank else ch] += 1

    def extend(self, node: Node, start: int, col: int, anchor: int,
               placed: list[tuple[int, int, str, bool]]) -> None:
        """The letters from `start` to before `col` lead to `node`; lay on `col` onwards (past
        the tiles already there): each letter the rack can lay there, its cross-check
        allowing, a letter's own tile while the rack has one, else a blank. Which of a move's
        tiles may be blanks instead is `record`'s business: the search walks each word once,
        not once a blank's choice. (`placed` grows and shrinks back.)"""
        grid, size = self.grid, self.size
        while col < size and (letter := grid[col]):
            if (node := node.get(letter)) is None:  # type: ignore[assignment]
                return
            col += 1
        if col > anchor and END in node and col - start >= self.min_length:
            self.record(start, col, placed)
        if col == size:
            return
        rack, row, budget = self.rack, self.row_at, self.budget
        allowed = self.cross[col]
        for ch, child in node.items():
            if ch == END or (allowed is not None and ch not in allowed):
                continue
            if rack[ch]:
                tile, blank = ch, False
            elif rack[BLANK]:
                tile, blank = BLANK, True
            else:
                continue
            budget[0] -= 1
            if budget[0] < 0:
                raise _Cut
            rack[tile] -= 1
            placed.append((row, col, ch, blank))
            self.extend(child, start, col + 1, anchor, placed)
            placed.pop()
            rack[tile] += 1


def blank_choices(shape: str, short: dict[str, int], blanks: int) -> list[tuple[int, ...]]:
    """Each choice of a placement's tiles that are blanks (their indexes): at most `blanks`,
    at least `short[x]` of the tiles marked x in `shape` (a letter the rack has too few of;
    ``?`` marks the others), so that placements alike share their choices.

    >>> blank_choices("0?0", {"0": 1}, 1), len(blank_choices("????", {}, 2))
    ([(0,), (2,)], 11)
    """
    return [chosen for count in range(sum(short.values()), min(blanks, len(shape)) + 1)
            for chosen in combinations(range(len(shape)), count)
            if all(sum(shape[i] == x for i in chosen) >= n for x, n in short.items())]


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


def _search(spot: Position, root: Graph, rack: Counter[str], budget: list[int],
            transposed: bool, kept: _Kept, ones: dict[Laid, tuple[Key, int]],
            parts: _LeftParts, memo: Memo) -> None:
    """The moves along the rows (the columns when `transposed`) into `kept`, and those of
    one tile into `ones` (its tile → its order key and the length of its main word), those
    found so far included when the work runs out (`_Cut`). A one-tile move found both ways
    keeps its longer word's direction."""
    grid = [list(row) for row in spot.letters]
    if transposed:
        grid = [list(col) for col in zip(*grid)]
    line = _Line(grid, root, rack, spot, transposed, budget, parts, kept, memo)
    try:
        for row in range(spot.size):
            if anchors := _anchors(grid, row, spot.empty):
                line.row(row, anchors)
    finally:
        for key, other in line.ones:
            tile, length = key[5][0], len(key[4])
            if tile in ones and (length < other or (length == other and transposed)):
                continue  # the one tile's other word is longer, or as long and across
            ones[tile] = (key, length)


def moves(spot: Position, rack: str | Counter[str], root: Graph,
          limits: BoardLimits = BoardLimits(), limit: int | None = None) -> Found:
    """Every legal move of `rack` on `spot` whose words are all in the word graph `root`
    (`kelime.board.graph.word_graph`), best first: all of them, or the best `limit` (and
    how many there are in all)."""
    tiles = read_rack(rack, spot) if isinstance(rack, str) else rack
    budget, kept = [limits.work], _Kept(limit)
    ones: dict[Laid, tuple[Key, int]] = {}
    complete, parts = True, _LeftParts(root, tiles, budget)
    memo: Memo = {}
    try:
        for transposed in (False, True):
            _search(spot, root, tiles, budget, transposed, kept, ones, parts, memo)
    except _Cut:
        complete = False
    keys = sorted([*kept.found, *(key for key, _ in ones.values())])
    return Found(spot, keys[:limit], complete, kept.count + len(ones))


def order(play: Play) -> tuple[Any, ...]:
    """Best first: score, then row, column, across before down, word, tiles."""
    main = play.words[0]
    return (-play.score, main.row, main.col, main.direction != ACROSS, main.word, play.tiles)


__all__ = ["ACROSS", "DOWN", "BoardLimits", "Found", "move_dict", "moves", "read_rack"]
