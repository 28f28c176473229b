"""How fast kelime.normalize is, each figure against baselines measured in the same run.

    .venv/bin/python benchmarks/normalize.py            # ~2 seconds
    .venv/bin/python benchmarks/normalize.py --quick    # <1 second

Three bodies of 10,000 words each, what one POST /v1/validate may carry:

* plain: random 64-letter Turkish words, already normal (the `settled` fast path);
* stacked: 10,000 × ("a" + 63 × U+0302), a 1.3 MB body of one letter and 63 stacked
  circumflexes: before NORMALIZATION_VERSION 3 each word went round a loop up to 8 times;
* mixed: random 64-letter words with about half the letters upper-case, I and İ included.

Each body is timed as a bare loop calling `normalize`, and, as the baseline for that body, a
bare loop calling `str.lower` on the same strings; the rounds interleave the cases and the
median of the rounds is reported. Every figure is also given against normalising the plain
words. The stacked body should cost at most GOAL times the plain one: the cost is linear in
the input, with no repeated passes. The exit status is 1 when it does not.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import orjson

from kelime.normalize import ALPHABET, normalize

WORDS = 10_000
LENGTH = 64
GOAL = 5.0  # the stacked body may cost at most 5 × the plain one


def bodies(seed: int = 42) -> dict[str, list[str]]:
    rng = random.Random(seed)
    plain = ["".join(rng.choices(ALPHABET, k=LENGTH)) for _ in range(WORDS)]
    upper = {"i": "İ", "ı": "I"}
    mixed = ["".join(upper.get(ch, ch.upper()) if rng.random() < 0.5 else ch for ch in word)
             for word in plain]
    stacked = ["".join(["a", "\u0302" * (LENGTH - 1)]) for _ in range(WORDS)]  # 10,000 objects
    return {"plain": plain, "stacked": stacked, "mixed": mixed}


def timed(fn, words: list[str]) -> float:
    """Seconds for one bare loop of fn over words, the garbage collector off."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for word in words:
            fn(word)
        return time.perf_counter() - start
    finally:
        gc.enable()


def measure(cases: dict[str, list[str]], rounds: int) -> dict[tuple[str, str], float]:
    """Median seconds per (case, 'normalize' | 'str.lower'), the cases interleaved."""
    runs: dict[tuple[str, str], list[float]] = {}
    for _ in range(rounds):
        for name, words in cases.items():
            for label, fn in (("normalize", normalize), ("str.lower", str.lower)):
                runs.setdefault((name, label), []).append(timed(fn, words))
    return {key: statistics.median(values) for key, values in runs.items()}


def check(cases: dict[str, list[str]]) -> None:
    """What is timed is what is meant: plain words untouched, the stack kept and refused."""
    assert all(normalize(w) is w for w in cases["plain"])
    assert normalize(cases["stacked"][0]) == "\u00e2" + "\u0302" * (LENGTH - 2)
    assert all(normalize(m) == p for m, p in zip(cases["mixed"], cases["plain"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 rounds instead of 15")
    args = parser.parse_args(argv)
    rounds = 5 if args.quick else 15

    cases = bodies()
    check(cases)
    for words in cases.values():  # warm up: caches, regexes compiled on first use
        timed(normalize, words[:100])
    median = measure(cases, rounds)
    plain = median[("plain", "normalize")]

    print(f"kelime.normalize, {WORDS:,} words of {LENGTH} characters per body, "
          f"median of {rounds} rounds, Python {sys.version.split()[0]}")
    print()
    header = (f"{'body':<8} {'JSON MB':>7} {'normalize':>10} {'µs/word':>8} {'str.lower':>10} "
              f"{'× str.lower':>12} {'× plain':>8}")
    print(header)
    print("-" * len(header))
    for name, words in cases.items():
        mb = len(orjson.dumps({"words": words})) / 1e6
        norm, low = median[(name, "normalize")], median[(name, "str.lower")]
        print(f"{name:<8} {mb:>7.2f} {norm * 1e3:>8.1f}ms {norm / WORDS * 1e6:>8.2f} "
              f"{low * 1e3:>8.1f}ms {norm / low:>11.1f}× {norm / plain:>7.1f}×")
    ratio = median[("stacked", "normalize")] / plain
    print()
    verdict = "ok" if ratio <= GOAL else "OVER"
    print(f"stacked / plain = {ratio:.1f}× (goal ≤ {GOAL:g}×): {verdict}")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
