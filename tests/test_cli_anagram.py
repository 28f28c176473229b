"""`kelime anagram` and `kelime split`: --json prints exactly what the HTTP API answers,
the table shows every word with its score and tiles, and bad racks are one error line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from kelime.cli import cli
from kelime.service.app import create_app
from kelime.service.settings import Settings
from tests.service_helpers import TestClient
from tests.test_service_anagram import make_data

KELIME = [sys.executable, "-c", "from kelime.cli import main; main()"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_data(tmp_path_factory.mktemp("data"))


def kelime(data, *args, env=None):
    return CliRunner().invoke(cli, [*args, "--data", str(data)], env=env)


@pytest.mark.parametrize("args, body", [
    (["anagram", "kale?"], {"rack": "kale?"}),
    (["anagram", "KALEM?", "--exact"], {"rack": "KALEM?", "mode": "exact"}),
    (["anagram", "kalem??", "--min", "4", "--max", "5", "--limit", "3", "--sort", "alpha"],
     {"rack": "kalem??", "min_length": 4, "max_length": 5, "limit": 3, "sort": "alpha"}),
    (["anagram", "ia", "--pattern", "k.t.p"], {"rack": "ia", "pattern": "k.t.p"}),
    (["anagram", "kalem?", "-x", "kalem,Alem", "-x", "elma"],
     {"rack": "kalem?", "exclude": ["kalem", "Alem", "elma"]}),
    (["anagram", "?[lm]az", "-g", "kelimatik", "--what-if"],
     {"rack": "?[lm]az", "game": "kelimatik", "what_if": True}),
    (["anagram", "kaletn?[lm]ıs", "-g", "kelimatik"], {"rack": "kaletn?[lm]ıs",
                                                      "game": "kelimatik"}),
    (["split", "kalem?", "--what-if"], {"rack": "kalem?", "what_if": True}),
    (["split", "kalpkitapkalem"], {"rack": "kalpkitapkalem"}),
    (["split", "kitapsilgkalem?", "--game", "harfbank"], {"rack": "kitapsilgkalem?"}),
])
def test_json_is_the_api_answer(data, args, body):
    run = kelime(data, *args, "--json")
    assert run.exit_code == 0, run.output
    with TestClient(create_app(Settings(data=data))) as api:
        reply = api.post(f"/v1/{args[0]}", json=body)
    assert reply.status_code == 200 and json.loads(run.output) == reply.json()


def test_the_table_lists_every_word_by_length_with_score_and_tiles(data):
    answer = json.loads(kelime(data, "anagram", "kalem??", "--json", "--limit", "1000").output)
    out = kelime(data, "anagram", "kalem??", "--limit", "1000").output.splitlines()
    assert out[0] == f"kalem?? · kelimelik · {answer['count']} words"
    lengths = [int(line.split()[0]) for line in out if line.endswith(" letters")]
    assert lengths == sorted(set(lengths), reverse=True)
    rows = [line.split() for line in out if line.startswith("  ")]
    grouped = sorted(answer["words"], key=lambda w: -len(w["word"]))  # stable: score order kept
    assert [(r[0], int(r[1]), r[2:]) for r in rows] == \
        [(w["word"], w["score"], w["tiles"]) for w in grouped]
    assert out[-1].startswith("lexicon tr ")


def test_a_truncated_table_says_so(data):
    out = kelime(data, "anagram", "kalem??", "--limit", "2").output
    assert "words, the first 2 by score" in out.splitlines()[0]


def test_split_shows_the_layout_and_the_penalty(data):
    out = kelime(data, "split", "kalpkitapkalem").output.splitlines()
    assert out[0] == "kalpkitapkalem · harfbank · laid out whole"
    assert out[-2] == "penalty 0 · the search was complete"
    unsplit = kelime(data, "split", "kalpkitapkalez").output
    assert "cannot be laid out whole" in unsplit and "left over: z" in unsplit


@pytest.mark.parametrize("args, says", [
    (["anagram", "kale[lm"], "never closed"),
    (["anagram", "kale[lm]"], "kelimelik has no two-letter tiles"),
    (["anagram", "kale", "--pattern", "kale"], "no '.' square"),
    (["anagram", "kale???"], "the rack has 3 blanks; the limit is 2"),
    (["anagram", "kale", "--game", "scrabble"], "scrabble"),
    (["anagram", "kale", "--lexicon", "zz"], "no lexicon 'zz'"),
    (["split", "kalemkitapsilgie"], "Harfbank deals 14 tiles"),
])
def test_bad_racks_are_one_error_line(data, args, says):
    """Exit 2: the question cannot be asked (as `check` says of a lexicon it cannot use)."""
    run = kelime(data, *args)
    assert run.exit_code == 2 and "Traceback" not in run.output
    assert run.output.startswith("Error: ") and says in run.output, run.output


@pytest.mark.parametrize("args, code", [
    (["anagram", "kale[lm"], "invalid_rack"),
    (["anagram", "abcdefgğhıijkl"], "rack_not_dealt"),
    (["anagram", "kale???"], "over_limit"),
    (["anagram", "kale", "--game", "scrabble"], "unknown_game"),
    (["anagram", "kale", "--lexicon", "zz"], "unknown_lexicon"),
    (["split", "kalemkitapsilgie"], "rack_not_dealt"),
    (["check", "kitap", "--lexicon", "zz"], "unknown_lexicon"),
    (["check", "kitap", "--game", "scrabble"], "unknown_game"),
])
def test_json_errors_are_the_api_s_error_object_on_standard_output(data, args, code):
    """`--json` errors were plain text on stderr: a script parsing stdout got nothing."""
    run = CliRunner().invoke(cli, [*args, "--data", str(data), "--json"])
    assert run.exit_code == 2, run.output
    body = json.loads(run.stdout)
    assert set(body) == {"error"} and body["error"]["code"] == code
    assert body["error"]["message"] and not run.stderr


def test_the_same_failure_exits_the_same_in_every_command(tmp_path):
    """A missing lexicon exited 2 from `check` and 1 from `anagram` and `split`."""
    runs = [CliRunner().invoke(cli, [*args, "--data", str(tmp_path)]) for args in (
        ["check", "kitap"], ["anagram", "kale"], ["split", "kale"])]
    assert [r.exit_code for r in runs] == [2, 2, 2]
    assert all(r.output.startswith("Error: no lexicon 'tr'") for r in runs)


def test_the_lexicon_name_is_read_as_the_api_reads_it(data):
    """`-l TR` was "no lexicon 'TR'" while the API accepts it."""
    for name in ("TR", " tr ", "Tr"):
        run = CliRunner().invoke(cli, ["check", "kitap", "-l", name, "--data", str(data)])
        assert run.exit_code == 0, run.output
        run = CliRunner().invoke(cli, ["anagram", "kitap", "-l", name, "--data", str(data)])
        assert run.exit_code == 0 and "lexicon tr " in run.output, run.output


def test_limits_come_from_the_environment(data):
    run = kelime(data, "anagram", "kalem", env={"KELIME_MAX_RACK_TILES": "4"})
    assert run.exit_code == 2 and "the rack has 5 tiles; the limit is 4" in run.output


def test_the_real_command_prints_unicode_and_quoted_racks(data):
    env = {k: v for k, v in os.environ.items() if not k.startswith("KELIME_")}
    done = subprocess.run([*KELIME, "anagram", "HAK?IZ", "--data", str(data), "--json"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    words = json.loads(done.stdout)["words"]
    assert {"word": "haksız", "score": 13, "tiles": ["h", "a", "k", "?s", "ı", "z"]} in words


@pytest.mark.parametrize("args, says, details", [
    (["anagram", "ka[lm][ar][ek]e?tnm", "-g", "kelimatik"],
     "Kelimatik deals 1 two-letter tile; this rack has 3",
     {"game": "kelimatik", "rule": "two_letter", "least": 1, "most": 1, "found": 3}),
    (["split", "kalem"], "Harfbank deals 14 tiles (15 with the one drawn to throw away); "
     "this rack has 5", {"game": "harfbank", "rule": "tiles", "least": 14, "most": 15,
                         "found": 5}),
])
def test_a_rack_the_game_cannot_deal_exits_2_unless_what_if(data, args, says, details):
    """Issue 32: a Kelimatik rack of three two-letter tiles, a 5-tile Harfbank hand were
    answered as if the game could deal them."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KELIME_")}
    done = subprocess.run([*KELIME, *args, "--data", str(data)], capture_output=True,
                          text=True, env=env, timeout=60)
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert done.stderr.startswith(f"Error: {says}; fix the rack, or ask anyway") and \
        "--what-if" in done.stderr, done.stderr
    done = subprocess.run([*KELIME, *args, "--data", str(data), "--json"],
                          capture_output=True, text=True, env=env, timeout=60)
    error = json.loads(done.stdout)["error"]
    assert done.returncode == 2 and error["code"] == "rack_not_dealt", done.stdout
    assert error["details"] == details and error["message"].startswith(says)
    done = subprocess.run([*KELIME, *args, "--what-if", "--data", str(data), "--json"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0 and "lexicon" in json.loads(done.stdout), done.stderr
