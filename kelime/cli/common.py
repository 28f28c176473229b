"""What the `kelime` commands share: click settings, the environment (read once, through
the service's Settings), JSON output, and the one error boundary.

Exit status, the same for the same failure in every command:

    0  done (`check`: every word valid)
    1  `check`: a word is not valid; `play`: not legal, or a word not valid; build, crawl,
       reports: the work failed (``Error: …``); a command whose extra is not installed
       (`needs_extra`)
    2  the question cannot be asked: bad arguments (click's usage errors), a lexicon that
       cannot be used (missing, damaged, outdated), an unknown game or a bad game profile,
       a rack, pattern or option the core refuses

With ``--json`` an error is printed to standard output in the HTTP API's shape,
``{"error": {"code", "message", "details"?}}``, so a script reading JSON always gets JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import click

from ..errors import (
    KelimeError,
    LexiconError,
    MissingPackage,
    NoAnagramIndex,
    OutdatedLexicon,
    QueryError,
)

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class MissingLexicon(LexiconError):
    """No lexicon of that name in the data folder (the API's `unknown_lexicon`)."""


class MissingExtra(KelimeError):
    """A command whose libraries, one of kelime's extras (pyproject.toml), are not installed."""


#: Error classes → the code the JSON error names (the HTTP API's codes where it has one).
CODES = ((MissingLexicon, "unknown_lexicon"), (NoAnagramIndex, "no_anagram_index"),
         (OutdatedLexicon, "outdated_lexicon"), (LexiconError, "unusable_lexicon"),
         (MissingExtra, "missing_extra"))
USAGE = 2     # the question cannot be asked (click's own usage errors exit 2 too)
FAILED = 1    # the work failed


def error_code(e: KelimeError) -> str:
    """The code of `e` as the API would name it (`invalid_rack`, `unknown_game`, …)."""
    from ..games import GameProfileError, UnknownGame

    if isinstance(e, QueryError):
        return e.code
    if isinstance(e, UnknownGame):
        return "unknown_game"
    if isinstance(e, GameProfileError):
        return "invalid_game_profile"
    return next((code for kind, code in CODES if isinstance(e, kind)), "error")


def exit_status(e: KelimeError) -> int:
    """2 when the question cannot be asked (see the module docstring), else 1."""
    from ..games import GameProfileError, UnknownGame

    return USAGE if isinstance(e, (QueryError, LexiconError, UnknownGame,
                                   GameProfileError)) else FAILED


class Unaskable(click.ClickException):
    """``Error: …`` for a question that cannot be asked. click reads the exit status from
    the class (`exit_code` is a ClassVar), so each status is a class of its own."""

    exit_code = USAGE


class JsonError(click.ClickException):
    """An error printed as the API's JSON error object, on standard output (exit status 1)."""

    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__(body["error"]["message"])
        self.body = body

    def show(self, file: IO[Any] | None = None) -> None:
        print_json(self.body)


class JsonUnaskable(JsonError):
    """The JSON error object of a question that cannot be asked (exit status 2)."""

    exit_code = USAGE


def failure(message: str, status: int) -> click.ClickException:
    """``Error: message`` exiting with `status` (USAGE or FAILED)."""
    return Unaskable(message) if status == USAGE else click.ClickException(message)


def json_failure(body: dict[str, Any], status: int) -> JsonError:
    """The JSON error object `body`, exiting with `status` (USAGE or FAILED)."""
    return JsonUnaskable(body) if status == USAGE else JsonError(body)


class Group(click.Group):
    """The `kelime` group: every KelimeError a command raises becomes ``Error: …`` (or, with
    ``--json``, the API's error object) and the exit status of its kind, never a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except click.UsageError as e:  # raised by a command itself (`check -` with no input)
            if not ctx.meta.get(JSON_META):
                raise
            raise JsonUnaskable({"error": {"code": "invalid_usage",
                                           "message": e.format_message()}}) from None
        except (click.Abort, click.exceptions.Exit, JsonError):  # JSON already, its own code
            raise
        except click.ClickException as e:  # a command's own `Error: …`
            if not ctx.meta.get(JSON_META):
                raise
            raise json_failure({"error": {"code": "failed", "message": e.format_message()}},
                               e.exit_code) from None
        except KelimeError as e:
            if ctx.meta.get(JSON_META):
                details = getattr(e, "details", None)
                error = {"code": error_code(e), "message": str(e),
                         **({"details": details} if details else {})}
                raise json_failure({"error": error}, exit_status(e)) from None
            raise failure(str(e), exit_status(e)) from None


JSON_META = "kelime.json"


def _remember_json(ctx: click.Context, param, value: bool) -> bool:
    ctx.meta[JSON_META] = value  # shared with the group's context: errors print as JSON too
    return value


what_if_option = click.option(
    "--what-if", is_flag=True,
    help="Answer a rack the game cannot deal (a Kelimatik rack that is not 5 consonants, 3 "
         "vowels, 1 two-letter tile and 1 joker; a Harfbank hand of other than 14 or 15 "
         "tiles; two j's in kelimelik, whose bag has one) instead of refusing it (exit 2).")


def json_flag(help: str):
    """A ``--json`` flag whose errors, too, are printed as JSON."""
    return click.option("--json", "as_json", is_flag=True, is_eager=True,
                        callback=_remember_json, help=help)


class StoreAddress(click.ParamType):
    """A report store's address: a PostgreSQL URL (kept as it is) or a SQLite file."""

    name = "FILE|URL"

    def convert(self, value, param, ctx):
        from ..reports import is_url

        if isinstance(value, Path) or is_url(value):
            return value
        return Path(value)


@contextmanager
def needs_extra(extra: str, command: str) -> Iterator[None]:
    """Around the imports of a command that needs one of kelime's extras: a library of it
    that is not installed (or an offline list's package) becomes ``Error: COMMAND needs the
    [EXTRA] extra: pip install 'kelime[EXTRA]'`` (exit status 1). A missing kelime module is
    a bug, and stays one."""
    try:
        yield
    except (ModuleNotFoundError, MissingPackage) as e:
        if isinstance(e, ModuleNotFoundError) and (e.name or "kelime").split(".")[0] == "kelime":
            raise
        raise MissingExtra(f"{command} needs the [{extra}] extra: "
                           f"pip install 'kelime[{extra}]'") from None


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


lexicon_option = click.option("--lexicon", "-l", default=None,
                              help="Lexicon name, or one build of it (tr@d4323d22aa28) "
                                   "[default: the game's own (kelimatik-ku: ku), else tr].")


def open_lexicon(data: Path | None, name: str | None, game=None):
    """The lexicon called `name` in the data folder (None: the one `game` is played with, or
    tr); like the API, `TR` and ` tr ` find `tr` (lexicon folders are lower-case)."""
    from ..lexicon import DEFAULT_LEXICON, MANIFEST_FILE, load_lexicon

    folder = data_dir(data)
    key = (name or getattr(game, "lexicon", None) or DEFAULT_LEXICON).strip()
    base, at, version = key.partition("@")  # (a build: tr@d4323d22aa28, as the API takes)
    if not (folder / base).exists() and (folder / base.lower()).exists():
        key = base.lower() + at + version
    try:
        return load_lexicon(folder, key)
    except LexiconError as e:  # the message says what the folder has and how to build one
        if (folder / key / MANIFEST_FILE).exists():
            raise type(e)(f"{e}{rollback_hint(folder, key)}") from None
        raise MissingLexicon(f"{e}{rollback_hint(folder, key)}") from None


def rollback_hint(folder: Path, name: str) -> str:
    """How to go back to the last build of `name` that verifies, when the current one is
    damaged (or its link points to nothing) and one is kept ("" when none is)."""
    from ..lexicon.folder import last_good

    link = folder / name
    if not link.is_symlink():
        return ""
    good = last_good(folder, name, besides=link.resolve())
    if good is None:
        return ""
    version = good.info["version"]
    return (f"; or run `kelime lexicons --data {folder} rollback {name} --to {version}` to "
            f"point it at {name}@{version}, the newest other build that verifies (what "
            f"`kelime serve` serves meanwhile)")


def print_json(obj) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False, indent=2))


def say(message: str) -> None:
    """Progress and notes go to stderr, so stdout stays the answer."""
    click.echo(message, err=True)


data_option = click.option("--data", type=click.Path(path_type=Path), default=None,
                           help="Data folder [env KELIME_DATA; default data/].")
