"""A reply is about the word asked: a /gts?ara=kitap reply naming another word, a headword in
invisible, compatibility or decomposed characters or in capitals TDK never writes, 1,920
invented entries, a redirect to another word's reply, a not-found object with one more field:
each changed the build (another word in, kitap out, 13 → 1,933 words) with the crawl saying
"failed 0". Now each is refused: a failed, final reply whose reason `crawl status` shows,
beside the good reply kept from before (the build does not change). Against the fake TDK."""

from __future__ import annotations

import shutil
import subprocess

import marisa_trie
import pytest

from kelime.tdk import store as cache

from .fake_tdk import FakeProcess
from .test_crawl import FAST, KELIME, crawl, env, gts_queries, replies

SYNTHETIC = ["--synthetic", "7"]  # 14 words of the fake's own and 7: 20 asked, 1 disallowed
ATTACKS = [  # fault on kitap (kind, arg) → refused kind, what the reason says
    ("madde", "zehirkelime", "wrong_word", "lists an entry for 'zehirkelime'"),
    ("many", 1920, "too_many_entries", "lists 1,921 entries, more than the 50"),
    ("madde", "kita\u0308p", "odd_characters", "U+0308 COMBINING DIAERESIS, not composed"),
    ("madde", "kit\u200bap", "odd_characters", "U+200B ZERO WIDTH SPACE, invisible"),
    ("madde", "KİTAP", "odd_case", "'KİTAP' (entry 1 of 1 for 'kitap') has capitals after"),
    ("madde", "ｋｉｔａｐ", "odd_characters", "U+FF4B FULLWIDTH LATIN SMALL LETTER K"),
    ("reword", "inek", "wrong_word", "redirected /gts?ara=kitap to /gts?ara=inek, another word"),
    ("notfound_extra", None, "odd_not_found", "a not-found reply with other fields"),
]


def built_words(path, out, *extra: str) -> set[str]:
    done = subprocess.run([*KELIME, "build", "--cache", str(path), "--out", str(out), *extra],
                          capture_output=True, text=True, env=env(), timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return set(marisa_trie.Trie().load(str(out / "tr" / "words.marisa")).keys())


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """A cache crawled from the fake with no fault, and the words its build holds."""
    folder = tmp_path_factory.mktemp("clean")
    path = folder / "c.sqlite"
    with FakeProcess(*SYNTHETIC) as fake:
        done = crawl("run", "--base-url", fake.url, "--cache", str(path), "--delay", "0", *FAST)
    assert done.returncode == 0, done.stdout + done.stderr
    return path, built_words(path, folder / "data")


@pytest.mark.parametrize("kind, arg, refused, says", ATTACKS, ids=[
    "other_word", "mass_growth", "nfd", "zero_width", "capitals", "full_width", "redirect",
    "not_found_extra"])
def test_a_reply_not_about_the_word_asked_is_refused_and_the_build_keeps_its_words(
        clean, tmp_path, kind, arg, refused, says):
    path, words = clean
    assert "kitap" in words and len(words) == 13
    shutil.copy(path, tmp_path / "c.sqlite")
    path = tmp_path / "c.sqlite"
    with FakeProcess(*SYNTHETIC) as fake:
        fake.fault("kitap", kind, -1, arg)
        result = crawl("run", "--base-url", fake.url, "--cache", str(path), "--delay", "0",
                       "--max-age", "0", *FAST)
        asked = gts_queries(fake.log())
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    assert "ok 18, not_found 1, failed 1" in output, output  # the summary counts it failed
    row = replies(path)["kitap"]
    assert row["outcome"] == "ok" and row["error"].startswith(f"refused ({refused}): "), row
    assert says in row["error"], row["error"]
    assert asked.count("kitap") == 1 and asked.count("inek") == 1  # final; no redirect followed
    assert f"REFUSED: 1 reply not about the word asked ({refused} 1)" in output, output
    assert built_words(path, tmp_path / "data") == words  # nothing in, nothing out
    status = crawl("status", "--cache", str(path))
    assert f"For example kitap: refused ({refused})" in status.stdout, status.stdout


def test_a_first_crawl_stores_nothing_of_a_reply_about_another_word(tmp_path):
    """With no earlier good reply the word is failed (and left out), the other word never in."""
    path = tmp_path / "c.sqlite"
    with FakeProcess(*SYNTHETIC) as fake:
        fake.fault("kitap", "madde", -1, "zehirkelime")
        crawl("run", "--base-url", fake.url, "--cache", str(path), "--delay", "0", *FAST)
    row = replies(path)["kitap"]
    assert row["outcome"] == "failed" and row["final"] == 1
    assert "zehirkelime" in row["error"] and "check --base-url" in row["error"]
    words = built_words(path, tmp_path / "data", "--force")  # kitap has no good reply
    assert "zehirkelime" not in words and "kitap" not in words and len(words) == 12
    db = cache.open_readonly(path)
    assert cache.entries_for_word(db, "zehirkelime") == []


def define_refresh(path, base_url, word):
    return subprocess.run([*KELIME, "define", word, "--refresh", "--cache", str(path),
                           "--base-url", base_url], capture_output=True, text=True, env=env(),
                          timeout=120)


@pytest.mark.parametrize("kind, arg, says", [
    ("reword", "inek", "redirected /gts?ara=kitap to /gts?ara=inek, another word: not "
                       "followed (its reply would be stored as the reply for 'kitap')"),
    ("madde", "zehirkelime", "refused (wrong_word): the reply for 'kitap' lists an entry for "
                             "'zehirkelime'"),
    ("madde", "kit\u200bap", "U+200B ZERO WIDTH SPACE"),
])
def test_define_stores_no_reply_about_another_word(clean, tmp_path, kind, arg, says):
    """`define --refresh` followed /gts?ara=kitap → /gts?ara=inek and stored inek's entry as
    kitap's (kitap then out of the next build); a reply naming zehirkelime was stored too."""
    shutil.copy(clean[0], tmp_path / "c.sqlite")
    path = tmp_path / "c.sqlite"
    db = cache.open_readonly(path)
    before = cache.entries_for_word(db, "kitap")
    db.close()
    with FakeProcess(*SYNTHETIC) as fake:
        fake.fault("kitap", kind, -1, arg)
        result = define_refresh(path, fake.url, "kitap")
        asked = gts_queries(fake.log())
    assert result.returncode == 1 and says in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert asked == ["kitap"]  # the redirect is not followed
    db = cache.open_readonly(path)
    assert cache.entries_for_word(db, "kitap") == before and before
    assert cache.entries_for_word(db, "zehirkelime") == []
    assert [e["madde"] for e in cache.entries_for_word(db, "inek")] == ["inek"]
    row = cache.get_reply(db, "kitap")
    assert row["outcome"] == "ok" and says in row["error"]
