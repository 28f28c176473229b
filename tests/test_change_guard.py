"""The change guard (`kelime.lexicon.guard`) on every path, through the real `kelime crawl`
and `kelime build` against the fake TDK: a build is compared with the last build the
maintainer accepted, past 1% either way it refuses saying what changed and by what cause,
and a crawl whose reading of the site is known short or mostly disallowed is not complete."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kelime.lexicon import Lexicon
from kelime.policy import default_policy_path

from .fake_tdk import FakeProcess, synthetic_entries, synthetic_words
from .test_crawl import FAST, crawl
from .test_crawl_coverage import coverage, kelime
from .test_dump import write_dump

SYNTHETIC = "200"


def _crawl(path: Path, *fake_args: str, verb: str = "run", args=()) -> str:
    with FakeProcess("--synthetic", SYNTHETIC, *fake_args) as fake:
        done = crawl(verb, "--base-url", fake.url, "--cache", str(path), "--delay", "0",
                     *FAST, *args)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    return output


def _build(path: Path, data: Path, *args: str):
    return kelime("build", "--cache", str(path), "--out", str(data), *args)


def _words(data: Path) -> int:
    return len(Lexicon.load(data / "tr").words)


def _first(tmp_path: Path) -> tuple[Path, Path, int]:
    """A whole crawl of the fake and its first build (accepted: no reference yet)."""
    path, data = tmp_path / "tdk.sqlite", tmp_path / "data"
    _crawl(path)
    first = _build(path, data)
    assert first.returncode == 0, first.stderr
    words = _words(data)
    assert 200 <= words < 300  # so that 1% is 2 words: 2 pass, 3 refuse
    return path, data, words


@pytest.mark.slow
def test_good_to_not_found_flips_are_refused_at_the_cumulative_bound(tmp_path):
    """A site answering not found took the build 199 → 189 → 179 → 169 words over three
    refreshes, each exit 0, each inside the 90% shrink guard."""
    path, data, words = _first(tmp_path)
    first_version = Lexicon.load(data / "tr").manifest.version
    flipped = synthetic_words(3)
    for n in (1, 2):
        faults = [a for w in flipped[:n] for a in ("--fault", f"{w}=not_found:-1")]
        _crawl(path, *faults, verb="refresh", args=("--sample", "1000"))
        built = _build(path, data)
        assert built.returncode == 0, built.stderr
        assert _words(data) == words - n
    faults = [a for w in flipped for a in ("--fault", f"{w}=not_found:-1")]
    _crawl(path, *faults, verb="refresh", args=("--sample", "1000"))
    refused = _build(path, data)
    assert refused.returncode == 1, refused.stderr
    assert f"({words:,} words) this build adds 0 and removes 3 words" in refused.stderr
    assert f"removed 3 (not_found): {', '.join(sorted(flipped))}" in refused.stderr
    assert "--accept-changes" in refused.stderr and "Traceback" not in refused.stderr
    assert _words(data) == words - 2
    accepted = _build(path, data, "--accept-changes")
    assert accepted.returncode == 0, accepted.stderr
    manifest = Lexicon.load(data / "tr").manifest
    assert manifest.accepted["by"] == "--accept-changes"
    assert manifest.accepted["reference"] == first_version
    assert manifest.accepted["removed"] == {"total": 3, "by_cause": {"not_found": 3}}
    assert _words(data) == words - 3


@pytest.mark.slow
def test_retirement_creeping_over_refreshes_is_refused_cumulatively(tmp_path):
    """Each refresh may retire under 1% of the list: 4% went over 8 refreshes unbounded."""
    path, data, words = _first(tmp_path)
    _crawl(path, "--without", "2", verb="refresh")  # 2 words: under 1% of the list
    small = _build(path, data)
    assert small.returncode == 0, small.stderr  # a change under the bound builds
    assert _words(data) == words - 2
    _crawl(path, "--without", "4", verb="refresh")  # 2 more: 4 since the accepted build
    refused = _build(path, data)
    assert refused.returncode == 1, refused.stderr
    assert "removes 4 words" in refused.stderr and "removed 4 (retired)" in refused.stderr
    assert _words(data) == words - 2
    assert Lexicon.load(data / "tr").manifest.accepted is None  # built under the bound


@pytest.mark.slow
def test_a_first_crawl_with_an_empty_sitemap_is_not_complete(tmp_path):
    """One sitemap answering an empty <urlset>: 99 of 200 words built, exit 0, complete."""
    path, data = tmp_path / "tdk.sqlite", tmp_path / "data"
    _crawl(path, "--fault", "/sitemap-2.xml=no_words")
    refused = _build(path, data)
    assert refused.returncode == 1, refused.stderr
    assert "the crawl's reading of the site's list was short: 1 sitemap(s) listed no word (" \
           in refused.stderr and "/sitemap-2.xml) while the others listed " in refused.stderr
    assert "--force" in refused.stderr and not (data / "tr").exists()
    forced = _build(path, data, "--force")
    assert forced.returncode == 0, forced.stderr
    told = coverage(data)
    assert told["complete"] is False and "sitemap-2.xml" in told["short"]
    _crawl(path)  # a whole reading clears it
    whole = _build(path, tmp_path / "data2")
    assert whole.returncode == 0, whole.stderr
    assert coverage(tmp_path / "data2")["complete"] is True


@pytest.mark.slow
def test_a_crawl_mostly_disallowed_by_robots_is_not_complete(tmp_path):
    """126 of 200 words disallowed: a 73-word build, manifest complete."""
    path, data = tmp_path / "tdk.sqlite", tmp_path / "data"
    _crawl(path, *[a for p in ("baca", "bada", "bafe", "bage", "baha")
                   for a in ("--disallow", f"/gts?ara={p}")])
    refused = _build(path, data)
    assert refused.returncode == 1, refused.stderr
    assert "robots.txt disallows 130 of the cache's" in refused.stderr  # 129 + gizli
    assert "--force" in refused.stderr and not (data / "tr").exists()
    forced = _build(path, data, "--force")
    assert forced.returncode == 0, forced.stderr
    assert coverage(data)["complete"] is False


def test_a_policy_edit_that_grows_the_lexicon_is_refused(tmp_path):
    """Unblocking words is a change like any other: 5 of 100 words came back unseen."""
    shipped = default_policy_path().parent
    for name in ("policy.toml", "allowlist.txt", "blocklist.txt", "tdk-vulgar.txt"):
        shutil.copy(shipped / name, tmp_path / name)
    words = synthetic_words(100)
    (tmp_path / "tr.txt").write_text("\n".join(words), encoding="utf-8")
    blocklist = tmp_path / "blocklist.txt"
    shipped_lines = blocklist.read_text(encoding="utf-8")
    blocklist.write_text(shipped_lines + "\n".join(words[:5]) + "\n", encoding="utf-8")
    args = ["build", "--wordlist", str(tmp_path / "tr.txt"), "--name", "tr", "--out",
            str(tmp_path / "data"), "--policy", str(tmp_path / "policy.toml")]
    assert kelime(*args).returncode == 0
    assert _words(tmp_path / "data") == 95
    blocklist.write_text(shipped_lines, encoding="utf-8")  # the edit
    refused = kelime(*args)
    assert refused.returncode == 1, refused.stderr
    assert "adds 5 and removes 0 words" in refused.stderr
    assert "added 5 (allowed now, was obscene)" in refused.stderr
    assert _words(tmp_path / "data") == 95
    accepted = kelime(*args, "--accept-changes")
    assert accepted.returncode == 0, accepted.stderr
    assert Lexicon.load(tmp_path / "data" / "tr").manifest.accepted["added"] == {
        "total": 5, "by_cause": {"allowed now, was obscene": 5}}


def test_a_cut_off_dump_is_refused_over_the_accepted_build(tmp_path):
    """A dump cut at a line's end, imported into a cache of its own, cannot be told from a
    whole one (a dump declares no count; that cache held no import before). Over the build
    accepted from the whole dump, its 5% fewer words passed the 90% shrink guard: the
    change guard refuses it whatever the cache says."""
    entries = synthetic_entries(300)
    whole = write_dump(tmp_path / "whole.jsonl", entries)
    lines = whole.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:len(lines) * 95 // 100]), encoding="utf-8")
    data = tmp_path / "data"
    for dump, cache in ((whole, "whole.sqlite"), (cut, "cut.sqlite")):
        imported = kelime("crawl", "import", str(dump), "--cache", str(tmp_path / cache))
        assert imported.returncode == 0, imported.stderr
    assert _build(tmp_path / "whole.sqlite", data).returncode == 0
    words = _words(data)
    refused = _build(tmp_path / "cut.sqlite", data)
    assert refused.returncode == 1, refused.stderr
    assert "removed" in refused.stderr and "(source)" in refused.stderr
    assert _words(data) == words
