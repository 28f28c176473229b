"""Every `kelime` command documents itself with an example (like sqlite-utils'
tests/test_docs.py): walks the click group, so commands added later are checked too."""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from kelime.cli import cli
from tests.service_helpers import copy_data


def walk(group: click.Group, path=("kelime",)):
    yield path, group
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from walk(command, (*path, name))
        else:
            yield (*path, name), command


COMMANDS = list(walk(cli))


def test_the_known_commands_are_there():
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"kelime", "kelime build", "kelime check", "kelime serve"} <= names


@pytest.mark.parametrize("path, command", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_help_has_a_summary_and_an_example(path, command):
    text = command.help or ""
    assert text.strip(), f"`{' '.join(path)}` has no help text"
    assert "example" in text.lower(), f"`{' '.join(path)}` --help shows no example"
    result = CliRunner().invoke(cli, [*path[1:], "--help"])
    assert result.exit_code == 0, result.output
    assert "Example" in result.output
    example = text.lower().split("example", 1)[1]
    assert f"{path[0]} " in example or path[-1] in example, \
        f"`{' '.join(path)}`'s example does not show the command being used"


def test_the_check_example_prints_what_check_prints(bootstrap_data):
    """Word for word, the lexicon's version and count too: the offline build is the same on
    every machine (they were masked, and read e775218c47c7 (40,785 words) for 40,663)."""
    text = cli.commands["check"].help.split("Example:", 1)[1]
    command, *shown = [line.strip() for line in text.strip().splitlines()]
    args = command.removeprefix("$ kelime ").split()
    out = CliRunner().invoke(cli, [*args, "--data", str(bootstrap_data)]).output
    assert [line.rstrip() for line in out.strip().splitlines()] == shown


def test_check_reads_words_from_standard_input(tmp_path):
    from kelime.lexicon import Candidate, compile_words, write_lexicon

    write_lexicon(compile_words([Candidate("kitap"), Candidate("kalem")]), tmp_path, "tr",
                  {"kind": "test", "name": "t", "licence": "-"}, created="2026-01-01T00:00:00Z")
    run = CliRunner().invoke(cli, ["check", "--data", str(tmp_path), "--json", "-", "evler"],
                             input="kitap\n\nKALEM\n")
    assert [r["word"] for r in json.loads(run.output)["results"]] == \
        ["kitap", "KALEM", "evler"]
    assert run.exit_code == 1


@pytest.fixture(scope="module")
def offline_data(offline_lexicons, tmp_path_factory):
    """The offline lexicons `make serve` builds (tr and ku), as the examples show them: a
    copy of the session's, as the examples are commands that may change what they serve."""
    return copy_data(offline_lexicons, tmp_path_factory.mktemp("offline") / "data")


@pytest.fixture(scope="module")
def bootstrap_data(offline_data):
    """The offline bootstrap lexicon, which the --help examples are written against (the
    same on every machine)."""
    return offline_data


def shown_examples(command: click.Command):
    """(arguments, printed lines) of each `$ kelime …` example in a command's help."""

    lines = (command.help or "").split("Example", 1)[-1].splitlines()
    example = None
    for line in lines:
        text = line.strip()
        if text.startswith("$ kelime "):
            if example:
                yield example
            example = (shlex.split(text.removeprefix("$ kelime ")), [])
        elif example and text and not text.startswith("\b"):
            example[1].append(line.strip())
        elif example:
            yield example
            example = None
    if example:
        yield example


ANAGRAM_COMMANDS = [(path, c) for path, c in COMMANDS if path[-1] in ("anagram", "split")]


@pytest.mark.parametrize("path, command", ANAGRAM_COMMANDS,
                         ids=[" ".join(p) for p, _ in ANAGRAM_COMMANDS])
def test_the_anagram_examples_print_what_they_show(bootstrap_data, path, command):
    examples = list(shown_examples(command))
    assert examples, f"`{' '.join(path)}` --help shows no `$ kelime` example with its output"
    for args, shown in examples:
        run = CliRunner().invoke(cli, [*args, "--data", str(bootstrap_data)])
        assert run.exit_code == 0, run.output
        printed = [line.strip() for line in run.output.strip().splitlines()]
        assert printed == shown, args


# The manual's examples (docs/*.md and README.md): every fenced block of shell is either run
# here, each `$ command` compared line by line with the output shown under it, or marked
# `<!-- not run: why -->` just above it and listed by test_the_examples_not_run_say_why.
# A block marked `<!-- file: NAME -->` just above it is a file the page's examples read
# (a board for `kelime moves`): written as NAME in the folder they run in.
ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NOT_RUN = re.compile(r"<!-- not run: (.+?) -->")
FILE = re.compile(r"<!-- file: ([\w.-]+) -->")
#: What the examples run: `kelime` questions against the offline lexicons, curl against a
#: plain `kelime serve` of them, and the shell's `echo $?`.
RUNS = re.compile(r"(kelime (check|anagram|split|moves|play) |curl |echo \$\?$"
                  r"|kelime build --bootstrap$|kelime reports --reports reports.sqlite$"
                  r"|kelime build --bootstrap --out /srv/kelime/data$|ls -l /srv/kelime/)")
#: The folder the deployment's examples write, a temporary one when they are run.
SRV = "/srv/kelime"
#: What changes whenever the offline lists or the policy do: lexicon versions, hashes, counts.
#: What depends on when and where an example runs, never on the lexicons (their versions and
#: counts are the offline build's, the same on every machine): when a report was sent, and in
#: `ls -l` a file's owner, group and time, and the blocks the file system gives a folder.
MASKS = [(re.compile(r"\b\d{4}-\d\d-\d\d \d\d:\d\d\b"), "DATE"),
         (re.compile(r"^([-dl][-rwxst]{9}\s+\d+) \S+\s+\S+\s+(\d+) [A-Z][a-z]{2} [ \d]\d "
                     r"\d\d:\d\d "), r"\1 OWNER GROUP \2 DATE "),
         (re.compile(r"^total \d+$"), "total BLOCKS")]


@dataclass
class Block:
    page: Path
    line: int
    lang: str
    lines: list[str]
    not_run: str | None
    file: str | None = None

    def __str__(self):
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def steps(self) -> list[tuple[str, list[str]]]:
        """(command, the lines shown under it) for each `$ command` of the block."""
        steps = []
        for line in self.lines:
            if line.startswith("$ "):
                steps.append((line[2:].split("  #")[0].strip(), []))
            elif steps:
                steps[-1][1].append(line)
        return steps

    @property
    def is_shell(self) -> bool:
        return self.lang == "sh" or any(line.startswith("$ ") for line in self.lines)


def blocks(page: Path) -> list[Block]:
    found, block, before = [], None, ""
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if block is None and line.startswith("```"):
            marked, named = NOT_RUN.search(before), FILE.search(before)
            block = Block(page, number, line[3:].strip(), [], marked and marked.group(1),
                          named and named.group(1))
        elif block is not None and line.startswith("```"):
            found.append(block)
            block = None
        elif block is not None:
            block.lines.append(line)
        elif line.strip():
            before = line
    return found


BLOCKS = [b for page in PAGES for b in blocks(page) if b.is_shell]
RUN = [b for b in BLOCKS if not b.not_run]


def masked(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        for pattern, mask in MASKS:
            line = pattern.sub(mask, line)
        out.append(line.rstrip())
    while out and not out[-1]:
        out.pop()
    return out


def test_every_shell_example_is_run_or_says_why_not():
    unrunnable = [f"{b}: {command}" for b in RUN for command, _ in b.steps
                  if not RUNS.match(command)]
    bare = [str(b) for b in RUN if not b.steps]
    assert not unrunnable + bare, (
        "examples the tests cannot run (mark the block `<!-- not run: why -->`, or make "
        f"them runnable): {unrunnable + bare}")
    assert len(RUN) >= 5 and sum(len(b.steps) for b in RUN) >= 15


def test_the_examples_not_run_say_why():
    """Listed here (pytest -rP shows them), so that nothing is skipped silently."""
    skipped = [b for b in BLOCKS if b.not_run]
    for b in skipped:
        print(f"not run: {b} ({len(b.steps)} command(s)): {b.not_run}")
    assert all(len(b.not_run) > 10 and "--" not in b.not_run for b in skipped)
    print(f"{len(RUN)} example blocks run ({sum(len(b.steps) for b in RUN)} commands), "
          f"{len(skipped)} not run")


@pytest.fixture
def served(offline_data, tmp_path):
    """`kelime serve` of the offline lexicons as `make serve` runs it (player reports in
    reports.sqlite), fresh for each block: a block is a session against `make serve` (its
    /metrics counts only that block's requests, `kelime reports` reads its store)."""
    from tests.servers import kelime_serve

    with kelime_serve("--data", str(offline_data),
                      "--reports", str(tmp_path / "reports.sqlite")) as url:
        yield url


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("curl"), reason="the examples use curl: apt-get install curl")
@pytest.mark.parametrize("block", RUN, ids=[str(b) for b in RUN])
def test_the_example_prints_what_it_shows(block, offline_data, request, tmp_path):
    env = {**os.environ, "KELIME_DATA": str(offline_data), "PYTHONUNBUFFERED": "1",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    status = 0
    asks = any(command.startswith("curl ") for command, _ in block.steps)
    served = request.getfixturevalue("served") if asks else ""
    for shown_file in blocks(block.page):
        if shown_file.file:
            (tmp_path / shown_file.file).write_text("\n".join(shown_file.lines) + "\n",
                                                    encoding="utf-8")
    for command, shown in block.steps:
        if command == "echo $?":
            printed = [str(status)]
        else:
            script = command.replace("localhost:8000", served.removeprefix("http://")
                                     ).replace(SRV, f"{tmp_path}{SRV}")
            builds = command.startswith("kelime build")  # into tmp_path/data, as it says
            run = subprocess.run(["bash", "-c", script], cwd=tmp_path, timeout=300,
                                 env={k: v for k, v in env.items()
                                      if not (builds and k == "KELIME_DATA")},
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            status = run.returncode
            printed = run.stdout.replace(f"{tmp_path}{SRV}", SRV).splitlines()
        assert masked(printed) == masked(shown), f"{block}: $ {command}"


@pytest.mark.slow
def test_the_schemathesis_command_passes_as_written(served):
    """docs/api.md's schemathesis command, run as written from the checkout (its
    schemathesis.toml) against `kelime serve` as `make serve` runs it: it failed, a report
    of a Turkish word for `kelimatik-ku` being schema-valid and refused 422 (`not_a_word`)."""
    [block] = [b for b in blocks(ROOT / "docs" / "api.md")
               if any("schemathesis run" in line for line in b.lines)]
    [command] = [line for line in block.lines if line.strip()]
    assert command.startswith(".venv/bin/schemathesis run http://127.0.0.1:8000/"), command
    args = shlex.split(command.replace("http://127.0.0.1:8000", served))[1:]
    cli = Path(sys.executable).parent / "schemathesis"
    if not cli.exists():
        pytest.skip("schemathesis is not installed (pip install -e '.[dev]')")
    run = subprocess.run([str(cli), *args], cwd=ROOT, capture_output=True, text=True,
                         timeout=600, env={**os.environ, "NO_COLOR": "1"})
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert "No issues found" in run.stdout, run.stdout[-6000:]


def test_the_settings_table_is_made_from_the_settings_fields():
    """docs/settings.md's table is what the fields of Settings say (variable, default,
    bounds, description): a setting added, renamed or re-bounded without the table fails."""
    from kelime.service.settings import ENV, markdown_table

    text = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    assert markdown_table() in text, (
        "docs/settings.md's table differs from service/settings.py: paste the output of "
        "`python -m kelime.service.settings` over it")
    rows = set(re.findall(r"^\| `(KELIME_[A-Z_]+)` \|", text, re.MULTILINE))
    assert rows == set(ENV) and len(ENV) >= 34


def test_the_shell_completion_the_docs_show_completes():
    kelime = Path(sys.executable).parent / "kelime"
    if not kelime.exists():
        pytest.skip("kelime is not installed as a command in this venv")
    assert "_KELIME_COMPLETE=bash_source kelime" in (ROOT / "docs" / "cli.md").read_text()
    script = subprocess.run([kelime], env={**os.environ, "_KELIME_COMPLETE": "bash_source"},
                            capture_output=True, text=True, timeout=60)
    assert "complete -o nosort -F _kelime_completion kelime" in script.stdout
    for words, cword, expected in (("kelime an", "1", "plain,anagram"),
                                   ("kelime anagram --ga", "2", "plain,--game")):
        done = subprocess.run([kelime], capture_output=True, text=True, timeout=60, env={
            **os.environ, "_KELIME_COMPLETE": "bash_complete", "COMP_WORDS": words,
            "COMP_CWORD": cword})
        assert done.stdout.split() == [expected]


def test_the_usage_build_dict_py_prints_works_when_followed(tmp_path):
    """`python build_dict.py --help` printed `Usage: build_dict.py build [OPTIONS]`, and
    `python build_dict.py build …` then failed (`build` was taken as an argument)."""
    script = ROOT / "build_dict.py"
    shown = subprocess.run([sys.executable, script, "--help"], capture_output=True,
                           text=True, timeout=120).stdout.splitlines()[0]
    assert shown == "Usage: python build_dict.py build [OPTIONS]"
    (tmp_path / "w.txt").write_text("kitap\nkalem\n", encoding="utf-8")
    followed = shown.removeprefix("Usage: python build_dict.py").replace(
        "[OPTIONS]", "--wordlist w.txt --out d").split()
    run = subprocess.run([sys.executable, script, *followed], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "d" / "w" / "manifest.json").exists()


def test_the_readme_links_lead_somewhere():
    """README.md is read on a git host too, where mkdocs' link checks do not run."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#]+)(?:#([^)]+))?\)", text)
    assert len(links) >= 10
    for target, anchor in links:
        path = ROOT / target
        assert path.exists(), f"README links to {target}, which does not exist"
        if anchor:
            headings = re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), re.MULTILINE)
            slugs = {re.sub(r"\s+", "-", re.sub(r"[^\w\s-]", "", h.lower()).strip())
                     for h in headings}
            assert anchor in slugs, f"README links to {target}#{anchor}, which has no such heading"


def manifest(data: Path, name: str) -> dict:
    return json.loads((data / name / "manifest.json").read_text(encoding="utf-8"))


def figure(page: str, pattern: str) -> str:
    """The one match of `pattern`'s group in docs/`page` (its lines joined, as read)."""
    text = " ".join((ROOT / "docs" / page).read_text(encoding="utf-8").split())
    found = re.findall(pattern, text)
    assert len(found) == 1, f"docs/{page}: {len(found)} matches of {pattern!r}"
    return found[0]


@pytest.mark.slow
def test_the_offline_figures_the_prose_gives_are_the_builds(offline_data, tmp_path):
    """The offline build is the same on every machine, so the manual's versions and counts
    of it are exact: they were masked in the examples and stale in the prose (`ku` 18,312
    words for 18,301, a permissive `tr` of 29,720 for 29,668)."""
    from kelime.sources.offline import klpt

    tr, ku = manifest(offline_data, "tr"), manifest(offline_data, "ku")
    assert figure("lexicons.md", r"\(version `([0-9a-f]{12})` with the package") == \
        tr["version"]
    assert figure("lexicons.md", r"\b([\d,]+) lower-case words in Hawar's") == \
        f"{ku['counts']['words']:,}"
    assert figure("lexicons.md", r"KLPT's ([\d,]+) common words") == f"{len(klpt().common):,}"
    unset = {k: None for k in os.environ if k.startswith("KELIME_") or k == "SOURCE_DATE_EPOCH"}
    run = CliRunner(env=unset).invoke(cli, ["build", "--bootstrap", "--permissive",
                                            "--out", str(tmp_path)])
    assert run.exit_code == 0, run.output
    assert figure("lexicons.md", r"Zemberek's MIT list alone \(([\d,]+) words") == \
        f"{manifest(tmp_path, 'tr')['counts']['words']:,}"


def test_the_details_the_error_table_names_are_sent(data_dir):
    """docs/api.md's table (service/errors.py's CODES) names `details.known` for an unknown
    lexicon and game: the lexicon's came as `details.loaded`, so a client read nothing."""
    from kelime.service.app import create_app
    from kelime.service.errors import CODES
    from kelime.service.settings import Settings
    from tests.service_helpers import TestClient

    named = {code: re.findall(r"`details\.(\w+)`", c.meaning) for code, c in CODES.items()}
    with TestClient(create_app(Settings(data=data_dir))) as api:
        sent = {reply.json()["error"]["code"]: reply.json()["error"]["details"] for reply in (
            api.post("/v1/validate", json={"words": ["ev"], "lexicon": "de"}),
            api.post("/v1/validate", json={"words": ["ev"], "game": "zz"}))}
    assert set(sent) == {"unknown_lexicon", "unknown_game"}
    for code, details in sent.items():
        assert sorted(details) == sorted(named[code]), code


def shown_step(page: str, command: str) -> list[str]:
    """The lines a page's example shows under `$ command` (its one such step)."""
    found = [shown for b in blocks(ROOT / "docs" / page) for c, shown in b.steps if c == command]
    assert len(found) == 1, f"docs/{page}: {len(found)} examples of `$ {command}`"
    return found[0]


def kelime_run(*args: str, cwd: Path, status: int = 0) -> list[str]:
    """`kelime ARGS` in `cwd` (stdout and stderr, as a terminal shows them), without the
    caller's KELIME_* or SOURCE_DATE_EPOCH."""
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("KELIME_") or k == "SOURCE_DATE_EPOCH")}
    run = subprocess.run([str(Path(sys.executable).parent / "kelime"), *args], cwd=cwd, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         timeout=300)
    assert run.returncode == status, run.stdout
    return run.stdout.splitlines()


RELOAD = ('curl -s -X POST -H "Authorization: Bearer $KELIME_ADMIN_TOKEN" '
          'localhost:8000/v1/admin/reload')


@pytest.mark.slow
def test_the_not_run_builds_print_what_they_show(offline_data, tmp_path):
    """The builds of the examples that need a running server (deployment.md's reload,
    reports.md's build after an accepted report), rebuilt from the offline lexicon as they
    say: their versions and counts were stale (ee3228189dbc with 40,786 words for
    876914031fc8 with 40,665; f4ee0ef08499 with 40,782 for a0b7dc5253b7 with 40,661)."""
    copy_data(offline_data, tmp_path / "data")
    tr = manifest(offline_data, "tr")
    import marisa_trie

    trie = marisa_trie.Trie()
    trie.load(str(offline_data / "tr" / "words.marisa"))
    words = sorted(trie.keys())
    assert len(words) == tr["counts"]["words"]
    (tmp_path / "more.txt").write_text("\n".join([*words, "harfbank", "kelimatik", ""]),
                                       encoding="utf-8")
    command = "kelime build --wordlist more.txt --name tr --force"
    assert kelime_run(*command.split()[1:], cwd=tmp_path) == \
        shown_step("deployment.md", command)
    (tmp_path / "most.txt").write_text("\n".join([*words, "harfbank", "kelimatik", "kelimelik",
                                                  ""]), encoding="utf-8")
    built = kelime_run("build", "--wordlist", "most.txt", "--name", "tr", "--force", cwd=tmp_path)
    [most] = [line.split()[2] for line in built if line.startswith("Built tr ")]
    [refused] = shown_step("deployment.md", RELOAD)
    assert f"/tr-{most}/words.marisa does not match" in refused, most

    # reports.md: the accept's line in the blocklist (a copy of the policy), then the build
    diff = shown_step("reports.md", "git diff kelime/policy/")
    [added] = [line[1:] for line in diff if line.startswith("+") and not line.startswith("++")]
    before = diff[diff.index(f"+{added}") - 1].strip()
    policy = shutil.copytree(ROOT / "kelime" / "policy", tmp_path / "policy")
    blocklist = (policy / "blocklist.txt").read_text(encoding="utf-8")
    assert f"\n{before}\n" in blocklist
    (policy / "blocklist.txt").write_text(blocklist.replace(f"\n{before}\n",
                                                            f"\n{before}\n{added}\n", 1),
                                          encoding="utf-8")
    copy_data(offline_data, tmp_path / "again")
    printed = kelime_run("build", "--bootstrap", "--out", "again", "--policy",
                         str(policy / "policy.toml"), cwd=tmp_path)
    shown = shown_step("reports.md", "kelime build --bootstrap")
    assert printed == [line.replace("data/tr", "again/tr").replace(
        "kelime's default;", f"{policy / 'policy.toml'};") for line in shown]
    [reply] = shown_step("reports.md",
                         "curl -s 'localhost:8000/v1/validate?word=ya%C4%9F%C4%B1%C5%9F"
                         "&word=dangalak'")
    checked = kelime_run("check", "--data", "again", "--json", "yağış", "dangalak",
                         cwd=tmp_path, status=1)  # dangalak is not valid
    assert json.loads("\n".join(checked)) == json.loads(reply)


#: Versions the manual shows of builds whose version depends on a date, not on the offline
#: lists: a build from a crawl cache is stamped with the crawl's newest fetch.
DATED = {"34c0fcd0c8c9": "crawling.md: a build of a crawl of the fake TDK",
         "86a4eceeaa50": "lexicons.md: the accepted build of a 206-word crawl of the fake TDK"}


def test_every_version_the_manual_shows_is_checked(offline_data):
    """A lexicon version in the manual or a --help text is one the tests compare (the
    offline builds', one an example run prints, one test_the_not_run_builds_print_what_they_show
    rebuilds) or one listed in DATED: a version nothing checks goes stale unseen."""
    texts = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in PAGES}
    texts |= {" ".join(path): command.help or "" for path, command in COMMANDS}
    checked = {manifest(offline_data, n)["version"] for n in ("tr", "ku")} | set(DATED)
    checked |= {v for b in RUN for line in b.lines for v in re.findall(r"\b[0-9a-f]{12}\b", line)}
    rebuilt = [*shown_step("deployment.md", "kelime build --wordlist more.txt --name tr --force"),
               *shown_step("reports.md", "kelime build --bootstrap")]
    checked |= {v for line in rebuilt for v in re.findall(r"Built \w+ ([0-9a-f]{12})", line)}
    checked |= set(re.findall(r"/tr-([0-9a-f]{12})/", shown_step("deployment.md", RELOAD)[0]))
    unchecked = {f"{where}: {v}" for where, text in texts.items()
                 for v in re.findall(r"(?<![0-9a-f])[0-9a-f]{12}(?![0-9a-f])", text)
                 if v not in checked}
    assert not unchecked, (
        f"lexicon versions no test checks: {sorted(unchecked)}; show the offline build's, "
        "make the example run, or list a dated one in DATED")
