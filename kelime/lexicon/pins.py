"""Which builds a server serves (its *pins*), and the one rule a reload follows.

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

from ..errors import LexiconError
from .folder import BUILDS_DIR, current_builds, last_good
from .reader import Lexicon

OUTCOMES = ("reloaded", "unchanged", "refused")


@dataclass(frozen=True)
class Pins:
    generation: int
    outcome: str                        # "started", or one of OUTCOMES for a reload
    lexicons: dict[str, Lexicon]        # name → the loaded build
    refused: dict[str, str] = field(default_factory=dict)   # name → why (last reload)
    reloads: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))

    @property
    def versions(self) -> dict[str, str]:
        return {name: lex.info["version"] for name, lex in sorted(self.lexicons.items())}

    def paths(self) -> dict[str, Path]:
        return {name: lex.path for name, lex in self.lexicons.items() if lex.path}


def load_builds(builds: dict[str, Path], keep: dict[str, Lexicon]) -> dict[str, Lexicon]:
    """The lexicons of `builds` (name → build folder), reusing those of `keep` already loaded
    from the same folder; LexiconError when one cannot be loaded or is misnamed."""
    out = {}
    for name, path in builds.items():
        old = keep.get(name)
        if old is not None and old.path == path:
            out[name] = old
            continue
        lex = Lexicon.load(path)
        if lex.name != name:
            raise LexiconError(f"{path} holds a lexicon named {lex.name!r}, not {name!r}")
        out[name] = lex
    return out


def verify(data: Path, default: str, pinned: Pins | None = None
           ) -> tuple[dict[str, Lexicon], dict[str, str]]:
    """(lexicons, problems): every lexicon of the data folder loaded (and so verified), and
    {name: why} for those that cannot be served (a link to nothing, half written, corrupt,
    or the pinned default gone)."""
    builds, problems = current_builds(data)
    lexicons: dict[str, Lexicon] = {}
    for name, path in builds.items():
        try:
            lexicons.update(load_builds({name: path}, pinned.lexicons if pinned else {}))
        except LexiconError as e:
            problems[name] = str(e)
    if pinned and default in pinned.lexicons and default not in builds:
        problems.setdefault(default, f"the default lexicon {default!r} is gone from {data}")
    return lexicons, problems


def first_pins(data: Path, default: str) -> tuple[Pins, dict[str, str]]:
    """The builds a server starts with, and the warnings of those it leaves out (a link to
    nothing, a folder without a manifest) or replaces: a damaged current build gives way to
    the newest other build of its name that verifies (`last_good`), so that a replica
    restarted before the link is fixed still comes up. LexiconError when a damaged build
    has no good one to fall back on, or when there is none."""
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
    return Pins(1, "started", dict(sorted(lexicons.items()))), problems


def next_pins(data: Path, default: str, old: Pins) -> Pins:
    """The generation after `old`: the data folder's current builds when every one of them
    verifies, else `old`'s builds with the refusal."""
    lexicons, problems = verify(data, default, old)
    if problems:
        pins = replace(old, outcome="refused", refused=problems)
    else:
        same = lexicons.keys() == old.lexicons.keys() and all(
            lexicons[name] is old.lexicons[name] for name in lexicons)
        pins = Pins(old.generation, "unchanged" if same else "reloaded", lexicons)
    reloads = {**old.reloads, pins.outcome: old.reloads.get(pins.outcome, 0) + 1}
    return replace(pins, generation=old.generation + 1, reloads=reloads)
