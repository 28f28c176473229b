"""Every `kelime` command documents itself with an example (like sqlite-utils'
tests/test_docs.py): walks the click group, so commands added later are checked too."""

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
