"""Compile candidate words into the content of a lexicon (pure: no disk, no clock).

    >>> c = compile_words([Candidate("Kitap"), Candidate("kitap"),
    ...                    Candidate("İstanbul", "proper_name")])
    >>> c.words, c.rejected
    (['kitap'], {'istanbul': 'proper_name'})
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import BuildError
from ..normalize import TURKISH, Alphabet, letters_problem, normalize, turkish_sorted
from .format import REASONS

SAMPLE_SIZE = 20


@dataclass(frozen=True)
class Candidate:
    """One word offered by a source, with the reason to refuse it (None: acceptable)."""

    word: str
    reason: str | None = None


@dataclass
class Compiled:
    """The pure result of a build: valid words and rejected words with their reasons."""

    words: list[str]
    rejected: dict[str, str]

    def counts(self) -> dict[str, Any]:
        by_reason: dict[str, int] = {}
        for reason in self.rejected.values():
            by_reason[reason] = by_reason.get(reason, 0) + 1
        return {"words": len(self.words), "rejected": len(self.rejected),
                "rejected_by_reason": dict(sorted(by_reason.items()))}


def compile_words(candidates: Iterable[Candidate], alphabet: Alphabet = TURKISH,
                  min_length: int = 2, max_length: int | None = None) -> Compiled:
    """Normalise and merge candidates: a word is valid when any source accepts it. A word
    over `max_length` letters that nothing else refuses is refused as ``too_long`` (no game
    can lay it: `kelime.games.longest_word`), never left out: the lexicon says why."""
    rank = {r: i for i, r in enumerate(REASONS)}
    valid: set[str] = set()
    rejected: dict[str, str] = {}
    for cand in candidates:
        norm = normalize(cand.word, alphabet)
        if not norm:
            continue
        reason = letters_problem(norm, alphabet) or cand.reason
        if reason is None and len(norm) < min_length:
            reason = "too_short"
        if reason is None and max_length is not None and len(norm) > max_length:
            reason = "too_long"
        if reason is None:
            valid.add(norm)
        elif norm not in rejected or rank.get(reason, 99) < rank.get(rejected[norm], 99):
            rejected[norm] = reason
    for word in valid:
        rejected.pop(word, None)
    return Compiled(turkish_sorted(valid, alphabet), dict(sorted(rejected.items())))


def diff_words(old: Iterable[str], new: Iterable[str],
               alphabet: Alphabet = TURKISH) -> dict[str, Any]:
    """Added and removed counts with a sample of each, in alphabetical order."""
    old, new = set(old), set(new)
    added, removed = turkish_sorted(new - old, alphabet), turkish_sorted(old - new, alphabet)
    return {"added": len(added), "removed": len(removed),
            "added_sample": added[:SAMPLE_SIZE], "removed_sample": removed[:SAMPLE_SIZE]}


def created_stamp(source: dict[str, Any], epoch: str | None, now: dt.datetime) -> str:
    """The manifest's `created`: `epoch` (SOURCE_DATE_EPOCH) when given, else the source's own
    date (a word list's mtime, a crawl's newest fetch, a package's release), else `now`.
    Tying it to the source, as reproducible builds do, makes the same input give
    byte-identical files."""
    if epoch:
        try:
            when = dt.datetime.fromtimestamp(int(epoch), dt.UTC)
        except (ValueError, OverflowError, OSError):
            raise BuildError(f"SOURCE_DATE_EPOCH is {epoch!r}, not a number of seconds since "
                             "1970-01-01 UTC: set it to one (e.g. `git log -1 --format=%ct`) "
                             "or unset it") from None
    elif source.get("date"):
        try:
            when = dt.datetime.fromisoformat(str(source["date"]))  # "Z" too
        except ValueError:
            raise BuildError(f"the source's date {source['date']!r} is not an ISO 8601 time "
                             "(e.g. 2026-01-01T00:00:00Z)") from None
        when = when.astimezone(dt.UTC) if when.tzinfo else when
    else:
        when = now
    return when.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
