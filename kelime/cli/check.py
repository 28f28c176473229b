"""`kelime check WORD...`: the verdict on each word, as POST /v1/validate gives it."""

from __future__ import annotations

import sys

import click

from .common import data_option, game_profile, json_flag, lexicon_option, open_lexicon, print_json


def read_words(words: tuple[str, ...]) -> list[str]:
    """The words to check: the arguments, with `-` standing for stdin's lines."""
    out: list[str] = []
    for word in words:
        if word == "-":
            out.extend(line.strip() for line in sys.stdin if line.strip())
        else:
            out.append(word)
    if not out:
        raise click.UsageError("no words to check (standard input was empty)")
    return out


@click.command()
@click.argument("words", nargs=-1, required=True)
@lexicon_option
@click.option("--game", "-g", default=None, help="Game profile (sets the minimum length).")
@data_option
@json_flag("Print what POST /v1/validate answers (an error as its error object).")
def check(words, lexicon, game, data, as_json) -> None:
    """Check WORDS; exit 0 when all are valid, 1 otherwise, 2 when they cannot be checked.

    A WORD of `-` reads words from standard input, one a line.

    \b
    Example:
      $ kelime check kitap İstanbul evler
      ✓  kitap
      ✗  İstanbul  istanbul  proper name
      ✗  evler               not in the dictionary
      lexicon tr d4323d22aa28 (40,773 words)
    """
    profile = game_profile(game)
    lex = open_lexicon(data, lexicon, profile)
    report = lex.validate(read_words(words), profile.min_length)
    if as_json:
        print_json(report)
    else:
        from .pretty import print_verdicts

        print_verdicts(report, lex.alphabet.language)
    sys.exit(0 if report["all_valid"] else 1)

