"""Every `kelime` command documents itself with an example (like sqlite-utils'
tests/test_docs.py): walks the click group, so commands added later are checked too."""

import json

import click
import pytest
from click.testing import CliRunner

from kelime.cli import cli


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


def test_the_check_example_prints_what_check_prints(tmp_path):
    import re

    from kelime.lexicon import Candidate, compile_words, write_lexicon

    words = [Candidate("kitap"), Candidate("İstanbul", "proper_name")]
    write_lexicon(compile_words(words), tmp_path, "tr", {"kind": "test", "name": "t",
                                                         "licence": "-"},
                  created="2026-01-01T00:00:00Z")
    text = cli.commands["check"].help.split("Example:", 1)[1]
    command, *shown = [line.strip() for line in text.strip().splitlines()]
    args = command.removeprefix("$ kelime ").split()
    out = CliRunner().invoke(cli, [*args, "--data", str(tmp_path)]).output
    printed = [line.rstrip() for line in out.strip().splitlines()]
    version = re.compile(r"[0-9a-f]{12} \([\d,]+ words\)")
    assert [version.sub("V", line) for line in printed] == [version.sub("V", s) for s in shown]


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
def bootstrap_data(tmp_path_factory):
    """The offline bootstrap lexicon, which the --help examples are written against (the
    same on every machine)."""
    out = tmp_path_factory.mktemp("data")
    run = CliRunner().invoke(cli, ["build", "--bootstrap", "--out", str(out)])
    assert run.exit_code == 0, run.output
    return out


def shown_examples(command: click.Command):
    """(arguments, printed lines) of each `$ kelime …` example in a command's help."""
    import shlex

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
    import re

    version = re.compile(r"[0-9a-f]{12} \([\d,]+ words\)")
    examples = list(shown_examples(command))
    assert examples, f"`{' '.join(path)}` --help shows no `$ kelime` example with its output"
    for args, shown in examples:
        run = CliRunner().invoke(cli, [*args, "--data", str(bootstrap_data)])
        assert run.exit_code == 0, run.output
        printed = [line.strip() for line in run.output.strip().splitlines()]
        assert [version.sub("V", line) for line in printed] == \
            [version.sub("V", line) for line in shown], args
