"""A plain word list as a build source: one word per line, `#` comments, UTF-8."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

from ..errors import SourceError
from ..lexicon.compile import Candidate


def is_name(word: str) -> bool:
    """A capitalised word (`İstanbul`, not `KİTAP`: a list in capitals says nothing)."""
    return word[:1].isupper() and any(c.islower() for c in word[1:])


def read_wordlist(path: str | Path, names_by_capital: bool = False) -> Iterator[Candidate]:
    """One word per line, `#` starts a comment, blank lines skipped; UTF-8. With
    `names_by_capital` (the policy's name rule), a capitalised word is a proper name, unless
    the list also holds it in lower case."""
    path = Path(path)
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                word = line.split("#", 1)[0].strip()
                if word:
                    yield Candidate(word, "proper_name" if names_by_capital and is_name(word)
                                    else None)
    except FileNotFoundError:
        raise SourceError(f"word list {path} does not exist") from None
    except UnicodeDecodeError as e:
        raise SourceError(f"word list {path} is not UTF-8 (byte {e.start}): convert it "
                         "with `iconv -t UTF-8`") from None
    except OSError as e:  # a folder, no permission, an I/O error
        raise SourceError(f"cannot read word list {path}: {e.strerror or e}") from None


def wordlist_source(path: str | Path) -> dict[str, str]:
    """The manifest's `source` for a word list; `date` (its mtime) pins the build's `created`."""
    try:
        stamp = Path(path).stat().st_mtime
    except FileNotFoundError:
        raise SourceError(f"word list {path} does not exist") from None
    except OSError as e:
        raise SourceError(f"cannot read word list {path}: {e.strerror or e}") from None
    mtime = dt.datetime.fromtimestamp(int(stamp), dt.UTC)
    return {"kind": "wordlist", "name": Path(path).name, "licence": "as given by the list's author",
            "date": mtime.strftime("%Y-%m-%dT%H:%M:%SZ")}
