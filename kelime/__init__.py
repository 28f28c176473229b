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
from .lexicon import Candidate, Lexicon, compile_words, load_lexicon, write_lexicon
from .normalize import normalize

__all__ = ["BuildError", "CacheError", "Candidate", "FetchError", "KelimeError", "Lexicon",
           "LexiconError", "OutdatedLexicon", "PolicyError", "QueryError", "SourceError",
           "compile_words", "load_lexicon", "normalize", "write_lexicon"]
