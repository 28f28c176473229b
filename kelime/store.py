"""Finding lexicons in a data folder (`KELIME_DATA`, default `data/`)."""

from __future__ import annotations

import os
from pathlib import Path

from .lexicon import MANIFEST_FILE, Lexicon, LexiconError

DEFAULT_LEXICON = "tr"


def data_dir(flag: str | Path | None = None) -> Path:
    """The data folder: the flag beats `KELIME_DATA`, which beats `data/`."""
    return Path(flag or os.environ.get("KELIME_DATA") or "data")


def lexicon_names(folder: Path) -> list[str]:
    """Names of the lexicons built under `folder` (hidden build folders excluded)."""
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir()
                  if not p.name.startswith(".") and (p / MANIFEST_FILE).is_file())


def load_lexicon(folder: Path, name: str = DEFAULT_LEXICON) -> Lexicon:
    """One lexicon by name, with an error that says how to build it."""
    path = folder / name
    if not (path / MANIFEST_FILE).exists():
        have = ", ".join(lexicon_names(folder)) or "none"
        raise LexiconError(f"no lexicon {name!r} in {folder} (have: {have}); build one with "
                           f"`kelime build --bootstrap` or `kelime build --wordlist FILE --name {name}`")
    return Lexicon.load(path)


def load_all(folder: Path) -> dict[str, Lexicon]:
    """Every lexicon under `folder`, by name."""
    return {name: Lexicon.load(folder / name) for name in lexicon_names(folder)}
