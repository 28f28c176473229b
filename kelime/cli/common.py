"""What the `kelime` commands share: click settings, the environment (read once, through
the service's Settings), JSON output, and the one error boundary."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..errors import KelimeError

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class Group(click.Group):
    """The `kelime` group: every KelimeError a command raises becomes ``Error: …`` and exit
    status 1 (or the command's own `error_exit_code`), never a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except KelimeError as e:
            command = self.commands.get(ctx.invoked_subcommand or "")
            error = click.ClickException(str(e))
            error.exit_code = getattr(command, "error_exit_code", 1)
            raise error from None


def environment():
    """The KELIME_* settings (data folder, cache, limits): read here, once, for the CLI."""
    from ..service.settings import Settings

    return Settings.from_env()


def game_profile(name: str | None, default: str | None = None):
    """The game profile called `name`: kelime's own, or one from the KELIME_GAMES folder."""
    from ..games import get_game, load_games

    folder = environment().games
    return get_game(name or default, load_games(folder) if folder else None)


def data_dir(flag: Path | None) -> Path:
    """The data folder: the flag beats KELIME_DATA, which beats `data/`."""
    return Path(flag) if flag else environment().data


def print_json(obj) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False, indent=2))


def say(message: str) -> None:
    """Progress and notes go to stderr, so stdout stays the answer."""
    click.echo(message, err=True)


data_option = click.option("--data", type=click.Path(path_type=Path), default=None,
                           help="Data folder [env KELIME_DATA; default data/].")
