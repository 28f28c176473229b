"""kelime.lexicon.format: loading checks every claim of the manifest with a LexiconError
that says what is wrong (never a KeyError traceback), and the version rule covers every
file in DATA_FILES, so adding one (the anagram index) is one more entry.

`reseal` re-derives a manifest's hashes by the rule as the format's docstring states it
(hashlib here, not the module's own helpers), so a test can break exactly one claim."""

import errno
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import marisa_trie
import pytest

from kelime.anagram import anagram, build_index
from kelime.errors import NoAnagramIndex
from kelime.lexicon import (
    MANIFEST_FILE,
    Candidate,
    Lexicon,
    LexiconError,
    Manifest,
    compile_words,
    load_all,
    load_lexicon,
    write_lexicon,
)
from kelime.lexicon import format as fmt
from kelime.lexicon.format import (
    CHANGES_FILE,
    FORMAT_VERSION,
    INDEX_FILE,
    REJECTED_FILE,
    WORDS_FILE,
    DataFile,
    digest,
)
from kelime.normalize import NORMALIZATION_VERSION

SOURCE = {"kind": "test", "name": "test_lexicon_format", "licence": "n/a"}
CREATED = "2026-01-01T00:00:00Z"
WORDS = [Candidate("kitap"), Candidate("kalem"), Candidate("silgi"),
         Candidate("İstanbul", "proper_name"), Candidate("e-posta")]
KELIME = [sys.executable, "-c", "from kelime.cli import main; main()"]


def build(out: Path, candidates=WORDS, name="tr"):
    return write_lexicon(compile_words(candidates), out, name, SOURCE, created=CREATED)


@pytest.fixture
def lexicon(tmp_path) -> Path:
    """A freshly built lexicon folder (the link data/tr)."""
    return build(tmp_path / "data").path


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def rule(files: dict[str, str], names=(WORDS_FILE, REJECTED_FILE, INDEX_FILE)) -> str:
    """The version rule as documented: SHA-256 of "<file> <sha256>\\n" per data file."""
    return sha("".join(f"{n} {files[n]}\n" for n in names if n in files).encode())


def read(folder: Path) -> dict:
    return json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))


def write(folder: Path, raw) -> None:
    (folder / MANIFEST_FILE).write_text(json.dumps(raw), encoding="utf-8")


def reseal(folder: Path, names=(WORDS_FILE, REJECTED_FILE, INDEX_FILE)) -> dict:
    """Make every hash claim of the manifest true again for the files as they now are."""
    raw = read(folder)
    raw["files"] = {n: sha((folder / n).read_bytes()) for n in raw["files"]}
    raw["sha256"] = rule(raw["files"], names)
    raw["version"] = raw["sha256"][:12]
    write(folder, raw)
    return raw


def refused(folder: Path) -> str:
    with pytest.raises(LexiconError) as err:
        Lexicon.load(folder)
    return str(err.value)


# --- a good lexicon -------------------------------------------------------------------------

def test_a_built_lexicon_keeps_every_claim(lexicon):
    raw = read(lexicon)
    manifest = Manifest.read(lexicon)
    assert manifest == Manifest.from_dict(raw) and manifest.as_dict() == raw
    assert (lexicon / MANIFEST_FILE).read_bytes() == manifest.to_bytes()
    assert raw["format"] == "kelime-lexicon" and raw["format_version"] == FORMAT_VERSION == 2
    assert raw["files"] == {n: sha((lexicon / n).read_bytes())
                            for n in (WORDS_FILE, REJECTED_FILE, INDEX_FILE, CHANGES_FILE)}
    assert raw["sha256"] == rule(raw["files"]) and raw["version"] == raw["sha256"][:12]
    assert raw["counts"] == {"words": 3, "rejected": 2,
                             "rejected_by_reason": {"invalid_chars": 1, "proper_name": 1}}
    lex = Lexicon.load(lexicon)
    assert lex.info == {"name": "tr", "version": raw["version"], "sha256": raw["sha256"],
                        "words": 3}
    assert lex.check("İstanbul").reason == "proper_name"
    reseal(lexicon)  # resealing a good lexicon changes nothing: the helper is the rule
    assert read(lexicon) == raw


# --- every claim is checked -----------------------------------------------------------------

@pytest.mark.parametrize("key", ["counts", "files", "name", "sha256", "version", "created",
                                 "normalization_version", "alphabet", "source"])
def test_a_manifest_missing_a_key_is_a_lexicon_error(lexicon, key):
    raw = read(lexicon)
    del raw[key]
    write(lexicon, raw)
    message = refused(lexicon)  # a KeyError would escape pytest.raises(LexiconError)
    assert f"lacks {key!r}" in message and "kelime build" in message


@pytest.mark.parametrize("key, value, says", [
    ("counts", [], "lacks 'counts'"),
    ("counts", {"rejected": 2}, "lacks counts.words"),
    ("counts", {"words": "3"}, "lacks counts.words"),
    ("counts", {"words": True}, "lacks counts.words"),
    ("files", "words.marisa", "lacks 'files'"),
    ("normalization_version", "3", "lacks 'normalization_version'"),
    ("name", None, "lacks 'name'"),
])
def test_a_claim_of_the_wrong_shape_is_a_lexicon_error(lexicon, key, value, says):
    write(lexicon, {**read(lexicon), key: value})
    assert says in refused(lexicon)


def test_a_sha256_that_does_not_match_the_files_is_refused(lexicon):
    raw = read(lexicon)
    wrong = sha(b"another lexicon")
    write(lexicon, {**raw, "sha256": wrong, "version": wrong[:12]})
    message = refused(lexicon)
    assert f"claims sha256 {wrong[:12]}" in message and raw["sha256"][:12] in message


def test_a_version_that_does_not_match_the_sha256_is_refused(lexicon):
    write(lexicon, {**read(lexicon), "version": "0" * 12})
    assert "claims version '000000000000'" in refused(lexicon)


def test_a_swapped_trie_with_only_its_file_hash_fixed_is_refused(lexicon):
    """Another trie of as many words, its hash put in `files`: every file matches its
    hash, the count matches, only the version rule sees that these are other words."""
    other = marisa_trie.Trie(["araba", "bisiklet", "tren"]).tobytes()
    (lexicon / WORDS_FILE).write_bytes(other)
    raw = read(lexicon)
    write(lexicon, {**raw, "files": {**raw["files"], WORDS_FILE: sha(other)}})
    assert "sha256" in refused(lexicon) and "its files give" in refused(lexicon)


def test_a_word_count_that_does_not_match_the_trie_is_refused(lexicon):
    raw = read(lexicon)
    write(lexicon, {**raw, "counts": {**raw["counts"], "words": 4}})
    reseal(lexicon)  # every hash claim true: only the count is wrong
    Manifest.read(lexicon).verify(lexicon)
    assert "holds 3 words but the manifest says 4" in refused(lexicon)


def test_an_older_normalization_version_says_rebuild(lexicon):
    write(lexicon, {**read(lexicon), "normalization_version": NORMALIZATION_VERSION - 1})
    message = refused(lexicon)
    assert f"normalisation version {NORMALIZATION_VERSION - 1}" in message
    assert f"by version {NORMALIZATION_VERSION}" in message and "rebuild" in message


@pytest.mark.parametrize("edit, says", [
    ({"format": "something-else"}, "is not a kelime lexicon manifest"),
    ({"format_version": 1}, "format_version 1; this kelime reads 2"),
    ({"format_version": 3}, "format_version 3; this kelime reads 2"),
    ({"format_version": "2"}, "format_version '2'; this kelime reads 2"),
])
def test_a_foreign_or_other_format_manifest_is_refused(lexicon, edit, says):
    write(lexicon, {**read(lexicon), **edit})
    assert says in refused(lexicon)


@pytest.mark.parametrize("text, says", [
    ("{ not json", "is unreadable"),
    ("[" * 100_000, "is unreadable"),
    ("[]", "is not a kelime lexicon manifest"),
    ("\udcff", "is unreadable"),
])
def test_a_manifest_that_is_not_one_is_refused(lexicon, text, says):
    (lexicon / MANIFEST_FILE).write_bytes(text.encode("utf-8", "surrogateescape"))
    assert says in refused(lexicon)
    (lexicon / MANIFEST_FILE).unlink()
    assert "has no manifest.json" in refused(lexicon)


@pytest.mark.parametrize("victim", [WORDS_FILE, REJECTED_FILE])
def test_a_corrupt_trie_with_consistent_hashes_is_refused(lexicon, victim):
    (lexicon / victim).write_bytes(b"not a trie")
    reseal(lexicon)
    Manifest.read(lexicon).verify(lexicon)  # every hash agrees: only the trie is bad
    message = refused(lexicon)
    assert f"{victim} is not a readable trie" in message and "kelime build" in message


def test_a_data_file_the_manifest_does_not_list_is_refused(lexicon):
    raw = read(lexicon)
    del raw["files"][REJECTED_FILE]
    write(lexicon, raw)
    reseal(lexicon)
    assert f"lists no {REJECTED_FILE}" in refused(lexicon)


def test_a_file_that_cannot_be_read_is_a_lexicon_error(lexicon, monkeypatch):
    """EACCES or EIO while hashing (root reads anything, so the error is injected)."""
    def denied(path):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(fmt, "read_file", denied)
    assert "cannot be read (Permission denied)" in refused(lexicon)


def test_the_folder_name_must_be_the_manifest_name(tmp_path):
    out = tmp_path / "data"
    build(out)
    os.rename(out / "tr", out / "ku")  # data/ku/ whose manifest says tr
    Lexicon.load(out / "ku")  # the folder itself is sound
    for load in (lambda: load_lexicon(out, "ku"), lambda: load_all(out)):
        with pytest.raises(LexiconError) as err:
            load()
        assert "named 'tr', not 'ku'" in str(err.value) and "--name ku" in str(err.value)


def test_kelime_check_on_a_manifest_missing_counts_is_one_error_line(lexicon):
    raw = read(lexicon)
    del raw["counts"]
    write(lexicon, raw)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KELIME_")}
    done = subprocess.run([*KELIME, "check", "--data", str(lexicon.parent), "kitap"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "lacks 'counts'" in lines[0]


# --- the version rule -----------------------------------------------------------------------

def test_digest_is_the_documented_rule_over_data_files_only():
    files = {WORDS_FILE: sha(b"w"), REJECTED_FILE: sha(b"r")}
    assert digest(files) == rule(files)
    assert digest({REJECTED_FILE: files[REJECTED_FILE], WORDS_FILE: files[WORDS_FILE]}) \
        == rule(files)  # DATA_FILES order, not the dict's
    assert digest({**files, CHANGES_FILE: sha(b"c")}) == rule(files)
    assert digest({**files, WORDS_FILE: sha(b"x")}) != rule(files)


def _letters(words: list[str], rejected: dict[str, str], alphabet) -> bytes:
    """A tiny encoder standing in for the anagram index: each word's letters, sorted."""
    return "".join("".join(sorted(w)) + "\n" for w in words).encode("utf-8")


@pytest.mark.parametrize("required", [True, False])
def test_the_version_derives_from_every_data_file(tmp_path, monkeypatch, required):
    before = build(tmp_path / "before")
    extra = DataFile("letters.txt", "each word's letters, sorted", _letters, required=required)
    with monkeypatch.context() as patch:
        patch.setattr(fmt, "DATA_FILES", (*fmt.DATA_FILES, extra))
        after = build(tmp_path / "after")
        folder = after.path
        blob = (folder / "letters.txt").read_bytes()
        assert blob == _letters(compile_words(WORDS).words, {}, None)
        assert after.manifest.files["letters.txt"] == sha(blob)
        names = (WORDS_FILE, REJECTED_FILE, INDEX_FILE, "letters.txt")
        assert after.manifest.sha256 == rule(after.manifest.files, names)
        assert after.manifest.version != before.manifest.version
        assert after.manifest.files[WORDS_FILE] == before.manifest.files[WORDS_FILE]
        Lexicon.load(folder)
        # Verified on load: its hash, its place in the version, its listing.
        (folder / "letters.txt").write_bytes(blob + b"x\n")
        assert "letters.txt does not match its manifest" in refused(folder)
        reseal(folder, (WORDS_FILE, REJECTED_FILE, INDEX_FILE))  # version without it
        assert "claims sha256" in refused(folder)
        reseal(folder, names)
        Lexicon.load(folder)
        raw = read(folder)
        del raw["files"]["letters.txt"]
        write(folder, raw)
        reseal(folder, names)
        if required:
            assert "lists no letters.txt" in refused(folder)
            assert "lists no letters.txt" in refused(before.path)  # built before it existed
        else:
            Lexicon.load(folder)
            Lexicon.load(before.path)
    again = build(tmp_path / "again")
    assert again.manifest.version == before.manifest.version
    assert sorted(again.manifest.files) == sorted([CHANGES_FILE, INDEX_FILE, REJECTED_FILE, WORDS_FILE])


def test_changes_json_is_hashed_but_not_versioned(tmp_path):
    """The same words give the same version whatever build came before them."""
    fresh = build(tmp_path / "fresh")
    build(tmp_path / "after", [Candidate("defter")])
    later = build(tmp_path / "after")
    assert later.changes["previous_version"] is not None
    assert later.manifest.version == fresh.manifest.version
    assert later.manifest.sha256 == fresh.manifest.sha256
    changes = (later.path / CHANGES_FILE).read_bytes()
    assert changes != (fresh.path / CHANGES_FILE).read_bytes()
    assert later.manifest.files[CHANGES_FILE] == sha(changes)
    (later.path / CHANGES_FILE).write_bytes(changes.replace(b'"added": 3', b'"added": 4'))
    assert "changes.json does not match its manifest" in refused(later.path)


# --- the anagram index ----------------------------------------------------------------------

def test_the_anagram_index_is_built_beside_the_tries_and_answers_from_the_same_words(lexicon):
    lex = Lexicon.load(lexicon)
    assert lex.anagrams.words(range(len(lex.anagrams))) == ["kalem", "kitap", "silgi"]
    assert (lexicon / INDEX_FILE).read_bytes() == build_index(["kitap", "kalem", "silgi"])
    assert [w["word"] for w in anagram(lex.anagrams, "metalk").as_dict()["words"]] == ["kalem"]


def without_index(folder: Path) -> None:
    """Make a lexicon folder look built before the anagram index existed."""
    raw = read(folder)
    del raw["files"][INDEX_FILE]
    write(folder, raw)
    (folder / INDEX_FILE).unlink()
    reseal(folder)


def test_a_lexicon_built_before_the_index_validates_but_anagrams_say_rebuild(lexicon):
    without_index(lexicon)
    lex = Lexicon.load(lexicon)
    assert lex.check("kitap").valid and lex.index is None
    with pytest.raises(NoAnagramIndex) as err:
        lex.anagrams
    assert "without an anagram index" in str(err.value) and "kelime build" in str(err.value)


def test_a_damaged_index_with_consistent_hashes_is_refused(lexicon):
    blob = bytearray((lexicon / INDEX_FILE).read_bytes())
    blob[-1] ^= 0xFF  # one bit plane byte: only the index's own checksum can tell
    (lexicon / INDEX_FILE).write_bytes(bytes(blob))
    reseal(lexicon)
    message = refused(lexicon)
    assert "anagram index is damaged" in message and "kelime build" in message


def test_an_index_of_other_words_is_refused(lexicon):
    (lexicon / INDEX_FILE).write_bytes(build_index(["kitap", "kalem"]))
    reseal(lexicon)
    assert "indexes 2 words but the manifest says 3" in refused(lexicon)


def test_files_rewritten_in_place_under_a_loaded_lexicon_change_nothing(lexicon):
    """`cp` or `rsync --inplace` over a served file used to crash the worker inside marisa
    (the tries were mapped): now the lexicon holds the bytes it hashed."""
    lex = Lexicon.load(lexicon)
    for name in (WORDS_FILE, REJECTED_FILE, INDEX_FILE):
        with open(lexicon / name, "r+b") as f:  # same inode, new bytes
            f.write(b"\xff" * 64)
            f.truncate(64)
    assert lex.check("kitap").valid and lex.check("İstanbul").reason == "proper_name"
    assert [w["word"] for w in lex.anagram("pakit")["words"]] == ["kitap"]
    assert "does not match its manifest" in refused(lexicon)


# --- what the version covers ----------------------------------------------------------------

def test_an_edited_alphabet_is_refused(lexicon):
    """The alphabet judges words; anagram.idx (versioned) records the one it was built with,
    so a manifest edited to another alphabet, same version, is refused."""
    raw = json.loads((lexicon / MANIFEST_FILE).read_text())
    raw["alphabet"] += "q"
    (lexicon / MANIFEST_FILE).write_text(json.dumps(raw))
    message = refused(lexicon)
    assert "says the alphabet is" in message and "was edited" in message
    assert "kelime build" in message


def test_a_folder_without_index_must_be_turkish(lexicon):
    """Built before anagram.idx existed, so before any other alphabet: only Turkish."""
    without_index(lexicon)
    assert Lexicon.load(lexicon).alphabet.letters == "abcçdefgğhıijklmnoöprsştuüvyz"
    raw = json.loads((lexicon / MANIFEST_FILE).read_text())
    raw["alphabet"] += "q"
    (lexicon / MANIFEST_FILE).write_text(json.dumps(raw))
    assert "says the alphabet is" in refused(lexicon)


def test_a_folder_without_manifest_is_a_problem_not_nothing(tmp_path):
    from kelime.lexicon import current_builds

    data = build(tmp_path / "data").path.parent
    (data / "ku").mkdir()
    (data / "ku" / WORDS_FILE).write_bytes(b"")
    (data / "notes.txt").write_text("not a lexicon, not a problem")
    builds, problems = current_builds(data)
    assert list(builds) == ["tr"] and list(problems) == ["ku"]
    assert "has no manifest.json" in problems["ku"]
