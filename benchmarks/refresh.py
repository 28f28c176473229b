"""What a weekly refresh and a failing site cost TDK, in requests (counted by the fake TDK).

    .venv/bin/python benchmarks/refresh.py [--words 2000 --words 97000]

1. For each size N: a cache of N words (crawled from the fake when the fake can list that
   many, else written directly: a synthetic cache), then `kelime crawl refresh` against
   the fake with no new word; its requests ÷ a full crawl's (N /gts requests plus the
   site's list). Target ≤ 1% (the rotating slice is 1/150 of the replies: crawler/run.py).
2. A crawl against a site answering 503 to every /gts request: its requests before the
   circuit breaker stops it. Target: a handful (KELIME_BREAKER_THRESHOLD, 8).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kelime.tdk import store as cache  # noqa: E402
from tests.fake_tdk import SITEMAP_WORDS, FakeProcess, synthetic_words  # noqa: E402

KELIME = [sys.executable, "-c", "from kelime.cli import main; main()"]
MOST_FAKE_WORDS = len(synthetic_words(10**5))  # what the fake's syllables can make
QUICK = ["--delay", "0", "-s", "KELIME_PROGRESS_INTERVAL=60", "-s", "KELIME_BACKOFF_BASE=0.05"]


def crawl(url: str, path: Path, verb: str = "run") -> subprocess.CompletedProcess:
    """`kelime crawl VERB` (run, refresh) against `url`, quickly."""
    return subprocess.run([*KELIME, "crawl", verb, "--base-url", url, "--cache", str(path),
                           *QUICK], capture_output=True, text=True)


def synthetic_cache(path: Path, words: list[str]) -> None:
    """Good replies for `words`, oldest first, written in a few transactions."""
    db = cache.open_cache(path, create=True)
    rows = [(w, f"https://sozluk.gov.tr/gts?ara={w}", 200,
             f"2026-01-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}+00:00",
             "not_found", '{"error":"Sonuç bulunamadı"}', None, None, 1, None)
            for i, w in enumerate(words)]
    with cache.write_tx(db):
        db.conn.executemany("INSERT INTO replies (query, url, status, fetched_at, outcome, "
                            "body, sha256, error, attempts, final) VALUES "
                            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    cache.save_words(db, words, "synthetic")
    db.close()


def refresh_cost(n: int, tmp: Path) -> dict:
    synthetic = min(n, MOST_FAKE_WORDS) - len(SITEMAP_WORDS)
    path = tmp / f"refresh-{n}.sqlite"
    with FakeProcess("--synthetic", str(synthetic)) as fake:
        listed = len(SITEMAP_WORDS) + synthetic
        if listed == n:
            full = crawl(fake.url, path)
            assert full.returncode == 0, full.stderr
            full_requests = len(fake.log())
            how = "crawled from the fake"
        else:  # the fake lists only part of them: the rest is a synthetic cache
            extra = [f"kelime{i}" for i in range(n - listed)]
            synthetic_cache(path, SITEMAP_WORDS + synthetic_words(synthetic) + extra)
            full_requests = n + 5  # one /gts each, robots.txt, autocomplete, 3 sitemaps
            how = "synthetic cache (N /gts requests + 5 for the list as the full crawl)"
        fake.clear_log()
        refreshed = crawl(fake.url, path, "refresh")
        log = fake.log()
    gts = sum(r["path"].startswith("/gts") for r in log)
    return {"words": n, "cache": how, "full_crawl_requests": full_requests,
            "refresh_requests": len(log), "refresh_gts": gts,
            "share": round(len(log) / full_requests, 4),
            "refresh_says": (refreshed.stdout + refreshed.stderr).strip().splitlines()[-1]}


def failing_site(tmp: Path) -> dict:
    with FakeProcess("--synthetic", "2000", "--fault", "*=503") as fake:
        run = crawl(fake.url, tmp / "failing.sqlite")
        log = fake.log()
    return {"words_listed": 2000 + len(SITEMAP_WORDS), "exit": run.returncode,
            "requests": len(log), "gts_requests": sum(r["path"].startswith("/gts")
                                                       for r in log)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--words", type=int, action="append")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for n in args.words or [2000, 97000]:
            print(json.dumps({"refresh": refresh_cost(n, tmp)}, ensure_ascii=False), flush=True)
        print(json.dumps({"failing_site": failing_site(tmp)}), flush=True)


if __name__ == "__main__":
    main()
