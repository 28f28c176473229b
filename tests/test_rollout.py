"""Rollouts an operator runs: `kelime lexicons` (list, diff, rollback) and `kelime reload`
against a real `kelime serve`, a server started on a damaged current build (it serves the
last good one, saying so), and `make serve`'s lexicons rebuilt when their inputs change."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from kelime.lexicon.format import WORDS_FILE
from kelime.lexicon.pins import RECORD_KEYS
from tests.servers import kelime_command
from tests.test_reload import build, serve
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parent.parent


def kelime(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(kelime_command(*args), capture_output=True, text=True, timeout=120)


def damage(data: Path, name: str = "tr") -> None:
    with open(data / name / WORDS_FILE, "r+b") as f:
        f.write(b"\0" * 16)


def test_list_diff_and_rollback_of_the_builds_kept(tmp_path):
    data = tmp_path / "data"
    v1, v2 = build(data), build(data, "silgi")
    listed = kelime("lexicons", "--data", str(data), "list", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)["builds"]
    assert [(r["version"], r["words"], r["current"], r["verifies"]) for r in rows] == [
        (v2, 4, True, True), (v1, 3, False, True)]
    assert [r["accepted"] for r in rows] == [True, False]

    diff = kelime("lexicons", "--data", str(data), "diff", f"tr@{v1}", f"tr@{v2[:6]}")
    assert (diff.returncode, diff.stdout) == (0, "+ silgi\n"), diff.stderr
    unknown = kelime("lexicons", "--data", str(data), "diff", f"tr@{v1}", "tr@abcdef")
    assert unknown.returncode == 2 and f"kept: {v2}, {v1}" in unknown.stderr

    back = kelime("lexicons", "rollback", "tr", "--data", str(data))
    assert back.returncode == 0, back.stderr
    assert f"tr@{v1} (was {v2})" in back.stdout and "kelime reload" in back.stderr
    assert (data / "tr").resolve().name == f"tr-{v1}"
    again = kelime("lexicons", "rollback", "tr", "--data", str(data))  # nothing older
    assert again.returncode == 2 and "--to VERSION" in again.stderr
    forward = kelime("lexicons", "rollback", "tr", "--to", v2, "--data", str(data))
    assert forward.returncode == 0 and (data / "tr").resolve().name == f"tr-{v2}"


def test_reload_with_no_server_says_what_to_run(tmp_path):
    """Records left by servers that are gone are not servers: one killed with -9 (its pid
    no process now: past the kernel's pid_max) and a pid alive but without pins (reused)."""
    data = tmp_path / "data"
    build(data)
    runtime = tmp_path / "kelime-serve-999999999-x"
    runtime.mkdir()
    (runtime / "pins.json").write_text(json.dumps({key: {} for key in RECORD_KEYS} | {"generation": 1}))
    (data / ".serve").mkdir()
    for pid, folder in ((999999999, runtime), (os.getpid(), tmp_path / "none")):
        (data / ".serve" / f"{pid}.json").write_text(json.dumps(
            {"pid": pid, "binds": [], "runtime": str(folder), "data": str(data)}))
    found = kelime("reload", "--data", str(data))
    assert found.returncode == 2
    assert f"no `kelime serve` is serving {data}" in found.stderr
    assert f"kelime serve --data {data}" in found.stderr
    as_json = kelime("reload", "--data", str(data), "--json")  # its code, not "failed"
    assert as_json.returncode == 2 and json.loads(as_json.stdout)["error"]["code"] == "no_server"


def test_reload_never_signals_a_process_that_is_not_the_master_that_wrote_the_record(
        tmp_path):
    """A record with pins, naming a live pid that is no kelime master (anyone may write
    /tmp/kelime-serve-*, and a pid is reused after a master killed with -9): SIGHUP, whose
    default is to end a process, went to it, and its fake outcome was printed."""
    data = tmp_path / "data"
    build(data)
    victim = subprocess.Popen(["sleep", "60"])
    runtimes = [tmp_path / "not-named-after-it", Path(tempfile.gettempdir()) /
                f"kelime-serve-{victim.pid}-attack"]
    try:
        (data / ".serve").mkdir()
        for i, runtime in enumerate(runtimes):
            runtime.mkdir()
            (runtime / "pins.json").write_text(json.dumps(
                {key: {} for key in RECORD_KEYS} | {"generation": 1, "since": 1e12, "workers": 1,
                                             "outcome": "refused", "refused": {"tr": "x"}}))
            record = {"pid": victim.pid, "binds": [], "runtime": str(runtime),
                      "data": str(data)}
            (data / ".serve" / f"{victim.pid}.json").write_text(json.dumps(record))
            (runtime / "server.json").write_text(json.dumps(record))
            if i:  # a folder named after it, but the process started after the record
                old = time.time() - 3600
                for path in (runtime / "server.json", data / ".serve" / f"{victim.pid}.json"):
                    os.utime(path, (old, old))
            found = kelime("reload", "--data", str(data))
            assert found.returncode == 2, found.stdout + found.stderr
            assert victim.poll() is None, "kelime reload signalled a process it did not start"
    finally:
        victim.kill()
        shutil.rmtree(runtimes[1], ignore_errors=True)


def test_an_odd_file_in_builds_is_a_damaged_build_not_a_hang(tmp_path):
    """A FIFO (or /dev/zero) named manifest.json in .builds/ blocked `kelime lexicons
    list`, `kelime serve` and the master's reload for ever, or read until memory ran out."""
    data = tmp_path / "data"
    build(data)
    for name, make in (("tr-777777777777", lambda p: os.mkfifo(p)),
                       ("tr-888888888888", lambda p: p.symlink_to("/dev/zero"))):
        (data / ".builds" / name).mkdir()
        make(data / ".builds" / name / "manifest.json")
    listed = subprocess.run(kelime_command("lexicons", "--data", str(data), "list"),
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.count("DAMAGED") == 2, listed.stdout
    assert "is not a manifest (a regular file of at most 1,048,576 bytes)" in listed.stdout


@pytest.mark.slow
def test_rollback_and_reload_return_a_damaged_deployment_to_the_previous_build(tmp_path):
    data = tmp_path / "data"
    v1 = build(data)
    with serve(data, tmp_path, 2) as server:
        v2 = build(data, "silgi")
        moved = kelime("reload", "--data", str(data))
        assert moved.returncode == 0, moved.stdout + moved.stderr
        assert f"reloaded, serving tr {v2}" in moved.stdout
        server.settle(v2)

        damage(data)  # the build served, corrupted on disk: its words are in memory
        kept = kelime("reload", "--data", str(data))
        assert kept.returncode == 0 and f"unchanged, serving tr {v2}" in kept.stdout
        build(data, "silgi", "defter", force=True)
        damage(data)  # a new build, damaged before it is served: refused
        refused = kelime("reload", "--data", str(data), "--json")
        assert refused.returncode == 1, refused.stdout
        [outcome] = json.loads(refused.stdout)["servers"]
        assert outcome["outcome"] == "refused" and outcome["pid"] == server.proc.pid
        assert "does not match its manifest" in outcome["refused"]["tr"]
        assert outcome["versions"] == {"tr": v2}
        checked = kelime("check", "--data", str(data), "kitap")
        assert checked.returncode == 2 and "kelime lexicons --data" in checked.stderr
        assert f"rollback tr --to {v1}` to point it at tr@{v1}" in checked.stderr

        back = kelime("lexicons", "--data", str(data), "rollback", "tr")
        assert back.returncode == 0, back.stderr
        assert kelime("check", "--data", str(data), "kitap").returncode == 0
        done = kelime("reload", "--data", str(data))
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"reloaded, serving tr {v1}" in done.stdout
        server.settle(v1)
    assert not list((data / ".serve").glob("*.json"))  # the record goes with the server


@pytest.mark.slow
def test_reload_finds_a_server_whose_pins_a_tmp_cleaner_removed(tmp_path):
    """A tmp cleaner removed the master's pins.json, or its whole runtime folder: the server
    went on serving, but `kelime reload` said no server served the data folder (exit 2,
    "none recorded in .serve" beside its record) until someone sent SIGHUP by hand. Now
    the record is enough: the reload's SIGHUP writes the pins again."""
    from tests.test_serve import runtime_folder

    data = tmp_path / "data"
    build(data)
    with serve(data, tmp_path, 2) as server:
        runtime = runtime_folder(server)
        for n, clean in enumerate((lambda: (runtime / "pins.json").unlink(),
                                   lambda: shutil.rmtree(runtime, ignore_errors=True))):
            clean()
            newest = build(data, f"yeni{n}")
            done = kelime("reload", "--data", str(data))
            assert done.returncode == 0, done.stdout + done.stderr
            assert f"reloaded, serving tr {newest}" in done.stdout
            server.settle(newest)
        assert (runtime / "pins.json").is_file()


def test_reload_of_a_stopped_master_says_it_is_stopped(tmp_path):
    """A master stopped (SIGSTOP, a debugger) takes the SIGHUP only once continued: the
    reload said "its log says why", and its log says nothing. Now it says what to run."""
    data = tmp_path / "data"
    build(data)
    with serve(data, tmp_path, 1) as server:
        pid = server.proc.pid
        os.kill(pid, signal.SIGSTOP)
        try:
            late = kelime("reload", "--data", str(data), "--timeout", "1")
        finally:
            os.kill(pid, signal.SIGCONT)
        assert late.returncode == 1, late.stdout + late.stderr
        assert f"it is stopped (SIGSTOP): `kill -CONT {pid}` and it reloads" in late.stdout
        assert kelime("reload", "--data", str(data)).returncode == 0


@pytest.mark.slow
def test_a_server_started_on_a_damaged_current_build_serves_the_last_good_one(tmp_path):
    data = tmp_path / "data"
    v1 = build(data)
    v2 = build(data, "silgi")
    damage(data)
    with serve(data, tmp_path, 1) as server:
        server.settle(v1)  # it used to exit: "... does not match its manifest"
        log = server.log_text()
        shutil.rmtree(data / ".serve")  # as `rsync --delete` from the build host would
        refused = kelime("reload", "--data", str(data))  # found by its runtime folder
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert "refused: " in refused.stdout and f"still serving tr {v1}" in refused.stdout
        assert (f"`kelime lexicons --data {data} rollback tr && kelime reload --data {data}`"
                in refused.stdout)
        assert kelime("lexicons", "--data", str(data), "rollback", "tr").returncode == 0
        done = kelime("reload", "--data", str(data))
        assert done.returncode == 0 and f"unchanged, serving tr {v1}" in done.stdout
    assert f"the current build of 'tr', {data / 'tr'}, cannot be served" in log
    assert f"serving {v1}" in log and f"rollback tr --to {v1}`" in log
    assert "does not match its manifest" in log and v2 in log


def make_lexicon(data: Path) -> subprocess.CompletedProcess:
    """`make lexicon` on `data`, never reinstalling (the venv is shared: -o its stamp)."""
    return subprocess.run(["make", "-o", ".venv/.installed-serve", "lexicon",
                           f"DATA={data}"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.slow
def test_make_serve_rebuilds_the_offline_lexicons_when_their_lists_or_policy_change(
        tmp_path, offline_lexicons):
    if shutil.which("make") is None:
        pytest.skip("make is not installed (apt-get install make)")
    data = tmp_path / "data"
    shutil.copytree(offline_lexicons, data, symlinks=True)
    first = make_lexicon(data)  # lexicons from before: their inputs' stamps are made
    assert first.returncode == 0, first.stderr
    second = make_lexicon(data)
    assert second.returncode == 0 and "Compiling" not in second.stderr, second.stderr
    policy = ROOT / "kelime" / "policy" / "blocklist.txt"
    stamp = data / ".tr.made"
    old = policy.stat().st_mtime - 60
    os.utime(stamp, (old, old))  # the shipped blocklist changed since tr was built
    third = make_lexicon(data)
    assert third.returncode == 0, third.stderr
    assert "Compiling tr" in third.stderr and "Compiling ku" not in third.stderr
    wait_until(lambda: stamp.stat().st_mtime > policy.stat().st_mtime, "the stamp made again")
    assert "Compiling" not in make_lexicon(data).stderr


@pytest.mark.slow
def test_make_serve_leaves_a_lexicon_that_is_not_an_offline_build(tmp_path, offline_lexicons):
    """A maintainer's lexicon (a crawl's, a word list's) in data/ is theirs: the offline
    build made again over it (its stamp older than the shipped lists) was refused by the
    change guard, and `make serve` stopped there."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed (apt-get install make)")
    data = tmp_path / "data"
    shutil.copytree(offline_lexicons, data, symlinks=True)
    words = tmp_path / "words.txt"
    words.write_text("kitap\nkalem\nsilgi\n", encoding="utf-8")
    built = kelime("build", "--wordlist", str(words), "--name", "tr", "--out", str(data),
                    "--accept-changes")
    assert built.returncode == 0, built.stderr
    assert make_lexicon(data).returncode == 0
    old = (ROOT / "kelime" / "policy" / "blocklist.txt").stat().st_mtime - 60
    os.utime(data / ".tr.made", (old, old))  # the shipped lists changed since
    again = make_lexicon(data)
    assert again.returncode == 0, again.stderr
    assert f"{data}/tr is not an offline build" in again.stdout + again.stderr
    assert json.loads((data / "tr" / "manifest.json").read_text())["counts"]["words"] == 3
