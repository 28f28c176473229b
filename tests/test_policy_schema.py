"""The policy files are data with a schema: every key and every list line is checked, and
an error names the file, the line and the fix; a build refuses an unusable policy instead
of quietly dropping a list. Headwords no game can lay are refused as `too_long`, saying so."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from kelime.errors import PolicyError
from kelime.lexicon import Lexicon
from kelime.policy import load_policy

from .fake_tdk import builtin_entries, entry, sense
from .test_dump import write_dump

KELIME = [sys.executable, "-c", "from kelime.cli import main; main()"]
GOOD_TOML = ('version = 1\n[proper_name]\nozel_mi = true\ncapitalised = true\n'
             '[obscene]\ntag_ids = [36, 38]\nblocklist = "b.txt"\nallowlist = "a.txt"\n')


def write_policy(folder, toml=GOOD_TOML, block="göt\n", allow="inek\n"):
    (folder / "p.toml").write_text(toml, encoding="utf-8")
    (folder / "b.txt").write_text(block, encoding="utf-8")
    (folder / "a.txt").write_text(allow, encoding="utf-8")
    return folder / "p.toml"


def test_a_well_formed_policy_loads(tmp_path):
    pol = load_policy(write_policy(tmp_path))
    assert pol.blocked == {"göt": "obscene"} and pol.allowed == ["inek"]


@pytest.mark.parametrize("toml, block, allow, says", [
    # `dulda tutmak` in the allowlist allowed `dulda`
    (GOOD_TOML, "göt\n", "inek\ndulda tutmak\n",
     r"a\.txt:2: 'dulda tutmak' is more than one word: a list names one game word a line"),
    # a BOM hid line 1's word
    (GOOD_TOML, "\ufeffgöt\nsik\n", "inek\n", r"b\.txt:1: the file begins with a byte order mark"),
    # `blocklist = ""` dropped the blocklist: göt became valid
    (GOOD_TOML.replace('blocklist = "b.txt"', 'blocklist = ""'), "göt\n", "inek\n",
     r'p\.toml:7: obscene\.blocklist = "" must be the path of a list file'),
    # `ozel_mi = "no"` read as true
    (GOOD_TOML.replace("ozel_mi = true", 'ozel_mi = "no"'), "göt\n", "inek\n",
     r'p\.toml:3: proper_name\.ozel_mi = "no" must be true or false'),
    (GOOD_TOML.replace("blocklist =", "blocklst ="), "göt\n", "inek\n",
     r"p\.toml:7: unknown key obscene\.blocklst: \[obscene\] takes tag_ids, tag_names, "
     r"blocklist, allowlist"),
    (GOOD_TOML.replace("[36, 38]", '["kaba"]'), "göt\n", "inek\n",
     r"p\.toml:6: obscene\.tag_ids = \['kaba'\] must be a list of TDK tag numbers"),
    (GOOD_TOML + "[names]\nx = 1\n", "göt\n", "inek\n", r"p\.toml:9: unknown key 'names'"),
    (GOOD_TOML, "göt\nsik1\n", "inek\n", r"b\.txt:2: 'sik1' is not a game word"),
    (GOOD_TOML, "göt kaba\n", "inek\n", r"b\.txt:1: blocklist word 'göt' has unknown reason"),
    (GOOD_TOML, "am cık obscene\n", "inek\n", r"b\.txt:1: 'am cık obscene' is more than one"),
    ("\ufeff" + GOOD_TOML, "göt\n", "inek\n", r"p\.toml:1: the file begins with a byte order"),
])
def test_a_policy_breaking_the_schema_names_file_line_and_fix(tmp_path, toml, block, allow,
                                                              says):
    with pytest.raises(PolicyError, match=says):
        load_policy(write_policy(tmp_path, toml, block, allow))


def test_a_build_refuses_an_unusable_policy(tmp_path):
    """`blocklist = ""` built a lexicon where göt was valid, exit 0."""
    words = tmp_path / "tr.txt"
    words.write_text("kitap\ngöt\n", encoding="utf-8")
    policy = write_policy(tmp_path, GOOD_TOML.replace('blocklist = "b.txt"', 'blocklist = ""'))
    built = subprocess.run([*KELIME, "build", "--wordlist", str(words), "--name", "tr",
                            "--out", str(tmp_path / "data"), "--policy", str(policy)],
                           capture_output=True, text=True, timeout=120)
    assert built.returncode == 1 and "obscene.blocklist" in built.stderr, built.stderr
    assert "Traceback" not in built.stderr and not (tmp_path / "data" / "tr").exists()


def test_a_headword_no_game_can_lay_is_refused_as_too_long(tmp_path):
    """A 20,000-letter headword was built as a valid word; then every headword over 15
    letters was left out and answered `not_in_dictionary`, though Harfbank's hand of 14 tiles,
    two-letter ones among them, lays 16 letters and more (alternatifsizlik), and a long
    proper name is a proper name."""
    long_word = "a" * 20_000
    dump = write_dump(tmp_path / "tdk.jsonl", builtin_entries() + [
        entry(900, long_word, [sense("Uzun")]),
        entry(901, "elektroensefalografi", [sense("Beyin")]),
        entry(902, "alternatifsizlik", [sense("Seçeneksizlik")]),
        entry(903, "Mustafakemalpaşalı", [sense("Bir ilçeden olan")])])
    cache = tmp_path / "tdk.sqlite"
    done = subprocess.run([*KELIME, "crawl", "import", str(dump), "--cache", str(cache)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    data = tmp_path / "data"
    built = subprocess.run([*KELIME, "build", "--cache", str(cache), "--out", str(data)],
                           capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    assert re.search(r"refused +1 +too_long", built.stdout + built.stderr), built.stdout
    lex = Lexicon.load(data / "tr")
    assert {w: lex.judge(w)[1] for w in ["kitap", "elektroensefalografi", "alternatifsizlik",
                                         "mustafakemalpaşalı", long_word]} == {
        "kitap": None, "elektroensefalografi": None, "alternatifsizlik": None,
        "mustafakemalpaşalı": "proper_name", long_word: "too_long"}
    assert lex.manifest.counts["rejected_by_reason"]["too_long"] == 1
