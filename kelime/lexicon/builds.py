"""The builds a data folder keeps (`write_lexicon` keeps KEEP_BUILDS of each name and the
last accepted one under ``.builds/``): what each is, what changed between two, and moving
a name's link back to an earlier one (`rollback`). `kelime lexicons` is their command.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import LexiconError
from ..normalize import turkish_sorted
from .folder import BUILDS_DIR, builds_of, last_good
from .format import Manifest
from .reader import Lexicon
from .write import ACCEPTED, _swap_link, build_lock

FOLDER = re.compile(r"(?P<name>.+)-(?:[0-9a-f]{12}(?:-\d+)?|replaced-\d+)")


def names(data: Path) -> list[str]:
    """The lexicon names with a link (or folder) in `data` or a build kept under it."""
    found = {p.name for p in data.iterdir() if not p.name.startswith(".")} \
        if data.is_dir() else set()
    if (data / BUILDS_DIR).is_dir():
        found |= {m["name"] for p in (data / BUILDS_DIR).iterdir()
                  if (m := FOLDER.fullmatch(p.name)) and p.is_dir()}
    return sorted(name for name in found if builds_of(data, name))


def _target(link: Path) -> Path | None:
    return link.resolve() if link.is_symlink() or link.is_dir() else None


def describe(data: Path, name: str) -> list[dict[str, Any]]:
    """Every kept build of `name`, newest first: version, words, created (the manifest's:
    the source's date), written (when the folder was), whether it is the current one
    (`data/name`), the last accepted one, and whether it verifies (why not, if not)."""
    current, accepted = _target(data / name), _target(data / ACCEPTED.format(name=name))
    out = []
    for build in builds_of(data, name):
        row: dict[str, Any] = {"version": None, "words": None, "created": None}
        try:
            manifest = Lexicon.load(build).manifest
            row["verifies"], row["problem"] = True, None
        except (LexiconError, OSError) as e:
            row["verifies"], row["problem"] = False, str(e)
            try:
                manifest = Manifest.read(build)
            except (LexiconError, OSError, ValueError):
                manifest = None
        if manifest is not None:
            row.update(version=manifest.version, words=manifest.words, created=manifest.created)
        written = dt.datetime.fromtimestamp(build.stat().st_mtime, dt.UTC)
        out.append({"name": name, **row, "written": written.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "current": build == current, "accepted": build == accepted,
                    "folder": str(build)})
    return out


def find_build(data: Path, name: str, version: str) -> Path:
    """The build folder of `name` at `version` (a prefix of 4 hex digits or more will do);
    LexiconError naming the versions kept when there is none, or several."""
    version = version.strip().lower()
    kept = describe(data, name)
    found = [b for b in kept if len(version) >= 4 and (b["version"] or "").startswith(version)]
    if len({b["version"] for b in found}) == 1:
        return Path(found[0]["folder"])  # the newest folder of that version
    have = ", ".join(b["version"] or Path(b["folder"]).name for b in kept) or "none"
    why = "is ambiguous" if found else "is not kept"
    raise LexiconError(f"{name}@{version} {why} under {data / BUILDS_DIR} (kept: {have}); "
                       f"`kelime lexicons list` shows them")


def diff(data: Path, name: str, old: str, new: str) -> dict[str, Any]:
    """The words build `new` of `name` has that `old` has not (added) and the reverse
    (removed), in alphabetical order; both builds must verify."""
    a, b = (Lexicon.load(find_build(data, name, v)) for v in (old, new))
    before, after = set(a.words.keys()), set(b.words.keys())
    return {"name": name, "from": a.info["version"], "to": b.info["version"],
            "added": turkish_sorted(after - before, b.alphabet),
            "removed": turkish_sorted(before - after, a.alphabet)}


def rollback(data: Path, name: str, to: str | None = None, timeout: float = 600.0,
             waiting: Callable[[str], None] = lambda holder: None) -> dict[str, Any]:
    """Point `data/name` atomically at build `to`, or at the newest build written before
    the current one that verifies (the previous good one), under the build lock (never
    while a build writes). The accepted link, the change guard's reference, stays."""
    link = data / name
    if not link.exists() and not link.is_symlink():
        raise LexiconError(f"no lexicon {name!r} in {data}: `kelime lexicons list` shows the "
                           f"builds kept")
    with build_lock(data, timeout, waiting):
        current = _target(link)
        if to is not None:
            target = Lexicon.load(find_build(data, name, to))
        elif (found := last_good(data, name, besides=current, older=True)) is not None:
            target = found
        else:
            raise LexiconError(f"no build of {name!r} written before the current one "
                               f"({current}) verifies: `kelime lexicons list --data {data}` "
                               f"shows the builds kept; pick one with --to VERSION, or rebuild")
        if target.name != name:
            raise LexiconError(f"{target.path} holds a lexicon named {target.name!r}, not "
                               f"{name!r}")
        assert target.path is not None
        was = _version(current)
        _swap_link(data, name, target.path)
    return {"name": name, "from": was, "to": target.info["version"],
            "folder": os.path.relpath(target.path, data)}


def _version(build: Path | None) -> str | None:
    if build is None:
        return None
    try:
        return Manifest.read(build).version
    except (LexiconError, OSError, ValueError):
        return build.name
