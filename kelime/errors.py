"""The one exception tree of kelime. Every error a user can act on derives from KelimeError;
its message says what happened and what to do. The CLI turns it into ``Error: …`` (exit 1)
at one boundary, the HTTP service into the JSON error shape at another.

    KelimeError
    ├── LexiconError      a lexicon folder that cannot be used (missing, corrupt, too old)
    │   ├── OutdatedLexicon   built by another kelime (format or normalisation): rebuild
    │   └── NoAnagramIndex    built before the anagram index existed: validates, no anagrams
    ├── BuildError        a build that did not happen (the previous lexicon is untouched)
    │   └── PolicyError   the filter policy or one of its lists cannot be read
    ├── SourceError       a word source that cannot be read (word list, bootstrap package)
    │   └── MissingPackage  an offline list's package is not installed (kelime[offline])
    ├── CacheError        the TDK crawl cache is missing, corrupt, busy or not ours
    │   └── CacheBusy     ... locked by another process for longer than the caller waits
    ├── FetchError        a TDK look-up that failed for good
    ├── QueryError        an anagram or split question that cannot be answered as asked
    │   ├── AnagramError  (kelime.anagram.errors) RackError, PatternError, OptionError, OverLimit
    │   └── BoardError    (kelime.board.errors) a board, tiles or rack that cannot be read
    ├── GameProfileError  (kelime.games.load) a game profile file that cannot be used
    └── (kelime.reports)  ReportError (the report store cannot be used), RateLimited,
                          StoreFull, NoOpenReport
"""

from __future__ import annotations

TYPE_CHECKING = False  # (typing itself is not loaded: kelime/__init__.py's _LAZY)
if TYPE_CHECKING:
    from typing import Any

EXCERPT = 40  # characters of a client's text an error message quotes


#: Bits of a whole number a message writes out in full (about 38 digits); beyond, its size.
NUMBER_BITS = 128


def number(value: int) -> str:
    """A client's whole number for a message: itself, or its order of magnitude when it has
    more digits than anyone reads (a JSON ``1e300`` arrives as an int of 301 digits, and
    Python refuses to write out one of over 4,300).

    >>> number(5000), number(10**300), number(-(10**5000))
    ('5000', '≈10^300', '≈-10^5000')
    """
    if value.bit_length() <= NUMBER_BITS:
        return str(value)
    digits = round((abs(value).bit_length() - 1) * 0.30103)  # log10(2)
    return f"≈{'-' if value < 0 else ''}10^{digits}"


def excerpt(text: object, limit: int = EXCERPT) -> str:
    """`text` quoted for a message, cut to `limit` characters: errors never echo a huge
    input back (a huge whole number is given by its size, `number`).

    >>> excerpt("kitap"), excerpt("x" * 100)[-3:], excerpt(-(10**300))
    ("'kitap'", "x'…", '≈-10^300')
    """
    if isinstance(text, int) and not isinstance(text, bool) and text.bit_length() > NUMBER_BITS:
        return number(text)
    text = str(text)
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "…"


class KelimeError(Exception):
    """Base of every error kelime expects; the message is meant for a person."""


class LexiconError(KelimeError):
    """A lexicon folder that cannot be used; the message says how to rebuild it."""


class OutdatedLexicon(LexiconError):
    """A lexicon written by a kelime with another format or normalisation: rebuild it."""


class NoAnagramIndex(LexiconError):
    """A lexicon built without an anagram index: it validates, but anagrams need a rebuild."""


class BuildError(KelimeError):
    """A build that did not happen; the message says why and what to do."""


class PolicyError(BuildError):
    """The filter policy (TOML) or one of its word lists cannot be read or is malformed."""


class SourceError(BuildError):
    """A source of candidate words that cannot be read."""


class MissingPackage(SourceError):
    """An offline word list whose package is not installed: kelime's `[offline]` extra."""


class CacheError(KelimeError):
    """The cache file is missing, not SQLite, corrupt, busy, or not a kelime cache."""


class CacheBusy(CacheError):
    """Another process held the cache's lock longer than the caller would wait: try again
    later (nothing is wrong with the file)."""


class FetchError(KelimeError):
    """A TDK look-up that failed for good, in words the user can act on."""


class QueryError(KelimeError):
    """An anagram/split question that cannot be answered: `code` names the problem and
    `over_limit` tells a limit (HTTP 413) from a malformed question (HTTP 422)."""

    def __init__(self, code: str, message: str, over_limit: bool = False,
                 details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.over_limit, self.details = code, message, over_limit, details
