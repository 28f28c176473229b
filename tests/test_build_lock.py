"""Builds into one data folder are serialised by its build lock (kelime.lexicon.write):
simultaneous `kelime build` processes each compare against the build before them, keep
exactly KEEP_BUILDS folders and leave a complete lexicon; a build that meets a held lock
waits for it (saying so), or with a short timeout refuses naming the holder."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kelime.lexicon import BuildError, Candidate, Lexicon, compile_words, write_lexicon
from kelime.lexicon.write import BUILDS_DIR, KEEP_BUILDS, LOCK_FILE

SOURCE = {"kind": "test", "name": "test_build_lock", "licence": "n/a"}
CREATED = "2026-01-01T00:00:00Z"
WORDS_EACH = 5000
PREFIXES = "bcdfgh"  # one per build: the lists share no word

#: `kelime build`, but only once the file named by the first argument exists: every
#: process has imported kelime and compiled nothing yet when the test lets them all go.
RACER = """
import os, sys, time
from kelime.cli import main
go = sys.argv.pop(1)
print("ready", file=sys.stderr, flush=True)
while not os.path.exists(go):
    time.sleep(0.001)
main()
"""

#: Hold the build lock of argv[1] until a line arrives on stdin.
HOLDER = """
import sys
from pathlib import Path
from kelime.lexicon.write import build_lock
with build_lock(Path(sys.argv[1]), 0):
    print("held", flush=True)
    sys.stdin.readline()
"""


def environment() -> dict:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("KELIME_") and k != "SOURCE_DATE_EPOCH"}
    return {**base, "COLUMNS": "120"}


def numbered(n: int, prefix: str) -> list[str]:
    return [prefix + "".join("aeiou"[int(d) % 5] + "klmnr"[int(d) // 5] for d in str(i))
            for i in range(n)]


def hold_lock(out: Path) -> subprocess.Popen:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=environment())
    assert holder.stdout.readline() == "held\n"
    return holder


def build_folders(out: Path) -> list[str]:
    return sorted(p.name for p in (out / BUILDS_DIR).iterdir() if p.name.startswith("tr-"))


@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_simultaneous_builds_are_serialised(tmp_path, n):
    out = tmp_path / "data"
    lists = {}
    for prefix in PREFIXES[:n]:
        # doubled, so that no word is a real one a policy list refuses (`b` + 3 was bok)
        lists[prefix] = numbered(WORDS_EACH, prefix * 2)
        (tmp_path / f"{prefix}.txt").write_text("\n".join(lists[prefix]), encoding="utf-8")
    go = tmp_path / "go"
    racers = [subprocess.Popen([sys.executable, "-c", RACER, str(go), "build",
                                "--wordlist", f"{prefix}.txt", "--name", "tr", "--out", "data",
                                "--json", "--accept-changes"], cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=environment())
              for prefix in lists]
    for racer in racers:
        assert racer.stderr.readline() == "ready\n"
    go.touch()
    done = [(racer, *racer.communicate(timeout=120)) for racer in racers]
    for racer, stdout, stderr in done:
        assert racer.returncode == 0, stderr
    results = [json.loads(stdout) for _, stdout, _ in done]

    # Serialised: each build's previous version is the build just before it, so the
    # previous versions chain all builds from the empty folder to the one the link holds.
    by_previous = {r["changes"]["previous_version"]: r for r in results}
    assert len(by_previous) == n, "two builds compared against the same previous build"
    chain, previous, words_before = [], None, set()
    while previous in by_previous:
        r = by_previous.pop(previous)
        words = set(lists[r["manifest"]["source"]["name"][0]])
        assert r["changes"]["added"] == WORDS_EACH
        assert r["changes"]["removed"] == len(words_before)
        assert set(r["changes"]["removed_sample"]) <= words_before
        assert r["changes"]["version"] == r["manifest"]["version"]
        chain.append(r["manifest"]["version"])
        previous, words_before = r["manifest"]["version"], words
    assert not by_previous and len(set(chain)) == n

    lex = Lexicon.load(out / "tr")
    assert lex.info["version"] == chain[-1] and len(lex) == WORDS_EACH
    assert set(lex.words.keys()) == words_before
    assert build_folders(out) == sorted(f"tr-{v}" for v in chain[-KEEP_BUILDS:])
    assert [p.name for p in (out / BUILDS_DIR).iterdir() if p.name.startswith(".")] == []
    assert sorted(p.name for p in out.iterdir()) == [LOCK_FILE, BUILDS_DIR, ".tr.accepted",
                                                     "tr"]
    assert (out / LOCK_FILE).read_text() == ""  # released: no holder left behind


def test_a_held_lock_refuses_a_short_timeout_naming_the_holder_and_else_waits(tmp_path):
    out = tmp_path / "data"
    compiled = compile_words(Candidate(w) for w in ("kitap", "kalem"))
    holder = hold_lock(out)
    try:
        assert (out / LOCK_FILE).read_text().startswith(f"pid {holder.pid}, started ")
        told = []
        with pytest.raises(BuildError) as err:
            write_lexicon(compiled, out, "tr", SOURCE, created=CREATED, lock_timeout=0.2,
                          waiting=told.append)
        message = str(err.value)
        assert f"another build is writing to {out} (pid {holder.pid}, started " in message
        assert "build again" in message
        assert len(told) == 1 and told[0].startswith(f"pid {holder.pid}")
        assert not (out / "tr").exists() and not (out / BUILDS_DIR).exists()

        # With the default timeout, the real command waits, says so, and builds after.
        (tmp_path / "tr.txt").write_text("kitap\nkalem\n", encoding="utf-8")
        builder = subprocess.Popen(
            [sys.executable, "-c", "from kelime.cli import main; main()", "build",
             "--wordlist", "tr.txt", "--out", "data"], cwd=tmp_path, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env=environment())
        seen = []
        while not (seen and seen[-1].startswith("Waiting for another build")):
            line = builder.stderr.readline()
            assert line, f"the build ended without waiting: {seen}"
            seen.append(line)
        assert f"(pid {holder.pid}, started " in seen[-1]
        assert builder.poll() is None and not (out / "tr").exists()
    finally:
        holder.stdin.write("\n")
        holder.stdin.close()
        assert holder.wait(timeout=30) == 0
    stdout, stderr = builder.communicate(timeout=60)
    assert builder.returncode == 0, stderr
    assert stdout.startswith("Built tr ")
    assert Lexicon.load(out / "tr").check("kalem").valid
    assert (out / LOCK_FILE).read_text() == ""


def test_a_killed_holder_leaves_no_lock_behind(tmp_path):
    """The lock is the kernel's (flock), not the lock file's existence: a build killed
    while holding it (its description still in the file) does not block the next one."""
    out = tmp_path / "data"
    holder = hold_lock(out)
    holder.send_signal(signal.SIGKILL)
    assert holder.wait(timeout=30) == -signal.SIGKILL
    assert (out / LOCK_FILE).read_text().startswith(f"pid {holder.pid}")
    result = write_lexicon(compile_words([Candidate("kitap")]), out, "tr", SOURCE,
                           created=CREATED, lock_timeout=0)
    assert Lexicon.load(result.path).check("kitap").valid
