"""Board moves by brute force, written from the rules alone (`kelimelik-style-rules.tr.txt`,
"Puan Hesaplama"; GAMES.md): every line, every start, every word of the lexicon that fits.
It shares nothing with `kelime.board` but the game profile's data (letter values, the
bonus squares), so the tests can hold the engine to it."""

from __future__ import annotations

from collections import Counter
from itertools import combinations, product

ACROSS, DOWN = "across", "down"


class Lexicon:
    """Words by length, and by (length, position, letter), for the brute force's look-ups."""

    def __init__(self, words):
        self.words = set(words)
        self.by_length, self.by_letter = {}, {}
        for w in self.words:
            self.by_length.setdefault(len(w), set()).add(w)
            for i, ch in enumerate(w):
                self.by_letter.setdefault((len(w), i, ch), set()).add(w)

    def fitting(self, fixed, length, rack_words):
        """Words of `length` with `fixed` {index: letter}; with none fixed, `rack_words`."""
        if not fixed:
            return rack_words.get(length, ())
        sets = [self.by_letter.get((length, i, ch), set()) for i, ch in fixed.items()]
        return set.intersection(*sorted(sets, key=len))


def formable(word, rack):
    """Whether the rack's letters and blanks (a Counter) can lay every letter of `word`."""
    short = 0
    for ch, n in Counter(word).items():
        short += max(0, n - rack[ch])
    return short <= rack["?"]


def word_score(game, squares, grid, blanks, new):
    """Letter bonuses first, then word bonuses multiply; bonuses only under new tiles; a
    blank is worth the game's blank value."""
    layout, total, times = game.board, 0, 1
    for r, c in squares:
        if (r, c) in new:
            letter, blank = new[(r, c)]
            value = game.blank_value if blank else game.letter_values[letter]
            bonus = layout.bonuses[r][c]
            total += value * (int(bonus[1]) if bonus.startswith("H") else 1)
            times *= int(bonus[1]) if bonus.startswith("K") else 1
        else:
            total += game.blank_value if (r, c) in blanks else game.letter_values[grid[r][c]]
    return total * times


def run(grid, new, r, c, dr, dc):
    """The squares of the word through (r, c) along (dr, dc), board and new tiles."""
    size = len(grid)

    def full(a, b):
        return 0 <= a < size and 0 <= b < size and (grid[a][b] or (a, b) in new)

    while full(r - dr, c - dc):
        r, c = r - dr, c - dc
    out = []
    while full(r, c):
        out.append((r, c))
        r, c = r + dr, c + dc
    return out


def letters_of(squares, grid, new):
    return "".join(new[s][0] if s in new else grid[s[0]][s[1]] for s in squares)


def brute_moves(grid, blanks, game, lexicon, rack):
    """{frozenset of (row, col, letter, blank): (row, col, direction, word, score, words)}."""
    size, empty = len(grid), not any(any(row) for row in grid)
    centre = (size // 2, size // 2)
    rack_words, rack = {}, Counter(rack)
    for w in (w for n, ws in lexicon.by_length.items() if n <= rack.total() for w in ws):
        if formable(w, rack):
            rack_words.setdefault(len(w), set()).add(w)
    found = {}
    for direction, (dr, dc) in ((ACROSS, (0, 1)), (DOWN, (1, 0))):
        for line, start in product(range(size), repeat=2):
            for length in range(2, size - start + 1):
                squares = [((line, start + k) if dc else (start + k, line))
                           for k in range(length)]
                before = (squares[0][0] - dr, squares[0][1] - dc)
                after = (squares[-1][0] + dr, squares[-1][1] + dc)
                if any(0 <= a < size and 0 <= b < size and grid[a][b] for a, b in (before, after)):
                    continue
                holes = [s for s in squares if not grid[s[0]][s[1]]]
                if not holes or len(holes) > rack.total():
                    continue
                if empty:
                    if centre not in squares:
                        continue
                elif len(holes) == length and not any(
                        0 <= r + a < size and 0 <= c + b < size and grid[r + a][c + b]
                        for r, c in holes for a, b in ((0, 1), (1, 0), (0, -1), (-1, 0))):
                    continue
                fixed = {k: grid[r][c] for k, (r, c) in enumerate(squares) if grid[r][c]}
                for word in lexicon.fitting(fixed, length, rack_words):
                    if any(word[k] != ch for k, ch in fixed.items()):
                        continue
                    need = [word[k] for k, s in enumerate(squares) if s in holes]
                    if not formable(need, rack):
                        continue
                    for choice in _blank_choices(len(holes), rack["?"]):
                        real = Counter(ch for k, ch in enumerate(need) if k not in choice)
                        if any(n > rack[ch] for ch, n in real.items()):
                            continue
                        new = {s: (ch, k in choice) for k, (s, ch) in enumerate(zip(holes, need))}
                        move = _score(grid, blanks, game, lexicon, new, squares, direction)
                        if move is not None:
                            key = frozenset((r, c, ch, b) for (r, c), (ch, b) in new.items())
                            if key not in found or _longer(move, found[key]):
                                found[key] = move
    return found


def _blank_choices(holes, blanks):
    """Every set of holes (by index) the blanks may fill: none, one, two …"""
    return [set(c) for n in range(min(holes, blanks) + 1) for c in combinations(range(holes), n)]


def _longer(move, other):
    """A one-tile move keeps the direction of its longer word, across when equally long."""
    return len(move[3]) > len(other[3]) or (len(move[3]) == len(other[3])
                                            and move[2] == ACROSS)


def _score(grid, blanks, game, lexicon, new, squares, direction):
    """The move of `new` along `squares`, or None when a cross word is not a word."""
    words = [(letters_of(squares, grid, new), word_score(game, squares, grid, blanks, new))]
    dr, dc = (1, 0) if direction == ACROSS else (0, 1)
    for r, c in new:
        cross = run(grid, new, r, c, dr, dc)
        if len(cross) < 2:
            continue
        text = letters_of(cross, grid, new)
        if len(text) < game.min_length or text not in lexicon.words:
            return None
        words.append((text, word_score(game, cross, grid, blanks, new)))
    if len(words[0][0]) < game.min_length or words[0][0] not in lexicon.words:
        return None
    bingo = len(new) == game.rack_size
    total = sum(s for _, s in words) + (game.bingo_bonus if bingo else 0)
    return (squares[0][0], squares[0][1], direction, words[0][0], total, tuple(words))
