"""kelime.build: compile → write → load round trips, reproducibility, versions, the shrink
guard, the change summary, and atomic writes that survive a real write failure."""

import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kelime.build import (BUILDS_DIR, KEEP_BUILDS, BuildError, Candidate, apply_overrides,
                          compile_words, write_lexicon)
from kelime.lexicon import (CHANGES_FILE, MANIFEST_FILE, REASONS, REJECTED_FILE, WORDS_FILE,
                            Lexicon, LexiconError)
from kelime.normalize import ALPHABET, letters_problem, normalize

SOURCE = {"kind": "wordlist", "name": "test", "licence": "test"}
FILES = (WORDS_FILE, REJECTED_FILE, MANIFEST_FILE, CHANGES_FILE)


def build(out: Path, words, name="tr", force=False, source=SOURCE):
    return write_lexicon(compile_words(Candidate(w) for w in words), out, name, source,
                         force=force)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in FILES}


def numbered(n: int, prefix="k") -> list[str]:
    """n distinct game words: k + the number spelt in letters a..j."""
    return [prefix + "".join("abcdefghij"[int(d)] for d in str(i)) for i in range(n)]


# --- compile ---------------------------------------------------------------------------------

def test_compile_merges_and_ranks():
    compiled = compile_words([
        Candidate("Kitap"), Candidate("kitap", "proper_name"),   # any valid candidate wins
        Candidate("Ay", "proper_name"), Candidate("ay"),
        Candidate("İstanbul", "proper_name"), Candidate("istanbul", "obscene"),  # worst reason
        Candidate("âdet"), Candidate("adet"),
        Candidate("e-posta"), Candidate("a"), Candidate("dulda tutmak", "proper_name"),
        Candidate("   "), Candidate(""),
    ])
    assert compiled.words == ["adet", "ay", "kitap"]
    assert compiled.rejected == {"a": "too_short", "dulda tutmak": "phrase",
                                 "e-posta": "invalid_chars", "istanbul": "obscene"}
    assert compiled.counts() == {"words": 3, "rejected": 4, "rejected_by_reason": {
        "invalid_chars": 1, "obscene": 1, "phrase": 1, "too_short": 1}}


def test_overrides_beat_the_sources():
    compiled = compile_words([Candidate("kitap"), Candidate("Ahmet", "proper_name"),
                              Candidate("zzz", "obscene")])
    after = apply_overrides(compiled, {"KİTAP": "obscene"}, ["zzz", "e-posta"])
    assert after.words == ["zzz"]
    assert after.rejected == {"ahmet": "proper_name", "kitap": "obscene"}


# --- round trip --------------------------------------------------------------------------------

raw_words = st.text(st.sampled_from(ALPHABET + "ÂÎÛâîûIİÇŞ -1"), min_size=1, max_size=8)
reasons = st.sampled_from([None, None, None, "proper_name", "obscene"])


@settings(max_examples=50, deadline=None)
@given(st.sets(st.tuples(raw_words, reasons), max_size=40), st.sets(raw_words, max_size=10))
def test_round_trip(candidates, others):
    compiled = compile_words(Candidate(w, r) for w, r in candidates)
    with tempfile.TemporaryDirectory() as tmp:
        write_lexicon(compiled, tmp, "tr", SOURCE)
        lex = Lexicon.load(Path(tmp) / "tr")
        assert len(lex) == len(compiled.words) == lex.info["words"]
        for word in compiled.words:
            assert lex.check(word).valid
        for word, reason in compiled.rejected.items():
            verdict = lex.check(word, min_length=1)
            assert not verdict.valid and verdict.reason == reason
        accepted = {normalize(w) for w, r in candidates if r is None}
        for raw in others:
            verdict = lex.check(raw)
            if verdict.valid:
                assert verdict.normalized in accepted
            elif letters_problem(verdict.normalized) is None and len(verdict.normalized) > 1:
                assert verdict.reason in REASONS


# --- reproducible, versioned ------------------------------------------------------------------

def test_reproducible_bytes_and_unchanged(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    words = ["kitap", "Kalem", "âdet", "İstanbul", "e-posta"] + numbered(50)
    first, second = build(tmp_path / "a", words), build(tmp_path / "b", list(reversed(words)))
    assert snapshot(first.path) == snapshot(second.path)
    assert first.manifest["created"] == "2026-01-01T00:00:00Z"
    again = build(tmp_path / "a", words)
    assert again.unchanged and again.manifest == first.manifest
    assert len(list((tmp_path / "a" / BUILDS_DIR).iterdir())) == 1


def test_versions_swap_the_link_and_keep_three(tmp_path):
    out = tmp_path / "data"
    versions = []
    for n in range(5):
        result = build(out, numbered(20 + n))
        versions.append(result.manifest["version"])
        link = out / "tr"
        assert link.is_symlink() and Path(os.readlink(link)).parts[0] == BUILDS_DIR
        assert Lexicon.load(link).info["version"] == versions[-1]
    assert len(set(versions)) == 5
    kept = sorted(p.name for p in (out / BUILDS_DIR).iterdir())
    assert len(kept) == KEEP_BUILDS
    assert kept == sorted(f"tr-{v}" for v in versions[-KEEP_BUILDS:])
    assert not [p for p in out.iterdir() if p.name.startswith(".tr.link")]


def test_a_real_folder_at_the_name_is_replaced_by_the_link(tmp_path):
    out = tmp_path / "data"
    (out / "tr").mkdir(parents=True)
    (out / "tr" / "stale.txt").write_text("old")
    build(out, ["kitap"])
    assert (out / "tr").is_symlink() and Lexicon.load(out / "tr").check("kitap").valid


# --- shrink guard and changes -----------------------------------------------------------------

def test_shrink_guard(tmp_path):
    out = tmp_path / "data"
    build(out, numbered(100))
    before = snapshot(out / "tr")
    build(out, numbered(90))  # exactly 90%: allowed
    before = snapshot(out / "tr")
    with pytest.raises(BuildError) as err:
        build(out, numbered(80))
    message = str(err.value)
    assert "80 words" in message and "90%" in message and "--force" in message
    assert snapshot(out / "tr") == before
    result = build(out, numbered(80), force=True)
    assert result.manifest["counts"]["words"] == 80 and Lexicon.load(out / "tr").info["words"] == 80


def test_changes_are_summarised_and_stored(tmp_path):
    out = tmp_path / "data"
    first = build(out, ["kitap", "kalem", "defter", "silgi"])
    assert first.changes["previous_version"] is None and first.changes["added"] == 4
    second = build(out, ["kitap", "kalem", "defter", "çanta", "cetvel"])
    expected = {"previous_version": first.manifest["version"],
                "version": second.manifest["version"], "added": 2, "removed": 1,
                "added_sample": ["cetvel", "çanta"], "removed_sample": ["silgi"]}
    assert second.changes == expected
    assert json.loads((out / "tr" / CHANGES_FILE).read_text(encoding="utf-8")) == expected


# --- failures ---------------------------------------------------------------------------------

FAILING_BUILD = """
import resource, signal, sys
from kelime.build import BuildError, Candidate, compile_words, write_lexicon
compiled = compile_words(Candidate(w) for w in open(sys.argv[2], encoding="utf-8").read().split())
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[3]), int(sys.argv[3])))
try:
    write_lexicon(compiled, sys.argv[1], "tr", {"kind": "wordlist", "name": "big", "licence": "x"})
except BuildError as e:
    print(e)
    sys.exit(3)
"""


def test_a_failed_write_leaves_the_old_lexicon(tmp_path):
    """A real write failure (RLIMIT_FSIZE: the kernel refuses to grow a file past 64 KiB,
    the disk-full stand-in) leaves the old lexicon byte-identical and no temp folder."""
    out = tmp_path / "data"
    build(out, ["kitap", "kalem"])
    before, link = snapshot(out / "tr"), os.readlink(out / "tr")
    big = tmp_path / "big.txt"
    big.write_text("\n".join(numbered(60000, "z") + numbered(60000, "y")), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", FAILING_BUILD, str(out), str(big), "65536"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    assert "could not write lexicon 'tr'" in done.stdout
    assert "File too large" in done.stdout and "words.marisa" in done.stdout
    assert "previous lexicon is untouched" in done.stdout and "free some space" in done.stdout
    assert snapshot(out / "tr") == before and os.readlink(out / "tr") == link
    assert sorted(p.name for p in (out / BUILDS_DIR).iterdir()) == [Path(link).name]
    assert sorted(p.name for p in out.iterdir()) == [BUILDS_DIR, "tr"]


def test_an_unwritable_folder_is_a_build_error(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    out = tmp_path / "data"
    out.mkdir()
    out.chmod(0o500)
    try:
        with pytest.raises(BuildError, match="permissions"):
            build(out, ["kitap"])
    finally:
        out.chmod(0o700)


@pytest.mark.parametrize("victim", [WORDS_FILE, REJECTED_FILE])
def test_a_corrupt_file_is_refused_by_name(tmp_path, victim):
    out = tmp_path / "data"
    build(out, ["kitap", "kalem", "İstanbul", "Ankara"])
    path = out / "tr" / victim
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(LexiconError, match=victim) as err:
        Lexicon.load(out / "tr")
    assert "kelime build" in str(err.value)
    path.unlink()
    with pytest.raises(LexiconError, match=f"{victim} is missing"):
        Lexicon.load(out / "tr")


def test_a_corrupt_file_behind_a_good_manifest_is_still_refused(tmp_path):
    out = tmp_path / "data"
    build(out, ["kitap"])
    (out / "tr" / WORDS_FILE).write_bytes(b"not a trie")
    with pytest.raises(LexiconError, match="unreadable trie"):
        Lexicon.load(out / "tr", verify=False)


@pytest.mark.parametrize("edit, message", [
    ({"format_version": 2}, "format_version 2; this kelime reads 1"),
    ({"format": "something-else"}, "not a kelime lexicon manifest"),
])
def test_a_foreign_or_future_manifest_is_refused(tmp_path, edit, message):
    out = tmp_path / "data"
    build(out, ["kitap"])
    path = out / "tr" / MANIFEST_FILE
    path.write_text(json.dumps({**json.loads(path.read_text()), **edit}))
    with pytest.raises(LexiconError, match=message):
        Lexicon.load(out / "tr")
    path.write_text("{ not json")
    with pytest.raises(LexiconError, match="unreadable"):
        Lexicon.load(out / "tr")


def test_leftovers_of_killed_builds_are_cleared(tmp_path):
    """A build killed mid-way leaves .tmp-<name>-<pid>; the next build removes those of dead
    pids (and never touches a live one's)."""
    out = tmp_path / "data"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    stale = out / ".builds" / f".tmp-tr-{dead}"
    stale.mkdir(parents=True)
    (stale / "words.marisa").write_bytes(b"half a trie")
    (out / f".tr.link-{dead}").symlink_to("nowhere")
    live = out / ".builds" / f".tmp-tr-{os.getppid()}"
    live.mkdir()
    write_lexicon(compile_words([Candidate("kitap")]), out, "tr", {"name": "t", "licence": "-"})
    assert not stale.exists() and not (out / f".tr.link-{dead}").is_symlink()
    assert live.exists()
    assert Lexicon.load(out / "tr").check("kitap").valid
