"""`kelime serve`: the HTTP API (kelime.service) on every lexicon in the data folder."""

from __future__ import annotations

import os
from pathlib import Path

import click

from .common import data_option, environment, needs_extra, say


@click.command()
@data_option
@click.option("--cache", type=click.Path(path_type=Path), default=None,
              help="TDK crawl cache for the entries in GET /v1/words [env KELIME_CACHE].")
@click.option("--reports", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Take players' word reports (POST /v1/reports) into this SQLite file "
                   "[env KELIME_REPORTS; off when unset].")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--fd", type=click.IntRange(0), default=None, metavar="N",
              help="Serve on the listening socket inherited as file descriptor N (bound by "
                   "a process manager, systemd's socket activation) instead of binding "
                   "--host and --port.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64))
@click.option("--forwarded-allow-ips", "proxies", default=None, metavar="ADDRESSES",
              help="Comma-separated addresses (or networks) of the proxies whose "
                   "X-Forwarded-For names the client, e.g. 127.0.0.1 behind nginx on this "
                   "host [env KELIME_FORWARDED_ALLOW_IPS; default: none, each client is its "
                   "connection's address].")
def serve(data: Path | None, cache: Path | None, reports: Path | None, host: str, port: int,
          fd: int | None, workers: int, proxies: str | None) -> None:
    """Serve the HTTP API (FastAPI + uvicorn) on every lexicon in DATA.

    \b
    Example:
      kelime serve --port 8000 &
      curl -s 'localhost:8000/v1/validate?word=kitap&word=%C4%B0stanbul'
      kelime serve --reports reports.sqlite       # and take players' word reports
      kelime serve --forwarded-allow-ips 127.0.0.1   # behind nginx on this host
    """
    with needs_extra("serve", "kelime serve"):
        from ..service.app import open_report_store
        from ..service.server import run

    context = click.get_current_context()
    given = [f"--{name}" for name in ("host", "port")
             if context.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT]
    if fd is not None and given:
        raise click.UsageError(f"--fd {fd} is a socket already bound: drop {' and '.join(given)}")
    from ..service.settings import misspelt

    for name, meant in misspelt(os.environ).items():
        say(f"Warning: {name} is no setting (ignored): did you mean {meant}?")
    settings = environment()
    if data:
        settings = settings.with_data(data)
    if cache:
        settings = settings.with_cache(cache)
    if reports:
        settings = settings.changed(reports=reports)
    if proxies is not None:
        settings = settings.trusting(proxies)
    if settings.reports:  # a store that cannot be used stops the start here, saying why
        open_report_store(settings.reports, settings.report_limits)
    from . import HANGUPS

    run(settings, host=host, port=port, workers=workers, hangups=HANGUPS, fd=fd)
