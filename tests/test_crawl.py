"""The REAL crawl: `kelime crawl` as a subprocess (Scrapy, Twisted, SQLite) against the fake
TDK over a socket. Politeness is asserted from the fake's request log."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from itertools import pairwise
from pathlib import Path
from urllib.parse import unquote

import pytest

from kelime.tdk import store as cache

from .fake_tdk import DISALLOWED_WORD, SITEMAP_WORDS, FakeProcess, builtin_entries

KELIME = [sys.executable, "-c", "from kelime.cli import main; main()"]
FAST = ["-s", "KELIME_BACKOFF_BASE=0.05", "-s", "DOWNLOAD_TIMEOUT=1",
        "-s", "KELIME_PROGRESS_INTERVAL=0.5"]
CRAWL_DELAY, DELAY = 0.12, 0.05
#: How much closer than CRAWL_DELAY two request starts may look IN THE FAKE'S LOG. Scrapy spaces
#: requests start-to-start in its download slot (robots.txt included: slot.lastseen is set when
#: a request leaves the slot's queue), but the fake stamps a request when it has read its
#: headers: after a new connection's TCP handshake and thread start, ~2 ms on a kept-alive
#: one. Under CPU load the two lags differ by up to ~20 ms (robots.txt, the first request, is
#: the usual victim). Ignoring Crawl-delay would show DELAY (50 ms) gaps; a burst, ~0 ms.
LOG_SLACK = 0.03
FAULTS = {  # word → (kind, times, arg): each survived by retrying
    "kitap": ("429", 1, 1), "inek": ("503", 2, None), "abdal": ("close", 1, None),
    "e-posta": ("html", 1, None), "istanbul": ("broken", 1, None), "dulda": ("empty", 1, None),
    "deyyus": ("unexpected", 1, None), "ığdır": ("slow", 1, 1.6),
}
EXPECTED = {e["madde_id"]: e for e in builtin_entries()
            if e["madde"] not in (DISALLOWED_WORD, "kalem")}


def env(**extra) -> dict:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KELIME_")}
    return {**clean, **extra}


def crawl(*args, environ=None, timeout=120) -> subprocess.CompletedProcess:
    return subprocess.run([*KELIME, "crawl", *args], capture_output=True, text=True,
                          env=environ or env(), timeout=timeout)


def gts_queries(log) -> list[str]:
    return [unquote(r["path"].split("ara=", 1)[1]) for r in log if r["path"].startswith("/gts")]


def replies(path) -> dict[str, dict]:
    db = cache.open_cache(path)
    return {r["query"]: r for r in db["replies"].rows}


def done_count(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            return conn.execute("SELECT count(*) FROM replies WHERE outcome IN ('ok', "
                                "'not_found')").fetchone()[0]
    except sqlite3.Error:
        return 0


def wait_for(condition, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def faulty(tmp_path_factory):
    """One crawl through every survivable fault, plus `kalem` answering HTML for good."""
    with FakeProcess("--crawl-delay", str(CRAWL_DELAY)) as fake:
        for word, (kind, times, arg) in FAULTS.items():
            fake.fault(word, kind, times, arg)
        fake.fault("kalem", "html", -1)
        path = tmp_path_factory.mktemp("crawl") / "tdk.sqlite"
        result = crawl("run", "--base-url", fake.url, "--cache", str(path), "--delay", str(DELAY),
                       *FAST, environ=env(KELIME_CACHE="/nonexistent/flag-beats-env.sqlite"))
        yield fake, path, result, fake.log()


@pytest.mark.slow
def test_crawl_stores_every_entry_exactly_as_sent(faulty):
    _, path, result, _ = faulty
    assert result.returncode == 1, result.stderr  # kalem failed: the work failed (docs/cli.md)
    db = cache.open_cache(path)
    assert list(cache.iter_entries(db)) == [EXPECTED[k] for k in sorted(EXPECTED, key=int)]
    assert {e["madde"] for e in cache.entries_for_word(db, "abdal")} == {"abdal", "Abdal"}
    assert {e["madde"] for e in cache.entries_for_word(db, "adet")} == {"adet", "âdet"}


def test_a_crawl_says_nothing_of_the_referer_it_never_sends(faulty):
    """REFERER_ENABLED is off on purpose; Scrapy's RedirectMiddleware warned of it at the
    start of every crawl, and told the operator to change the middlewares."""
    _, _, result, _ = faulty
    assert result.returncode == 1 and "Referer" not in result.stderr, result.stderr


@pytest.mark.slow
def test_crawl_outcomes(faulty):
    _, path, result, _ = faulty
    got = replies(path)
    assert got[DISALLOWED_WORD]["outcome"] == "disallowed"  # robots.txt: never asked
    assert got[DISALLOWED_WORD]["attempts"] == 0 and "robots.txt" in got[DISALLOWED_WORD]["error"]
    assert got["massa"]["outcome"] == "not_found"
    assert got["kalem"]["outcome"] == "failed" and "HTML" in got["kalem"]["error"]
    assert got["kalem"]["attempts"] == 4
    ok = set(SITEMAP_WORDS) - {"massa", "kalem", DISALLOWED_WORD}
    assert {q for q, r in got.items() if r["outcome"] == "ok"} == ok
    for word in FAULTS:  # each fault survived, after at least one retry
        assert got[word]["attempts"] >= 2, word
    assert f"ok {len(ok)}, not_found 1, failed 1" in result.stderr
    assert "The crawl's work FAILED (exit 1): 1 word(s) failed (kalem: HTML" in result.stderr
    assert "Rerun the same command" in result.stderr


@pytest.mark.slow
def test_crawl_is_polite(faulty):
    _, _, _, log = faulty
    assert log[0]["path"] == "/robots.txt"
    assert [r["path"] for r in log].count("/robots.txt") == 1
    assert not any(DISALLOWED_WORD in r["path"] or r["path"].startswith("/yonetim")
                   for r in log)
    for before, after in pairwise(log):
        assert after["start"] >= before["end"], ("two requests at once", before, after)
        assert after["start"] - before["start"] >= CRAWL_DELAY - LOG_SLACK, (before, after)
    for i, r in enumerate(log[:-1]):
        if r["status"] == 429:  # Retry-After: 1
            assert log[i + 1]["start"] - r["end"] >= 1.0
    agents = {r["user_agent"] for r in log}
    assert agents == {"Mozilla/5.0 (compatible; kelime/0.1; +https://github.com/kelime-tr/kelime)"}
    assert all(r["accept"] == "application/json" for r in log if r["path"].startswith("/gts"))


@pytest.mark.slow
def test_crawl_enumerates_from_robots_and_sitemaps(faulty):
    _, path, _, log = faulty
    paths = [r["path"] for r in log]
    assert paths[1:5] == ["/autocomplete.json", "/sitemap.xml", "/sitemap-1.xml", "/sitemap-2.xml"]
    db = cache.open_cache(path)
    assert {w["word"] for w in db["words"].rows} == set(SITEMAP_WORDS)
    assert sorted(set(gts_queries(log))) == sorted(set(SITEMAP_WORDS) - {DISALLOWED_WORD})


@pytest.mark.slow
def test_rerun_fetches_only_the_failed_word_then_status(faulty):
    fake, path, _, _ = faulty
    fake.clear_faults()
    fake.clear_log()
    result = crawl("run", "--max-age", "30", "--delay", str(DELAY), *FAST,  # URL, cache: env
                   environ=env(KELIME_TDK_BASE_URL=fake.url, KELIME_CACHE=str(path)))
    assert result.returncode == 0, result.stderr
    assert gts_queries(fake.log()) == ["kalem"]
    assert replies(path)["kalem"]["outcome"] == "ok"
    requests_before = len(fake.log())
    status = subprocess.run([*KELIME, "crawl", "status", "--cache", str(path)],
                            capture_output=True, text=True, env=env())
    st = cache.cache_stats(cache.open_cache(path))
    assert status.returncode == 0
    assert f"replies ok {st['replies']['ok']}, not_found 1, failed 0" in status.stdout
    assert f"{st['entries']} entries" in status.stdout
    assert "14 queued, 13 done, 0 pending, 1 disallowed by robots.txt" in status.stdout
    assert len(fake.log()) == requests_before  # --status does not crawl


@pytest.mark.slow
def test_max_age_zero_and_limit_with_a_word_list(faulty, tmp_path):
    fake, path, _, _ = faulty
    fake.clear_log()
    words = tmp_path / "words.txt"
    words.write_text("# refresh these\nKİTAP\nİnek\n\nadet\n", encoding="utf-8")
    result = crawl("run", "--base-url", fake.url, "--cache", str(path), "--words", str(words),
                   "--max-age", "0", "--limit", "2", "--delay", str(DELAY), *FAST)
    assert result.returncode == 0, result.stderr
    queries = gts_queries(fake.log())
    assert queries == ["kitap", "inek"]  # Turkish-lowercased, limited, no enumeration
    assert not any("sitemap" in r["path"] for r in fake.log())


@pytest.mark.slow
def test_circuit_breaker_stops_on_403_then_html_streaks(tmp_path):
    words = tmp_path / "words.txt"
    words.write_text("kitap\ninek\nadet\nabdal\nkalem\ndulda")
    with FakeProcess() as fake:
        for kind, words_in_message in (("403", "403 Forbidden"), ("html", "instead of JSON")):
            fake.clear_faults()
            fake.clear_log()
            fake.fault("*", kind)
            path = tmp_path / f"{kind}.sqlite"
            result = crawl("run", "--base-url", fake.url, "--cache", str(path), "--words",
                           str(words), "--delay", str(DELAY), "-s",
                           "KELIME_BREAKER_THRESHOLD=3", *FAST)
            assert result.returncode == 1, result.stderr
            assert "STOPPED by the circuit breaker" in result.stderr
            assert words_in_message in result.stderr and "Traceback" not in result.stderr
            assert len(gts_queries(fake.log())) == 3  # stopped at once
            st = cache.cache_stats(cache.open_cache(path))
            assert st["replies"]["not_found"] == 0 and st["entries"] == 0


def test_tls_failure_is_explained(tmp_path):
    words = tmp_path / "words.txt"
    words.write_text("kitap\ninek\nadet\n")
    with FakeProcess() as fake:  # speaks plain HTTP: the TLS handshake fails
        https = fake.url.replace("http://", "https://")
        result = crawl("run", "--base-url", https, "--cache", str(tmp_path / "c.sqlite"), "--words",
                       str(words), "--delay", "0", "-s", "KELIME_BREAKER_THRESHOLD=2", *FAST)
    assert result.returncode == 1
    assert "TLS handshake with 127.0.0.1" in result.stderr and "--ciphers" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_bad_arguments_are_refused_before_crawling(tmp_path):
    bad_ua = crawl("run", "--user-agent", "python-requests/2.31", "--cache",
                   str(tmp_path / "c.sqlite"))
    assert bad_ua.returncode == 2 and "Python" in bad_ua.stderr  # a usage error
    not_db = tmp_path / "x.sqlite"
    not_db.write_text("not a database, really")
    bad_cache = crawl("status", "--cache", str(not_db))
    assert bad_cache.returncode == 1 and "not an SQLite database" in bad_cache.stderr
    missing = crawl("status", "--cache", str(tmp_path / "none.sqlite"))
    assert missing.returncode == 1 and "does not exist" in missing.stderr


@pytest.mark.slow
def test_ctrl_c_stops_cleanly(tmp_path):
    path = tmp_path / "c.sqlite"
    with FakeProcess("--synthetic", "300") as fake:
        proc = subprocess.Popen([*KELIME, "crawl", "run", "--base-url", fake.url, "--cache",
                                 str(path), "--delay", str(DELAY), *FAST], env=env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for(lambda: done_count(path) >= 5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        log = fake.log()
    assert proc.returncode == 130, err
    assert "interrupted (Ctrl-C or SIGTERM)" in err and "Traceback" not in err
    db = cache.open_cache(path)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    st = cache.cache_stats(db)
    assert 5 <= st["words"]["done"] < st["words"]["queued"] == len(SITEMAP_WORDS) + 300
    answered = {r["path"] for r in log if r["path"].startswith("/gts") and r["status"] == 200}
    assert st["words"]["done"] == len(answered)  # every answered reply was stored


def kill_9_then_rerun(tmp_path, fake: FakeProcess, args: list[str], at: int) -> tuple:
    """A crawl with `args` killed (SIGKILL) once `at` replies are stored, then run again,
    stores what one uninterrupted crawl stores, and fetches nothing it had stored again;
    (the uninterrupted cache, the killed one, the queries the rerun asked)."""
    whole, killed = tmp_path / "whole.sqlite", tmp_path / "killed.sqlite"
    assert crawl("run", "--base-url", fake.url, "--cache", str(whole), *args).returncode == 0
    proc = subprocess.Popen([*KELIME, "crawl", "run", "--base-url", fake.url, "--cache",
                             str(killed), *args], env=env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: done_count(killed) >= at, timeout=60)
    proc.kill()
    proc.wait(10)
    done_at_kill = set(cache.fresh_queries(cache.open_cache(killed)))
    fake.clear_log()
    rerun = crawl("run", "--base-url", fake.url, "--cache", str(killed), *args)
    assert rerun.returncode == 0, rerun.stderr
    refetched = set(gts_queries(fake.log()))
    assert len(done_at_kill) >= at and not refetched & done_at_kill
    a, b = cache.open_cache(whole), cache.open_cache(killed)
    assert list(cache.iter_entries(a)) == list(cache.iter_entries(b))
    return a, b, refetched


@pytest.mark.slow
def test_kill_9_then_rerun_equals_an_uninterrupted_crawl(tmp_path):
    with FakeProcess("--synthetic", "60") as fake:
        a, b, _ = kill_9_then_rerun(tmp_path, fake, ["--delay", "0.02", *FAST], at=15)
    pick = "SELECT query, outcome, sha256 FROM replies ORDER BY query"
    assert a.execute(pick).fetchall() == b.execute(pick).fetchall()
    words = cache.cache_stats(b)["words"]
    assert (words["pending"], words["disallowed"]) == (0, 1)  # robots.txt's word: not pending


def test_a_crawl_after_one_killed_mid_request_does_not_wait_out_its_lease(tmp_path):
    """A crawl killed mid-request leaves its hold on the cache's politeness clock for a lease
    of 2 × DOWNLOAD_TIMEOUT (a minute by default): the next crawl waited it out before its
    first request. Here the lease is two hours: the crawl must not wait for it (it holds
    the crawl lock, so the holder is dead) but leave one gap, then crawl."""
    path = tmp_path / "c.sqlite"
    words = tmp_path / "words.txt"
    words.write_text("kitap\nkalem\n")
    db = cache.open_cache(path, create=True)
    assert cache.take_turn(db, "crawl pid 999999999", time.time(), 7200.0) == 0
    db.close()
    with FakeProcess() as fake:
        done = crawl("run", "--base-url", fake.url, "--cache", str(path), "--words", str(words),
                     "--delay", "0.05", "-s", "DOWNLOAD_TIMEOUT=3600", *FAST[:2], timeout=60)
    assert done.returncode == 0, done.stderr
    assert {r["query"] for r in cache.open_cache(path)["replies"].rows} == {"kitap", "kalem"}


@pytest.mark.slow
def test_crawl_then_build_then_check(faulty, tmp_path):
    """The maintainer's loop: crawl → `kelime build --cache` → `kelime check`."""
    import json

    _, path, _, _ = faulty
    data = tmp_path / "data"
    # robots.txt disallows one word: a state of its own, not pending, so no --force needed
    # (it kept the cache "incomplete" for ever)
    built = subprocess.run([*KELIME, "build", "--cache", str(path), "--out", str(data)],
                           capture_output=True, text=True, env=env())
    assert built.returncode == 0, built.stderr
    coverage = json.loads((data / "tr" / "manifest.json").read_text())["source"]["coverage"]
    assert (coverage["disallowed"], coverage["pending"], coverage["complete"]) == (1, 0, True)
    words = ["abdal", "Abdal", "adet", "âdet", "inek", "deyyus", "dulda tutmak", "e-posta",
             "İstanbul", "massa"]
    checked = subprocess.run([*KELIME, "check", "--data", str(data), "--json", *words],
                             capture_output=True, text=True, env=env())
    reasons = {r["word"]: r["reason"] for r in json.loads(checked.stdout)["results"]}
    assert reasons == {"abdal": None, "Abdal": None, "adet": None, "âdet": None, "inek": None,
                       "deyyus": "obscene", "dulda tutmak": "phrase", "e-posta": "invalid_chars",
                       "İstanbul": "proper_name", "massa": "not_in_dictionary"}


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["503", "close"])
def test_unreadable_robots_txt_fetches_nothing(tmp_path, kind):
    """RFC 9309: robots.txt that cannot be read (5xx, no answer) disallows everything."""
    words = tmp_path / "words.txt"
    words.write_text("kitap\ninek\n")
    with FakeProcess("--fault", f"/robots.txt={kind}") as fake:
        result = crawl("run", "--base-url", fake.url, "--cache", str(tmp_path / "c.sqlite"),
                       "--words", str(words), "--delay", "0", *FAST)
        log = fake.log()
    assert result.returncode == 1, result.stderr
    assert "robots.txt could not be read" in result.stderr and "RFC 9309" in result.stderr
    assert "Traceback" not in result.stderr
    assert gts_queries(log) == [] and {r["path"] for r in log} == {"/robots.txt"}


@pytest.mark.slow
def test_missing_robots_txt_means_no_rules(tmp_path):
    """A 4xx robots.txt is "no rules" (RFC 9309): the crawl goes on."""
    words = tmp_path / "words.txt"
    words.write_text("kitap\n")
    with FakeProcess("--fault", "/robots.txt=403:-1") as fake:
        result = crawl("run", "--base-url", fake.url, "--cache", str(tmp_path / "c.sqlite"),
                       "--words", str(words), "--delay", "0", *FAST)
        log = fake.log()
    assert result.returncode == 0, result.stderr
    assert gts_queries(log) == ["kitap"]


@pytest.mark.parametrize("fault, came_back", [
    ("html", "answered HTTP 200 (text/html; charset=utf-8) beginning '<!doctype html>"),
    ("404", "answered HTTP 404"),
])
@pytest.mark.slow
def test_unreadable_sitemap_stops_the_crawl(tmp_path, fault, came_back):
    """Since TDK's 2026 redesign unknown paths answer the SPA's HTML: a sitemap that is not
    one stops an enumerating crawl with the URL, what came back and the way out (--words)."""
    with FakeProcess("--fault", f"/sitemap.xml={fault}") as fake:
        result = crawl("run", "--base-url", fake.url, "--cache", str(tmp_path / "c.sqlite"),
                       "--delay", "0", *FAST)
        log = fake.log()
    assert result.returncode == 1, result.stderr
    assert "Crawl STOPPED: a sitemap could not be read" in result.stderr
    assert f"could not read the sitemap {fake.url}/sitemap.xml: it {came_back}" in result.stderr
    assert "--words FILE" in result.stderr and "Traceback" not in result.stderr
    assert [r["path"] for r in log] == ["/robots.txt", "/autocomplete.json", "/sitemap.xml"]


def test_enumeration_finding_no_words_stops_the_crawl(tmp_path):
    with FakeProcess("--fault", "/sitemap.xml=no_words") as fake:
        result = crawl("run", "--base-url", fake.url, "--cache", str(tmp_path / "c.sqlite"),
                       "--delay", "0", *FAST)
        log = fake.log()
    assert result.returncode == 1, result.stderr
    assert "Crawl STOPPED: the site's word list gave no words" in result.stderr
    assert (f"found no words ({fake.url}/autocomplete.json answered HTML, not JSON; "
            f"{fake.url}/sitemap.xml listed 0 word page(s))") in result.stderr
    assert "--words FILE" in result.stderr and "Traceback" not in result.stderr
    assert gts_queries(log) == []


@pytest.mark.slow
def test_a_second_crawl_on_the_same_cache_refuses_at_once(tmp_path):
    """Two crawls on one cache both ran: every word fetched twice, two requests in flight,
    no gap between them. The second now refuses, naming the first."""
    with FakeProcess() as fake:
        fake.fault("kitap", "slow", -1, 3.0)  # keeps the first crawl busy
        path = tmp_path / "tdk.sqlite"
        first = subprocess.Popen([*KELIME, "crawl", "run", "--base-url", fake.url, "--cache",
                                  str(path), "--delay", "0.05", *FAST, "-s",
                                  "DOWNLOAD_TIMEOUT=10"], env=env(),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: any(r["path"].startswith("/gts") for r in fake.log()))
            second = crawl("run", "--base-url", fake.url, "--cache", str(path), *FAST)
            still_first = first.poll() is None  # refused while the first one runs, not after
        finally:
            first.terminate()
            first.wait(timeout=60)
        assert second.returncode == 1, second.stdout + second.stderr
        output = second.stdout + second.stderr
        assert "another crawl is writing" in output and f"pid {first.pid}" in output
        assert "Traceback" not in output and still_first
        queries = gts_queries(fake.log())
        assert len(queries) == len(set(queries))  # no word asked twice


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["huge", "bomb"])
def test_an_oversized_reply_is_recorded_failed_and_not_buffered(tmp_path, kind):
    """A 900 MB /gts reply took the crawl to 2.6 GB and a gzip bomb further; a body over
    1 GiB was counted as skipped and refetched for ever. Now a reply over 8 MiB, as sent or
    unpacked, is cancelled, recorded failed (no retries: it would be as big again)."""
    with FakeProcess() as fake:
        fake.fault("kitap", kind, -1)
        path = tmp_path / "tdk.sqlite"
        result = crawl("run", "--base-url", fake.url, "--cache", str(path), "--delay", "0", *FAST,
                       "-s", "DOWNLOAD_TIMEOUT=20")
        asked = gts_queries(fake.log())
    row = replies(path)["kitap"]
    assert row["outcome"] == "failed" and "over 8 MiB" in row["error"], result.stdout
    assert asked.count("kitap") == 1  # not retried
    assert row["body"] is None


def test_robots_txt_answering_429_stops_the_crawl(tmp_path):
    """A robots.txt answering 429 was read as "no rules" and the crawl went on."""
    with FakeProcess("--fault", "/robots.txt=429:-1") as fake:
        result = crawl("run", "--base-url", fake.url, "--cache", str(tmp_path / "c.sqlite"), *FAST)
        asked = gts_queries(fake.log())
    assert result.returncode == 1 and "robots.txt" in result.stdout + result.stderr
    assert asked == []


@pytest.mark.slow
def test_a_retry_after_of_a_day_stops_the_crawl_saying_when(tmp_path):
    """`Retry-After: 100000` paused the crawl for ~28 hours with only a growing ETA."""
    with FakeProcess() as fake:
        fake.fault("kitap", "429", -1, 100_000)
        result = crawl("run", "--base-url", fake.url, "--cache", str(tmp_path / "c.sqlite"), *FAST)
        asked = gts_queries(fake.log())
    output = result.stdout + result.stderr
    assert result.returncode == 1 and "TDK asks to wait 100,000 s" in output, output
    assert "rerun after" in output and asked.count("kitap") == 1  # no retry, no wait


@pytest.mark.slow
def test_the_gap_is_counted_from_the_end_of_each_reply(tmp_path):
    """After a reply that took 3 s the next request left 0.014 s later (Scrapy spaces
    requests start to start). Now it waits the delay after the reply's end, and as long
    as the slow reply took."""
    slow = 1.2
    with FakeProcess() as fake:
        fake.fault("kitap", "slow", 1, slow)
        result = crawl("run", "--base-url", fake.url, "--cache", str(tmp_path / "c.sqlite"),
                       "--delay", "0.3", *FAST, "-s", "DOWNLOAD_TIMEOUT=10")
        log = fake.log()
    assert result.returncode == 0, result.stdout + result.stderr
    at = next(i for i, r in enumerate(log) if r.get("query") == "kitap")
    ended = log[at]["start"] + slow  # the fake stamps a slow reply's end as its start
    assert log[at + 1]["start"] - ended >= slow - LOG_SLACK, (log[at], log[at + 1])
    for before, after in pairwise(log):
        if before.get("fault") is None:
            assert after["start"] - before["end"] >= 0.3 - LOG_SLACK, (before, after)


def test_a_wrong_charset_header_does_not_garble_the_stored_body(tmp_path):
    """TDK sends UTF-8 JSON; a header claiming ISO-8859-9 stored 'Ä±' for 'ı'."""
    import hashlib

    with FakeProcess() as fake:
        fake.fault("ığdır", "charset", -1)
        path = tmp_path / "c.sqlite"
        crawl("run", "--base-url", fake.url, "--cache", str(path), "--delay", "0", *FAST)
    row = replies(path)["ığdır"]
    assert row["outcome"] == "ok" and "Iğdır" in row["body"] and "Ä" not in row["body"]
    assert row["sha256"] == hashlib.sha256(row["body"].encode()).hexdigest()


@pytest.mark.slow
def test_a_sitemap_cut_off_stops_the_crawl(tmp_path):
    """A sitemap cut mid-transfer gave 516 of 2,000 words, "Crawl finished", exit 0."""
    with FakeProcess("--fault", "/sitemap-2.xml=cut:-1") as fake:
        result = crawl("run", "--base-url", fake.url, "--cache", str(tmp_path / "c.sqlite"), *FAST)
    output = result.stdout + result.stderr
    assert result.returncode == 1 and "is cut off" in output, output


@pytest.mark.slow
def test_a_weekly_refresh_costs_a_small_part_of_a_full_crawl(tmp_path):
    """`--refresh`: re-read the sitemaps, fetch only new words, mark vanished ones (kept,
    left out of builds) and re-verify the oldest 1/150 of the replies (413: 3)."""
    path = tmp_path / "tdk.sqlite"
    with FakeProcess("--synthetic", "400") as fake:
        full = crawl("run", "--base-url", fake.url, "--cache", str(path), "--delay", "0", *FAST)
        assert full.returncode == 0, full.stdout + full.stderr
        full_requests = len(fake.log())
    with FakeProcess("--synthetic", "405", "--without", "3") as fake:  # 5 new, 3 gone
        refreshed = crawl("refresh", "--base-url", fake.url, "--cache", str(path),
                          "--delay", "0", *FAST)
        log = fake.log()
    output = refreshed.stdout + refreshed.stderr
    assert refreshed.returncode == 0, output
    assert "Refresh: 5 new word(s); 0 of the 3 re-verified replies changed" in output
    assert "3 word(s) the site no longer lists" in output
    assert f"{len(log)} requests in all." in output  # counted by Pacing: each one sent
    asked = gts_queries(log)
    assert len(asked) == 5 + 3 and len(set(asked)) == len(asked)
    print(f"\nrefresh: {len(log)} requests, a full crawl {full_requests}: "
          f"{len(log) / full_requests:.1%}")
    assert len(log) / full_requests < 0.05
    db = cache.open_readonly(path)
    gone = [w for (w,) in db.execute("SELECT word FROM words WHERE gone_at IS NOT NULL")]
    heads = {e["madde"] for e in cache.iter_entries(db)}
    db.close()
    assert len(gone) == 3 and not heads & set(gone)  # kept in the cache, out of builds


def test_robots_disallowing_every_gts_request_says_so(tmp_path):
    """It ended "Crawl finished … 0 of 6" with no word about why."""
    with FakeProcess("--disallow-gts") as fake:
        result = crawl("run", "--base-url", fake.url, "--cache", str(tmp_path / "c.sqlite"), *FAST)
        asked = gts_queries(fake.log())
    assert asked == [] and "robots.txt disallows every word" in result.stdout + result.stderr
    assert result.returncode == 1  # it printed "Error:" and exited 0


@pytest.mark.parametrize("rule", ["/gts?ara=k", "/gts?ara=kelime-robots-probe$"])
def test_robots_disallowing_some_words_disallows_those_words_only(tmp_path, rule):
    """`Disallow: /gts?ara=k` stopped the whole crawl ("robots.txt disallows every word"),
    the probe standing for every word beginning with a `k`."""
    with FakeProcess("--disallow", rule) as fake:
        result = crawl("run", "--base-url", fake.url, "--cache", str(tmp_path / "c.sqlite"),
                       "--delay", "0", *FAST)
        asked = set(gts_queries(fake.log()))
    output = result.stdout + result.stderr
    assert "disallows every word" not in output and result.returncode == 0, output
    got = replies(tmp_path / "c.sqlite")
    barred = {w for w in SITEMAP_WORDS if ("/gts?ara=" + w).startswith(rule)}
    assert {w for w, r in got.items() if r["outcome"] == "disallowed"} == barred | {DISALLOWED_WORD}
    assert asked == set(SITEMAP_WORDS) - barred - {DISALLOWED_WORD}


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["shape", "huge"])
def test_a_reply_that_would_fail_again_is_not_refetched_every_run(tmp_path, kind):
    """A reply in a shape the store cannot take (or too big) was fetched again on every run."""
    path = tmp_path / "c.sqlite"
    with FakeProcess() as fake:
        fake.fault("kitap", kind, -1)
        crawl("run", "--base-url", fake.url, "--cache", str(path), "--delay", "0", *FAST)
        assert replies(path)["kitap"]["outcome"] == "failed"
        fake.clear_log()
        again = crawl("run", "--base-url", fake.url, "--cache", str(path), "--delay", "0", *FAST)
        asked = gts_queries(fake.log())
    assert "kitap" not in asked, again.stdout + again.stderr
    row = replies(path)["kitap"]
    assert row["final"] == 1


@pytest.mark.slow
def test_the_progress_line_says_when_it_is_waiting_and_why(tmp_path):
    """A long Retry-After showed only a growing ETA."""
    with FakeProcess() as fake:
        fake.fault("kitap", "429", 1, 3)
        result = crawl("run", "--base-url", fake.url, "--cache", str(tmp_path / "c.sqlite"),
                       "--delay", "0", "-s", "KELIME_PROGRESS_INTERVAL=0.5",
                       "-s", "KELIME_BACKOFF_BASE=0.05")
    lines = [line for line in result.stderr.splitlines() if line.startswith("crawl:")]
    waiting = [line for line in lines if "waiting" in line]
    assert waiting and "TDK asked for 3 s (Retry-After)" in waiting[0], result.stderr


RUN_LIMITED = """
import resource, signal, subprocess, sys, json
limit, args = int(sys.argv[1]), sys.argv[2:]
def cap():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the cap fails, not kills
    if limit:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
run = subprocess.run(args, preexec_fn=cap, capture_output=True, text=True, timeout=300)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB, of this crawl alone
print(json.dumps({"code": run.returncode, "out": run.stdout + run.stderr, "rss_kib": peak}))
"""


def limited_crawl(fsize: int, *args: str) -> dict:
    """A crawl in its own process tree: files capped at `fsize` bytes (0: no cap), and its
    peak RSS measured alone."""
    import json

    done = subprocess.run([sys.executable, "-c", RUN_LIMITED, str(fsize), *KELIME, "crawl",
                           "run", *args], capture_output=True, text=True, timeout=320, env=env())
    return json.loads(done.stdout)


@pytest.mark.slow
def test_a_full_disk_stops_the_crawl_at_the_first_failed_save(tmp_path):
    """On a full disk the crawl fetched all 3,000 words, printed 2,999 tracebacks, stored
    nothing and exited 0. Now it stops at the first save that fails, naming the cache."""
    with FakeProcess("--synthetic", "3000") as fake:
        run = limited_crawl(300_000, "--base-url", fake.url, "--cache",
                            str(tmp_path / "c.sqlite"), "--delay", "0", *FAST)
        asked = gts_queries(fake.log())
    assert run["code"] == 1, run["out"]
    assert "could not be stored" in run["out"] and "c.sqlite" in run["out"]
    assert len(asked) <= 3  # the one that could not be stored, at most one more in flight


def test_a_read_only_folder_refuses_the_crawl_before_any_request(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here (it makes a folder read-only for root)")
    try:
        with FakeProcess() as fake:
            result = crawl("run", "--base-url", fake.url, "--cache", str(folder / "c.sqlite"),
                           *FAST)
            asked = gts_queries(fake.log())
    finally:
        subprocess.run(["chattr", "-i", str(folder)])
    assert result.returncode == 1 and asked == [], result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "c.sqlite" in result.stderr


@pytest.mark.slow
def test_memory_stays_bounded_through_a_900_mb_reply_and_a_1_gb_bomb(tmp_path):
    with FakeProcess("--fault", "kitap=huge:-1:900", "--fault", "inek=bomb:-1:1000") as fake:
        run = limited_crawl(0, "--base-url", fake.url, "--cache", str(tmp_path / "c.sqlite"),
                            "--delay", "0", *FAST, "-s", "DOWNLOAD_TIMEOUT=60")
    assert run["code"] == 1, run["out"]  # two words failed (too big): the work failed
    assert "2 word(s) failed (" in run["out"] and "reply is over 8 MiB" in run["out"]
    assert run["rss_kib"] < 400 * 1024, run["rss_kib"]  # it was 2.6 GB and 5.8 GB


@pytest.mark.slow
@pytest.mark.parametrize("asked", ["1e400", "inf", "9" * 400, "Fri, 31 Dec 9999 23:59:59 GMT"])
def test_a_retry_after_of_any_size_is_read_as_a_week_at_most(tmp_path, asked):
    """`Retry-After: 1e400` was stored as a failed reply ("OverflowError"), exit 0."""
    with FakeProcess() as fake:
        fake.fault("kitap", "429", -1, asked)
        result = crawl("run", "--base-url", fake.url, "--cache", str(tmp_path / "c.sqlite"), *FAST)
        asked_for = gts_queries(fake.log())
    output = result.stdout + result.stderr
    assert result.returncode == 1 and "TDK asks to wait 604,800 s" in output, output
    assert "rerun after" in output and "Overflow" not in output
    assert asked_for.count("kitap") == 1
    row = cache.get_reply(cache.open_readonly(tmp_path / "c.sqlite"), "kitap")
    assert row["error"] == "HTTP 429" and not row["final"], row  # asked again on the rerun


@pytest.mark.slow
def test_no_gap_under_the_delay_at_any_concurrency(tmp_path):
    """`--concurrency 4` left a gap of 0.248 s at a 0.3 s delay: Scrapy spaces a slot's
    requests start to start, and a second request went while the first was in flight or
    less than the delay after it ended. The fake stamps a reply's end before the client
    has it, so the gap it sees is never larger than the client's: 1 ms is for clock
    granularity only."""
    delay = 0.2
    with FakeProcess("--synthetic", "12", "--fault", "*=lag:-1:0.05") as fake:
        result = crawl("run", "--base-url", fake.url, "--cache", str(tmp_path / "c.sqlite"),
                       "--delay", str(delay), "--concurrency", "4", *FAST)
        log = fake.log()
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(gts_queries(log)) >= 20
    for before, after in pairwise(log):
        assert after["start"] - before["end"] >= delay - 0.001, (before, after)
