"""Crawl pipeline and cache-build speed, each against a baseline measured in the same run.

    .venv/bin/python benchmarks/crawl.py [--pages 2000] [--entries 100000] [--only pipeline]

1. pages/s of the whole crawl pipeline (Scrapy + classification + one SQLite transaction
   per reply) against the fake TDK on loopback, politeness OFF (delay 0, no AutoThrottle,
   no robots.txt, 8 in flight), versus a bare sequential httpx loop over the same URLs
   (what the fake and loopback allow), timed just before and just after the crawl (their
   mean: on a busy machine one alone drifts). Target ≥ 0.5× (issue 22).
2. `kelime build --cache` over a 100k-entry cache written through the crawl store's save
   functions, versus `kelime build --wordlist` of the same headwords. Target ≤ 15 s.
3. The weekly refresh (`kelime crawl refresh`) after a full polite-shaped crawl of the same
   site, with 0.5% new and 0.25% vanished words: its requests ÷ the full crawl's. Target:
   the re-verified slice and the site's list ≤ 1% (benchmarks/refresh.py, no new words);
   each new word is one more request, as in a full crawl.
4. The crawl's peak RSS through a 900 MB reply and a 3 GB gzip bomb, against the same crawl
   without them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kelime.tdk import store as cache  # noqa: E402
from tests.fake_tdk import FakeProcess, entry, sense, synthetic_words  # noqa: E402

KELIME = [sys.executable, "-c", "from kelime.cli import main; main()"]
IMPOLITE = ["--delay", "0", "-s", "AUTOTHROTTLE_ENABLED=false", "-s", "ROBOTSTXT_OBEY=false",
            "-s", "CONCURRENT_REQUESTS=8", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8",
            "-s", "KELIME_PROGRESS_INTERVAL=60"]


def bench_crawl(pages: int, tmp: Path) -> dict:
    import httpx

    words = synthetic_words(pages)
    (tmp / "words.txt").write_text("\n".join(words), encoding="utf-8")

    def sequential(url: str) -> float:
        t0 = time.perf_counter()
        with httpx.Client() as client:
            for w in words:
                client.get(f"{url}/gts", params={"ara": w}).raise_for_status()
        return pages / (time.perf_counter() - t0)

    with FakeProcess("--synthetic", str(pages)) as fake:
        before = sequential(fake.url)
        fake.clear_log()
        t0 = time.perf_counter()
        run = subprocess.run([*KELIME, "crawl", "run", "--base-url", fake.url, "--words",
                              str(tmp / "words.txt"), "--cache", str(tmp / "crawl.sqlite"),
                              *IMPOLITE], capture_output=True, text=True)
        whole = time.perf_counter() - t0
        log = [r for r in fake.log() if r["path"].startswith("/gts")]
        after = sequential(fake.url)
    baseline = (before + after) / 2
    assert run.returncode == 0, run.stderr
    st = cache.cache_stats(cache.open_cache(tmp / "crawl.sqlite"))
    assert st["replies"]["ok"] == pages and len({unquote(r["path"]) for r in log}) == pages
    window = max(r["end"] for r in log) - min(r["start"] for r in log)
    return {"pages": pages, "baseline_httpx_sequential_pps": round(baseline, 1),
            "baseline_before_and_after_pps": [round(before, 1), round(after, 1)],
            "pipeline_pps_first_to_last_request": round(pages / window, 1),
            "pipeline_pps_including_startup": round(pages / whole, 1),
            "ratio_to_baseline": round(pages / window / baseline, 2)}


def synthetic_cache(path: Path, n: int) -> list[str]:
    """n realistic entries: 1–3 senses, ~30% phrases, ~2% proper names, ~0.3% vulgar senses."""
    words = synthetic_words(17000) + [a + b for a in synthetic_words(60)
                                      for b in synthetic_words(1800)]
    db = cache.open_cache(path, create=True)
    heads = []
    for start in range(0, n, 2000):
        batch = []
        for i in range(start, min(n, start + 2000)):
            word = words[i]
            if i % 10 < 3:
                word = f"{word} {words[i + 1][:5]}mak"
            proper = i % 50 == 7
            if proper:
                word = word[0].upper() + word[1:]
            tags = ("19", "36") if i % 300 == 11 else ("19",)
            senses = [sense(f"{word} anlamı", tags, [(f"{word} örneği.", "Sait Faik")]
                            if i % 4 == 0 else ())] + [sense("İkinci anlam", ("20", "32"))
                                                       for _ in range(i % 3)]
            batch.append(entry(100_000 + i, word, senses, ozel_mi="1" if proper else "0"))
            heads.append(word)
        cache.save_entries(db, batch, query=None)
    db.close()
    return heads


def bench_build(n: int, tmp: Path) -> dict:
    t0 = time.perf_counter()
    heads = synthetic_cache(tmp / "big.sqlite", n)
    generate = time.perf_counter() - t0
    (tmp / "heads.txt").write_text("\n".join(heads), encoding="utf-8")
    timings = {}
    for label, source in (("wordlist", ["--wordlist", str(tmp / "heads.txt"), "--name", "tr"]),
                          ("cache", ["--cache", str(tmp / "big.sqlite")])):
        t0 = time.perf_counter()
        run = subprocess.run([*KELIME, "build", *source, "--out", str(tmp / label)],
                             capture_output=True, text=True)
        timings[label] = time.perf_counter() - t0
        assert run.returncode == 0, run.stderr
    manifest = json.loads((tmp / "cache" / "tr" / "manifest.json").read_text())
    return {"entries": n, "generate_cache_s": round(generate, 1),
            "cache_mb": round((tmp / "big.sqlite").stat().st_size / 1e6, 1),
            "baseline_build_wordlist_s": round(timings["wordlist"], 2),
            "build_cache_s": round(timings["cache"], 2),
            "ratio_to_baseline": round(timings["cache"] / timings["wordlist"], 2),
            "manifest_words": manifest.get("words", manifest.get("counts"))}


def crawl_requests(fake_args: list[str], cache_path: Path, *extra: str,
                   verb: str = "run") -> tuple[int, str]:
    """(requests the fake saw, the crawl's output) of one `kelime crawl VERB` against a fresh
    fake."""
    with FakeProcess(*fake_args) as fake:
        run = subprocess.run([*KELIME, "crawl", verb, "--base-url", fake.url, "--cache",
                              str(cache_path), "--delay", "0", "-s",
                              "AUTOTHROTTLE_ENABLED=false", "-s", "KELIME_PROGRESS_INTERVAL=60",
                              *extra], capture_output=True, text=True)
        log = fake.log()
    assert run.returncode == 0, run.stdout + run.stderr
    return len(log), run.stdout + run.stderr


def bench_refresh(words: int, tmp: Path) -> dict:
    path = tmp / "refresh.sqlite"
    full, _ = crawl_requests(["--synthetic", str(words)], path)
    new, gone = max(1, words // 200), max(1, words // 400)
    refresh, output = crawl_requests(["--synthetic", str(words + new), "--without", str(gone)],
                                     path, verb="refresh")
    report = next(line for line in output.splitlines() if line.startswith("Refresh:"))
    return {"words": words, "full_crawl_requests": full, "refresh_requests": refresh,
            "ratio": round(refresh / full, 4), "report": report}


def peak_rss(fake_args: list[str], cache_path: Path) -> int:
    """Peak RSS (KiB) of one crawl, read by GNU time -v of the crawl alone."""
    with FakeProcess(*fake_args) as fake:
        run = subprocess.run(["/usr/bin/time", "-v", *KELIME, "crawl", "run", "--base-url",
                              fake.url, "--cache", str(cache_path), "--delay", "0", "-s",
                              "KELIME_BACKOFF_BASE=0.05"], capture_output=True, text=True)
    found = [line for line in run.stderr.splitlines() if "Maximum resident" in line]
    return int(found[0].split(":")[1]) if found else 0


def bench_bombs(tmp: Path) -> dict:
    import shutil

    if not shutil.which("time") and not Path("/usr/bin/time").exists():
        return {"skipped": "GNU time is not installed (apt-get install time)"}
    plain = peak_rss([], tmp / "plain.sqlite")
    bombed = peak_rss(["--fault", "kitap=huge:-1:900", "--fault", "inek=bomb:-1:3000"],
                      tmp / "bombed.sqlite")
    return {"plain_crawl_rss_mib": round(plain / 1024, 1),
            "with_900_mb_reply_and_3_gb_bomb_rss_mib": round(bombed / 1024, 1),
            "ratio": round(bombed / plain, 2) if plain else None}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pages", type=int, default=2000)
    p.add_argument("--entries", type=int, default=100_000)
    p.add_argument("--refresh-words", type=int, default=2000)
    p.add_argument("--only", choices=list(PARTS), action="append",
                   help="run only this part (repeatable), e.g. --only pipeline")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for part in args.only or list(PARTS):
            key, run = PARTS[part]
            print(json.dumps({key: run(args, Path(tmp))}, indent=2, default=str), flush=True)


#: --only NAME: (the key printed, the part run with the arguments and a scratch folder)
PARTS = {
    "pipeline": ("crawl", lambda a, tmp: bench_crawl(a.pages, tmp)),
    "build": ("build", lambda a, tmp: bench_build(a.entries, tmp)),
    "refresh": ("refresh", lambda a, tmp: bench_refresh(a.refresh_words, tmp)),
    "bombs": ("bombs", lambda a, tmp: bench_bombs(tmp)),
}


if __name__ == "__main__":
    main()
