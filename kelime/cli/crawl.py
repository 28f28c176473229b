"""`kelime crawl` and `kelime define`: click shells around kelime.crawler. Scrapy is
imported only by `crawl`, httpx only by `define`, so the other commands start fast."""

from __future__ import annotations

import json
import sys
from pathlib import Path

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
from .common import print_json, say

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


def _setting(text: str) -> tuple[str, object]:
    key, sep, value = text.partition("=")
    if not sep or not key.isupper():
        raise click.BadParameter(f"{text!r}: use -s NAME=VALUE with an upper-case Scrapy "
                                 "setting name", param_hint="-s")
    try:
        return key, json.loads(value)
    except ValueError:
        return key, value


@click.command()
@base_url_option
@click.option("--words", "words_file", type=click.Path(path_type=Path, dir_okay=False),
              help="Crawl only these words (one a line, # comments) instead of the site's list.")
@cache_option
@click.option("--delay", type=click.FloatRange(0), default=DEFAULT_DELAY, show_default=True,
              help="Seconds between requests (robots.txt Crawl-delay can only raise it).")
@click.option("--concurrency", type=click.IntRange(1, 4), default=DEFAULT_CONCURRENCY,
              show_default=True, help="Requests in flight at once (TDK blocks bursts).")
@click.option("--max-age", type=click.FloatRange(0), default=DEFAULT_MAX_AGE, show_default=True,
              help="Days a cached reply stays fresh; fresher words are not asked again.")
@click.option("--limit", type=click.IntRange(1), default=None, help="At most N words this run.")
@click.option("--status", is_flag=True, help="Print the cache's state and exit (no crawl).")
@click.option("--refresh", is_flag=True, help="The weekly refresh: re-read the site's list, "
              "fetch new words, retire vanished ones, re-verify the oldest 1/150 of replies "
              "(each reply within 150 refreshes).")
@click.option("--sample", type=click.IntRange(0), default=None,
              help="With --refresh: how many of the oldest replies to re-verify [1/150].")
@click.option("--import", "dump", type=click.Path(path_type=Path, dir_okay=False),
              help="Load a JSON-lines dump of TDK entries (the 12th-edition mongoexport) into "
                   "the cache instead of crawling; a crawl then only refreshes.")
@click.option("--dump-date", default=None, metavar="ISO-DATE",
              help="When the dump was made [default: the file's modification time].")
@click.option("--force", is_flag=True, help="With --refresh: retire the words the site's list "
              "no longer names even when they are over 1% of it (a short sitemap is refused).")
@ua_option
@ciphers_option
@click.option("-s", "--set", "overrides", multiple=True, metavar="NAME=VALUE",
              help="Override a Scrapy/kelime setting (see kelime.crawler.settings).")
def crawl(base_url, words_file, cache, delay, concurrency, max_age, limit, status, refresh,
          sample, dump, dump_date, force, user_agent, ciphers, overrides) -> None:
    """Crawl TDK's Güncel Türkçe Sözlük into the SQLite cache, politely and resumably.

    One request at a time, DELAY seconds apart (robots.txt obeyed), backing off on
    429/503/timeouts, stopping when TDK starts refusing. Every reply is stored as it
    arrives: rerun the same command after Ctrl-C or a crash to resume.

    \b
    Examples:
      kelime crawl --cache tdk.sqlite               # the whole dictionary (~1 day)
      kelime crawl --words new.txt --max-age 0      # refresh a few words now
      kelime crawl --status                         # what the cache holds
      kelime crawl --import tdk-v12.jsonl           # start from a dump (minutes)
      kelime crawl --refresh                        # weekly: new words, 1/150 re-verified
      kelime build --cache tdk.sqlite               # then rebuild the lexicon
    """
    from ..crawler.run import read_words, run_crawl, status_text

    if status:
        click.echo(status_text(cache))
        return
    if dump:
        import_into(cache, dump, dump_date)
        return
    if not base_url.startswith(("http://", "https://")):
        raise click.BadParameter(f"{base_url!r} must start with https:// (or http://)",
                                 param_hint="--base-url")
    if "sozluk.gov.tr" in base_url and (delay < 1 or concurrency > 1):
        say(f"Warning: --delay {delay:g} / --concurrency {concurrency} against {base_url} "
            "risks an IP block (TDK blocks bursts); the defaults are 1 s and 1.")
    if force and not refresh:
        raise click.BadParameter("--force only lets a refresh retire many words: use it "
                                 "with --refresh", param_hint="--force")
    if refresh and words_file:
        raise click.BadParameter("a refresh reads the site's list: leave out --words",
                                 param_hint="--refresh")
    words = None
    if words_file:
        try:
            words = read_words(words_file)
        except (OSError, UnicodeDecodeError) as e:
            raise KelimeError(f"cannot read --words {words_file}: {e}") from None
    from ..crawler.settings import check_overrides, crawl_settings

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


def import_into(cache: Path, dump: Path, dump_date: str | None) -> None:
    """`kelime crawl --import`: the dump into the cache, under the crawl lock."""
    import datetime as dt

    from ..crawler.run import status_text
    from ..tdk import store
    from ..tdk.dump import import_dump

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
    with store.crawl_lock(cache):
        db = store.open_cache(cache, create=True)
        try:
            say(f"Importing {dump} into {cache} …")
            done = import_dump(db, dump, fetched_at, progress=lambda n, total: say(
                f"  {n:,} of {total:,} headwords stored") if n % 10_000 < 500 or n == total
                else None)
        finally:
            db.close()
    say(f"Imported {done.entries:,} entries under {done.queries:,} headwords from sha256 "
        f"{done.sha256[:16]}…, dated {fetched_at}; {done.skipped:,} line(s) skipped")
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
@click.option("--json", "as_json", is_flag=True, help="Print the query and TDK's raw entries.")
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
