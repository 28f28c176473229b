"""`kelime build`: choose the source, compile, write, report. A shell around kelime.build."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .build import BuildError, apply_overrides, compile_words, write_lexicon
from .cli import fail
from .normalize import TURKISH, Alphabet
from .sources import bootstrap_candidates, bootstrap_source, read_wordlist, wordlist_source

DEFAULT_POLICY = Path(__file__).resolve().parent.parent / "data" / "policy.toml"


def _say(message: str) -> None:
    click.echo(message, err=True)


def run_build(*, bootstrap: bool, wordlist: Path | None, cache: Path | None, name: str | None,
              out: Path, policy: Path | None, alphabet: str | None, force: bool,
              as_json: bool) -> None:
    alpha = Alphabet(alphabet) if alphabet else TURKISH
    try:
        if cache:
            from .filters import cache_candidates, cache_source, load_policy

            pol = load_policy(policy or DEFAULT_POLICY)
            _say(f"Reading {cache} …")
            source = cache_source(cache)
            candidates = cache_candidates(cache, pol, progress=_progress)
        elif bootstrap:
            pol = _load_or_default(policy)
            candidates, source = bootstrap_candidates(), bootstrap_source()
        else:
            pol = _load_or_default(policy) if policy else None
            candidates, source = read_wordlist(wordlist), wordlist_source(wordlist)
        name = name or ("tr" if not wordlist else wordlist.stem)
        _say(f"Compiling {name} …")
        compiled = compile_words(candidates, alpha)
        if pol is not None:
            compiled = apply_overrides(compiled, pol.blocked, pol.allowed, alpha)
        _say(f"Writing {out / name} …")
        result = write_lexicon(compiled, out, name, source, alpha, force=force)
    except BuildError as e:
        fail(str(e))
    if as_json:
        import json

        click.echo(json.dumps({"manifest": result.manifest, "changes": result.changes,
                               "unchanged": result.unchanged}, ensure_ascii=False, indent=2))
    else:
        from .pretty import print_build

        print_build(result.manifest, result.changes, result.unchanged, result.path)


def _progress(entries, total: int):
    """A progress bar over the cache's entries on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        yield from entries
        return
    from rich.progress import track

    from .pretty import console

    yield from track(entries, total=total, description="Filtering TDK entries",
                     console=console(err=True), transient=True)


def _load_or_default(path: Path | None):
    """The policy named by --policy, else the default one when it exists."""
    from .filters import load_policy

    if path is None and not DEFAULT_POLICY.exists():
        return None
    return load_policy(path or DEFAULT_POLICY)
