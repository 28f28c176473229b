"""`kelime crawl run|status|import|refresh` and `kelime define`: click shells around
kelime.crawler. Scrapy is imported only by the `crawl` verbs, httpx only by `define`, so
the other commands start fast; both are kelime's [crawl] extra (`needs_extra`).

The four verbs were options of one command until 2026-12 (`kelime crawl --status`,
`--import FILE`, `--refresh`, and plain `kelime crawl`); those spellings still work, each
with a one-line note on stderr naming the new one (`CrawlGroup`), because they sit in
crontabs and scripts that a rename must not break silently."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..crawler.settings import (
    DEFAULT_BASE_URL,
    DEFAULT_CONCURRENCY,
    DEFAULT_DELAY,
    DEFAULT_MAX_AGE,
    USER_AGENT,
    check_user_agent,
)
from ..errors import KelimeError
from .common import json_flag, needs_extra, print_json, say

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_CACHE = "tdk.sqlite"
cache_option = click.option("--cache", type=click.Path(path_type=Path), envvar="KELIME_CACHE",
                            default=DEFAULT_CACHE, show_default=True,
                            help="SQLite cache [env KELIME_CACHE].")
base_url_option = click.option("--base-url", envvar="KELIME_TDK_BASE_URL",
                               default=DEFAULT_BASE_URL, show_default=True,
                               help="TDK site [env KELIME_TDK_BASE_URL].")
ua_option = click.option("--user-agent", default=USER_AGENT, show_default=True,
                         help="Honest User-Agent naming the project and a contact URL.")
ciphers_option = click.option("--ciphers", default=None,
                              help="OpenSSL cipher list for TLS (when TDK rejects the default "
                                   "handshake), e.g. ECDHE-RSA-AES256-GCM-SHA384.")


def fetching_options(command: F) -> F:
    """The options of the two verbs that ask TDK (`run`, `refresh`): where, how politely,
    as whom, and Scrapy overrides."""
    for option in reversed((
            base_url_option, cache_option,
            click.option("--delay", type=click.FloatRange(0), default=DEFAULT_DELAY,
                         show_default=True, help="Seconds between requests (robots.txt "
                         "Crawl-delay can only raise it)."),
            click.option("--concurrency", type=click.IntRange(1, 4),
                         default=DEFAULT_CONCURRENCY, show_default=True,
                         help="Requests in flight at once (TDK blocks bursts)."),
            click.option("--limit", type=click.IntRange(1), default=None,
                         help="At most N words this run."),
            ua_option, ciphers_option,
            click.option("-s", "--set", "overrides", multiple=True, metavar="NAME=VALUE",
                         help="Override a Scrapy/kelime setting (see "
                              "kelime.crawler.settings)."))):
        command = option(command)
    return command


def _setting(text: str) -> tuple[str, object]:
    key, sep, value = text.partition("=")
    if not sep or not key.isupper():
        raise click.BadParameter(f"{text!r}: use -s NAME=VALUE with an upper-case Scrapy "
                                 "setting name", param_hint="-s")
    try:
        return key, json.loads(value)
    except ValueError:
        return key, value


#: The old spellings (modes of one command) → the verb each now is; the first found in
#: this order wins, as it did then.
OLD_MODES = {"--status": "status", "--import": "import", "--refresh": "refresh"}


def new_spelling(args: list[str]) -> list[str]:
    """An old `kelime crawl …` argument list as the new one:
    `--status` → `status`, `--import FILE` → `import FILE`, `--refresh` → `refresh`, and
    anything else (plain `kelime crawl`, `--words FILE`) → `run`."""
    for flag, verb in OLD_MODES.items():
        for i, arg in enumerate(args):
            name, eq, value = arg.partition("=")
            if name != flag or (eq and verb != "import"):
                continue
            takes = verb == "import" and not eq  # `--import FILE`: the next argument
            given = [value] if eq else args[i + 1:i + 1 + takes]
            return [verb, *given, *args[:i], *args[i + 1 + takes:]]
    return ["run", *args]


class CrawlGroup(click.Group):
    """`kelime crawl`, whose first argument names the verb; an argument list from before
    the verbs (`--status`, `--import FILE`, `--refresh`, or none) is read as the new
    spelling it means, with a note on stderr naming it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        first = args[0] if args else None
        # a bare word was never an old spelling (the old command took no argument): a
        # mistyped verb (`kelime crawl stat`) gets click's "No such command", not `run`
        if (first is None or first.startswith("-")) and first not in ctx.help_option_names:
            args = self.ignored_dropped(new_spelling(list(args)))
            if not ctx.resilient_parsing:  # not while the shell completes a word
                say(f"Note: this is now `{shlex.join(['kelime', 'crawl', *args])}` (the old "
                    "spelling still works for now)")
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)  # as defined: run, refresh, status, import

    def ignored_dropped(self, args: list[str]) -> list[str]:
        """The new spelling without the options `status` and `import` do not take: with
        `--status` or `--import` the old command read only --cache (and --dump-date) and
        ignored the crawl's options (`--status --delay 2` printed the status), which the
        verb would refuse as unknown."""
        verb, *rest = args
        if verb not in ("status", "import"):
            return args
        takes = {name for p in self.commands[verb].params for name in p.opts}
        old = {name: not getattr(p, "is_flag", False) for v in ("run", "refresh")
               for p in self.commands[v].params for name in p.opts}
        old.update({flag: verb == "import" for flag, verb in OLD_MODES.items()})  # lost
        kept, skip = [verb], False
        for arg in rest:
            name, eq, _ = arg.partition("=")
            if skip:
                skip = False
            elif name in old and name not in takes:
                skip = old[name] and not eq  # `--delay 2`: its value goes with it
            else:
                kept.append(arg)
        return kept


@click.group(cls=CrawlGroup)
def crawl() -> None:
    """Crawl TDK's Güncel Türkçe Sözlük into the SQLite cache, politely and resumably:
    `run` (the whole site or a word list), `refresh` (weekly), `import` (a dump), `status`.

    \b
    Examples:
      kelime crawl run --cache tdk.sqlite           # the whole dictionary (~1 day)
      kelime crawl run --words new.txt --max-age 0  # refresh a few words now
      kelime crawl status                           # what the cache holds
      kelime crawl import tdk-v12.jsonl             # start from a dump (minutes)
      kelime crawl refresh                          # weekly: new words, 1/150 re-verified
      kelime build --cache tdk.sqlite               # then rebuild the lexicon
    """


def _check_site(base_url: str, delay: float, concurrency: int) -> None:
    if not base_url.startswith(("http://", "https://")):
        raise click.BadParameter(f"{base_url!r} must start with https:// (or http://)",
                                 param_hint="--base-url")
    if "sozluk.gov.tr" in base_url and (delay < 1 or concurrency > 1):
        say(f"Warning: --delay {delay:g} / --concurrency {concurrency} against {base_url} "
            "risks an IP block (TDK blocks bursts); the defaults are 1 s and 1.")


def _fetch(*, base_url: str, cache: Path, delay: float, concurrency: int, limit: int | None,
           user_agent: str, ciphers: str | None, overrides: tuple[str, ...],
           words: list[str] | None = None, max_age: float = DEFAULT_MAX_AGE,
           refresh: bool = False, sample: int | None = None, force: bool = False) -> None:
    """What `run` and `refresh` share: the settings checked, then the crawl; exits with
    its status."""
    with needs_extra("crawl", f"kelime crawl {'refresh' if refresh else 'run'}"):
        from ..crawler.run import run_crawl
    from ..crawler.settings import check_overrides, crawl_settings

    _check_site(base_url, delay, concurrency)
    extra = dict(_setting(o) for o in overrides)
    if problem := check_overrides(extra):
        raise click.BadParameter(problem, param_hint="-s")
    settings = crawl_settings(cache=str(cache), delay=delay, concurrency=concurrency,
                              user_agent=user_agent, ciphers=ciphers, extra=extra)
    _check_client(settings["USER_AGENT"], "-s USER_AGENT" if "USER_AGENT" in extra
                  else "--user-agent")
    sys.exit(run_crawl(base_url=base_url, cache_path=cache, words=words, max_age=max_age,
                       limit=limit, settings=settings, say=say, refresh=refresh,
                       sample=sample, force=force))


@crawl.command(short_help="Crawl the site's word list (or --words FILE) into the cache.")
@fetching_options
@click.option("--words", "words_file", type=click.Path(path_type=Path, dir_okay=False),
              help="Crawl only these words (one a line, # comments) instead of the site's list.")
@click.option("--max-age", type=click.FloatRange(0), default=DEFAULT_MAX_AGE, show_default=True,
              help="Days a cached reply stays fresh; fresher words are not asked again.")
def run(base_url: str, cache: Path, delay: float, concurrency: int, limit: int | None,
        user_agent: str, ciphers: str | None, overrides: tuple[str, ...],
        words_file: Path | None, max_age: float) -> None:
    """Crawl the site's word list (or --words FILE) into the cache, one polite request at
    a time.

    DELAY seconds apart (robots.txt obeyed), backing off on 429/503/timeouts, stopping
    when TDK starts refusing. Every reply is stored as it arrives: rerun the same command
    after Ctrl-C or a crash to resume. Exit status 0 when done, 1 when it stopped.

    \b
    Examples:
      kelime crawl run --cache tdk.sqlite           # the whole dictionary (~1 day)
      kelime crawl run --words new.txt --max-age 0  # a few words again, now
    """
    with needs_extra("crawl", "kelime crawl run"):
        from ..crawler.run import read_words

    words = None
    if words_file:
        try:
            words = read_words(words_file)
        except (OSError, UnicodeDecodeError) as e:
            raise KelimeError(f"cannot read --words {words_file}: {e}") from None
    _fetch(base_url=base_url, cache=cache, delay=delay, concurrency=concurrency, limit=limit,
           user_agent=user_agent, ciphers=ciphers, overrides=overrides, words=words,
           max_age=max_age)


@crawl.command(short_help="The weekly refresh: new words, 1/150 of replies re-verified.")
@fetching_options
@click.option("--sample", type=click.IntRange(0), default=None,
              help="How many of the oldest replies to re-verify [1/150 of them].")
@click.option("--force", is_flag=True, help="Retire the words the site's list no longer "
              "names even when they are over 1% of it (a short sitemap is refused).")
def refresh(base_url: str, cache: Path, delay: float, concurrency: int, limit: int | None,
            user_agent: str, ciphers: str | None, overrides: tuple[str, ...],
            sample: int | None, force: bool) -> None:
    """The weekly refresh: re-read the site's list, fetch the new words, retire vanished
    ones, re-verify the oldest 1/150 of the replies (so each reply within 150 refreshes).

    Says how many words are new, how many re-verified replies changed and how many words
    were retired. Exit status 1 when the crawl stopped or the retirement was refused.

    \b
    Example:
      kelime crawl refresh --cache tdk.sqlite
    """
    _fetch(base_url=base_url, cache=cache, delay=delay, concurrency=concurrency, limit=limit,
           user_agent=user_agent, ciphers=ciphers, overrides=overrides, refresh=True,
           sample=sample, force=force)


@crawl.command(short_help="What the cache holds (read-only).")
@cache_option
@json_flag("Print the counts as JSON (replies by outcome, words, imports, the last "
           "accepted list).")
def status(cache: Path, as_json: bool) -> None:
    """Print what the cache holds (read-only; nothing is asked of TDK): replies by outcome,
    entries, words queued, done, pending, gone, and an import left unfinished.

    \b
    Example:
      kelime crawl status --cache tdk.sqlite
    """
    with needs_extra("crawl", "kelime crawl status"):
        from ..crawler.run import status_data, status_text

    if as_json:
        print_json({"cache": str(cache), **status_data(cache)})
    else:
        click.echo(status_text(cache))


@crawl.command("import", short_help="Load a JSON-lines dump of TDK entries into the cache.")
@click.argument("dump", type=click.Path(path_type=Path, dir_okay=False))
@cache_option
@click.option("--dump-date", default=None, metavar="ISO-DATE",
              help="When the dump was made [default: the file's modification time].")
@click.option("--accept-fewer", is_flag=True,
              help="Import a dump holding under 99% of the entries the last import held "
                   "(TDK's dictionary really shrank; a cut-off file is refused without it).")
def import_(dump: Path, cache: Path, dump_date: str | None, accept_fewer: bool) -> None:
    """Load DUMP, a JSON-lines dump of TDK entries (the 12th-edition mongoexport), into
    the cache instead of crawling; a crawl then only refreshes. Stopped midway, it resumes
    when run again.

    \b
    Example:
      kelime crawl import tdk-v12.jsonl --cache tdk.sqlite --dump-date 2024-03-01
    """
    import datetime as dt
    import math

    with needs_extra("crawl", "kelime crawl import"):
        from ..crawler.run import status_text
    from ..tdk import store
    from ..tdk.dump import KEEP, import_dump

    if not dump.is_file():
        raise KelimeError(f"no dump at {dump}")
    if dump_date:
        try:
            when = dt.datetime.fromisoformat(dump_date)  # "Z" too
        except ValueError:
            raise click.BadParameter(f"{dump_date!r} is not an ISO 8601 date (2024-01-01)",
                                     param_hint="--dump-date") from None
    else:
        when = dt.datetime.fromtimestamp(dump.stat().st_mtime, dt.UTC)
    when = (when if when.tzinfo else when.replace(tzinfo=dt.UTC))
    fetched_at = when.astimezone(dt.UTC).isoformat(timespec="seconds")
    with store.crawl_lock(cache):  # one writer of the cache, as a crawl is
        db = store.open_cache(cache, create=True)
        try:
            say(f"Importing {dump} into {cache} …")
            done = import_dump(db, dump, fetched_at, progress=lambda n, total: say(
                f"  {n:,} of {total:,} headwords stored") if n % 10_000 < 500 or n == total
                else None, accept_fewer=accept_fewer)
        finally:
            db.close()
    say(f"Imported {done.entries:,} entries under {done.queries:,} headwords from sha256 "
        f"{done.sha256[:16]}…, dated {fetched_at}; {done.skipped:,} line(s) skipped")
    before = done.previous
    say(f"Expected: at least {math.ceil(KEEP * before['entries']):,} entries ({KEEP:.0%} of the "
        f"{before['entries']:,} the last import, {before['file']}, held); imported "
        f"{done.entries:,}" if before else
        f"Expected: no count (a dump declares none, and this cache held no finished import "
        f"to compare with); imported {done.entries:,}")
    for problem in done.problems:
        say(f"  skipped {problem}")
    click.echo(status_text(cache))


def _check_client(user_agent: str, where: str = "--user-agent") -> None:
    problem = check_user_agent(str(user_agent))
    if problem:
        raise click.BadParameter(f"{user_agent!r} {problem}", param_hint=where)


@click.command()
@click.argument("word")
@cache_option
@base_url_option
@click.option("--refresh", is_flag=True, help="Ask TDK even when the cache has the word.")
@json_flag("Print the query and TDK's raw entries (an error as the API's error object).")
@ua_option
@ciphers_option
def define(word, cache, base_url, refresh, as_json, user_agent, ciphers) -> None:
    """Print WORD's senses (tags, examples) from the cache, asking TDK when it is absent.

    \b
    Example:
      $ kelime define kitap
      kitap  (Arapça kitāb)
        1. a.  Ciltli veya ciltsiz olarak bir araya getirilmiş … bütünü
               «Bir kitabı kendim okurum.» (Nurullah Ataç)
    """
    with needs_extra("crawl", "kelime define"):
        from ..crawler.fetch import lookup, make_client

    _check_client(user_agent)
    if not word.strip():
        raise click.BadParameter("give a word to look up", param_hint="WORD")
    with make_client(user_agent, ciphers) as client:
        result = lookup(cache, word, base_url=base_url, client=client, refresh=refresh)
    if as_json:
        print_json(result)
    elif result["entries"]:
        from ..tdk.render import format_entries

        click.echo(format_entries(result["entries"]))
    else:
        click.echo(f"{word}: not in TDK's Güncel Türkçe Sözlük ({result['source']})")
    sys.exit(0 if result["entries"] else 1)
