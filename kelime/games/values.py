"""Letter values "by how often the letter is used in the language" (Kelimatik's rule): the
letters ranked by their share of a word list's letters, and a game's values dealt out over
that ranking, the most used letter getting the lowest. How `kelimatik-ku`'s values were made
(its profile gives the figures), from running Kurmanji text counted word by word
(kelime/games/kurmanji-text.tsv); a test recomputes them from that table.

    >>> letter_shares(["ab", "aa"])
    [('a', 0.75), ('b', 0.25)]
    >>> by_frequency(["aab", "ac"], "abc", [1, 2, 5])
    {'a': 1, 'b': 2, 'c': 5}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence


def letter_shares(words: Iterable[str]) -> list[tuple[str, float]]:
    """Each letter's share of the words' letters, most used first (ties by letter)."""
    counts = Counter(ch for word in words for ch in word)
    total = sum(counts.values())
    return sorted(((ch, n / total) for ch, n in counts.items()), key=lambda t: (-t[1], t[0]))


def by_frequency(words: Iterable[str], letters: str, values: Sequence[int]) -> dict[str, int]:
    """`values` (a game's, any number of them) sorted and spread over `letters` ranked by
    use in `words`: the letter at rank r of n gets the sorted value at
    round(r × (len(values) − 1) / (n − 1)). Letters the words never use rank last."""
    shares = dict(letter_shares(words))
    ranked = sorted(letters, key=lambda ch: (-shares.get(ch, 0.0), letters.index(ch)))
    ordered, last = sorted(values), max(len(letters) - 1, 1)
    return {ch: ordered[round(r * (len(ordered) - 1) / last)] for r, ch in enumerate(ranked)}
