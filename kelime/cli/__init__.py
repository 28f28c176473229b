"""The `kelime` command: one verb per module, each a thin shell around the core (build,
check, anagram) or around the other shells (serve → kelime.service, crawl and define →
kelime.crawler). Heavy imports happen inside the commands, so `kelime check` starts fast.
This package is the only part of `kelime` that imports click, rich, the crawler or the
service."""

from __future__ import annotations

import signal
import sys

#: `kelime serve` takes SIGHUP for a reload from its first line on: one that comes while it
#: starts is held back (blocked: the default action would kill it) until its workers run
#: (`kelime.service.serve`), in every thread the start makes (numpy's first among them).
#: So are TTIN and TTOU (a worker more, one fewer), whose default action stopped the master
#: (state T, never listening) in a terminal's process group (`make serve`, a script).
if sys.argv[1:2] == ["serve"]:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGHUP, signal.SIGTTIN, signal.SIGTTOU})

import click

from . import anagram, board, build, check, crawl, lexicons, reports, serve
from .common import CONTEXT, Group


@click.group(cls=Group, context_settings=CONTEXT)
@click.version_option(package_name="kelime")
def cli() -> None:
    """kelime: the Turkish word-game dictionary (TDK Güncel Türkçe Sözlük).

    \b
    Example:
      kelime build --bootstrap && kelime check kitap İstanbul
    """


for command in (check.check, anagram.anagram, anagram.split, board.moves, board.play,
                build.build, serve.serve, crawl.crawl, crawl.define, reports.reports,
                lexicons.lexicons, lexicons.reload):
    cli.add_command(command)


def main() -> None:
    cli()
