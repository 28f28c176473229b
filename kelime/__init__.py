"""kelime: the dictionary behind Turkish word games.

The pure core is this package: `normalize` (the one door for words), `lexicon` (the format,
the compile, the write, verdicts), `sources` (word lists, the bootstrap list, the TDK crawl
cache), `policy` (which words are refused), `tdk` (TDK replies, the crawl store, entries),
`games` (game profiles), `anagram` and `reports` (players' word reports). The shells
around it — `kelime.cli`, `kelime.crawler` and `kelime.service` — import the core; the core
imports none of them.

    >>> import kelime
    >>> kelime.normalize("İSTANBUL")
    'istanbul'
"""

from __future__ import annotations

from .errors import (
    BuildError,
    CacheError,
    FetchError,
    KelimeError,
    LexiconError,
    OutdatedLexicon,
    PolicyError,
    QueryError,
    SourceError,
)
from .normalize import normalize  # (a module of that name too: bound here, never lazily)

TYPE_CHECKING = False  # typing's own, without importing typing: see _LAZY
if TYPE_CHECKING:
    from typing import Any

    from .lexicon import Candidate, Lexicon, compile_words, load_lexicon, write_lexicon

__all__ = ["BuildError", "CacheError", "Candidate", "FetchError", "KelimeError", "Lexicon",
           "LexiconError", "OutdatedLexicon", "PolicyError", "QueryError", "SourceError",
           "compile_words", "load_lexicon", "normalize", "write_lexicon"]

#: Loaded when first used (PEP 562), so that `import kelime.cli` starts fast: `kelime serve`
#: takes SIGHUP from its first milliseconds on (kelime/cli/__init__.py).
_LAZY = {"Candidate": "lexicon", "Lexicon": "lexicon", "compile_words": "lexicon",
        "load_lexicon": "lexicon", "write_lexicon": "lexicon"}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'kelime' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


del TYPE_CHECKING, annotations
