"""Several writers on one crawl cache at once: threads, processes, and the real thing (a
crawl while `kelime define --refresh` runs beside it). Every write transaction takes the
lock first (BEGIN IMMEDIATE) and waits for it; before that, a deferred BEGIN that read and
then wrote failed at once: 300–450 of 600 saves with "database is locked"."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import unquote

import pytest

from kelime.tdk import store as cache

from .fake_tdk import FakeProcess, builtin_entries, synthetic_words

REPO = Path(__file__).resolve().parents[1]
KELIME = [sys.executable, "-c", "from kelime.cli import main; main()"]
ENTRIES = builtin_entries()
SAVES = 300
LOCKED = ("database is locked", "OperationalError")

# One writer process: waits for the `go` file (so both start together), saves SAVES replies
# with an entry each, and prints the errors it met as JSON.
WRITER = """
import json, os, sys, time
from kelime.tdk import store
from tests.fake_tdk import builtin_entries
path, name, go = sys.argv[1:4]
entries = builtin_entries()
db = store.open_cache(path, create=True)
open(f"{go}.{name}", "w").close()  # ready
while not os.path.exists(go):
    time.sleep(0.001)
errors = []
for i in range(int(sys.argv[4])):
    row = {"query": f"{name}-{i}", "url": "u", "status": 200, "outcome": "ok",
           "body": "[]", "error": None, "attempts": 1}
    try:
        store.save_reply(db, row, [entries[i % len(entries)]])
    except Exception as e:
        errors.append(f"{type(e).__name__}: {e}")
print(json.dumps(errors))
"""


def env(**extra) -> dict:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KELIME_")}
    return {**clean, **extra}


def save_many(path: Path, name: str, errors: list, start: threading.Barrier) -> None:
    db = cache.open_cache(path)  # one connection per thread, as in separate processes
    start.wait()
    for i in range(SAVES):
        row = {"query": f"{name}-{i}", "url": "u", "status": 200, "outcome": "ok",
               "body": "[]", "error": None, "attempts": 1}
        try:
            cache.save_reply(db, row, [ENTRIES[i % len(ENTRIES)]])
        except Exception as e:  # noqa: BLE001 - counted, then asserted to be none
            errors.append(f"{type(e).__name__}: {e}")
    db.close()


def assert_all_saved(path: Path, names) -> None:
    db = cache.open_readonly(path)
    queries = {r["query"] for r in db["replies"].rows}
    assert queries == {f"{n}-{i}" for n in names for i in range(SAVES)}
    assert {int(e["madde_id"]) for e in cache.iter_entries(db)} == {
        int(e["madde_id"]) for e in ENTRIES}
    assert db.execute("SELECT count(*) FROM reply_entries").fetchone() == (
        len(names) * SAVES,)
    db.close()


def test_two_threads_300_saves_each(tmp_path):
    path = tmp_path / "c.sqlite"
    cache.open_cache(path, create=True).close()
    errors: list[str] = []
    start = threading.Barrier(2)
    threads = [threading.Thread(target=save_many, args=(path, n, errors, start))
               for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []  # was 300–450 of 600 "database is locked"
    assert_all_saved(path, ("a", "b"))


def test_two_processes_300_saves_each(tmp_path):
    path, go = tmp_path / "c.sqlite", tmp_path / "go"
    cache.open_cache(path, create=True).close()
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), n, str(go), str(SAVES)],
                              cwd=REPO, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for n in ("a", "b")]
    deadline = time.monotonic() + 60
    while not all(Path(f"{go}.{n}").exists() for n in ("a", "b")):  # both opened
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        assert time.monotonic() < deadline, "the writers did not start"
        time.sleep(0.01)
    go.touch()  # then both save at once
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outs]
    assert [json.loads(out) for out, _ in outs] == [[], []]
    assert_all_saved(path, ("a", "b"))


@pytest.mark.slow
def test_processes_creating_one_new_cache_at_once_all_succeed(tmp_path):
    for round_ in range(3):
        path, go = tmp_path / str(round_) / "new.sqlite", tmp_path / f"go{round_}"
        code = ("import os, sys, time\n"
                "while not os.path.exists(sys.argv[2]): time.sleep(0.001)\n"
                "from kelime.tdk import store\n"
                "db = store.open_cache(sys.argv[1], create=True)\n"
                "store.save_words(db, [str(os.getpid())], 'race')\n"
                "print(db.journal_mode)\n")
        procs = [subprocess.Popen([sys.executable, "-c", code, str(path), str(go)], cwd=REPO,
                                  env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for _ in range(4)]
        go.touch()
        outs = [p.communicate(timeout=60) for p in procs]
        assert [(p.returncode, out) for p, (out, _) in zip(procs, outs)] == [(0, "wal\n")] * 4, outs
        db = cache.open_readonly(path)
        applied = [m.name for m in cache.MIGRATIONS.applied(db)]
        assert applied == cache.declared_migrations()  # each applied once
        assert db["words"].count == 4


# --- the real thing: a crawl while four `kelime define --refresh` loops write beside it ----

DEFINED = ["kitap", "adet", "inek", "kalem"]  # in the crawl's word list too: same rows
DEFINES_PER_LOOP = 4


def gts_queries(log) -> list[str]:
    return [unquote(r["path"].split("ara=", 1)[1]) for r in log if r["path"].startswith("/gts")]


def replies_count(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            return conn.execute("SELECT count(*) FROM replies").fetchone()[0]
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_define_during_a_crawl_never_fails_and_loses_nothing(tmp_path):
    path, words_file = tmp_path / "tdk.sqlite", tmp_path / "words.txt"
    # 200 words at 0.05 s: a crawl of 10 s or more, that outlasts the look-ups' start-up
    # (`kelime define` starts in ~0.5 s at constraints.txt's versions, 1-2.5 s at the lowest
    # ones on a loaded machine: `make lowest`).
    words = synthetic_words(200) + DEFINED
    words_file.write_text("\n".join(words) + "\n", encoding="utf-8")
    with FakeProcess("--synthetic", "200") as fake:
        crawl_args = [*KELIME, "crawl", "run", "--words", str(words_file), "--cache", str(path),
                      "--base-url", fake.url, "--delay", "0.05"]
        crawl = subprocess.Popen(crawl_args, env=env(), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while replies_count(path) == 0 and crawl.poll() is None:
            assert time.monotonic() < deadline, "the crawl stored nothing"
            time.sleep(0.02)

        results: list[dict] = []

        def define_loop(word: str) -> None:
            for _ in range(DEFINES_PER_LOOP):
                if crawl.poll() is not None or time.monotonic() > deadline:
                    return
                done = subprocess.run([*KELIME, "define", "--refresh", word, "--cache", str(path),
                                       "--base-url", fake.url], env=env(), capture_output=True,
                                      text=True, timeout=60)
                results.append({"word": word, "rc": done.returncode, "out": done.stdout,
                                "err": done.stderr, "during_crawl": crawl.poll() is None})

        loops = [threading.Thread(target=define_loop, args=(w,)) for w in DEFINED]
        for t in loops:
            t.start()
        for t in loops:
            t.join(90)
        out, err = crawl.communicate(timeout=90)

        said = out + err  # the summary goes to stderr
        assert crawl.returncode == 0, said
        assert "failed 0;" in said, said
        for r in results:
            assert r["rc"] == 0, r
            assert not any(s in r["out"] + r["err"] for s in LOCKED), r
        assert not any(s in said for s in LOCKED), said
        assert any(r["during_crawl"] for r in results), "no define overlapped the crawl"

        db = cache.open_readonly(path)
        assert cache.fresh_queries(db) == set(words)  # every word has its good reply
        assert {e["madde"] for e in cache.entries_for_word(db, "adet")} == {"adet", "âdet"}
        db.close()

        fake.clear_log()
        again = subprocess.run(crawl_args, env=env(), capture_output=True, text=True, timeout=90)
        assert again.returncode == 0, again.stdout + again.stderr
        assert gts_queries(fake.log()) == []  # nothing left to fetch
        assert "0 queued word(s) due" in again.stderr, again.stderr


# --- a save that cannot happen stops the crawl with the store's words -------------------

@pytest.fixture(scope="module")
def locked_crawl(tmp_path_factory):
    """A crawl whose cache another process locks mid-way, longer than its busy timeout."""
    tmp = tmp_path_factory.mktemp("locked")
    path, words_file = tmp / "tdk.sqlite", tmp / "words.txt"
    words_file.write_text("\n".join(synthetic_words(40)) + "\n", encoding="utf-8")
    with FakeProcess("--synthetic", "40") as fake:
        crawl = subprocess.Popen([*KELIME, "crawl", "run", "--words", str(words_file), "--cache",
                                  str(path), "--base-url", fake.url, "--delay", "0.05",
                                  "-s", "KELIME_CACHE_BUSY_TIMEOUT=0.3"],
                                 env=env(), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while replies_count(path) < 3 and crawl.poll() is None:
            assert time.monotonic() < deadline, "the crawl stored nothing"
            time.sleep(0.02)
        holder = sqlite3.connect(path)
        holder.execute("BEGIN IMMEDIATE")  # held until the crawl has given up
        try:
            out, err = crawl.communicate(timeout=90)
        finally:
            holder.rollback()
            holder.close()
    return crawl.returncode, out + err, path


@pytest.mark.slow
def test_a_save_that_fails_stops_the_crawl_saying_why(locked_crawl):
    _, said, path = locked_crawl
    assert "Error: could not store the reply for '" in said, said
    assert f"so the crawl stopped: cache {path} is busy: another process kept it locked " \
           "for 0.3 s" in said
    assert "Rerun the same command to resume" in said
    assert "database is locked" not in said  # the store's words, not SQLite's
    db = cache.open_readonly(path)
    stats = cache.cache_stats(db)
    assert 3 <= stats["words"]["done"] < 40 and stats["replies"]["failed"] == 0
    assert len(cache.due_words(db)) == 40 - stats["words"]["done"]  # nothing marked done unsaved


@pytest.mark.slow
def test_a_crawl_stopped_by_its_cache_exits_1(locked_crawl):
    returncode, said, _ = locked_crawl
    assert "Crawl STOPPED: a reply could not be stored" in said, said
    assert returncode == 1
