"""Finding lexicons in a data folder: each ``<data>/<name>`` is a lexicon (usually a symlink
to ``.builds/<name>-<version>``), and its manifest must carry the same name."""

from __future__ import annotations

from pathlib import Path

from ..errors import LexiconError
from .format import MANIFEST_FILE
from .reader import Lexicon

DEFAULT_LEXICON = "tr"


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
    """One lexicon by name, with an error that says how to build it."""
    if not (folder / name / MANIFEST_FILE).exists():
        have = ", ".join(lexicon_names(folder)) or "none"
        raise LexiconError(f"no lexicon {name!r} in {folder} (have: {have}); build one with "
                           f"`kelime build --bootstrap --out {folder}` or "
                           f"`kelime build --wordlist FILE --name {name} --out {folder}`")
    return load_named(folder, name)


def load_all(folder: Path) -> dict[str, Lexicon]:
    """Every lexicon under `folder`, by name."""
    return {name: load_named(folder, name) for name in lexicon_names(folder)}
