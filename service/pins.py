"""The pin file: which build of each lexicon this server serves, shared by its processes.

`kelime serve` (the supervisor, `supervisor.py`) resolves the data folder's links to build
folders, verifies them, and writes the pin file; every worker loads exactly the pinned
builds, so a worker respawned after a crash serves what the others serve, not whatever a
maintainer has since built. A reload writes a new generation; workers switch to it (or,
when the new builds were refused, keep theirs and count the refusal)::

    {"generation": 2, "supervisor": 4242, "outcome": "reloaded",
     "lexicons": {"tr": "/srv/kelime/data/.builds/tr-3f2a…"},
     "versions": {"tr": "3f2a…"}, "refused": {},
     "reloads": {"reloaded": 1, "refused": 0, "unchanged": 0}}
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

OUTCOMES = ("reloaded", "unchanged", "refused")


@dataclass(frozen=True)
class Pins:
    generation: int
    supervisor: int
    outcome: str                       # "started", or one of OUTCOMES for a reload
    lexicons: dict[str, str]           # name → build folder (absolute)
    versions: dict[str, str]           # name → version
    refused: dict[str, str] = field(default_factory=dict)   # name → why (last reload)
    reloads: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))

    def paths(self) -> dict[str, Path]:
        return {name: Path(path) for name, path in self.lexicons.items()}


def write_pins(path: Path, pins: Pins) -> None:
    """Replace the pin file atomically (readers see the old file or the new one)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(asdict(pins), sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def read_pins(path: Path) -> Pins:
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    return Pins(**raw)
