"""How close a full anagram answer over HTTP comes to what any request costs, and to the
search itself: POST /v1/anagram at limit 100 and 1,000, and POST /v1/split of Harfbank
hands, against GET /healthz on the same server and against the same reply made in process,
in one run.

    .venv/bin/python benchmarks/anagram_http.py                # ~1 minute
    .venv/bin/python benchmarks/anagram_http.py --quick        # ~15 seconds
    .venv/bin/python benchmarks/anagram_http.py --data data    # a lexicon already built

The questions are 7-tile racks with 2 blanks (5 letters drawn from kelimelik's bag with a
fixed seed, and ``??``), kelimelik's rules. Served by ``kelime serve`` with one worker on
127.0.0.1 (the lexicon under --data, else the offline bootstrap lexicon built into a
temporary folder); one keep-alive connection sends the requests one after the other. The
three kinds of request take turns in blocks, so that other load on the machine falls on
each alike; a few unrecorded requests warm the server up first. Every row gives the
median and p99 round trip and its ratio to /healthz's median, and the server's CPU time
per request (/proc/PID/stat), which other load barely moves.

In process: the same racks answered by what the route runs (`Lexicon.anagram_json`, or
`orjson.dumps(Lexicon.anagram(…))` in a kelime that has no such method), and the search
alone (limit 0: no word listed). The goals of issue 22 for limit 1,000: p99 ≤ 5 ms and a
median ≤ 3× /healthz's.

Splits: 14-tile Harfbank hands (13 letters from kelimelik's bag and the joker, a third as
many as the racks), POST /v1/split (``{"rack", "game": "harfbank"}``) against
`Lexicon.split` in process; the goal of issue 22: p99 ≤ 50 ms over HTTP.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import orjson  # noqa: E402
from anagram import p99, plain_racks, timings  # noqa: E402  (benchmarks/anagram.py)
from validate import cpu_seconds, kelime_server, print_table, process_tree, served_lexicon  # noqa: E402

LIMITS = (0, 100, 1000)  # 0: the search alone, no word listed
GOAL_P99_MS = 5.0
GOAL_HEALTHZ = 3.0      # the limit-1,000 median, in /healthz medians
GOAL_SPLIT_P99_MS = 50.0
SPLIT = "POST /v1/split harfbank 13 + ?"
WARMUP = 20
HEADERS = {"Content-Type": "application/json"}


def reply_maker(lex):
    """What the route computes for a rack: the reply's bytes."""
    if hasattr(lex, "anagram_json"):
        return lambda rack, limit: lex.anagram_json(rack, "kelimelik", limit=limit)
    return lambda rack, limit: orjson.dumps(lex.anagram(rack, "kelimelik", limit=limit))


def in_process(lex, racks: list[str], hands: list[str]) -> dict[int | str, list[float]]:
    """Seconds per rack: the search alone (limit 0) and the reply at each limit; seconds
    per hand split (what the route sends: its dict, serialised)."""
    make = reply_maker(lex)
    for rack in racks:  # as warm as a server that has answered these racks before
        make(rack, LIMITS[-1])
    out: dict[int | str, list[float]] = {
        limit: timings(partial(make, limit=limit), racks) for limit in LIMITS}
    out[SPLIT] = timings(lambda hand: orjson.dumps(lex.split(hand, "harfbank")), hands)
    return out


class Client:
    """One keep-alive connection; each request timed, and any answer but 200 kept."""

    def __init__(self, port: int):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.errors: list[str] = []

    def time(self, method: str, path: str, body: bytes | None = None) -> float:
        start = time.perf_counter()
        self.conn.request(method, path, body, HEADERS if body is not None else {})
        reply = self.conn.getresponse()
        data = reply.read()
        elapsed = time.perf_counter() - start
        if reply.status != 200:
            self.errors.append(f"{method} {path} {body!r}: {reply.status} {data[:300]!r}")
        return elapsed


def requests(racks: list[str], hands: list[str]) -> dict[str, list[tuple[str, str, bytes | None]]]:
    """The requests of each row, by its name."""
    rows = {"GET /healthz": [("GET", "/healthz", None)] * len(racks)}
    for limit in LIMITS:
        rows[f"POST /v1/anagram limit {limit}"] = [
            ("POST", "/v1/anagram", orjson.dumps({"rack": r, "game": "kelimelik",
                                                  "limit": limit})) for r in racks]
    rows[SPLIT] = [("POST", "/v1/split", orjson.dumps({"rack": h, "game": "harfbank"}))
                   for h in hands]
    return rows


def over_http(port: int, pids: list[int], racks: list[str], hands: list[str],
              blocks: int) -> dict:
    """Per row: round-trip seconds and server CPU seconds per request, the rows taking turns
    in `blocks` blocks each."""
    client, rows = Client(port), requests(racks, hands)
    for req in rows[f"POST /v1/anagram limit {LIMITS[-1]}"]:  # warm, as in process
        client.time(*req)
    for name, reqs in rows.items():
        for req in reqs[:WARMUP]:
            client.time(*req)
    times = {name: [] for name in rows}
    cpu = {name: 0.0 for name in rows}
    for block in range(blocks):
        for name, reqs in rows.items():
            before = cpu_seconds(pids)
            part = reqs[block * len(reqs) // blocks:(block + 1) * len(reqs) // blocks]
            times[name] += [client.time(*req) for req in part]
            cpu[name] += cpu_seconds(pids) - before
    client.conn.close()
    return {"times": times, "cpu": {n: cpu[n] / len(times[n]) for n in rows},
            "errors": client.errors}


def report(served: dict, local: dict[int | str, list[float]], racks: int, hands: int) -> dict:
    floor = statistics.median(served["times"]["GET /healthz"])
    rows = []
    for name, times in served["times"].items():
        key = int(name.rsplit(" ", 1)[1]) if "limit" in name else name
        row = {"request": name, "median_ms": statistics.median(times) * 1e3,
               "p99_ms": p99(times) * 1e3, "x_healthz": statistics.median(times) / floor,
               "server_cpu_ms": served["cpu"][name] * 1e3}
        if key in local:
            here = statistics.median(local[key])
            row.update(in_process_ms=here * 1e3, in_process_p99_ms=p99(local[key]) * 1e3,
                       x_in_process=statistics.median(times) / here)
        rows.append(row)
    by_name = {row["request"]: row for row in rows}
    big, split = by_name[f"POST /v1/anagram limit {LIMITS[-1]}"], by_name[SPLIT]
    goals = {"p99_ms": big["p99_ms"], "p99_met": big["p99_ms"] <= GOAL_P99_MS,
             "healthz_p99_ms": rows[0]["p99_ms"],
             "x_healthz": big["x_healthz"], "x_healthz_met": big["x_healthz"] <= GOAL_HEALTHZ,
             "split_p99_ms": split["p99_ms"],
             "split_p99_met": split["p99_ms"] <= GOAL_SPLIT_P99_MS}
    return {"racks": racks, "hands": hands, "rows": rows, "goals": goals,
            "errors": served["errors"]}


def print_report(out: dict) -> None:
    rows = [[r["request"], f"{r['median_ms']:.3f}", f"{r['p99_ms']:.3f}",
             f"{r['x_healthz']:.2f}", f"{r['server_cpu_ms']:.3f}",
             *([f"{r['in_process_ms']:.3f}", f"{r['in_process_p99_ms']:.3f}",
                f"{r['x_in_process']:.1f}"] if "in_process_ms" in r else ["", "", ""])]
            for r in out["rows"]]
    print_table(f"{out['racks']} racks of 5 letters + ?? (kelimelik) and {out['hands']} "
                f"Harfbank hands of 13 letters + ?, one keep-alive connection, kelime serve "
                f"--workers 1",
                ["request", "p50 ms", "p99 ms", "×healthz", "srv CPU ms", "in-proc p50",
                 "in-proc p99", "HTTP/in-proc"], rows)
    g = out["goals"]
    print(f"goals at limit 1,000: p99 {g['p99_ms']:.2f} ms ≤ {GOAL_P99_MS:g} ms: "
          f"{'met' if g['p99_met'] else 'MISSED'} (/healthz's own p99: "
          f"{g['healthz_p99_ms']:.2f} ms); median {g['x_healthz']:.2f}× /healthz ≤ "
          f"{GOAL_HEALTHZ:g}×: {'met' if g['x_healthz_met'] else 'MISSED'}")
    print(f"goal for splits: p99 {g['split_p99_ms']:.1f} ms ≤ {GOAL_SPLIT_P99_MS:g} ms: "
          f"{'met' if g['split_p99_met'] else 'MISSED'}")
    for error in out["errors"][:5]:
        print(f"WARNING: {error}")
    if out["errors"]:
        print(f"WARNING: {len(out['errors'])} answers were not 200: the figures are not valid")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer requests (a smoke test)")
    parser.add_argument("--data", type=Path, help="data folder with the lexicon to serve")
    parser.add_argument("--racks", type=int,
                        help="anagram requests per row [1000, quick 200]; a third as many splits")
    parser.add_argument("--blocks", type=int, default=10, help="turns per row [10]")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args(argv)
    racks = plain_racks(args.racks or (200 if args.quick else 1000), 5, 2, 3)
    hands = plain_racks(max(20, len(racks) // 3), 13, 1, 7)
    with tempfile.TemporaryDirectory() as tmp:
        data, lex = served_lexicon(args.data, Path(tmp))
        local = in_process(lex, racks, hands)
        server = kelime_server(data, 1, Path(tmp))
        try:
            served = over_http(server.port, process_tree(server.proc.pid), racks, hands,
                               args.blocks)
        finally:
            server.stop()
    out = report(served, local, len(racks), len(hands))
    print_report(out)
    if args.json:
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
