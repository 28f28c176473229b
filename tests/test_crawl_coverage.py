"""A build is never silently smaller than the dictionary: imports are visibly unfinished
until their last entry is stored (an import killed with SIGKILL does not build as
complete), a file that is no JSON-lines dump imports nothing and says so, words the site
stopped listing are retired whatever their source, a refresh whose list shrank too much
retires nothing unless forced, and robots-disallowed words are a state of their own."""

from __future__ import annotations

import gzip
import json
import signal
import subprocess
from pathlib import Path

import pytest

from kelime.lexicon import Lexicon
from kelime.tdk import store as cache

from .fake_tdk import SLOW_START, FakeProcess, builtin_entries, synthetic_entries, synthetic_words
from .test_crawl import FAST, KELIME, LOG_SLACK, crawl, done_count, env, gts_queries, wait_for
from .test_dump import SAMPLE_DIR, write_dump


def kelime(*args, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([*KELIME, *args], capture_output=True, text=True, env=env(),
                          timeout=timeout)


def coverage(data: Path) -> dict:
    return Lexicon.load(data / "tr").manifest.source["coverage"]


@pytest.mark.slow
def test_an_import_killed_mid_way_does_not_build_as_complete(tmp_path):
    """Killed after 10 s: 22,500 words, "0 pending", and `build --cache` exited 0 with 13,584
    words instead of 60,946, its manifest saying done 22500 of 22500."""
    entries = synthetic_entries(17_000)
    dump = write_dump(tmp_path / "big.jsonl", entries)
    path = tmp_path / "tdk.sqlite"
    proc = subprocess.Popen([*KELIME, "crawl", "import", str(dump), "--cache", str(path)],
                            env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: done_count(path) >= 1000, timeout=120)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    stored = done_count(path)
    assert 1000 <= stored < len(entries), "the import finished before it could be killed"
    status = kelime("crawl", "status", "--cache", str(path))
    assert "INCOMPLETE: the import of big.jsonl" in status.stdout, status.stdout
    data = tmp_path / "data"
    refused = kelime("build", "--cache", str(path), "--out", str(data))
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "never finished" in refused.stderr and "--force" in refused.stderr
    assert not (data / "tr").exists()
    forced = kelime("build", "--cache", str(path), "--out", str(data), "--force")
    assert forced.returncode == 0, forced.stderr
    told = coverage(data)
    assert told["complete"] is False and told["imports"][0]["finished"] is False
    again = kelime("crawl", "import", str(dump), "--cache", str(path))  # resumes
    assert again.returncode == 0, again.stderr
    built = kelime("build", "--cache", str(path), "--out", str(tmp_path / "data2"))
    assert built.returncode == 0, built.stderr
    told = coverage(tmp_path / "data2")
    assert told["complete"] is True and told["imports"][0]["finished"] is True
    assert told["imports"][0]["entries"] == len(entries)
    partial, whole = (len(Lexicon.load(d / "tr").words) for d in (data, tmp_path / "data2"))
    assert partial < whole >= len(entries) - 5  # a few made-up words break the letter rules


def _gzipped(tmp_path: Path) -> Path:
    path = tmp_path / "tdk.jsonl.gz"
    lines = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in builtin_entries()[:5])
    path.write_bytes(gzip.compress(lines.encode()))
    return path


def _array(tmp_path: Path) -> Path:
    path = tmp_path / "tdk.json"
    path.write_text(json.dumps(builtin_entries(), ensure_ascii=False), encoding="utf-8")
    return path


def _pretty(tmp_path: Path) -> Path:
    shared = SAMPLE_DIR / "dump-v12-durmak.json"
    if shared.exists():
        return shared
    path = tmp_path / "pretty.json"  # what the shared sample is: one entry, indented
    path.write_text(json.dumps(builtin_entries()[4], ensure_ascii=False, indent=2))
    return path


def _indented_lines(tmp_path: Path) -> Path:
    """Pretty-printed entries one after the other: each line alone may be an object."""
    path = tmp_path / "pretty.jsonl"
    path.write_text("\n".join(json.dumps(e, ensure_ascii=False, indent=1)
                              for e in builtin_entries()), encoding="utf-8")
    return path


def _junk(tmp_path: Path) -> Path:
    path = tmp_path / "junk.jsonl"
    path.write_text("not json\n{\"madde\": \"no id\"}\n\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("make, says", [
    (_gzipped, "gzip-compressed: unpack it first"),
    (_array, "one JSON array, not JSON lines"),
    (_pretty, "pretty-printed"),
    (_indented_lines, "pretty-printed"),
    (_junk, "holds no TDK entry"),
])
def test_a_file_that_is_no_dump_imports_nothing_and_says_how_to_fix_it(tmp_path, make, says):
    """A gzipped dump (0 of 5 lines), a JSON array (0 of 1) exited 0; the pretty-printed
    sample stored a proverb fragment as an entry, skipped 382 lines and exited 0."""
    path = tmp_path / "tdk.sqlite"
    result = kelime("crawl", "import", str(make(tmp_path)), "--cache", str(path))
    assert result.returncode == 1 and says in result.stderr, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    if path.exists():
        db = cache.open_readonly(path)
        assert cache.cache_stats(db)["entries"] == 0 and cache.imports(db) == []


@pytest.mark.slow
def test_import_then_refresh_retires_the_words_the_site_stopped_listing(tmp_path):
    """The README's workflow: `mark_gone` retired only words whose source began with
    `sitemap`, so 3 imported words absent from the sitemaps stayed valid after a build."""
    synthetic = 300
    dump = write_dump(tmp_path / "tdk.jsonl", builtin_entries() + synthetic_entries(synthetic))
    path = tmp_path / "tdk.sqlite"
    assert kelime("crawl", "import", str(dump), "--cache", str(path)).returncode == 0
    with FakeProcess("--synthetic", str(synthetic), "--without", "3") as fake:
        refreshed = crawl("refresh", "--base-url", fake.url, "--cache", str(path),
                          "--delay", "0", *FAST)
    output = refreshed.stdout + refreshed.stderr
    assert refreshed.returncode == 0, output
    assert "3 word(s) the site no longer lists" in output
    data = tmp_path / "data"
    built = kelime("build", "--cache", str(path), "--out", str(data))
    assert built.returncode == 0, built.stderr
    lex = Lexicon.load(data / "tr")
    dropped = synthetic_words(synthetic)[:3]
    assert not any(lex.check(w).valid for w in dropped)
    assert all(lex.check(w).valid for w in synthetic_words(synthetic)[3:10])
    assert coverage(data)["gone"] == 3


@pytest.mark.slow
def test_an_empty_sitemap_in_a_refresh_retires_nothing_unless_forced(tmp_path):
    """One sitemap answering an empty but valid <urlset> marked 1,003 of 2,002 words gone,
    and a build into a fresh folder exited 0 with 999 words."""
    path = tmp_path / "tdk.sqlite"
    with FakeProcess("--synthetic", "200") as fake:
        full = crawl("run", "--base-url", fake.url, "--cache", str(path), "--delay", "0", *FAST)
        assert full.returncode == 0, full.stdout + full.stderr
    before = cache.cache_stats(cache.open_readonly(path))["words"]
    with FakeProcess("--synthetic", "200", "--fault", "/sitemap-2.xml=no_words") as fake:
        short = crawl("refresh", "--base-url", fake.url, "--cache", str(path),
                      "--delay", "0", *FAST)
        output = short.stdout + short.stderr
        assert short.returncode == 1, output
        assert "REFUSED to retire" in output and "kelime crawl refresh --force" in output
        after = cache.cache_stats(cache.open_readonly(path))["words"]
        assert after["gone"] == 0 and after["queued"] == before["queued"]
        data = tmp_path / "data"
        assert kelime("build", "--cache", str(path), "--out", str(data)).returncode == 0
        assert coverage(data)["enumerated"] == before["queued"]
        forced = crawl("refresh", "--base-url", fake.url, "--cache", str(path), "--force",
                       "--delay", "0", *FAST)
    assert forced.returncode == 0, forced.stdout + forced.stderr
    gone = cache.cache_stats(cache.open_readonly(path))["words"]["gone"]
    assert gone > 50 and f"{gone} word(s) the site no longer lists" in forced.stdout + forced.stderr


@pytest.mark.slow
def test_a_robots_disallowed_word_is_not_pending_and_does_not_block_the_build(tmp_path):
    """It stayed pending for ever: "Rerun the same command to resume", a rerun never fetched
    it, and `build --cache` refused the cache as incomplete (1 of 89 words)."""
    path = tmp_path / "tdk.sqlite"
    with FakeProcess("--synthetic", "75") as fake:
        first = crawl("run", "--base-url", fake.url, "--cache", str(path), "--delay", "0", *FAST)
        assert first.returncode == 0, first.stdout + first.stderr
        fake.clear_log()
        rerun = crawl("run", "--base-url", fake.url, "--cache", str(path), "--delay", "0", *FAST)
        asked = gts_queries(fake.log())
    output = first.stdout + first.stderr
    assert "1 disallowed by robots.txt" in output and "0 pending" in output
    assert "Rerun the same command" not in output
    assert rerun.returncode == 0 and "gizli" not in asked
    data = tmp_path / "data"
    built = kelime("build", "--cache", str(path), "--out", str(data))
    assert built.returncode == 0, built.stderr
    told = coverage(data)
    assert (told["disallowed"], told["pending"], told["complete"]) == (1, 0, True)


# --- faults cost TDK little ------------------------------------------------------------------

@pytest.mark.slow
def test_a_site_failing_everything_with_503_stops_the_crawl_within_a_few_requests(tmp_path):
    """It took 108 requests (403s and HTML stopped it after 8)."""
    with FakeProcess("--synthetic", "60") as fake:
        fake.fault("*", "503")
        result = crawl("run", "--base-url", fake.url, "--cache", str(tmp_path / "c.sqlite"),
                       "--delay", "0", *FAST)
        asked = gts_queries(fake.log())
    output = result.stdout + result.stderr
    assert result.returncode == 1 and "STOPPED by the circuit breaker" in output, output
    assert "429 or 5xx" in output and len(asked) == 8  # KELIME_BREAKER_THRESHOLD


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["huge", "chunked", "bomb"])
def test_a_reply_too_big_to_store_is_final_after_one_try_and_paces_the_next(tmp_path, kind):
    """An oversize chunked reply was downloaded 4 times a run and never final; after a reply
    refused for its unpacked size the next request left at once."""
    words = tmp_path / "words.txt"
    words.write_text("kitap\ninek\n")
    path = tmp_path / "c.sqlite"
    delay = 0.5
    with FakeProcess() as fake:
        fake.fault("kitap", kind, -1, 12)
        crawl("run", "--base-url", fake.url, "--cache", str(path), "--words", str(words),
              "--delay", str(delay), *FAST, "-s", "DOWNLOAD_TIMEOUT=20")
        log = fake.log()
        fake.clear_log()
        crawl("run", "--base-url", fake.url, "--cache", str(path), "--words", str(words),
              "--delay", "0", *FAST)
        again = gts_queries(fake.log())
    asked = gts_queries(log)
    row = cache.get_reply(cache.open_readonly(path), "kitap")
    assert asked.count("kitap") == 1 and row["outcome"] == "failed", row
    assert row["final"] == 1 and "over 8 MiB" in row["error"]
    assert "kitap" not in again  # final: not asked again next run
    if kind != "huge":  # refused at its headers; the others took SLOW_START to come
        at = next(i for i, r in enumerate(log) if r.get("query") == "kitap")
        gap = log[at + 1]["start"] - log[at]["end"]  # it was ~0: no pause after a refusal
        assert gap >= min(delay, SLOW_START) - LOG_SLACK, (log[at], log[at + 1])


def _cut(dump: Path, keep: int, half_a_line: bool) -> Path:
    """The first `keep` lines of `dump`, and half of the next one or not: a download that
    stopped mid-line, or at a line's end."""
    lines = dump.read_bytes().splitlines(keepends=True)
    cut = dump.with_name(f"cut-{keep}-{half_a_line}.jsonl")
    cut.write_bytes(b"".join(lines[:keep]) + (lines[keep][:len(lines[keep]) // 2]
                                              if half_a_line else b""))
    return cut


def test_a_cut_off_dump_imports_nothing_and_says_where_it_ends(tmp_path):
    """A third of the dump plus half a line imported with exit 0 ("1 line skipped"), and
    the build made a third of the words with coverage.complete: true."""
    dump = write_dump(tmp_path / "tdk.jsonl", builtin_entries() + synthetic_entries(300))
    keep = len(dump.read_bytes().splitlines()) // 3
    cut = _cut(dump, keep, half_a_line=True)
    path = tmp_path / "tdk.sqlite"
    result = kelime("crawl", "import", str(cut), "--cache", str(path))
    output = result.stdout + result.stderr
    offset = len(b"".join(dump.read_bytes().splitlines(keepends=True)[:keep]))
    assert result.returncode == 1, output
    assert (f"is cut off: its last line (line {keep + 1}, from byte {offset:,})" in result.stderr
            and f"nothing imported ({keep} entries before it)" in result.stderr), output
    db = cache.open_readonly(path)
    assert cache.cache_stats(db)["entries"] == 0 and cache.imports(db) == []
    built = kelime("build", "--cache", str(path), "--out", str(tmp_path / "data"))
    assert built.returncode != 0 and not (tmp_path / "data" / "tr").exists()
    whole = kelime("crawl", "import", str(dump), "--cache", str(path))  # the file, fetched again
    assert whole.returncode == 0 and "no count" in whole.stderr, whole.stderr


def test_a_dump_with_many_damaged_lines_is_refused_unless_accepted(tmp_path):
    """2 of every 5 lines overwritten with NULs: the first import took 120 of 200 entries,
    exit 0 ("80 line(s) skipped"), and the build was accepted as complete."""
    dump = write_dump(tmp_path / "tdk.jsonl", synthetic_entries(200))
    lines = dump.read_bytes().splitlines(keepends=True)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(b"".join(b"\0" * (len(line) - 1) + b"\n" if i % 5 < 2 else line
                                 for i, line in enumerate(lines)))
    path = tmp_path / "tdk.sqlite"
    refused = kelime("crawl", "import", str(damaged), "--cache", str(path))
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert f"{len(lines) * 2 // 5} of its {len(lines)} lines are not entries" in refused.stderr
    assert "--accept-fewer" in refused.stderr
    db = cache.open_readonly(path)
    assert cache.cache_stats(db)["entries"] == 0 and cache.imports(db) == []
    db.close()
    accepted = kelime("crawl", "import", str(damaged), "--cache", str(path), "--accept-fewer")
    assert accepted.returncode == 0, accepted.stderr


def test_a_dump_well_short_of_the_last_import_is_refused_unless_accepted(tmp_path):
    """A dump cut at a line's end (a third of it) imported over a whole one with exit 0."""
    entries = builtin_entries() + synthetic_entries(300)
    dump = write_dump(tmp_path / "tdk.jsonl", entries)
    path = tmp_path / "tdk.sqlite"
    assert kelime("crawl", "import", str(dump), "--cache", str(path)).returncode == 0
    keep = len(entries) // 3
    cut = _cut(dump, keep, half_a_line=False)
    result = kelime("crawl", "import", str(cut), "--cache", str(path))
    assert result.returncode == 1, result.stdout + result.stderr
    assert (f"holds {keep} entries, {keep / len(entries):.1%} of the {len(entries)} the last "
            "import into this cache held (tdk.jsonl") in result.stderr, result.stderr
    assert "--accept-fewer" in result.stderr
    db = cache.open_readonly(path)
    assert [i["file"] for i in cache.imports(db)] == ["tdk.jsonl"]
    db.close()
    again = kelime("crawl", "import", str(dump), "--cache", str(path))
    assert again.returncode == 0, again.stderr
    assert (f"Expected: at least {-(-len(entries) * 99 // 100)} entries (99% of the "
            f"{len(entries)} the last import, tdk.jsonl, held); imported {len(entries)}"
            in again.stderr), again.stderr
    fewer = kelime("crawl", "import", str(cut), "--cache", str(path), "--accept-fewer")
    assert fewer.returncode == 0 and f"imported {keep}" in fewer.stderr, fewer.stderr
