"""`kelime crawl import`: a JSON-lines dump of TDK entries (the 12th-edition mongoexport
shape: TDK's fields plus Mongo's `_id`) into the cache, then a build and a check, offline."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kelime.lexicon import Lexicon
from kelime.tdk import store as cache

from .fake_tdk import builtin_entries

KELIME = [sys.executable, "-c", "from kelime.cli import main; main()"]
SAMPLE_DIR = Path(__file__).resolve().parents[2] / "shared" / "tdk-samples"
SAMPLE = SAMPLE_DIR / "dump-v12-dulavrat-otu-to-duldalamak.jsonl"


def kelime(*args, cwd=None):
    return subprocess.run([*KELIME, *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd)


def write_dump(path: Path, entries: list[dict], extra: list[str] = ()) -> Path:
    lines = [json.dumps({"_id": i, **e}, ensure_ascii=False) for i, e in enumerate(entries, 1)]
    path.write_text("\n".join([*lines, *extra]) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_dump_imports_builds_and_checks(tmp_path):
    entries = builtin_entries()
    dump = write_dump(tmp_path / "tdk.jsonl", entries, extra=[
        "not json", '{"madde_id": "x1", "madde": "kötü"}', '{"madde_id": "9"}', "",
        '{"madde_id": "12345678901234567890123", "madde": "uzun"}'])
    db_path = tmp_path / "tdk.sqlite"
    done = kelime("crawl", "import", str(dump), "--cache", str(db_path),
                  "--dump-date", "2024-03-01")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Imported {len(entries)} entries" in done.stdout + done.stderr
    assert "4 line(s) skipped" in done.stdout + done.stderr
    import hashlib

    assert hashlib.sha256(dump.read_bytes()).hexdigest()[:16] in done.stdout + done.stderr
    db = cache.open_readonly(db_path)
    rows = list(db["replies"].rows)
    stored = {json.loads(raw)["madde_id"]: json.loads(raw) for (raw,) in
              db.execute("SELECT raw FROM entries")}
    db.close()
    assert all(r["url"] == "dump:tdk.jsonl" and r["fetched_at"].startswith("2024-03-01")
               and r["outcome"] == "ok" for r in rows)
    assert stored == {e["madde_id"]: e for e in entries}  # exactly as TDK sent, no `_id`
    built = kelime("build", "--cache", str(db_path), "--out", str(tmp_path / "data"))
    assert built.returncode == 0, built.stderr
    lex = Lexicon.load(tmp_path / "data" / "tr")
    assert lex.check("kitap").valid and not lex.check("İstanbul").valid
    again = kelime("crawl", "import", str(dump), "--cache", str(db_path))
    assert again.returncode == 0  # importing twice changes nothing but the dates
    db = cache.open_readonly(db_path)
    assert db.execute("SELECT count(*) FROM entries").fetchone()[0] == len(entries)


def test_the_shared_v12_sample_imports(tmp_path):
    if not SAMPLE.exists():
        pytest.skip(f"{SAMPLE} is absent (the shared TDK samples live beside the repository)")
    db_path = tmp_path / "tdk.sqlite"
    done = kelime("crawl", "import", str(SAMPLE), "--cache", str(db_path))
    assert done.returncode == 0 and "0 line(s) skipped" in done.stdout + done.stderr
    result = kelime("define", "dulda", "--cache", str(db_path), "--base-url",
                    "http://127.0.0.1:9")  # no network: the cache answers
    assert result.returncode == 0 and "kuytu yer" in result.stdout


def test_a_missing_dump_is_an_error_line(tmp_path):
    done = kelime("crawl", "import", str(tmp_path / "nope.jsonl"), "--cache",
                  str(tmp_path / "c.sqlite"))
    assert done.returncode != 0 and "Traceback" not in done.stderr


@pytest.mark.slow
def test_a_build_from_an_unfinished_crawl_refuses_without_force(tmp_path):
    """20 done and 380 pending words built a 20-word lexicon without a word of warning."""
    entries = builtin_entries()
    dump = write_dump(tmp_path / "tdk.jsonl", entries)
    db_path = tmp_path / "tdk.sqlite"
    assert kelime("crawl", "import", str(dump), "--cache", str(db_path)).returncode == 0
    db = cache.open_cache(db_path)
    cache.save_words(db, [f"pending{i}" for i in range(40 * len(entries))], "sitemap")
    db.close()
    refused = kelime("build", "--cache", str(db_path), "--out", str(tmp_path / "data"))
    assert refused.returncode == 1 and "incomplete" in refused.stderr, refused.stderr
    assert "--force" in refused.stderr and not (tmp_path / "data" / "tr").exists()
    forced = kelime("build", "--cache", str(db_path), "--out", str(tmp_path / "data"),
                    "--force")
    assert forced.returncode == 0, forced.stderr
    coverage = Lexicon.load(tmp_path / "data" / "tr").manifest.source["coverage"]
    assert coverage["pending"] == 40 * len(entries) and coverage["enumerated"] > coverage["pending"]


@pytest.mark.parametrize("old, new", [
    ([], ["run"]),
    (["--words", "w.txt", "--max-age", "0"], ["run", "--words", "w.txt", "--max-age", "0"]),
    (["--cache", "c", "--status"], ["status", "--cache", "c"]),
    (["--cache", "c", "--import", "d.jsonl", "--dump-date", "2024"],
     ["import", "d.jsonl", "--cache", "c", "--dump-date", "2024"]),
    (["--import=d.jsonl"], ["import", "d.jsonl"]),
    (["--refresh", "--sample", "3", "--force"], ["refresh", "--sample", "3", "--force"]),
    (["--refresh", "--status"], ["status", "--refresh"]),  # --status won then too
])
def test_old_crawl_arguments_become_a_verb(old, new):
    from kelime.cli.crawl import new_spelling

    assert new_spelling(old) == new


def test_old_crawl_spellings_run_with_the_options_they_ignored(tmp_path):
    """`--status` and `--import` read only the cache (and the dump's date) and ignored the
    crawl's options; the new spelling drops them rather than refuse them. A bare word was
    never an old spelling: a mistyped verb is no command, not a crawl."""
    dump = write_dump(tmp_path / "tdk.jsonl", builtin_entries())
    db = str(tmp_path / "tdk.sqlite")
    done = kelime("crawl", "--delay", "2", "--import", str(dump), "--cache", db,
                  "--concurrency=1", "--sample", "3", "--dump-date", "2024-03-01")
    assert done.returncode == 0, done.stderr
    assert (f"`kelime crawl import {dump} --cache {db} --dump-date 2024-03-01`"
            in done.stderr)
    for old in (["--refresh", "--status"], ["--status", "--delay", "0", "--force"]):
        status = kelime("crawl", *old, "--cache", db)
        assert status.returncode == 0, status.stderr
        assert f"`kelime crawl status --cache {db}`" in status.stderr
        assert status.stdout == kelime("crawl", "status", "--cache", db).stdout
    typo = kelime("crawl", "stat", "--cache", db)
    assert typo.returncode == 2 and "No such command 'stat'" in typo.stderr, typo.stderr
    assert "Note" not in typo.stderr


def test_the_old_crawl_spellings_still_work_and_name_the_new_ones(tmp_path):
    """`kelime crawl --import FILE`, `--status` and plain `kelime crawl` (one command with
    mode flags, before the verbs) sit in crontabs: each still does what it did, with one
    line on stderr naming its new spelling, and stdout unchanged."""
    dump = write_dump(tmp_path / "tdk.jsonl", builtin_entries())
    db_path = tmp_path / "tdk.sqlite"
    for old in (["--import", str(dump)], [f"--import={dump}"]):
        done = kelime("crawl", *old, "--cache", str(db_path), "--dump-date", "2024-03-01")
        assert done.returncode == 0, done.stderr
        assert (f"Note: this is now `kelime crawl import {dump} --cache {db_path} "
                "--dump-date 2024-03-01` (the old spelling still works for now)") in done.stderr
    status = kelime("crawl", "--cache", str(db_path), "--status")
    new = kelime("crawl", "status", "--cache", str(db_path))
    assert status.returncode == new.returncode == 0 and status.stdout == new.stdout
    assert "`kelime crawl status --cache" in status.stderr and "Note" not in new.stderr
    counts = json.loads(kelime("crawl", "status", "--cache", str(db_path), "--json").stdout)
    assert counts["entries"] == len(builtin_entries()) and counts["cache"] == str(db_path)
    # plain `kelime crawl …` is `run`: its own checks answer, before any request
    plain = kelime("crawl", "--base-url", "ftp://example.org", "--cache", str(db_path))
    assert plain.returncode == 2 and "must start with https://" in plain.stderr
    assert "`kelime crawl run --base-url ftp://example.org" in plain.stderr
    # an option the new verb does not take is refused, naming the verb's --help
    mixed = kelime("crawl", "--refresh", "--words", "w.txt", "--cache", str(db_path))
    assert mixed.returncode == 2 and "crawl refresh --help" in mixed.stderr
    assert "No such option" in mixed.stderr and "'--words'" in mixed.stderr
    helped = kelime("crawl", "--help")
    assert helped.returncode == 0 and "Note" not in helped.stderr
    assert [line.split()[0] for line in helped.stdout.split("Commands:")[1].splitlines()
            if line.strip()] == ["run", "refresh", "status", "import"]
