"""Where candidate words come from: a plain word list, the offline lists (Turkish by
agreement, Kurmanji from KLPT), or the TDK crawl cache. Each source gives `Candidate`s and
the manifest's `source` description; every one goes through the same policy."""

from .bootstrap import Bootstrap, bootstrap_candidates, bootstrap_source
from .bootstrap import bootstrap as offline_lexicon
from .tdk import cache_candidates, cache_source
from .wordlist import read_wordlist, wordlist_source

__all__ = ["Bootstrap", "bootstrap_candidates", "bootstrap_source", "cache_candidates",
           "cache_source", "offline_lexicon", "read_wordlist", "wordlist_source"]
