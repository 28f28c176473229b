""""Did you mean": the valid words a word that is not valid was probably meant to be.

Turkish players' typing goes wrong in two known ways, and both are a letter swapped for its
twin: the dotted and dotless i of upper case (``KITAP`` is ``kıtap`` by Turkish casing, but
was meant as ``kitap``), and letters typed without their Turkish marks on a keyboard that
lacks them (``cay`` for ``çay``, ``sehir`` for ``şehir``, ``ogrenci`` for ``öğrenci``).
Circumflexes need no suggestion: `normalize` folds them (``kâtil`` is ``katil``).

The search walks the word left to right, trying each letter and its twin, and follows only
prefixes the lexicon's trie holds, so its cost is bounded by the words that exist, not by
the 2ⁿ spellings (and by `MAX_STEPS` in any case).

    >>> import marisa_trie
    >>> words = marisa_trie.Trie(["kitap", "çay", "şehir", "öğrenci", "ılık", "ilik"])
    >>> suggest("kıtap", words), suggest("cay", words), suggest("ogrenci", words)
    (['kitap'], ['çay'], ['öğrenci'])
    >>> suggest("ilık", words)  # both twins are words: fewer changes first
    ['ılık', 'ilik']
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Protocol

from .normalize import TURKISH, Alphabet, sort_key


class Prefixes(Protocol):
    """What `suggest` needs of the words: membership and prefixes (a marisa Trie has both)."""

    def __contains__(self, word: object) -> bool: ...

    def has_keys_with_prefix(self, prefix: str) -> bool: ...


@lru_cache(maxsize=16)
def twins(alphabet: Alphabet) -> dict[str, str]:
    """Each letter and the letter it is mistyped as, both ways: a letter with a mark and the
    same letter without it, where both are letters of the alphabet (Turkish: c ç, g ğ, o ö,
    s ş, u ü, and i ı; Kurmanji: c ç, e ê, i î, s ş, u û).

    >>> kurmanji = Alphabet("abcçdeêfghiîjklmnopqrsştuûvwxyz")
    >>> twins(TURKISH)["c"], twins(TURKISH)["ı"], twins(kurmanji)["u"]
    ('ç', 'i', 'û')
    """
    letters = alphabet.letter_set
    pairs = {}
    for letter in alphabet.letters:
        base = unicodedata.normalize("NFD", letter)[0]
        if base != letter and base in letters:
            pairs[base], pairs[letter] = letter, base
    if {"i", "ı"} <= letters:  # the dotless i has no decomposition
        pairs["i"], pairs["ı"] = "ı", "i"
    return pairs


TWINS = twins(TURKISH)
MAX_SUGGESTIONS = 5
MAX_STEPS = 2_000  # prefixes tried at most, whatever the word


def suggest(word: str, words: Prefixes, alphabet: Alphabet = TURKISH, most: int = MAX_SUGGESTIONS,
            min_length: int = 1) -> list[str]:
    """Valid words `word` (normalised, not itself valid) was probably meant to be: fewest
    letters changed first, then Turkish order. `words` is a marisa Trie (``in`` and
    ``has_keys_with_prefix``)."""
    if not word or len(word) < min_length or not alphabet.letter_set.issuperset(word):
        return []
    pairs = twins(alphabet)
    found: list[tuple[int, str]] = []
    steps = 0
    stack = [("", 0)]  # (prefix, letters changed)
    while stack and steps < MAX_STEPS:
        prefix, changed = stack.pop()
        i = len(prefix)
        if i == len(word):
            if changed and prefix in words:
                found.append((changed, prefix))
            continue
        ch = word[i]
        for option, cost in ((ch, 0), (pairs.get(ch), 1)):
            if option is None or option not in alphabet.letter_set:
                continue
            steps += 1
            longer = prefix + option
            if words.has_keys_with_prefix(longer):
                stack.append((longer, changed + cost))
    found.sort(key=lambda pair: (pair[0], sort_key(pair[1], alphabet)))
    return [w for _, w in found[:most]]
