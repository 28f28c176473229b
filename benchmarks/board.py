"""Board moves (issue 33): full move generation on mid-game boards, in process and over
HTTP, for racks with 0, 1 and 2 blanks, against the brute force of the tests, in one run.

    .venv/bin/python benchmarks/board.py                # a few minutes
    .venv/bin/python benchmarks/board.py --quick        # ~1 minute
    .venv/bin/python benchmarks/board.py --data data    # a lexicon already built

Positions: kelimelik boards after 4–10 random legal moves (fixed seed: each move drawn
from the engine's own list), then a 7-tile rack drawn from kelimelik's bag with 0, 1 or 2
of its tiles blanks. In process: `kelime.board.moves` and the reply of 20 moves, as the
route makes it, on the lexicon's word graph (made once, before timing). Over HTTP: POST
/v1/moves (limit 20) to `kelime serve` with one worker on 127.0.0.1, one keep-alive
connection, a few unrecorded requests first, every question asked in each of 3 rounds
(--rounds): the median and p99 shown are the medians of the rounds'. The brute force as
the issue defines it (every line, every start, every word of the lexicon that fits,
checked by the rules: the brute force of tests/board_brute.py trying every word of the
slot's length, seconds a question) on the first positions (0, 1 and 2 blanks), and the
tests' own brute force (words looked up by their fixed letters) on those without two
blanks: their medians against the engine's on the same questions (each the median of its
5 runs). Goals: over HTTP, p99 ≤ 50 ms without blanks and ≤ 250 ms with two; ≥ 100×
faster than the brute force.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import orjson  # noqa: E402
from anagram import p99  # noqa: E402  (benchmarks/anagram.py)
from anagram_http import Client  # noqa: E402
from validate import kelime_server, served_lexicon  # noqa: E402

from kelime.board import Position, moves, word_graph  # noqa: E402
from kelime.games import GAMES  # noqa: E402
from tests.board_brute import Lexicon as BruteLexicon  # noqa: E402
from tests.board_brute import brute_moves  # noqa: E402

GAME = GAMES["kelimelik"]
LIMIT = 20
GOALS_MS = {0: 50.0, 2: 250.0}
REPEATS = 5  # the engine's runs of each question the brute force answers


def positions(graph, count: int, seed: int = 33) -> list[tuple[list[list[str]], str, int]]:
    """(board, rack, blanks): mid-game boards, racks with 0, 1 and 2 blanks in turn."""
    rng = random.Random(seed)
    bag = "".join(ch * n for ch, n in (GAME.letter_counts or {}).items())
    out = []
    while len(out) < count:
        board = [[""] * 15 for _ in range(15)]
        for _ in range(rng.randint(4, 10)):
            found = moves(Position.read(board, GAME), "".join(rng.sample(bag, 7)), graph)
            if found.count:
                for t in rng.choice(found.best(50)).tiles:
                    board[t.row][t.col] = t.letter
        blanks = len(out) % 3
        out.append((board, "".join(rng.sample(bag, 7 - blanks)) + "?" * blanks, blanks))
    return out


def in_process(graph, asked) -> dict[int, list[float]]:
    times: dict[int, list[float]] = {0: [], 1: [], 2: []}
    for board, rack, blanks in asked:
        start = time.perf_counter()
        moves(Position.read(board, GAME), rack, graph, limit=LIMIT).as_dict(LIMIT)
        times[blanks].append(time.perf_counter() - start)
    return times


class NaiveLexicon(BruteLexicon):
    """The brute force as issue 33 defines it: every word of the slot's length is tried
    against the board and the rack (`BruteLexicon.fitting` looks them up by letter)."""

    def fitting(self, fixed, length, rack_words):
        return self.by_length.get(length, ())


def brute(words: list[str], asked, count: int, naive: bool = False,
          ) -> tuple[list[float], list[float]]:
    """The brute force and the engine on the first `count` questions (without two blanks
    unless `naive`); a brute force that disagrees with the engine stops the run."""
    lexicon = NaiveLexicon(words) if naive else BruteLexicon(words)
    graph = word_graph(words)
    slow, fast = [], []
    for board, rack, blanks in [a for a in asked if naive or a[2] < 2][:count]:
        blank_squares = {(r, c) for r, row in enumerate(board) for c, x in enumerate(row)
                         if x.startswith("?")}
        start = time.perf_counter()
        expected = brute_moves(board, blank_squares, GAME, lexicon, rack)
        slow.append(time.perf_counter() - start)
        runs = []
        for _ in range(REPEATS):  # (a question of ~50 ms against one of seconds: the
            start = time.perf_counter()  # median of a few, so that one pause of the
            found = moves(Position.read(board, GAME), rack, graph, limit=LIMIT)  # machine
            found.as_dict(LIMIT)  # is not the engine's time)
            runs.append(time.perf_counter() - start)
        fast.append(statistics.median(runs))
        if found.count != len(expected):
            raise SystemExit(f"the engine found {found.count} moves of {rack!r} and the "
                             f"brute force {len(expected)}: a bug (tests/test_board.py)")
    return slow, fast


def over_http(port: int, asked, rounds: int) -> tuple[list[dict[int, list[float]]], list[str]]:
    """Each round's times of every question, by blanks."""
    client = Client(port)
    bodies = [(orjson.dumps({"game": "kelimelik", "board": b, "rack": r, "limit": LIMIT}), n)
              for b, r, n in asked]
    for body, _ in bodies[:5]:  # the word graph is made on the first question
        client.time("POST", "/v1/moves", body)
    out = []
    for _ in range(rounds):
        times: dict[int, list[float]] = {0: [], 1: [], 2: []}
        for body, blanks in bodies:
            times[blanks].append(client.time("POST", "/v1/moves", body))
        out.append(times)
    client.conn.close()
    return out, client.errors


def row(name: str, values: list[float], goal: float | None = None,
        rounds: list[list[float]] | None = None) -> str:
    """Median and p99 of `values`, or the medians of each round's (`rounds`)."""
    if rounds is None:
        median, worst = statistics.median(values) * 1e3, p99(values) * 1e3
    else:
        median = statistics.median(statistics.median(r) for r in rounds) * 1e3
        worst = statistics.median(p99(r) for r in rounds) * 1e3
    met = "met" if goal is not None and worst <= goal else "NOT met"
    verdict = "" if goal is None else f"  goal p99 ≤ {goal:g} ms: {met}"
    return f"{name:<34} {len(values):>4}  median {median:8.1f} ms  p99 {worst:8.1f} ms{verdict}"


def ratio(name: str, slow: list[float], fast: list[float], racks: str,
          goal: bool = False) -> str:
    """The engine against a brute force; `goal`: the issue's (≥ 100× its naive one)."""
    times = statistics.median(slow) / statistics.median(fast)
    verdict = f" (goal ≥ 100×: {'met' if times >= 100 else 'NOT met'})" if goal else ""
    return (f"{name}, {len(slow)} questions ({racks}): median "
            f"{statistics.median(slow) * 1e3:.0f} ms against {statistics.median(fast) * 1e3:.1f}"
            f" ms: {times:.0f}×{verdict}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer positions (a smoke test)")
    parser.add_argument("--data", type=Path, help="data folder with the lexicon to serve")
    parser.add_argument("--positions", type=int, help="questions [150, quick 30]")
    parser.add_argument("--naive", type=int, default=3,
                        help="questions for the naive brute force (seconds each) [3]")
    parser.add_argument("--rounds", type=int,
                        help="rounds of the HTTP questions, each figure the rounds' median "
                             "[3, quick 1]")
    args = parser.parse_args(argv)
    count = args.positions or (30 if args.quick else 150)
    rounds = args.rounds or (1 if args.quick else 3)
    with tempfile.TemporaryDirectory() as tmp:
        data, lex = served_lexicon(args.data, Path(tmp))
        start = time.perf_counter()
        graph = lex.board_graph
        print(f"word graph: {time.perf_counter() - start:.2f} s")
        asked = positions(graph, count)
        local = in_process(graph, asked)
        words = list(lex.words.keys())
        slow, fast = brute(words, asked, 3 if args.quick else 6)
        naive_slow, naive_fast = brute(words, asked, args.naive, naive=True)
        server = kelime_server(data, 1, Path(tmp))
        try:
            served, errors = over_http(server.port, asked, rounds)
        finally:
            server.stop()
    for blanks in (0, 1, 2):
        print(row(f"in process, {blanks} blank(s)", local[blanks]))
    for blanks in (0, 1, 2):
        each = [times[blanks] for times in served]
        print(row(f"POST /v1/moves, {blanks} blank(s)", each[0], GOALS_MS.get(blanks), each))
    print(ratio("brute force, every word that fits", naive_slow, naive_fast, "0–2 blanks",
                goal=True))
    print(ratio("brute force, words by letter", slow, fast, "0–1 blank"))
    if errors:
        print(f"{len(errors)} answers were not 200; the first: {errors[0]}")


if __name__ == "__main__":
    main()
