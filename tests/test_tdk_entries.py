"""kelime.tdk.entries and kelime.policy: raw TDK entries → candidate game words with reasons,
under the policy; and the TDK cache as a build source (kelime.sources.tdk)."""

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from kelime.cli import cli
from kelime.errors import CacheError, PolicyError
from kelime.lexicon import Lexicon, compile_words
from kelime.normalize import normalize
from kelime.policy import Policy, apply_policy, default_policy_path, load_policy
from kelime.sources import cache_candidates, cache_source
from kelime.tdk.entries import classify_entries

from .fake_tdk import builtin_entries
from .tdk_entries import (
    ARGO,
    HAKARET,
    ISIM,
    KABA,
    MECAZ,
    SIFAT,
    entry,
    ordinary,
    sense,
    tag,
    vulgar,
)

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "tdk-samples"
POLICY = default_policy_path()


def verdicts(entries, policy=None) -> dict[str, str | None]:
    """{game word: None (valid) or reason} after the build's merge."""
    compiled = compile_words(classify_entries(entries, policy or Policy()))
    return {**{w: None for w in compiled.words}, **compiled.rejected}


def sample(name: str):
    path = SAMPLES / name
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared TDK samples live beside the repo)")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return json.loads(path.read_text(encoding="utf-8"))


# --- obscenity: per sense, decided per game word ---------------------------------------------

def test_every_sense_vulgar_is_obscene():
    assert verdicts([vulgar("göt")]) == {"göt": "obscene"}
    assert verdicts([vulgar("deyyus", tag_=HAKARET)]) == {"deyyus": "obscene"}
    mixed = entry("kaltak", sense("a", ISIM, KABA), sense("b", ISIM, HAKARET))
    assert verdicts([mixed]) == {"kaltak": "obscene"}


@pytest.mark.parametrize("word", ["inek", "mal", "parlak", "oğlan", "köpek"])
def test_one_ordinary_sense_keeps_the_word(word):
    e = entry(word, sense("hayvan", ISIM), sense("aptal", ISIM, MECAZ, KABA),
              sense("kötü", SIFAT, HAKARET))
    assert verdicts([e]) == {word: None}


def test_argo_alone_does_not_refuse():
    assert verdicts([entry("enayi", sense("a", ISIM, ARGO), sense("b", SIFAT, ARGO))]) == \
        {"enayi": None}


def test_tags_match_by_id_or_by_name():
    by_id = tag("36", "4", "başka ad", "x", "47")
    by_name = tag("136", "4", "kaba konuşmada", "kaba", "47")
    by_spaced_name = tag("999", "4", " hakaret  yollu ", "hkr.", "49")
    for t in (by_id, by_name, by_spaced_name):
        assert verdicts([entry("zzz", sense("a", t))]) == {"zzz": "obscene"}


def test_an_entry_without_senses_is_not_obscene():
    bare = entry("kontuar")
    assert "anlamlarListe" not in bare
    assert verdicts([bare]) == {"kontuar": None}
    no_tags = entry("lan", sense("seslenme"))
    assert "ozelliklerListe" not in no_tags["anlamlarListe"][0]
    assert verdicts([no_tags]) == {"lan": None}


def test_homonyms_vote_together():
    assert verdicts([vulgar("piç"), ordinary("piç")]) == {"piç": None}
    assert verdicts([vulgar("piç"), vulgar("piç", tag_=HAKARET)]) == {"piç": "obscene"}
    assert verdicts([vulgar("piç"), entry("piç")]) == {"piç": None}  # a bare common entry vouches
    # Circumflex and case variants are the same game word.
    assert verdicts([vulgar("âmâ"), ordinary("ama")]) == {"ama": None}


def test_proper_names_do_not_vote_on_obscenity():
    # A proper-name entry with an ordinary sense does not rescue an all-vulgar common word.
    assert verdicts([vulgar("piç"), ordinary("Piç", ozel_mi="1")]) == {"piç": "obscene"}
    # A vulgar sense on a proper name leaves it a proper name.
    assert verdicts([vulgar("Dalyarak", ozel_mi="1")]) == {"dalyarak": "proper_name"}


def test_order_of_entries_does_not_matter():
    entries = [vulgar("piç"), ordinary("piç"), vulgar("göt"), ordinary("Abdal", ozel_mi="1"),
               ordinary("abdal"), ordinary("Iğdır", ozel_mi="1"), entry("e-posta", sense("x"))]
    expected = verdicts(entries)
    for seed in range(5):
        shuffled = entries[:]
        random.Random(seed).shuffle(shuffled)
        assert verdicts(shuffled) == expected


tags = st.sampled_from([ISIM, SIFAT, ARGO, MECAZ, KABA, HAKARET])
senses = st.lists(st.lists(tags, max_size=3), max_size=3)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["mal", "Mal", "mâl"]), st.booleans(), senses),
                min_size=1, max_size=5))
def test_obscene_exactly_when_no_common_entry_has_an_ordinary_sense(spec):
    entries = [entry(madde, *(sense("x", *ts) for ts in ss), ozel_mi="1" if flag else "0")
               for madde, flag, ss in spec]
    common = [(madde, ss) for madde, flag, ss in spec if not flag and not madde[0].isupper()]

    def vulgar_tagged(ts):
        return any(t["ozellik_id"] in ("36", "38") for t in ts)

    if not common:
        expected = "proper_name"
    elif any(not ss or not all(vulgar_tagged(ts) for ts in ss) for _, ss in common):
        expected = None
    else:
        expected = "obscene"
    assert verdicts(entries) == {"mal": expected}


# --- proper names ----------------------------------------------------------------------------

def test_proper_names_by_flag_and_by_capital():
    assert verdicts([ordinary("Iğdır", ozel_mi="1")]) == {"ığdır": "proper_name"}
    assert verdicts([ordinary("meriç", ozel_mi="1")]) == {"meriç": "proper_name"}  # flag only
    assert verdicts([ordinary("Akdeniz")]) == {"akdeniz": "proper_name"}           # capital only
    assert verdicts([ordinary("Cm")]) == {"cm": "proper_name"}    # chemical symbol
    assert verdicts([ordinary("pH")]) == {"ph": "proper_name"}    # a capital anywhere


def test_policy_switches_for_proper_names():
    flag_only = Policy(proper_by_capital=False)
    assert verdicts([ordinary("Akdeniz")], flag_only) == {"akdeniz": None}
    assert verdicts([ordinary("Iğdır", ozel_mi="1")], flag_only) == {"ığdır": "proper_name"}
    capital_only = Policy(proper_by_flag=False)
    assert verdicts([ordinary("meriç", ozel_mi="1")], capital_only) == {"meriç": None}


@pytest.mark.parametrize("proper, common", [("Abdal", "abdal"), ("Ay", "ay"), ("Arap", "arap"),
                                            ("Akrep", "akrep")])
def test_a_common_twin_keeps_the_word_valid(proper, common):
    entries = [ordinary(proper, ozel_mi="1"), ordinary(common)]
    assert verdicts(entries) == {common: None}
    assert verdicts(entries[:1]) == {common: "proper_name"}


# --- letters, junk, whitespace ----------------------------------------------------------------

@pytest.mark.parametrize("madde, word, reason", [
    ("dulda tutmak", "dulda tutmak", "phrase"),
    ("Acem ağzı ", "acem ağzı", "phrase"),           # trailing space, capitalised compound
    ("  kitap ", "kitap", None),
    ("e-posta", "e-posta", "invalid_chars"),
    ("bak!", "bak!", "invalid_chars"),
    ("kur’an", "kur’an", "invalid_chars"),
    ("111ada", "111ada", "invalid_chars"),
    ("örnekKelime 3", "örnekkelime 3", "invalid_chars"),
    ("madde deneme 3", "madde deneme 3", "invalid_chars"),
    ("-den yana", "-den yana", "invalid_chars"),
    ("a", "a", "too_short"),
    ("â", "a", "too_short"),
])
def test_letters_decide_the_rest(madde, word, reason):
    assert verdicts([ordinary(madde)]) == {word: reason}


def test_rows_without_a_headword_are_skipped():
    rows = [entry(None, sense("x")), entry("", sense("x")), entry("   ", sense("x")),
            {"error": "Sonuç bulunamadı"}, "not a dict", None, ordinary("kitap")]
    assert [c.word for c in classify_entries(rows, Policy())] == ["kitap"]


def test_circumflex_variants_fold_into_one_word():
    assert verdicts([ordinary("âdet"), ordinary("adet")]) == {"adet": None}
    assert verdicts([ordinary("kâğıt")]) == {"kağıt": None}


# --- the policy file and its curated lists ----------------------------------------------------

def test_default_policy_file():
    pol = load_policy(POLICY)
    assert pol.vulgar_tag_ids == {"36", "38"}
    assert pol.vulgar_tag_names == {"kaba konuşmada", "hakaret yollu"}
    assert pol.proper_by_flag and pol.proper_by_capital
    assert pol.blocked and set(pol.blocked.values()) <= {
        "obscene", "proper_name", "not_in_dictionary"}
    for word in ("inek", "mal", "parlak"):
        assert word not in pol.blocked


def test_curated_lists_are_clean():
    """Each list word is a normalised game word, once, in Turkish order within its reason."""
    from kelime.normalize import is_game_word, turkish_sorted

    pol = load_policy(POLICY)
    for word in [*pol.blocked, *pol.allowed]:
        assert word == normalize(word) and is_game_word(word), word
    assert len(pol.allowed) == len(set(pol.allowed)) and not set(pol.allowed) & set(pol.blocked)
    for reason in set(pol.blocked.values()):
        group = [w for w, r in pol.blocked.items() if r == reason]
        assert group == turkish_sorted(group), reason
    lines = [ln.split("#")[0].split() for ln in (POLICY.parent / "blocklist.txt").read_text(
        encoding="utf-8").splitlines()]
    assert len([ln for ln in lines if ln]) == len(pol.blocked)  # no word listed twice


def test_curated_lists_override_the_tags():
    pol = load_policy(POLICY)
    blocked = next(iter(pol.blocked))
    entries = [ordinary(blocked), vulgar("inek"), ordinary("inek"), vulgar("zzzkaba"),
               ordinary("mal"), entry("parlak", sense("ışıklı", SIFAT), sense("x", KABA))]
    pol.allowed = ["zzzkaba"]
    compiled, _ = apply_policy(compile_words(classify_entries(entries, pol)), pol)
    assert blocked in compiled.rejected and blocked not in compiled.words
    assert {"inek", "mal", "parlak", "zzzkaba"} <= set(compiled.words)


def test_a_policy_with_its_own_tags(tmp_path):
    (tmp_path / "block.txt").write_text("# comment\nfoo\nbar proper_name  # why\n\n",
                                        encoding="utf-8")
    (tmp_path / "p.toml").write_text(
        'version = 1\n[proper_name]\ncapitalised = false\n'
        '[obscene]\ntag_ids = [30]\ntag_names = []\nblocklist = "block.txt"\n',
        encoding="utf-8")
    pol = load_policy(tmp_path / "p.toml")
    assert pol.blocked == {"foo": "obscene", "bar": "proper_name"}
    assert verdicts([entry("enayi", sense("a", ARGO)), ordinary("Akdeniz")], pol) == \
        {"enayi": "obscene", "akdeniz": None}


@pytest.mark.parametrize("toml, blocklist, message", [
    ("version = 2\n", None, "version = 1"),
    ("version = 1\n[obscene\n", None, "not valid TOML"),
    ('version = 1\n[obscene]\nblocklist = "missing.txt"\n', None, "does not exist"),
    ('version = 1\n[obscene]\nblocklist = "b.txt"\n', "foo rude\n", "unknown reason 'rude'"),
])
def test_bad_policy_files_say_why(tmp_path, toml, blocklist, message):
    (tmp_path / "p.toml").write_text(toml, encoding="utf-8")
    if blocklist:
        (tmp_path / "b.txt").write_text(blocklist, encoding="utf-8")
    with pytest.raises(PolicyError, match=message):
        load_policy(tmp_path / "p.toml")
    with pytest.raises(PolicyError, match="does not exist"):
        load_policy(tmp_path / "nope.toml")


# --- real TDK replies (../shared/tdk-samples) --------------------------------------------------

def test_sample_adet_both_entries_fold_to_adet():
    entries = sample("gts-adet.json")
    assert [e["madde"] for e in entries] == ["âdet", "adet"]
    assert verdicts(entries) == {"adet": None}


@pytest.mark.parametrize("name, word", [("gts-istanbul.json", "istanbul"),
                                        ("gts-igdir.json", "ığdır"), ("gts-meric.json", "meriç")])
def test_sample_proper_names(name, word):
    assert verdicts(sample(name)) == {word: "proper_name"}


def test_sample_cikmak_argo_on_one_sense_stays_valid():
    entries = sample("gts-cikmak.json")
    tagged = [s for e in entries for s in e["anlamlarListe"]
              if any(t["ozellik_id"] == "30" for t in s.get("ozelliklerListe", []))]
    assert tagged  # the sample does carry argo
    assert verdicts(entries) == {"çıkmak": None}


def test_sample_dump_phrases_and_words():
    assert verdicts(sample("dump-v12-dulavrat-otu-to-duldalamak.jsonl")) == {
        "dulavrat otu": "phrase", "dulda": None, "dulda tutmak": "phrase",
        "duldalama": None, "duldalamak": None}


@pytest.mark.parametrize("name", ["gts-kitap.json", "gts-sozluk.json", "gts-jeton.json",
                                  "gts-cigdem.json", "gts-arayis.json", "dump-v12-durmak.json"])
def test_sample_ordinary_words_are_valid(name):
    data = sample(name)
    entries = data if isinstance(data, list) else [data]
    result = verdicts(entries)
    assert len(result) == 1 and list(result.values()) == [None]


def test_sample_with_a_vulgar_sense_added_stays_valid_until_every_sense_is_vulgar():
    entries = sample("gts-kitap.json")
    for s in entries[0]["anlamlarListe"][1:]:
        s.setdefault("ozelliklerListe", []).append(dict(KABA))
    assert verdicts(entries) == {"kitap": None}
    entries[0]["anlamlarListe"][0].setdefault("ozelliklerListe", []).append(dict(HAKARET))
    assert verdicts(entries) == {"kitap": "obscene"}


# --- the crawl cache as a source ----------------------------------------------------------------

def fill_cache(path: Path, replies: dict[str, list[dict]], when="2026-09-30T08:00:00+00:00"):
    from kelime.tdk.store import open_cache, save_reply

    db = open_cache(path, create=True)
    for query, entries in replies.items():
        save_reply(db, {"query": query, "url": f"https://sozluk.gov.tr/gts?ara={query}",
                        "status": 200, "outcome": "ok", "body": json.dumps(entries),
                        "error": None, "attempts": 0, "fetched_at": when}, entries)
    db.close()
    return path


CACHE_REPLIES = {
    "abdal": [ordinary("Abdal", ozel_mi="1"), ordinary("abdal")],
    "ığdır": [ordinary("Iğdır", ozel_mi="1")],
    "inek": [entry("inek", sense("hayvan", ISIM), sense("aptal", ISIM, KABA))],
    "zıkkımlanmak": [vulgar("zıkkımlanmak")],
    "e-posta": [ordinary("e-posta")],
    "dulda": [ordinary("dulda"), ordinary("dulda tutmak")],
    "âdet": [ordinary("âdet"), ordinary("adet")],
}


def test_cache_source_and_candidates(tmp_path):
    path = fill_cache(tmp_path / "tdk.sqlite", CACHE_REPLIES)
    source = cache_source(path)
    assert source["kind"] == "tdk-cache"
    assert source["name"] == "TDK Güncel Türkçe Sözlük (sozluk.gov.tr), crawled 2026-09-30"
    assert "Türk Dil Kurumu" in source["licence"] and source["entries"] == 10
    seen = []

    def progress(entries, total):
        seen.append(total)
        yield from entries

    compiled = compile_words(cache_candidates(path, Policy(), progress=progress))
    assert seen == [10]
    assert compiled.words == ["abdal", "adet", "dulda", "inek"]
    assert compiled.rejected == {"dulda tutmak": "phrase", "e-posta": "invalid_chars",
                                 "ığdır": "proper_name", "zıkkımlanmak": "obscene"}


def test_cache_errors_say_what_to_do(tmp_path):
    with pytest.raises(CacheError, match="does not exist"):
        cache_candidates(tmp_path / "missing.sqlite", Policy())
    (tmp_path / "junk.sqlite").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(CacheError, match="not an SQLite database"):
        cache_source(tmp_path / "junk.sqlite")
    fill_cache(tmp_path / "empty.sqlite", {})
    with pytest.raises(CacheError, match="no TDK entries"):
        cache_source(tmp_path / "empty.sqlite")


def test_build_from_cache_cli(tmp_path):
    path = fill_cache(tmp_path / "tdk.sqlite", CACHE_REPLIES)
    out = tmp_path / "data"
    result = CliRunner().invoke(cli, ["build", "--cache", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    lex = Lexicon.load(out / "tr")
    assert lex.manifest.source["kind"] == "tdk-cache"
    got = {r["word"]: r["reason"] for r in lex.validate(
        ["abdal", "Iğdır", "inek", "zıkkımlanmak", "e-posta", "dulda tutmak", "âdet", "orospu",
         "kitap"])["results"]}
    assert got == {"abdal": None, "Iğdır": "proper_name", "inek": None,
                   "zıkkımlanmak": "obscene", "e-posta": "invalid_chars",
                   "dulda tutmak": "phrase", "âdet": None,
                   "orospu": "obscene",  # from data/blocklist.txt
                   "kitap": "not_in_dictionary"}

    missing = CliRunner().invoke(cli, ["build", "--cache", str(tmp_path / "nope.sqlite"),
                                       "--out", str(out)])
    assert missing.exit_code == 1
    assert "Error: cache" in missing.output and "kelime crawl" in missing.output
    assert "Traceback" not in missing.output


def test_build_from_cache_shows_progress_only_on_a_terminal(tmp_path):
    import os
    import pty
    import subprocess
    import sys

    kelime = Path(sys.executable).parent / "kelime"
    if not kelime.exists():
        pytest.skip(f"{kelime} is not installed")
    path = fill_cache(tmp_path / "tdk.sqlite", CACHE_REPLIES)
    args = [str(kelime), "build", "--cache", str(path), "--out"]
    piped = subprocess.run(args + [str(tmp_path / "a")], capture_output=True, text=True,
                           timeout=60)
    assert piped.returncode == 0 and "Filtering" not in piped.stderr
    parent, child = pty.openpty()
    proc = subprocess.Popen(args + [str(tmp_path / "b")], stdout=subprocess.DEVNULL,
                            stderr=child)
    os.close(child)
    seen = b""
    while True:
        try:
            chunk = os.read(parent, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(parent)
    assert proc.wait(timeout=60) == 0
    assert b"Filtering TDK entries" in seen and b"100%" in seen


@pytest.mark.parametrize("change", [
    {"anlamlarListe": "yok"}, {"anlamlarListe": [None]}, {"madde_id": "²"},
    {"madde_id": "12345678901234567890123"}, {"madde": None},
    {"anlamlarListe": [{"anlam_id": "x", "ozelliklerListe": "isim"}]},
])
def test_entries_in_a_shape_the_store_cannot_take_are_failed_not_crashes(change):
    """Each of these took the save down with AttributeError/ValueError/OverflowError: nothing
    stored, the word not marked failed, fetched again every run. The reply is now failed
    (final, not retried) with no entry for the store to take."""
    from kelime.tdk.replies import classify

    entry = {**next(e for e in builtin_entries() if e["madde"] == "kitap"), **change}
    c = classify(200, json.dumps([entry]).encode(), "kitap")
    assert (c.outcome, c.kind, c.transient, c.entries) == ("failed", "bad_shape", False, []), c
