"""The `kelime` command (check, build) and `python build_dict.py`, run as real processes so
the exit codes are the real ones; click's CliRunner where a process adds nothing."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kelime.cli import cli
from kelime.games import GAMES
from kelime.lexicon import Lexicon
from kelime.policy import default_policy_path

ROOT = Path(__file__).resolve().parents[1]
KELIME = Path(sys.executable).parent / "kelime"
WORDS = "kitap\nkalem\nay\nâdet\nIŞIK\n"


def run(*args, cwd: Path, env: dict | None = None, exe=None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("KELIME_")}
    return subprocess.run([*(exe or [str(KELIME)]), *args], cwd=cwd, capture_output=True,
                          text=True, env={**base, "SOURCE_DATE_EPOCH": "1767225600",
                                          "COLUMNS": "120", **(env or {})}, timeout=120)


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """A real lexicon `tr` built by the real command from a five-word list + the policy."""
    root = tmp_path_factory.mktemp("cli")
    (root / "tr.txt").write_text(WORDS, encoding="utf-8")
    done = run("build", "--wordlist", "tr.txt", "--policy", str(default_policy_path()),
               "--out", "data", cwd=root)
    assert done.returncode == 0, done.stderr
    return root / "data"


# --- check ------------------------------------------------------------------------------------

def test_check_exit_codes(data):
    ok = run("check", "kitap", "KALEM", "âdet", "ışık", cwd=data.parent)
    assert ok.returncode == 0, ok.stderr
    assert "✓" in ok.stdout and "✗" not in ok.stdout
    bad = run("check", "kitap", "İstanbul", "orospu", cwd=data.parent)
    assert bad.returncode == 1
    lines = bad.stdout.splitlines()
    assert "✓" in lines[0] and "✗" in lines[1] and "not in the dictionary" in lines[1]
    assert "obscene" in lines[2]  # from data/blocklist.txt


def test_check_game_minimum_length(data):
    assert run("check", "ay", cwd=data.parent).returncode == 0
    short = run("check", "ay", "--game", "kelimatik", cwd=data.parent)
    assert short.returncode == 1 and "too short" in short.stdout


def test_check_errors_exit_2(data, tmp_path):
    empty = run("check", "kitap", "--data", str(tmp_path), cwd=tmp_path)
    assert empty.returncode == 2
    assert empty.stderr.startswith("Error: no lexicon 'tr'")
    assert "kelime build --bootstrap" in empty.stderr and "Traceback" not in empty.stderr
    game = run("check", "kitap", "--game", "monopoly", cwd=data.parent)
    assert game.returncode == 2
    assert game.stderr.strip() == ("Error: unknown game 'monopoly'; known games: "
                                   + ", ".join(GAMES))
    other = run("check", "kitap", "--lexicon", "ku", cwd=data.parent)
    assert other.returncode == 2 and "have: tr" in other.stderr


def test_check_data_from_environment_and_flag(data, tmp_path):
    by_env = run("check", "kitap", cwd=tmp_path, env={"KELIME_DATA": str(data)})
    assert by_env.returncode == 0
    flag_wins = run("check", "kitap", "--data", str(tmp_path), cwd=tmp_path,
                    env={"KELIME_DATA": str(data)})
    assert flag_wins.returncode == 2


@pytest.mark.parametrize("game", [None, "kelimatik"])
def test_check_json_is_the_validate_reply(data, game):
    words = ["kitap", "İSTANBUL", "ay", "ay", "e-posta", "dulda tutmak", " âdet ", "orospu"]
    args = ["check", "--json", *words] + (["--game", game] if game else [])
    done = run(*args, cwd=data.parent)
    assert done.returncode == 1
    min_length = GAMES[game or "kelimelik"].min_length
    assert json.loads(done.stdout) == Lexicon.load(data / "tr").validate(words, min_length)


# --- build ------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, message, status", [
    # bad arguments: exit 2, as docs/cli.md says (they exited 1)
    ([], "choose exactly one source", 2),
    (["--bootstrap", "--wordlist", "tr.txt"], "choose exactly one source", 2),
    (["--bootstrap", "--name", "xx"], "no offline lexicon is called 'xx'", 2),
    (["--wordlist", "tr.txt", "--permissive"], "use it with --bootstrap", 2),
    # the work failed
    (["--wordlist", "missing.txt"], "word list missing.txt does not exist", 1),
    (["--wordlist", "tr.txt", "--policy", "nope.toml"], "policy file nope.toml does not exist",
     1),
    (["--cache", "missing.sqlite"], "does not exist", 1),
])
def test_build_errors(data, args, message, status):
    done = run("build", *args, "--out", "elsewhere", cwd=data.parent)
    assert done.returncode == status
    assert done.stderr.splitlines()[-1].startswith("Error: ")
    assert message in done.stderr and "Traceback" not in done.stderr
    as_json = run("build", *args, "--out", "elsewhere", "--json", cwd=data.parent)
    assert as_json.returncode == status
    error = json.loads(as_json.stdout)["error"]  # --json: the error as JSON too
    assert message in error["message"] and error["code"], as_json.stdout


@pytest.mark.parametrize("args, status", [
    (["reports", "--json"], 2),                                   # no store named
    (["reports", "--reports", "missing.sqlite", "--json"], 1),
    (["reports", "reject", "kitap", "--why", "x", "--reports", "missing.sqlite", "--json"], 1),
    (["define", "--json", " "], 2),
    (["check", "--json", "--data", "nowhere", "kitap"], 2),
    (["lexicons", "--data", "nowhere", "rollback", "tr", "--json"], 2),
])
def test_every_command_prints_its_errors_as_json_with_json(data, args, status):
    """`build`, `reports` and `define` took --json and printed plain-text errors."""
    done = run(*args, cwd=data.parent)
    assert done.returncode == status, done.stdout + done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["code"] and error["message"] and "Traceback" not in done.stderr


def test_build_change_refusal_summary_and_accept_changes(tmp_path):
    words = [f"kelime{a}{b}" for a in "abcdefghij" for b in "klmnoprstu"]
    (tmp_path / "big.txt").write_text("\n".join(words), encoding="utf-8")
    (tmp_path / "small.txt").write_text("\n".join(words[:80] + ["çanta"]), encoding="utf-8")
    first = run("build", "--wordlist", "big.txt", "--name", "tr", "--out", "d", cwd=tmp_path)
    assert first.returncode == 0 and "+100 −0" in first.stdout
    before = (tmp_path / "d" / "tr" / "words.marisa").read_bytes()
    refused = run("build", "--wordlist", "small.txt", "--name", "tr", "--out", "d", cwd=tmp_path)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "Error: refusing to replace 'tr': since the last accepted build" in refused.stderr
    assert "adds 1 and removes 20 words" in refused.stderr
    assert "removed 20 (source): kelimeik, kelimeil" in refused.stderr
    assert "--accept-changes" in refused.stderr
    assert (tmp_path / "d" / "tr" / "words.marisa").read_bytes() == before
    still = run("build", "--wordlist", "small.txt", "--name", "tr", "--out", "d", "--force",
                cwd=tmp_path)  # --force is about unreadable lexicons and sources, not changes
    assert still.returncode == 1 and "--accept-changes" in still.stderr
    forced = run("build", "--wordlist", "small.txt", "--name", "tr", "--out", "d",
                 "--accept-changes", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert "+1 −20" in forced.stdout and "+ çanta" in forced.stdout
    assert "− kelimeik, kelimeil, " in forced.stdout and "kelimeiu …" in forced.stdout
    changes = json.loads((tmp_path / "d" / "tr" / "changes.json").read_text(encoding="utf-8"))
    assert (changes["added"], changes["removed"]) == (1, 20)
    assert changes["added_sample"] == ["çanta"] and len(changes["removed_sample"]) == 20
    again = run("build", "--wordlist", "small.txt", "--name", "tr", "--out", "d", "--json",
                cwd=tmp_path)
    assert again.returncode == 0 and json.loads(again.stdout)["unchanged"] is True


@pytest.mark.slow
def test_build_dict_py_is_kelime_build(tmp_path):
    (tmp_path / "w.txt").write_text(WORDS + "İstanbul\ne-posta\n", encoding="utf-8")
    script = [sys.executable, str(ROOT / "build_dict.py")]
    for args in (["--wordlist", "w.txt", "--name", "tr"], [], ["--bootstrap", "--cache", "x"]):
        a = run("build", *args, "--out", "a", cwd=tmp_path)
        b = run(*args, "--out", "b", cwd=tmp_path, exe=script)
        usage = "python build_dict.py build"  # a usage error names the program as run
        assert (a.returncode, a.stdout.replace("a/tr", "X"), a.stderr.replace("a/tr", "X")) == \
            (b.returncode, b.stdout.replace("b/tr", "X"),
             b.stderr.replace("b/tr", "X").replace(usage, "kelime build"))
    for name in ("words.marisa", "rejected.marisa", "manifest.json", "changes.json"):
        assert (tmp_path / "a" / "tr" / name).read_bytes() == \
            (tmp_path / "b" / "tr" / name).read_bytes()


def test_build_json_with_click_runner(tmp_path):
    (tmp_path / "w.txt").write_text(WORDS, encoding="utf-8")
    result = CliRunner().invoke(cli, ["build", "--wordlist", str(tmp_path / "w.txt"), "--out",
                                      str(tmp_path / "d"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["manifest"]["counts"]["words"] == 5 and report["changes"]["added"] == 5
    assert report["manifest"]["name"] == "w" and report["unchanged"] is False


@pytest.mark.parametrize("value", ["nan", "-1", "101", "abc"])
def test_build_max_change_must_be_a_percent(tmp_path, value):
    """`--max-change nan` passed click's FloatRange, and the build was refused "over the
    nan%" instead of the usage error."""
    result = CliRunner().invoke(cli, ["build", "--wordlist", os.devnull, "--out",
                                      str(tmp_path), "--max-change", value])
    assert result.exit_code == 2, result.output
    assert "--max-change" in result.output
