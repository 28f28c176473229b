"""`kelime anagram RACK` and `kelime split RACK`: the words a rack makes, and a Harfbank hand
laid out whole, as POST /v1/anagram and POST /v1/split answer them."""

from __future__ import annotations

import click

from ..games import DEFAULT_GAME
from .common import (
    data_option,
    environment,
    game_profile,
    json_flag,
    lexicon_option,
    open_lexicon,
    print_json,
    what_if_option,
)

json_option = json_flag("Print exactly what the HTTP API answers (an error as its error "
                        "object).")


def exclude_list(ctx, param, value: tuple[str, ...]) -> list[str] | None:
    """`--exclude kale,elma --exclude ela` → ["kale", "elma", "ela"]."""
    words = [w.strip() for chunk in value for w in chunk.split(",") if w.strip()]
    return words or None


@click.command()
@click.argument("rack")
@click.option("--game", "-g", default=DEFAULT_GAME, show_default=True,
              help="Game profile: letter values, scoring, minimum length, two-letter tiles.")
@click.option("--exact", is_flag=True, help="Only words that use every tile.")
@click.option("--min", "min_length", type=click.IntRange(min=1), default=None,
              help="Shortest word, in letters [default: the game's minimum].")
@click.option("--max", "max_length", type=click.IntRange(min=1), default=None,
              help="Longest word, in letters.")
@click.option("--pattern", "-p", default=None,
              help="A board slot: '.' a square the rack fills, a letter a tile on the board.")
@click.option("--exclude", "-x", multiple=True, callback=exclude_list,
              help="Words already played, comma-separated (repeatable).")
@click.option("--limit", "-n", type=click.IntRange(min=0), default=None,
              help="How many words to list [default 100].")
@click.option("--sort", type=click.Choice(["score", "length", "alpha"]), default="score",
              show_default=True, help="Highest score, longest, or Turkish alphabetical order.")
@what_if_option
@lexicon_option
@data_option
@json_option
def anagram(rack, game, exact, min_length, max_length, pattern, exclude, limit, sort, what_if,
            lexicon, data, as_json) -> None:
    """The words RACK makes: one letter a tile, ? a blank, [lm] a two-letter tile.

    Quote the rack: the shell reads ? and [ ] as file patterns. A rack the game cannot
    deal (3 two-letter tiles in Kelimatik, 8 kelimelik tiles) is refused, exit 2, unless
    --what-if.

    \b
    Example:
      $ kelime anagram 'kale?' --limit 4 --sort length
      kale? · kelimelik · 243 words, the first 4 longest first
      5 letters
        akile  4  a k ?i l e
        aklen  4  a k l e ?n
        eflak  4  e ?f l a k
        elhak  4  e l ?h a k
      lexicon tr d4323d22aa28 (40,773 words)

    \b
      $ kelime anagram ia --pattern k.t.p
      ia on k.t.p · kelimelik · 2 words
      5 letters
        katip  12  k a t i p
        kitap  12  k i t a p
      lexicon tr d4323d22aa28 (40,773 words)

    \b
      kelime anagram 'kaletn?[lm]ıs' -g kelimatik --exclude kale,elma --json
      kelime anagram 'kale?[lm]' -g kelimatik --what-if
    """
    profile = game_profile(game)
    lex = open_lexicon(data, lexicon, profile)
    answer = lex.anagram(rack, profile, environment().limits, mode="exact" if exact else "build",
                         min_length=min_length, max_length=max_length, pattern=pattern,
                         exclude=exclude, limit=limit, sort=sort, what_if=what_if)
    if as_json:
        print_json(answer)
        return
    from .pretty import print_anagrams

    print_anagrams(answer, rack, profile.name, sort, pattern)


@click.command()
@click.argument("rack")
@click.option("--game", "-g", default="harfbank", show_default=True, help="Game profile.")
@what_if_option
@lexicon_option
@data_option
@json_option
def split(rack, game, what_if, lexicon, data, as_json) -> None:
    """Lay a whole hand (RACK) out as words, or find the layout with the least penalty.

    A Harfbank hand is 14 tiles, or 15 with one to throw away (another is refused, exit 2,
    unless --what-if); ? is the joker and [lm] a two-letter tile. The search is exact until
    its time budget runs out (`complete` says which; KELIME_SPLIT_BUDGET_MS sets it).

    \b
    Example:
      $ kelime split kalemkitapsilgi
      kalemkitapsilgi · harfbank · laid out whole, 'p' thrown away
        galsame  g a l s a m e
        ilk      i l k
        itki     i t k i
      penalty 0 · the search was complete
      lexicon tr d4323d22aa28 (40,773 words)
    """
    profile = game_profile(game)
    lex = open_lexicon(data, lexicon, profile)
    answer = lex.split(rack, profile, environment().limits, what_if=what_if)
    if as_json:
        print_json(answer)
        return
    from .pretty import print_split

    print_split(answer, rack, profile.name)
