"""A word's verdict changes only through its own reply: an entry has one owner (a reply
carrying another word's madde_id is refused, in a crawl and in a refresh after an import),
a refresh's figures compare what replies say, not their bytes (an import re-serialises
them), found → not found flips are named, and a crawl whose words failed exits 1. The
real `kelime crawl` against the fake TDK over a socket."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from kelime.lexicon import Lexicon
from kelime.tdk import store as cache

from .fake_tdk import FakeProcess, builtin_entries
from .test_crawl import FAST, crawl, replies
from .test_crawl_coverage import kelime
from .test_crawl_trust import words_file
from .test_dump import write_dump

KITAP, KALEM = 30, 100  # the fake's madde_ids of kitap and kalem


def built_words(tmp_path, path) -> list[str]:
    """The words a build from the cache `path` makes (into a folder of its own; --force: a
    refused reply is a failed word, which the build counts pending)."""
    data = Path(tempfile.mkdtemp(dir=tmp_path))
    built = kelime("build", "--cache", str(path), "--out", str(data), "--force")
    assert built.returncode == 0, built.stdout + built.stderr
    return sorted(Lexicon.load(data / "tr").words.keys())


def status(path) -> str:
    done = kelime("crawl", "status", "--cache", str(path))
    assert done.returncode == 0, done.stderr
    return done.stdout


def imported(tmp_path, entries=None):
    """A cache holding the fake's own entries (or `entries`), imported from a dump."""
    path = tmp_path / "tdk.sqlite"
    dump = write_dump(tmp_path / "tdk.jsonl", builtin_entries() if entries is None else entries)
    done = kelime("crawl", "import", str(dump), "--cache", str(path))
    assert done.returncode == 0, done.stdout + done.stderr
    return path


def refresh(fake, path, *args):
    """A refresh re-verifying every reply (the import's 13 and the words new to the list)."""
    done = crawl("refresh", "--base-url", fake.url, "--cache", str(path), "--sample", "100",
                 "--delay", "0", *args, *FAST)
    return done, done.stdout + done.stderr


def test_a_reply_carrying_another_words_madde_id_is_refused(tmp_path):
    """inek's reply listing madde_id 30 (kitap's) as `inek` replaced kitap's entry: the
    build went from kalem, kitap to inek, kalem ("ok 1", exit 0): kitap lost through a
    reply it never sent."""
    path = tmp_path / "tdk.sqlite"
    with FakeProcess() as fake:
        first = crawl("run", "--base-url", fake.url, "--cache", str(path), "--words",
                      str(words_file(tmp_path, "kitap", "kalem")), "--delay", "0", *FAST)
        assert first.returncode == 0, first.stdout + first.stderr
        before = built_words(tmp_path, path)
        fake.fault("inek", "renumber", -1, KITAP)
        second = crawl("run", "--base-url", fake.url, "--cache", str(path), "--words",
                       str(words_file(tmp_path, "inek")), "--delay", "0", *FAST)
    output = second.stdout + second.stderr
    assert before == ["kalem", "kitap"]
    assert second.returncode == 1, output
    assert "ok 0, not_found 0, failed 1" in output and "1 word(s) failed (inek: entry_owned" in output
    assert built_words(tmp_path, path) == ["kalem", "kitap"]  # kitap kept, inek not taken
    inek = replies(path)["inek"]
    assert inek["outcome"] == "failed" and inek["final"] == 1
    assert "madde_id 30" in inek["error"] and "'kitap'" in inek["error"]
    told = status(path)
    assert "REFUSED 1 reply(ies) listing an entry another word owns" in told
    assert "inek: entry_owned" in told


@pytest.mark.slow
def test_an_entry_renumbered_after_an_import_loses_no_word(tmp_path):
    """The dump has kitap (30) and kalem (100); the live site answers kalem under 30. The
    refresh said kalem `ok`, exit 0, and the next build lost a word (7 → 6: kalem, its
    entry overwritten again by kitap's own reply)."""
    path = imported(tmp_path)
    before = built_words(tmp_path, path)
    with FakeProcess("--fault", f"kalem=renumber:-1:{KITAP}") as fake:
        done, output = refresh(fake, path)
    assert done.returncode == 1, output
    assert "1 word(s) failed (kalem: entry_owned" in output
    assert built_words(tmp_path, path) == before and {"kitap", "kalem"} <= set(before)
    kalem = replies(path)["kalem"]
    assert kalem["outcome"] == "ok" and kalem["url"].startswith("dump:")  # the good one kept
    assert kalem["error"].startswith("entry_owned") and "'kitap'" in kalem["error"]
    assert "kalem: entry_owned" in status(path)
    db = cache.open_readonly(path)
    assert [e["madde"] for e in cache.entries_for_word(db, "kitap")] == ["kitap"]
    assert [int(e["madde_id"]) for e in cache.entries_for_word(db, "kalem")] == [KALEM]


@pytest.mark.slow
def test_a_refresh_after_an_import_counts_what_changed_and_names_flips(tmp_path):
    """After an import every re-verified reply "changed" (13 of 13: the dump's bodies are
    re-serialised), and a word TDK now answers not-found was not named. (The twins adet
    and âdet are left out of the dump: it files each under its own query, where TDK
    answers both for either, a real difference the refresh counts.)"""
    path = imported(tmp_path, [e for e in builtin_entries() if e["madde"] not in ("adet", "âdet")])
    with FakeProcess("--fault", "*=escaped") as fake:  # written as TDK writes them: \u00e2
        same, output = refresh(fake, path)
        assert same.returncode == 0, output
        assert "0 of the 11 re-verified replies changed" in output
        assert "NOT FOUND" not in output
        fake.clear_faults()
        fake.fault("inek", "renumber", -1, 999)  # an entry changed (an id no word has)
        fake.fault("kitap", "not_found")
        fake.fault("deyyus", "not_found")
        changed, output = refresh(fake, path)
    assert changed.returncode == 0, output
    assert "3 of the 14 re-verified replies changed" in output  # with adet, âdet, massa
    assert "2 word(s) went from found to NOT FOUND" in output
    flips = output.split("NOT FOUND", 1)[1]
    assert "kitap" in flips and "deyyus" in flips and "inek" not in flips.split(".")[0]


def test_a_crawl_with_a_failed_word_exits_1_saying_so(tmp_path):
    """A crawl ending with a word failed said "Crawl finished" and exited 0, though
    docs/cli.md says 1 means the work failed."""
    path = tmp_path / "tdk.sqlite"
    words = words_file(tmp_path, "kitap", "kalem")
    with FakeProcess("--fault", "kalem=html:-1") as fake:
        failed = crawl("run", "--base-url", fake.url, "--cache", str(path), "--words",
                       str(words), "--delay", "0", *FAST)
        fake.clear_faults()
        rerun = crawl("run", "--base-url", fake.url, "--cache", str(path), "--words",
                      str(words), "--delay", "0", *FAST)
    output = failed.stdout + failed.stderr
    assert failed.returncode == 1, output
    assert "The crawl's work FAILED (exit 1): 1 word(s) failed (kalem: HTML instead of JSON" in output
    assert "Rerun the same command to resume" in output
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert "FAILED" not in rerun.stdout + rerun.stderr


def test_only_a_reply_linked_to_an_entry_may_rename_it(tmp_path):
    """The store's rule: kitap's own reply may rename its entry (TDK renaming it); inek's
    reply may not take it (it replaced it, and kitap's reply then listed inek's entry)."""
    kitap = next(e for e in builtin_entries() if e["madde"] == "kitap")
    db = cache.open_cache(tmp_path / "c.sqlite", create=True)

    def save(query, madde):
        body = {**kitap, "madde": madde}
        cache.save_reply(db, {"query": query, "url": "u", "status": 200, "outcome": "ok",
                              "body": "[]", "error": None, "attempts": 1}, [body])
        return cache.get_reply(db, query)

    assert save("kitap", "kitap")["outcome"] == "ok"
    inek = save("inek", "inek")
    assert [e["madde"] for e in cache.entries_for_word(db, "kitap")] == ["kitap"]
    assert inek["outcome"] == "failed" and inek["final"] == 1
    assert inek["error"].startswith("entry_owned: the reply for 'inek' lists madde_id 30")
    assert save("kitap", "kitâp")["error"] is None  # the same headword, normalised
    assert save("kitap", "kütüp")["error"] is None  # its own entry: renamed
    assert [e["madde"] for e in cache.entries_for_word(db, "kütüp")] == ["kütüp"]


def test_define_refuses_a_reply_carrying_another_words_madde_id(tmp_path):
    """`kelime define inek --refresh` whose reply lists kitap's madde_id: the store refused
    it (kitap kept), but define printed the entries and exited 0."""
    path = tmp_path / "tdk.sqlite"
    with FakeProcess() as fake:
        first = crawl("run", "--base-url", fake.url, "--cache", str(path), "--words",
                      str(words_file(tmp_path, "kitap", "kalem")), "--delay", "0", *FAST)
        assert first.returncode == 0, first.stdout + first.stderr
        fake.fault("inek", "renumber", -1, KITAP)
        looked = kelime("define", "inek", "--refresh", "--cache", str(path),
                        "--base-url", fake.url)
    assert looked.returncode == 1, looked.stdout + looked.stderr
    assert "entry_owned" in looked.stderr and "'kitap'" in looked.stderr, looked.stderr
    assert built_words(tmp_path, path) == ["kalem", "kitap"]
