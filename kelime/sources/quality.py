"""How well a lexicon agrees with a reference headword list (TDK's `autocomplete.json`,
a list of ``{"madde": …}``): precision, recall, and recall on the most frequent words.

    >>> got = score({"kitap", "kalem", "xyz"}, {"kitap", "kalem", "ev"}, ["ev", "kitap"])
    >>> got["words"], got["reference"], got["precision"], got["recall"]
    (3, 3, 0.6667, 0.6667)
    >>> got["frequent"], got["frequent_recall"]
    (2, 0.5)
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from ..errors import SourceError
from .offline import game_words


def headwords(path: str | Path) -> set[str]:
    """The reference's single-word common headwords as game words (capitalised headwords,
    TDK's proper names, left out)."""
    try:
        rows = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SourceError(f"cannot read the headword list {path}: {e}") from None
    return game_words(r["madde"] for r in rows if isinstance(r, dict)
                      and isinstance(r.get("madde"), str) and not r["madde"][:1].isupper())


def frequent_headwords(reference: set[str], count: int, language: str = "tr") -> list[str]:
    """The `count` most frequent words (wordfreq's list) that are reference headwords."""
    import wordfreq

    found = []
    for word in wordfreq.iter_wordlist(language):
        norm = next(iter(game_words([word])), None)
        if norm in reference and norm not in found:
            found.append(norm)
            if len(found) == count:
                break
    return found


def score(words: set[str], reference: set[str], frequent: Iterable[str] = ()) -> dict[str, float]:
    hits = len(words & reference)
    frequent = list(frequent)
    return {"words": len(words), "reference": len(reference),
            "precision": round(hits / len(words), 4) if words else 0.0,
            "recall": round(hits / len(reference), 4) if reference else 0.0,
            "frequent": len(frequent),
            "frequent_recall": round(sum(w in words for w in frequent) / len(frequent), 4)
            if frequent else 0.0}
