"""Which builds a server serves (its *pins*), and the one rule a reload follows.

Of each lexicon a server holds its current build (the data folder's link) and up to
`keep` − 1 builds before it (the newest others of `.builds/` that verify), so that a game
that pinned a version (``tr@d4323d22aa28``) keeps its verdicts through a rollout.

`next_pins` gives the data folder's current builds, each loaded (and so verified) when every
one of them verifies; else the builds already served, with the refusal. A server pins the
builds it starts with (`first_pins`), so that all its processes serve the same ones, never
whatever has since appeared on disk, and moves to new ones only by `next_pins`::

    >>> pins = Pins(1, "started", {})
    >>> pins.versions, pins.reloads
    ({}, {'reloaded': 0, 'unchanged': 0, 'refused': 0})
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from ..errors import LexiconError
from .folder import BUILDS_DIR, builds_of, current_builds, last_good
from .reader import Lexicon

OUTCOMES = ("reloaded", "unchanged", "refused")
KEEP_VERSIONS = 2  # builds of each lexicon a server holds: the current one and the one before
RECORD_KEYS = frozenset({"generation", "since", "outcome", "workers", "lexicons", "versions",
                         "refused", "reloads", "older", "held"})  # `Pins.record`'s


@dataclass(frozen=True)
class Pins:
    generation: int
    outcome: str                        # "started", or one of OUTCOMES for a reload
    lexicons: dict[str, Lexicon]        # name → the current build
    refused: dict[str, str] = field(default_factory=dict)   # name → why (last reload)
    reloads: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    older: dict[str, tuple[Lexicon, ...]] = field(default_factory=dict)  # name → held
    #                                     builds before the current one, newest first
    skipped: tuple[str, ...] = ()       # why older builds are not held (they do not verify)

    @property
    def versions(self) -> dict[str, str]:
        return {name: lex.info["version"] for name, lex in sorted(self.lexicons.items())}

    @property
    def held(self) -> dict[str, list[str]]:
        """name → the versions held, the current one first."""
        return {name: [lex.info["version"] for lex in (cur, *self.older.get(name, ()))]
                for name, cur in sorted(self.lexicons.items())}

    @property
    def described(self) -> str:
        """`tr d4323d22aa28 (also 1a2b3c4d5e6f), ku a35dcf4a8b47`: what a server serves."""
        return ", ".join(f"{name} {versions[0]}" + (f" (also {', '.join(versions[1:])})"
                                                    if versions[1:] else "")
                         for name, versions in self.held.items())

    def record(self, since: float, workers: int) -> dict[str, Any]:
        """The pins as a server's master writes them for its workers (`from_record` reads
        them): build folders, not lexicons; `since` (when the reload was asked) and `workers`
        (how many must follow) are the master's."""
        return {"generation": self.generation, "since": since, "outcome": self.outcome,
                "workers": workers, "lexicons": {n: str(p) for n, p in self.paths().items()},
                "versions": self.versions, "refused": self.refused, "reloads": self.reloads,
                "older": {n: [str(p) for p in paths] for n, paths in self.older_paths().items()},
                "held": self.held}

    def paths(self) -> dict[str, Path]:
        return {name: lex.path for name, lex in self.lexicons.items() if lex.path}

    def older_paths(self) -> dict[str, list[Path]]:
        return {name: [lex.path for lex in older if lex.path]
                for name, older in self.older.items()}

    def loaded(self) -> dict[Path, Lexicon]:
        """Every held build by its folder: what a reload need not load again."""
        every = [*self.lexicons.values(), *(lex for old in self.older.values() for lex in old)]
        return {lex.path: lex for lex in every if lex.path}


def load_build(path: Path, name: str, keep: dict[Path, Lexicon]) -> Lexicon:
    """The lexicon in build folder `path` (the one of `keep` loaded from it, if any);
    LexiconError when it cannot be loaded or is not `name`."""
    if (old := keep.get(path)) is not None:
        return old
    lex = Lexicon.load(path)
    if lex.name != name:
        raise LexiconError(f"{path} holds a lexicon named {lex.name!r}, not {name!r}")
    return lex


def load_builds(builds: dict[str, Path], keep: dict[Path, Lexicon]) -> dict[str, Lexicon]:
    """The lexicons of `builds` (name → build folder), reusing those of `keep` (by folder);
    LexiconError when one cannot be loaded or is misnamed."""
    return {name: load_build(path, name, keep) for name, path in builds.items()}


def read_record(path: Path) -> dict[str, Any] | None:
    """The pins a master recorded in `path` (`Pins.record`); None while there are none (not
    written yet, its folder removed) or `path` holds something else."""
    try:
        found = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    ok = isinstance(found, dict) and RECORD_KEYS <= found.keys() and isinstance(
        found["generation"], int)
    return found if ok else None


def from_record(found: dict[str, Any], keep: dict[Path, Lexicon]) -> Pins:
    """The pins of a master's record (`Pins.record`), their builds loaded (those of `keep`
    reused, by folder): what a worker serves. LexiconError when one cannot be loaded."""
    lexicons = load_builds({name: Path(path) for name, path in found["lexicons"].items()},
                           keep)
    older = {name: tuple(load_build(Path(path), name, keep) for path in paths)
             for name, paths in found["older"].items()}
    return Pins(found["generation"], found["outcome"], lexicons, found["refused"],
                found["reloads"], older)


def hold_older(data: Path, lexicons: dict[str, Lexicon], keep_versions: int,
               keep: dict[Path, Lexicon]) -> tuple[dict[str, tuple[Lexicon, ...]], list[str]]:
    """(name → up to `keep_versions` − 1 builds before each current one, newest first, one
    per version; the warnings of those that do not verify, which are left out)."""
    older: dict[str, tuple[Lexicon, ...]] = {}
    skipped = []
    for name, current in lexicons.items():
        found: list[Lexicon] = []
        versions = {current.info["version"]}
        for path in builds_of(data, name):
            if len(found) >= keep_versions - 1:
                break
            if path == current.path:
                continue
            try:
                lex = load_build(path, name, keep)
            except LexiconError as e:
                skipped.append(f"an older build of {name!r} is not held: {e}")
                continue
            if lex.info["version"] not in versions:  # `<name>-<version>-2`: same words
                versions.add(lex.info["version"])
                found.append(lex)
        older[name] = tuple(found)
    return older, skipped


def verify(data: Path, default: str, pinned: Pins | None = None
           ) -> tuple[dict[str, Lexicon], dict[str, str]]:
    """(lexicons, problems): every lexicon of the data folder loaded (and so verified), and
    {name: why} for those that cannot be served (a link to nothing, half written, corrupt,
    or the pinned default gone)."""
    builds, problems = current_builds(data)
    lexicons: dict[str, Lexicon] = {}
    keep = pinned.loaded() if pinned else {}
    for name, path in builds.items():
        try:
            lexicons[name] = load_build(path, name, keep)
        except LexiconError as e:
            problems[name] = str(e)
    if pinned and default in pinned.lexicons and default not in builds:
        problems.setdefault(default, f"the default lexicon {default!r} is gone from {data}")
    return lexicons, problems


def first_pins(data: Path, default: str, keep_versions: int = KEEP_VERSIONS
               ) -> tuple[Pins, dict[str, str]]:
    """The builds a server starts with, and the warnings of those it leaves out (a link to
    nothing, a folder without a manifest, an older build that does not verify) or replaces:
    a damaged current build gives way to the newest other build of its name that verifies
    (`last_good`), so that a replica restarted before the link is fixed still comes up.
    LexiconError when a damaged build has no good one to fall back on, or when there is
    none."""
    lexicons, problems = verify(data, default)
    builds, _ = current_builds(data)
    for name in [name for name in problems if name]:
        good = last_good(data, name, besides=builds.get(name))
        if good is None:
            if name in builds:
                raise LexiconError(f"{problems[name]} (and no other build of {name!r} under "
                                   f"{data / BUILDS_DIR} verifies)")
            continue  # not a lexicon (yet): left out, with its warning
        lexicons[name] = good
        problems[name] = (f"the current build of {name!r}, {data / name}, cannot be served "
                          f"({problems[name]}): serving {good.info['version']} ({good.path}), "
                          f"the newest other build that verifies, instead; run `kelime "
                          f"lexicons --data {data} rollback {name} --to "
                          f"{good.info['version']}` to point {data / name} at it, or rebuild")
    if not lexicons:
        raise LexiconError(f"no lexicon in {data}: build one with `kelime build --bootstrap "
                           f"--out {data}` (or `kelime build --wordlist FILE --out {data}`)")
    older, skipped = hold_older(data, lexicons, keep_versions, {})
    return Pins(1, "started", dict(sorted(lexicons.items())), older=older,
                skipped=tuple(skipped)), problems


def next_pins(data: Path, default: str, old: Pins, keep_versions: int = KEEP_VERSIONS) -> Pins:
    """The generation after `old`: the data folder's current builds (and the ones before
    them) when every current one verifies, else `old`'s builds with the refusal."""
    lexicons, problems = verify(data, default, old)
    if problems:
        pins = replace(old, outcome="refused", refused=problems)
    else:
        older, skipped = hold_older(data, lexicons, keep_versions, old.loaded())
        pins = Pins(old.generation, "reloaded", lexicons, older=older, skipped=tuple(skipped))
        if pins.paths() == old.paths() and pins.older_paths() == old.older_paths():
            pins = replace(pins, outcome="unchanged")
    reloads = {**old.reloads, pins.outcome: old.reloads.get(pins.outcome, 0) + 1}
    return replace(pins, generation=old.generation + 1, reloads=reloads)
