"""Where candidate words come from: a plain word list, the offline bootstrap list, or the
TDK crawl cache. Each source gives `Candidate`s and the manifest's `source` description."""

from .bootstrap import bootstrap_candidates, bootstrap_source
from .tdk import cache_candidates, cache_source
from .wordlist import read_wordlist, wordlist_source

__all__ = ["bootstrap_candidates", "bootstrap_source", "cache_candidates", "cache_source",
           "read_wordlist", "wordlist_source"]
