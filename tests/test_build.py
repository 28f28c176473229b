"""kelime.lexicon compile → write → load: round trips, reproducibility (in the pure core with
an explicit `created=`, and through a real `kelime build`), versions and the keep-3 swap,
the shrink guard, the change summary, an unreadable current lexicon, and atomic writes that
survive a real write failure. The format's own checks are in test_lexicon_format.py, the
build lock in test_build_lock.py."""

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import marisa_trie
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kelime.lexicon import (
    MANIFEST_FILE,
    REASONS,
    BuildError,
    Candidate,
    Lexicon,
    LexiconError,
    Manifest,
    compile_words,
    created_stamp,
    load_all,
    write_lexicon,
)
from kelime.lexicon.format import CHANGES_FILE, INDEX_FILE, REJECTED_FILE, WORDS_FILE
from kelime.lexicon.write import BUILDS_DIR, KEEP_BUILDS, LOCK_FILE
from kelime.normalize import ALPHABET, TURKISH, Alphabet, letters_problem, normalize
from kelime.policy import Policy, apply_policy
from kelime.sources import offline_lexicon

SOURCE = {"kind": "wordlist", "name": "test", "licence": "test"}
CREATED = "2026-01-01T00:00:00Z"
EPOCH_2026 = "1767225600"  # 2026-01-01T00:00:00Z
KURDISH = Alphabet("abcçdeêfghiîjklmnopqrsştuûvwxyz")
KELIME = [sys.executable, "-c", "from kelime.cli import main; main()"]


def build(out: Path, words, name="tr", force=False, source=SOURCE, created=CREATED,
          alphabet=TURKISH, **guard):
    return write_lexicon(compile_words((Candidate(w) for w in words), alphabet), out, name,
                         source, created=created, alphabet=alphabet, force=force, **guard)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of a lexicon folder (whatever DATA_FILES holds), by name."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def numbered(n: int, prefix="k") -> list[str]:
    """n distinct game words: k + the number spelt in letters a..j."""
    return [prefix + "".join("abcdefghij"[int(d)] for d in str(i)) for i in range(n)]


def kelime(*args, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """The real `kelime` in a fresh process, without the caller's KELIME_* or
    SOURCE_DATE_EPOCH (a test sets what it means to)."""
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("KELIME_") and k != "SOURCE_DATE_EPOCH"}
    return subprocess.run([*KELIME, *args], cwd=cwd, capture_output=True, text=True,
                          env={**base, "COLUMNS": "120", **(env or {})}, timeout=120)


def build_folders(out: Path, name="tr") -> list[str]:
    return sorted(p.name for p in (out / BUILDS_DIR).iterdir()
                  if p.name.startswith(f"{name}-"))


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
    after, changed = apply_policy(compiled, Policy(blocked={"KİTAP": "obscene"},
                                                   allowed=["zzz", "e-posta"]))
    assert after.words == ["zzz"] and (changed["blocked"], changed["allowed"]) == (1, 1)
    assert after.rejected == {"ahmet": "proper_name", "kitap": "obscene"}


def test_created_is_the_epoch_else_the_source_date_else_now():
    now = dt.datetime(2030, 5, 1, 12, 0, 0, 999, tzinfo=dt.UTC)
    dated = {**SOURCE, "date": "2022-12-29T12:16:24+03:00"}
    assert created_stamp(dated, EPOCH_2026, now) == CREATED
    assert created_stamp(dated, None, now) == "2022-12-29T09:16:24Z"
    assert created_stamp({**SOURCE, "date": "2022-12-29T09:16:24Z"}, "", now) \
        == "2022-12-29T09:16:24Z"
    assert created_stamp(SOURCE, None, now) == "2030-05-01T12:00:00Z"


@pytest.mark.parametrize("epoch", ["soon", "1.5e9", "99999999999999999999"])
def test_a_bad_source_date_epoch_is_a_build_error(epoch):
    with pytest.raises(BuildError, match="SOURCE_DATE_EPOCH") as err:
        created_stamp(SOURCE, epoch, dt.datetime.now(dt.UTC))
    assert repr(epoch) in str(err.value)
    with pytest.raises(BuildError, match="not an ISO 8601 time"):
        created_stamp({**SOURCE, "date": "last Tuesday"}, None, dt.datetime.now(dt.UTC))


def test_kelime_build_with_a_bad_source_date_epoch_says_so(tmp_path):
    (tmp_path / "tr.txt").write_text("kitap\nkalem\n", encoding="utf-8")
    done = kelime("build", "--wordlist", "tr.txt", "--out", "data", cwd=tmp_path,
                  env={"SOURCE_DATE_EPOCH": "soon"})
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith("Error: SOURCE_DATE_EPOCH is 'soon'")
    assert not (tmp_path / "data" / "tr").exists()


# --- round trip --------------------------------------------------------------------------------

raw_words = st.text(st.sampled_from(ALPHABET + "ÂÎÛâîûIİÇŞ -1"), min_size=1, max_size=8)
reasons = st.sampled_from([None, None, None, "proper_name", "obscene"])


@settings(max_examples=50, deadline=None)
@given(st.sets(st.tuples(raw_words, reasons), max_size=40), st.sets(raw_words, max_size=10))
def test_round_trip(candidates, others):
    compiled = compile_words(Candidate(w, r) for w, r in candidates)
    with tempfile.TemporaryDirectory() as tmp:
        write_lexicon(compiled, tmp, "tr", SOURCE, created=CREATED)
        lex = Lexicon.load(Path(tmp) / "tr")
        assert len(lex) == len(compiled.words) == lex.info["words"]
        for word in compiled.words:
            assert lex.check(word).valid
        for word, reason in compiled.rejected.items():
            verdict = lex.check(word, min_length=1)
            assert not verdict.valid and verdict.reason == reason
        # Every word as a player may type it (the candidates' raw spellings and others):
        # the loaded lexicon answers what the compiled words say, no more, no less.
        for raw in {w for w, _ in candidates} | others:
            verdict, norm = lex.check(raw), normalize(raw)
            assert verdict.normalized == norm
            if not norm or letters_problem(norm) is not None or len(norm) < 2:
                assert not verdict.valid
                continue
            assert verdict.valid == (norm in compiled.words)
            if not verdict.valid:
                assert verdict.reason == compiled.rejected.get(norm, "not_in_dictionary")
                assert verdict.reason in REASONS


# --- reproducible, versioned ------------------------------------------------------------------

def test_same_input_gives_byte_identical_files_and_rebuilding_is_unchanged(tmp_path):
    words = ["kitap", "Kalem", "âdet", "İstanbul", "e-posta"] + numbered(50)
    first = build(tmp_path / "a", words)
    second = build(tmp_path / "b", list(reversed(words)) + words[:5])
    assert isinstance(first.manifest, Manifest) and first.manifest.created == CREATED
    assert sorted(snapshot(first.path)) == sorted([WORDS_FILE, REJECTED_FILE, INDEX_FILE,
                                                   CHANGES_FILE, MANIFEST_FILE])
    assert snapshot(first.path) == snapshot(second.path)
    assert Manifest.read(first.path) == first.manifest
    assert (first.path / MANIFEST_FILE).read_bytes() == first.manifest.to_bytes()
    before = snapshot(first.path)
    again = build(tmp_path / "a", words)
    assert again.unchanged and again.manifest == first.manifest
    assert snapshot(first.path) == before and len(build_folders(tmp_path / "a")) == 1
    # `created` is recorded, not versioned: another date gives the same version.
    later = build(tmp_path / "c", words, created="2027-06-01T00:00:00Z")
    assert later.manifest.version == first.manifest.version
    assert later.manifest.created == "2027-06-01T00:00:00Z"
    assert snapshot(later.path)[WORDS_FILE] == before[WORDS_FILE]
    assert snapshot(later.path)[MANIFEST_FILE] != before[MANIFEST_FILE]


def test_kelime_build_bootstrap_twice_gives_byte_identical_lexicons(tmp_path, offline_lexicons):
    """No SOURCE_DATE_EPOCH: `created` is the bootstrap package's release date, so two
    builds (this one and the session's, seconds or minutes apart, in two processes) write
    the same bytes; a third into the same folder is unchanged."""
    lists = offline_lexicon().lists
    unknown = [f"{s.package} {s.version}" for s in lists if not s.date]
    assert not unknown, f"add the release dates of {unknown} to kelime.sources.offline.RELEASED"
    one = kelime("build", "--bootstrap", "--out", "one", "--json", cwd=tmp_path)
    assert one.returncode == 0, one.stderr
    assert snapshot(tmp_path / "one" / "tr") == snapshot(offline_lexicons / "tr")
    manifest = json.loads(one.stdout)["manifest"]
    assert manifest["created"] == max(s.date for s in lists) == manifest["source"]["date"]
    assert Lexicon.load(tmp_path / "one" / "tr").info["words"] == manifest["counts"]["words"]
    again = kelime("build", "--bootstrap", "--out", "one", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(f"Unchanged: tr {manifest['version']}")
    assert len(build_folders(tmp_path / "one")) == 1


def test_kelime_build_follows_source_date_epoch(tmp_path):
    """Without SOURCE_DATE_EPOCH a word list's `created` is its mtime; with it, the epoch."""
    words = tmp_path / "tr.txt"
    words.write_text("kitap\nkalem\nsilgi\n", encoding="utf-8")
    os.utime(words, (1700000000, 1700000000))  # 2023-11-14T22:13:20Z
    plain = kelime("build", "--wordlist", "tr.txt", "--out", "plain", "--json", cwd=tmp_path)
    pinned = kelime("build", "--wordlist", "tr.txt", "--out", "pinned", "--json", cwd=tmp_path,
                    env={"SOURCE_DATE_EPOCH": EPOCH_2026})
    assert plain.returncode == 0 and pinned.returncode == 0, plain.stderr + pinned.stderr
    plain_m, pinned_m = (json.loads(p.stdout)["manifest"] for p in (plain, pinned))
    assert plain_m["created"] == "2023-11-14T22:13:20Z"
    assert pinned_m["created"] == CREATED
    assert Manifest.read(tmp_path / "pinned" / "tr").created == CREATED
    assert pinned_m["version"] == plain_m["version"]


def test_versions_swap_the_link_and_keep_three(tmp_path):
    out = tmp_path / "data"
    versions = []
    for n in range(5):
        result = build(out, numbered(20 + n))
        versions.append(result.manifest.version)
        link = out / "tr"
        assert link.is_symlink() and Path(os.readlink(link)).parts[0] == BUILDS_DIR
        assert Lexicon.load(link).info["version"] == versions[-1]
        assert result.changes["previous_version"] == (versions[-2] if n else None)
    assert len(set(versions)) == 5
    assert build_folders(out) == sorted(f"tr-{v}" for v in versions[-KEEP_BUILDS:])
    assert not [p for p in out.iterdir() if p.name.startswith(".tr.link")]


def test_pruning_one_lexicon_spares_another_whose_name_it_prefixes(tmp_path):
    """`tr` and `tr-kids` share a data folder: pruning tr's builds (a `tr-*` glob once)
    must not delete the build `tr-kids` points at."""
    out = tmp_path / "data"
    kids = build(out, ["oyun", "top"], name="tr-kids")
    for n in range(KEEP_BUILDS + 2):
        build(out, numbered(20 + n))
    assert len(build_folders(out, "tr-kids")) == 1
    assert Lexicon.load(kids.path).check("oyun").valid
    assert sorted(load_all(out)) == ["tr", "tr-kids"]
    assert len([p for p in build_folders(out) if not p.startswith("tr-kids")]) == KEEP_BUILDS


def test_a_real_folder_at_the_name_is_replaced_by_the_link(tmp_path):
    """The layout before symlinks: a real folder holding a good lexicon is moved aside."""
    out = tmp_path / "data"
    old = build(tmp_path / "old", ["kitap", "kalem"])
    out.mkdir()
    shutil.copytree(old.path.resolve(), out / "tr")
    result = build(out, ["kitap", "kalem", "silgi"])
    assert result.changes["previous_version"] == old.manifest.version
    assert result.changes["added_sample"] == ["silgi"]
    assert (out / "tr").is_symlink() and Lexicon.load(out / "tr").check("silgi").valid
    aside = out / BUILDS_DIR / f"tr-replaced-{os.getpid()}"
    assert snapshot(aside) == snapshot(old.path)


def test_a_real_folder_that_is_no_lexicon_needs_force(tmp_path):
    out = tmp_path / "data"
    (out / "tr").mkdir(parents=True)
    (out / "tr" / "stale.txt").write_text("old")
    with pytest.raises(BuildError, match="--force"):
        build(out, ["kitap"])
    assert not (out / "tr").is_symlink() and (out / "tr" / "stale.txt").exists()
    build(out, ["kitap"], force=True)
    assert (out / "tr").is_symlink() and Lexicon.load(out / "tr").check("kitap").valid
    assert (out / BUILDS_DIR / f"tr-replaced-{os.getpid()}" / "stale.txt").read_text() == "old"


def test_the_same_words_in_another_alphabet_are_not_unchanged(tmp_path):
    """The alphabet judges words outside the trie (invalid_chars vs not_in_dictionary), so a
    build that changes only the alphabet must record it, not say 'unchanged'."""
    out = tmp_path / "data"
    build(out, ["av", "nan"], name="ku")
    assert Lexicon.load(out / "ku").check("şîr").reason == "not_in_dictionary"  # Turkish: şir
    again = build(out, ["av", "nan"], name="ku", alphabet=KURDISH)
    assert not again.unchanged
    lex = Lexicon.load(out / "ku")
    assert lex.manifest.alphabet == KURDISH.letters
    assert lex.check("şîr").normalized == "şîr"
    assert build(out, ["av", "nan"], name="ku", alphabet=KURDISH).unchanged


# --- shrink guard and changes -----------------------------------------------------------------

def test_change_guard_counts_since_the_last_accepted_build(tmp_path):
    """The guard is cumulative: builds under the bound do not move the reference."""
    out = tmp_path / "data"
    first = build(out, numbered(200))
    assert first.manifest.accepted == {"by": "first build", "reference": None}
    assert build(out, numbered(198), max_change=0.01).manifest.accepted is None  # 1%: allowed
    before = snapshot(out / "tr")
    with pytest.raises(BuildError) as err:  # 3 since the accepted build, not 1 since the last
        build(out, numbered(197), max_change=0.01)
    message = str(err.value)
    assert f"since the last accepted build {first.manifest.version} (200 words)" in message
    assert "removes 3 words" in message and "--accept-changes" in message
    assert snapshot(out / "tr") == before
    result = build(out, numbered(197), max_change=0.01, accept_changes=True)
    assert result.manifest.accepted["removed"] == {"total": 3, "by_cause": {"source": 3}}
    assert Lexicon.load(out / "tr").manifest.accepted["by"] == "--accept-changes"
    assert build(out, numbered(196), max_change=0.01).manifest.words == 196


def test_a_folder_without_an_accepted_link_keeps_its_current_lexicon_as_the_reference(
        tmp_path):
    """A data folder an older kelime wrote (or one whose first build was killed between its
    two links) has no `.tr.accepted`: the current lexicon stood for the reference, so each
    build under the bound became the next one's reference (300 → 288 words, 2 at a time,
    every build exit 0) and the link was never written."""
    out = tmp_path / "data"
    first = build(out, numbered(300))
    (out / ".tr.accepted").unlink()
    assert build(out, numbered(298), max_change=0.01).manifest.accepted is None
    assert (out / ".tr.accepted").resolve().name == f"tr-{first.manifest.version}"
    with pytest.raises(BuildError, match=f"accepted build {first.manifest.version}"):
        build(out, numbered(296), max_change=0.01)  # 4 since the reference: over 1%


def test_pruning_keeps_the_accepted_build(tmp_path):
    """Builds under the bound come and go (KEEP_BUILDS); the reference stays and still
    judges."""
    out = tmp_path / "data"
    first = build(out, numbered(1000))
    for n in range(KEEP_BUILDS + 2):
        build(out, numbered(999 - n), max_change=0.01)
    assert f"tr-{first.manifest.version}" in build_folders(out)
    with pytest.raises(BuildError, match=f"accepted build {first.manifest.version}"):
        build(out, numbered(989), max_change=0.01)


def test_changes_are_summarised_and_stored(tmp_path):
    out = tmp_path / "data"
    first = build(out, ["kitap", "kalem", "defter", "silgi"])
    assert first.changes["previous_version"] is None and first.changes["added"] == 4
    second = build(out, ["kitap", "kalem", "defter", "çanta", "cetvel"])
    expected = {"previous_version": first.manifest.version,
                "version": second.manifest.version, "added": 2, "removed": 1,
                "added_sample": ["cetvel", "çanta"], "removed_sample": ["silgi"],
                "by_reports": [],  # no reviewed word in this build's policy
                "since_accepted": {"reference": first.manifest.version, "bound": None,
                                   "added": {"total": 2, "by_cause": {"source": 2}},
                                   "removed": {"total": 1, "by_cause": {"source": 1}}}}
    assert second.changes == expected
    assert json.loads((out / "tr" / CHANGES_FILE).read_text(encoding="utf-8")) == expected


# --- an unreadable current lexicon ----------------------------------------------------------

def _garbage_manifest(link: Path) -> None:
    (link / MANIFEST_FILE).write_text("{ not json")


def _dangling_link(link: Path) -> None:
    shutil.rmtree(link.resolve())


def _garbage_words(link: Path) -> None:
    (link / WORDS_FILE).write_bytes(b"not a trie")


def _other_words(link: Path) -> None:  # a readable trie, but not the one the manifest names
    (link / WORDS_FILE).write_bytes(marisa_trie.Trie(numbered(100, "z")).tobytes())


@pytest.mark.parametrize("damage, why", [
    (_garbage_manifest, "manifest.json is unreadable"),
    (_dangling_link, "has no manifest.json"),
    (_garbage_words, "words.marisa does not match its manifest"),
    (_other_words, "words.marisa does not match its manifest"),
])
def test_an_unreadable_current_lexicon_refuses_the_build_without_force(tmp_path, damage, why):
    """Once, an unreadable current lexicon silently counted as none: the shrink guard was
    off and the changes were 'against nothing'. Now the build says why and names --force."""
    out = tmp_path / "data"
    build(out, numbered(100))
    damage(out / "tr")
    target = os.readlink(out / "tr")
    with pytest.raises(BuildError) as err:
        build(out, numbered(10))  # a 90% shrink the guard could not have seen
    message = str(err.value)
    assert "cannot be read" in message and why in message and "--force" in message
    assert os.readlink(out / "tr") == target
    result = build(out, numbered(10), force=True)
    assert result.changes["previous_version"] is None
    assert Lexicon.load(out / "tr").info["words"] == 10


def test_kelime_build_over_an_unreadable_lexicon_says_force(tmp_path):
    (tmp_path / "tr.txt").write_text("kitap\nkalem\n", encoding="utf-8")
    assert kelime("build", "--wordlist", "tr.txt", "--out", "data", cwd=tmp_path).returncode == 0
    _garbage_manifest(tmp_path / "data" / "tr")
    refused = kelime("build", "--wordlist", "tr.txt", "--out", "data", cwd=tmp_path)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    last = refused.stderr.splitlines()[-1]
    assert last.startswith("Error: the current lexicon") and "unreadable" in last
    assert last.endswith("Pass --force to replace it anyway.")
    forced = kelime("build", "--wordlist", "tr.txt", "--out", "data", "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert Lexicon.load(tmp_path / "data" / "tr").check("kalem").valid


# --- failures ---------------------------------------------------------------------------------

FAILING_BUILD = """
import resource, signal, sys
from kelime.lexicon import BuildError, Candidate, compile_words, write_lexicon
compiled = compile_words(Candidate(w) for w in open(sys.argv[2], encoding="utf-8").read().split())
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[3]), int(sys.argv[3])))
try:
    write_lexicon(compiled, sys.argv[1], "tr", {"kind": "wordlist", "name": "big", "licence": "x"},
                  created="2026-01-01T00:00:00Z")
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
    assert sorted(p.name for p in out.iterdir()) == [LOCK_FILE, BUILDS_DIR, ".tr.accepted",
                                                     "tr"]


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
    with pytest.raises(LexiconError, match=f"{victim} does not match") as err:
        Lexicon.load(out / "tr")
    assert "kelime build" in str(err.value)
    path.unlink()
    with pytest.raises(LexiconError, match=f"{victim} is missing"):
        Lexicon.load(out / "tr")


def test_leftovers_of_killed_builds_are_cleared(tmp_path):
    """A build killed mid-way leaves .builds/.tmp-<name>-<pid> and .<name>.link-<pid>; the
    next build holds the lock, so no other build can be writing them: it clears them all."""
    out = tmp_path / "data"
    build(out, ["kitap"])
    stale = out / BUILDS_DIR / ".tmp-tr-999999"
    stale.mkdir()
    (stale / WORDS_FILE).write_bytes(b"half a trie")
    (out / ".tr.link-999999").symlink_to("nowhere")
    build(out, ["kitap", "kalem"])
    assert not stale.exists() and not (out / ".tr.link-999999").is_symlink()
    assert [p.name for p in (out / BUILDS_DIR).iterdir() if p.name.startswith(".")] == []
    assert Lexicon.load(out / "tr").check("kalem").valid



def test_a_lexicon_an_older_kelime_wrote_is_upgraded_by_rebuilding(tmp_path):
    out = tmp_path / "data"
    build(out, numbered(30))
    manifest = json.loads((out / "tr" / MANIFEST_FILE).read_text())
    manifest["normalization_version"] -= 1  # what an earlier kelime wrote
    (out / "tr" / MANIFEST_FILE).write_text(json.dumps(manifest))
    with pytest.raises(LexiconError, match="rebuild"):
        Lexicon.load(out / "tr")
    with pytest.raises(BuildError, match="removes 20 words"):  # its words still guard
        build(out, numbered(10), max_change=0.01)
    result = build(out, numbered(31))
    assert result.changes["added"] == 1 and result.changes["removed"] == 0
    assert Lexicon.load(out / "tr").info["words"] == 31
