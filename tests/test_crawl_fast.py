"""The crawl with politeness off writes replies in batches (crawler.pipelines): the same rows
as one transaction a reply, the last batch written at the close, a close that cannot write
ending the crawl with exit 1, and a kill -9 losing only what the rerun fetches again."""

from __future__ import annotations

import sqlite3
import subprocess

import pytest

from kelime.crawler.run import finish_reason
from kelime.errors import CacheError
from kelime.tdk import store as cache

from .fake_tdk import FakeProcess, builtin_entries, synthetic_words
from .test_crawl import (
    KELIME,
    crawl,
    done_count,
    env,
    gts_queries,
    kill_9_then_rerun,
    limited_crawl,
    wait_for,
)

#: Politeness off, as `benchmarks/crawl.py` runs it: batching on.
IMPOLITE = ["--delay", "0", "-s", "AUTOTHROTTLE_ENABLED=false", "-s", "ROBOTSTXT_OBEY=false",
            "-s", "CONCURRENT_REQUESTS=8", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8",
            "-s", "KELIME_BACKOFF_BASE=0.05", "-s", "KELIME_PROGRESS_INTERVAL=60"]
#: Only the close writes: nothing is stored until the crawl ends.
AT_CLOSE = ["-s", "KELIME_SAVE_BATCH=100000", "-s", "KELIME_SAVE_INTERVAL=600"]
TABLES = ("replies", "entries", "reply_entries", "senses", "sense_tags", "tags", "examples")


def dump(db, skip=("fetched_at",)) -> dict[str, list]:
    """Every row of the tables a reply writes, in key order (times left out)."""
    out = {}
    for table in TABLES:
        cols = [c.name for c in db[table].columns if c.name not in skip]
        out[table] = db.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY "
                                f"{', '.join(cols)}").fetchall()
    return out


def replies_to_save() -> list[tuple[dict, list]]:
    """Good replies, a not_found, a failure after a good reply and one before it (the same
    query twice in one batch), a failed body over the excerpt length."""
    rows = []
    for e in builtin_entries()[:12]:
        rows.append(({"query": e["madde"].lower(), "url": "u", "status": 200, "outcome": "ok",
                      "body": "[]", "attempts": 1, "fetched_at": "2026-01-01T00:00:00+00:00"},
                     [e]))
    first = rows[0][0]["query"]
    rows += [({"query": "massa", "url": "u", "status": 200, "outcome": "not_found",
               "body": '{"error":"x"}', "fetched_at": "2026-01-01T00:00:00+00:00"}, []),
             ({"query": first, "url": "u", "status": 503, "outcome": "failed", "attempts": 3,
               "error": "HTTP 503", "body": "x" * 10_000}, []),
             ({"query": "yok", "url": "u", "status": 503, "outcome": "failed", "attempts": 2,
               "error": "HTTP 503"}, []),
             ({"query": "yok", "url": "u", "status": 200, "outcome": "ok", "body": "[]",
               "fetched_at": "2026-01-01T00:00:00+00:00"}, builtin_entries()[12:14])]
    return rows


def test_a_batch_stores_exactly_what_one_save_a_reply_stores(tmp_path):
    one, many = (cache.open_cache(tmp_path / n, create=True) for n in ("one.db", "many.db"))
    rows = replies_to_save()
    for reply, entries in rows:
        cache.save_reply(one, reply, entries)
    cache.save_replies(many, rows[:5])
    cache.save_replies(many, rows[5:])
    assert dump(one, skip=()) == dump(many, skip=()) and dump(one)["replies"]


def test_a_failing_batch_stores_none_of_it(tmp_path):
    db = cache.open_cache(tmp_path / "c.db", create=True)
    rows = replies_to_save()[:3] + [({"query": "z", "outcome": None}, [])]  # NOT NULL outcome
    with pytest.raises((CacheError, sqlite3.Error)):
        cache.save_replies(db, rows)
    assert db.execute("SELECT count(*) FROM replies").fetchone()[0] == 0


def test_an_entry_failing_in_a_batch_stores_none_of_it(tmp_path):
    """A reply's entries are saved inside the batch's transaction (no savepoint of their
    own): one that fails half way through the last reply undoes the replies before it too."""
    db = cache.open_cache(tmp_path / "c.db", create=True)
    good, broken = builtin_entries()[0], {"madde_id": "not a number", "madde": "x"}
    rows = replies_to_save()[:3] + [({"query": "z", "url": "u", "status": 200,
                                      "outcome": "ok", "body": "[]"}, [good, broken])]
    with pytest.raises(ValueError):
        cache.save_replies(db, rows)
    for table in ("replies", "entries", "reply_entries", "senses"):
        assert db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table


@pytest.mark.parametrize(("stats", "reason"), [
    ({}, "finished"),
    ({"finish_reason": "finished", "kelime/unsaved": 1}, "cache_unwritable"),
    ({"finish_reason": "shutdown", "kelime/unsaved": 1}, "cache_unwritable"),
    ({"finish_reason": "circuit_breaker", "kelime/unsaved": 1}, "circuit_breaker"),
])
def test_a_save_failing_at_the_close_is_the_finish_reason(stats, reason):
    assert finish_reason(stats) == reason


@pytest.mark.slow
def test_batched_crawl_equals_one_transaction_a_reply(tmp_path):
    """The last batch is written at the close (nothing before it: the fast path is taken),
    and the cache then holds what a crawl writing each reply at once holds. The words are
    queued before the crawl: a word list found while crawling (the sitemaps) is saved at
    once, after the replies waiting before it, which would write some before the close."""
    single, batched = tmp_path / "single.sqlite", tmp_path / "batched.sqlite"
    words = tmp_path / "words.txt"
    words.write_text("\n".join(synthetic_words(60)), encoding="utf-8")
    last = synthetic_words(60)[-1]
    with FakeProcess("--synthetic", "60", "--fault", f"{last}=slow:1:4") as fake:
        done = crawl("run", "--base-url", fake.url, "--cache", str(single), "--words",
                     str(words), *IMPOLITE, "-s", "KELIME_SAVE_BATCH=1")
        assert done.returncode == 0, done.stderr
        fake.clear_log()
        fake.fault(last, "slow", 1, 4)  # the first crawl used it up: slow again for this one
        proc = subprocess.Popen([*KELIME, "crawl", "run", "--base-url", fake.url, "--cache",
                                 str(batched), "--words", str(words), *IMPOLITE, *AT_CLOSE],
                                env=env(),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        wait_for(lambda: len(gts_queries(fake.log())) >= 59)  # all asked but the slow one
        stored_while_crawling = done_count(batched)
        running = proc.poll() is None
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    assert running and stored_while_crawling == 0
    a, b = cache.open_cache(single), cache.open_cache(batched)
    assert dump(a) == dump(b) and len(dump(b)["replies"]) == 60
    assert cache.cache_stats(a) | {"oldest_fetch": 0, "newest_fetch": 0} == \
        cache.cache_stats(b) | {"oldest_fetch": 0, "newest_fetch": 0}


@pytest.mark.slow
def test_a_save_failing_at_the_close_stops_with_exit_1(tmp_path):
    """The close's batch cannot be written (the file size capped): exit 1, saying so."""
    words = tmp_path / "words.txt"  # queued before the crawl, within the cap
    words.write_text("\n".join(synthetic_words(1000)), encoding="utf-8")
    with FakeProcess("--synthetic", "1000") as fake:
        run = limited_crawl(300_000, "--base-url", fake.url, "--cache",
                            str(tmp_path / "c.sqlite"), "--words", str(words), *IMPOLITE,
                            *AT_CLOSE)
        asked = gts_queries(fake.log())
    assert run["code"] == 1, run["out"]
    assert "Crawl STOPPED: a reply could not be stored" in run["out"], run["out"]
    assert "Error: could not store 1000 replies (" in run["out"] and "c.sqlite" in run["out"]
    assert len(asked) == 1000  # all fetched: only the close wrote


@pytest.mark.slow
def test_kill_9_of_a_batching_crawl_then_rerun_equals_an_uninterrupted_crawl(tmp_path):
    with FakeProcess("--synthetic", "3000") as fake:
        a, b, refetched = kill_9_then_rerun(
            tmp_path, fake, [*IMPOLITE, "-s", "KELIME_SAVE_BATCH=50"], at=200)
    assert refetched  # the batch under way when killed: fetched again
    assert dump(a) == dump(b)
    assert cache.cache_stats(b)["words"]["pending"] == 0


@pytest.mark.slow
def test_a_look_up_beside_a_crawl_with_politeness_off_is_never_in_flight_with_it(tmp_path):
    """With no pause the crawl holds the cache's clock while any of its 8 requests is in
    flight (Pacing.holding), so `kelime define` waits for them all to end, and gets its
    turn in the middle of the crawl (not starved), alone on the wire."""
    from .test_crawl_trust import define

    # 5,000 words: a crawl that outlasts three look-ups started one after another (each
    # `kelime define` starts in ~0.5 s at constraints.txt's versions, 1-2.5 s at the lowest
    # ones on a loaded machine: `make lowest`).
    path, words = tmp_path / "c.sqlite", ("yağış", "ev", "dangalak")
    with FakeProcess("--synthetic", "5000", "--fault", "*=lag:-1:0.02") as fake:
        proc = subprocess.Popen([*KELIME, "crawl", "run", "--base-url", fake.url, "--cache",
                                 str(path), *IMPOLITE], env=env(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for(lambda: done_count(path) >= 30, timeout=60)
            looked = [define(path, fake.url, word) for word in words]
            crawling = proc.poll() is None
        finally:
            proc.wait(120)
        log = [r for r in fake.log() if r["path"].startswith("/gts")]
    assert proc.returncode == 0 and all(r.returncode == 0 for r in looked), looked
    assert crawling, "the crawl ended before the look-ups: nothing was checked"
    mine = [r for r in log if gts_queries([r])[0] in words]
    assert len(mine) == len(words)
    for r in mine:
        beside = [o for o in log if o is not r and o["start"] < r["end"] and o["end"] > r["start"]]
        assert beside == [], ("a crawl request in flight with the look-up", r, beside)


@pytest.mark.parametrize("setting", ["KELIME_SAVE_BATCH=0", "KELIME_SAVE_BATCH=-1",
                                     "KELIME_SAVE_BATCH=abc", "KELIME_SAVE_BATCH=1.5",
                                     "KELIME_SAVE_BATCH=100000000000000000000",
                                     "KELIME_SAVE_INTERVAL=abc", "KELIME_SAVE_INTERVAL=-1",
                                     "KELIME_SAVE_INTERVAL=NaN", "DOWNLOAD_DELAY=abc",
                                     "DOWNLOAD_DELAY=-1", "DOWNLOAD_TIMEOUT=0"])
def test_a_bad_pacing_setting_is_refused_before_crawling(tmp_path, setting):
    """0 and -1 were taken as "never batch" without a word, "abc" ended the crawl in a
    traceback; now each is a usage error naming the setting and its range."""
    path = tmp_path / "c.sqlite"
    done = crawl("run", "--base-url", "http://127.0.0.1:9", "--cache", str(path),
                 *IMPOLITE, "-s", setting)
    assert done.returncode == 2, done.stderr
    assert setting.split("=")[0] in done.stderr and "from" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not path.exists()


@pytest.mark.parametrize(("extra", "batched"), [
    ({}, True),
    ({"KELIME_SAVE_BATCH": 1}, False),
    ({"DOWNLOAD_DELAY": 0.5}, False),
    ({"AUTOTHROTTLE_ENABLED": True}, False),
    ({"DOWNLOAD_SLOTS": {"sozluk.gov.tr": {"delay": 2.0}}}, False),  # polite for that host
    ({"DOWNLOAD_SLOTS": {"sozluk.gov.tr": {"concurrency": 2}}}, True),
])
def test_only_a_crawl_without_any_delay_batches(extra, batched):
    """A delay set for the host in DOWNLOAD_SLOTS spaces requests as DOWNLOAD_DELAY does
    (Pacing.paced reads it): its replies are committed one at a time too."""
    from scrapy.settings import Settings as ScrapySettings

    from kelime.crawler.pipelines import batching
    from kelime.crawler.settings import crawl_settings

    settings = crawl_settings(cache="c.sqlite", delay=0.0,
                              extra={"AUTOTHROTTLE_ENABLED": False, **extra})
    assert batching(ScrapySettings(settings)) is batched
