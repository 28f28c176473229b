"""Anagrams and splits: which words can these tiles make, and can a hand be laid out whole.

Pure: plain functions over an `AnagramIndex` (built with the lexicon, see `index`), a game
profile and the question; no clock but the one a split is given, no disk but `load`.

    >>> index = AnagramIndex.from_buffer(build_index(["kale", "kel", "ak", "ela"]))
    >>> [w["word"] for w in anagram(index, "kale?").as_dict()["words"]]
    ['kale', 'ela', 'kel', 'ak']
    >>> answer = split(index, "kalek", "harfbank", what_if=True)  # a hand of 5: what if
    >>> answer.found, [w.word for w in answer.words], answer.discarded, answer.penalty
    (False, ['kale'], ('k',), 1)

Modules, one idea each: `rack` (reading racks and patterns), `deal` (racks a game can
deal), `index` (the file format), `bits` (sets of words as ints), `plan`/`select`/`rank`
(finding and ranking words), `tiles` (laying one word), `query`/`search` (anagram
questions and answers), `usages`/`split` (Harfbank layouts), `brute` (the reference it is
all tested against), `limits`, `errors`.
"""

from .errors import (
    AnagramError,
    IndexFormatError,
    OptionError,
    OverLimit,
    PatternError,
    RackError,
    RackNotDealt,
)
from .index import INDEX_FILE, AnagramIndex, build_index
from .limits import Limits
from .query import Query, make_query
from .rack import Pattern, Rack, parse_exclude, parse_pattern, parse_rack
from .search import Answer, Hit, anagram, search
from .split import Laid, Split, split

__all__ = [
                     "INDEX_FILE",
                     "AnagramError",
                     "AnagramIndex",
                     "Answer",
                     "Hit",
                     "IndexFormatError",
                     "Laid",
                     "Limits",
                     "OptionError",
                     "OverLimit",
                     "Pattern",
                     "PatternError",
                     "Query",
                     "Rack",
                     "RackError",
                     "RackNotDealt",
                     "Split",
                     "anagram",
                     "build_index",
                     "make_query",
                     "parse_exclude",
                     "parse_pattern",
                     "parse_rack",
                     "search",
                     "split",
]
