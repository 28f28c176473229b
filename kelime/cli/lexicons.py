"""`kelime lexicons` (the builds a data folder keeps: list, diff, rollback) and `kelime
reload` (the running `kelime serve` of a data folder switches to its current builds): the
operator's side of a rollout. The work is the core's (kelime.lexicon.builds) and the
service's (kelime.service.control); these are their words on a terminal.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..errors import LexiconError
from .common import (
    FAILED,
    USAGE,
    data_dir,
    data_option,
    failure,
    json_failure,
    json_flag,
    needs_extra,
    print_json,
    say,
)


def _data(ctx: click.Context, data: Path | None) -> Path:
    return data_dir(data or ctx.obj)


def _version(spec: str, name: str | None = None) -> tuple[str, str]:
    """`NAME@VERSION` → (name, version)."""
    found, at, version = spec.partition("@")
    if not at or not found or not version or (name and found != name):
        raise click.BadParameter(f"{spec!r} is not NAME@VERSION (e.g. tr@d4323d22aa28)"
                                 + (f" of {name}" if name else ""))
    return found, version


@click.group()
@data_option
@click.pass_context
def lexicons(ctx, data: Path | None) -> None:
    """The builds each lexicon keeps in DATA/.builds: list them, diff two, roll back.

    \b
    Example:
      kelime lexicons list
      kelime lexicons diff tr@OLD tr@NEW
      kelime lexicons rollback tr && kelime reload
    """
    ctx.obj = data


@lexicons.command("list")
@data_option
@json_flag("Print every build as JSON.")
@click.pass_context
def list_builds(ctx, data: Path | None, as_json: bool) -> None:
    """Every build kept of each lexicon, newest first: its version, words, when it was
    written, whether it is the current one (*), the last accepted one, and whether it
    verifies (DAMAGED, and why, when it does not).

    \b
    Example:
      kelime lexicons list                  # * marks the build data/NAME points at
      kelime lexicons --data /srv/kelime/data list --json
    """
    from ..lexicon.builds import describe, names

    folder = _data(ctx, data)
    rows = [row for name in names(folder) for row in describe(folder, name)]
    if as_json:
        print_json({"data": str(folder), "builds": rows})
        return
    if not rows:
        raise LexiconError(f"no builds in {folder}: build one with `kelime build --bootstrap "
                           f"--out {folder}`")
    for row in rows:
        words = f"{row['words']:,}" if isinstance(row["words"], int) else "?"
        marks = ", ".join(m for m, on in (("current", row["current"]),
                                           ("accepted", row["accepted"])) if on)
        state = "verifies" if row["verifies"] else "DAMAGED"
        click.echo(f"{'*' if row['current'] else ' '} {row['name']}@{row['version'] or '?'}  "
                   f"{words:>8} words  written {row['written']}  {state}"
                   + (f"  ({marks})" if marks else ""))
        if not row["verifies"]:
            click.echo(f"    {row['problem']}")


@lexicons.command()
@click.argument("old")
@click.argument("new")
@data_option
@json_flag("Print every word added and removed as JSON.")
@click.pass_context
def diff(ctx, old: str, new: str, data: Path | None, as_json: bool) -> None:
    """The words build NEW has that OLD has not (+), and the reverse (-): each given as
    NAME@VERSION (a version prefix of 4 hex digits or more will do).

    \b
    Example:
      kelime lexicons diff tr@OLD tr@NEW    # versions from `kelime lexicons list`
      kelime lexicons diff tr@OLD tr@NEW | grep -c '^+'     # how many words added
    """
    from ..lexicon.builds import diff as diff_builds

    name, a = _version(old)
    _, b = _version(new, name)
    found = diff_builds(_data(ctx, data), name, a, b)
    if as_json:
        print_json(found)
        return
    for word in found["added"]:
        click.echo(f"+ {word}")
    for word in found["removed"]:
        click.echo(f"- {word}")
    say(f"{name}@{found['from']} → {name}@{found['to']}: {len(found['added']):,} added, "
        f"{len(found['removed']):,} removed")


@lexicons.command()
@click.argument("name")
@click.option("--to", "version", default=None, metavar="VERSION",
              help="The build to point NAME at [default: the newest build written before "
                   "the current one that verifies].")
@data_option
@json_flag("Print what was done as JSON.")
@click.pass_context
def rollback(ctx, name: str, version: str | None, data: Path | None, as_json: bool) -> None:
    """Point DATA/NAME (atomically, under the build lock) at the previous build that
    verifies, or at --to VERSION. Running servers go on serving what they pinned until
    `kelime reload`; the last accepted build (the change guard's reference) stays.

    \b
    Example:
      kelime lexicons rollback tr && kelime reload    # back to the previous good build
      kelime lexicons rollback tr --to VERSION        # or to one of `kelime lexicons list`
    """
    from ..lexicon.builds import rollback as roll_back

    folder = _data(ctx, data)
    done = roll_back(folder, name, version, waiting=lambda who: say(
        f"Waiting for a build of {folder} to finish ({who}) …"))
    if as_json:
        print_json(done)
        return
    click.echo(f"{folder / name} → {done['folder']}: {name}@{done['to']} "
               f"(was {done['from'] or 'none'})")
    say(f"Run `kelime reload --data {folder}` to serve it (every `kelime serve` of "
        f"{folder}); the change guard's reference (the last accepted build) is unchanged.")


@click.command()
@data_option
@click.option("--timeout", type=click.FloatRange(0, min_open=True), default=60.0,
              show_default=True, help="Seconds to wait for each server and its workers.")
@json_flag("Print each server's outcome as JSON.")
def reload(data: Path | None, timeout: float, as_json: bool) -> None:
    """Reload every `kelime serve` serving DATA: each switches to the data folder's current
    builds when they all verify (else goes on serving its builds: refused). Exit 0 when
    each reloaded (or had nothing new), 1 when one refused or did not finish, 2 when no
    server serves DATA.

    \b
    Example:
      kelime build --bootstrap && kelime reload      # serve the new build
      kelime reload --data /srv/kelime/data --json   # each server's outcome as JSON
    """
    with needs_extra("serve", "kelime reload"):
        from ..service.control import RECORDS, servers
        from ..service.reload import reloaded
    folder = data_dir(data)
    found = servers(folder)
    if not found:
        message = (f"no `kelime serve` is serving {folder} (none recorded in "
                   f"{folder / RECORDS}): start one with `kelime serve --data {folder}`; a "
                   f"server started by an older kelime reloads on SIGHUP to its master (the "
                   f"`kelime serve` process)")
        if as_json:
            raise json_failure({"error": {"code": "no_server", "message": message}}, USAGE)
        raise failure(message, USAGE)
    outcomes = [{"pid": record["pid"], "binds": record.get("binds", []),
                 **reloaded(record["pid"], Path(record["runtime"]), timeout)}
                for record in found]
    if as_json:
        print_json({"data": str(folder), "servers": outcomes})
    else:
        for out in outcomes:
            click.echo(_said(out, folder))
    sys.exit(FAILED if any(out["outcome"] not in ("reloaded", "unchanged")
                           for out in outcomes) else 0)


def _said(out: dict[str, Any], folder: Path) -> str:
    where = f"pid {out['pid']} ({', '.join(out['binds'])})"
    serving = _versions(out.get("versions"))
    if out["outcome"] == "refused":
        refused = out.get("refused") or {}
        why = "; ".join(str(w) for w in refused.values())
        back = " and ".join(f"`kelime lexicons --data {folder} rollback {name} && kelime "
                            f"reload --data {folder}`" for name in refused if name)
        return (f"{where}: refused: {why}; still serving {serving}"
                + (f"; to serve the previous good build: {back}" if back else ""))
    if out["outcome"] == "timeout":
        return f"{where}: not finished: {out['why']}"
    return f"{where}: {out['outcome']}, serving {serving}"


def _versions(versions: Any) -> str:
    """The versions a server's pins list ({name: version}, or several versions a name)."""
    if not isinstance(versions, dict) or not versions:
        return "nothing"
    shown = []
    for name, held in sorted(versions.items()):
        held = held if isinstance(held, list | tuple) else [held]
        shown.append(f"{name} {' '.join(map(str, held))}")
    return ", ".join(shown)
