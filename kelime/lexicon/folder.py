"""Finding lexicons in a data folder: each ``<data>/<name>`` is a lexicon (usually a symlink
to ``.builds/<name>-<version>``), and its manifest must carry the same name."""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path

from ..errors import LexiconError
from .format import MANIFEST_FILE, Manifest
from .reader import Lexicon

DEFAULT_LEXICON = "tr"
BUILDS_DIR = ".builds"  # in a data folder: every build, `<name>-<version>[-<n>]`


def lexicon_names(folder: Path) -> list[str]:
    """Names of the lexicons built under `folder` (hidden build folders excluded)."""
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir()
                  if not p.name.startswith(".") and (p / MANIFEST_FILE).is_file())


def load_named(folder: Path, name: str) -> Lexicon:
    """The lexicon at `folder/name`, whose manifest must say it is `name`."""
    lex = Lexicon.load(folder / name)
    if lex.name != name:
        raise LexiconError(f"{folder / name} holds a lexicon named {lex.name!r}, not {name!r}: "
                           f"rename the folder, or rebuild it with `kelime build --name {name}`")
    return lex


def load_lexicon(folder: Path, name: str = DEFAULT_LEXICON) -> Lexicon:
    """One lexicon by name (`tr`), or one build of it (`tr@d4323d22aa28`, from `.builds`),
    with an error that says how to build it, or which builds there are."""
    name, version = split_pin(name)
    if version is not None:
        versions: dict[str, Path] = {}
        for path in builds_of(folder, name):
            with suppress(LexiconError):  # (a damaged one: `kelime lexicons list` says why)
                versions.setdefault(Manifest.read(path).version, path)
        if version not in versions:
            raise LexiconError(f"no build {version!r} of {name!r} in {folder / BUILDS_DIR} "
                               f"(have: {', '.join(versions) or 'none'}); `kelime lexicons "
                               f"list` shows them")
        return Lexicon.load(versions[version])
    if not (folder / name / MANIFEST_FILE).exists():
        have = ", ".join(lexicon_names(folder)) or "none"
        raise LexiconError(f"no lexicon {name!r} in {folder} (have: {have}); build one with "
                           f"`kelime build --bootstrap --out {folder}` or "
                           f"`kelime build --wordlist FILE --name {name} --out {folder}`")
    return load_named(folder, name)


def load_all(folder: Path) -> dict[str, Lexicon]:
    """Every lexicon under `folder`, by name."""
    return {name: load_named(folder, name) for name in lexicon_names(folder)}


def current_builds(folder: Path) -> tuple[dict[str, Path], dict[str, str]]:
    """({name: the build folder `folder/name` resolves to}, {name: why it cannot be served}):
    what a server pins, so that every worker, respawned or not, serves the same builds. A
    folder (or link) without a manifest is a problem, not silently no lexicon: a reload must
    not drop a lexicon whose new build is half written."""
    builds: dict[str, Path] = {}
    problems: dict[str, str] = {}
    if not folder.is_dir():
        return builds, {"": f"{folder} is not a folder"}
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_symlink() and not entry.exists():
            problems[entry.name] = (f"{entry} points to {os.readlink(entry)}, which does not "
                                    f"exist: rebuild it with `kelime build`")
        elif (entry / MANIFEST_FILE).is_file():
            builds[entry.name] = entry.resolve()
        elif entry.is_dir():
            problems[entry.name] = (f"{entry} has no {MANIFEST_FILE} (a build still being "
                                    f"written, or not a lexicon): finish it with `kelime "
                                    f"build`, or move it out of {folder}")
    return builds, problems


def build_folder(name: str) -> re.Pattern[str]:
    """The names `kelime build` gives `name`'s folders under BUILDS_DIR:
    ``<name>-<version>[-<n>]`` and ``<name>-replaced-<pid>`` (so that ``tr`` never takes
    ``tr-kids-<version>``, as a ``tr-*`` glob would)."""
    return re.compile(rf"{re.escape(name)}-(?:[0-9a-f]{{12}}(?:-\d+)?|replaced-\d+)")


def split_pin(name: str) -> tuple[str, str | None]:
    """`tr@d4323d22aa28` → ("tr", "d4323d22aa28"); `tr` → ("tr", None)::

        >>> split_pin("tr@D4323d22aa28"), split_pin("ku")
        (('tr', 'd4323d22aa28'), ('ku', None))
    """
    base, at, version = name.partition("@")
    return base, (version.strip().lower() if at else None)


def hold(build: Path) -> int:
    """Mark a build folder as served (a shared lock on the folder itself, held until the
    returned descriptor is closed): `kelime build` never prunes a build that is held."""
    fd = os.open(build, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_SH)
    return fd


class Holds:
    """The build folders a process holds (`hold`), by folder: `keep` holds exactly those
    given, and lets the others go (`kelime build` may prune them again)."""

    def __init__(self) -> None:
        self.fds: dict[Path, int] = {}

    def keep(self, builds: Iterable[Path]) -> None:
        wanted = set(builds)
        for path in wanted - set(self.fds):
            self.fds[path] = hold(path)
        for path in set(self.fds) - wanted:
            os.close(self.fds.pop(path))


def held(build: Path) -> bool:
    """Whether some process serves this build folder (holds it, see `hold`)."""
    try:
        fd = os.open(build, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def builds_of(folder: Path, name: str) -> list[Path]:
    """Every build folder of `name` kept under `folder`/BUILDS_DIR, newest first (written
    last: a build folder is renamed into place once its files are written; one copied in
    keeps its time with `rsync -a`), damaged ones included."""
    ours, found = build_folder(name), []
    with suppress(OSError):  # no .builds yet
        for path in (folder / BUILDS_DIR).iterdir():
            with suppress(OSError):  # removed meanwhile
                if ours.fullmatch(path.name) and path.is_dir():
                    found.append((path.stat().st_mtime_ns, path.name, path))
    return [path for *_, path in sorted(found, reverse=True)]


def last_good(folder: Path, name: str, besides: Path | None = None,
              older: bool = False) -> Lexicon | None:
    """The newest build of `name` under `folder` that verifies (`Lexicon.load`) and is named
    `name`, other than `besides` (with `older`: only those written before it), a copy of
    `besides`' own version first (the same words: `<name>-<version>-2`); None when there is
    none."""
    builds = builds_of(folder, name)
    if besides is not None:
        besides = besides.resolve()
        if older and besides in builds:
            builds = builds[builds.index(besides) + 1:]
        builds = [b for b in builds if b != besides]
        same = f"{name}-{besides.name.removeprefix(name + '-')[:12]}"  # its version's copies
        builds.sort(key=lambda b: b.name != same and not b.name.startswith(same + "-"))
    for build in builds:
        try:
            lex = Lexicon.load(build)
        except (LexiconError, OSError):
            continue
        if lex.name == name:
            return lex
    return None
