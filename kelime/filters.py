"""The filter policy (data/policy.toml) and the filters that turn TDK entries into
candidate game words with the reason to refuse each (proper name, obscene, ...).

The policy file is TOML, reviewed like code. Its curated lists are plain text files
beside it, one word a line, `#` comments; a blocklist line may name a reason after
the word (default `obscene`): ``orospu`` or ``ayşe proper_name``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

from .build import BuildError, Candidate
from .lexicon import REASONS
from .normalize import TURKISH, Alphabet, normalize

POLICY_VERSION = 1


@dataclass
class Policy:
    """Parsed policy: tag ids and names that make a sense vulgar, and the curated lists."""

    vulgar_tag_ids: frozenset[str] = frozenset({"36", "38"})
    vulgar_tag_names: frozenset[str] = frozenset({"kaba konuşmada", "hakaret yollu"})
    proper_by_flag: bool = True
    proper_by_capital: bool = True
    blocked: dict[str, str] = field(default_factory=dict)
    allowed: list[str] = field(default_factory=list)
    path: Path | None = None


def _read_list(path: Path) -> list[list[str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BuildError(f"policy list {path} does not exist") from None
    rows = (line.split("#", 1)[0].split() for line in text.splitlines())
    return [row for row in rows if row]


def load_policy(path: str | Path) -> Policy:
    """Read a policy TOML and the lists it names (paths relative to the TOML)."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BuildError(f"policy file {path} does not exist") from None
    except tomllib.TOMLDecodeError as e:
        raise BuildError(f"policy file {path} is not valid TOML: {e}") from None
    if raw.get("version") != POLICY_VERSION:
        raise BuildError(f"policy file {path} must say version = {POLICY_VERSION}")
    obscene, proper = raw.get("obscene", {}), raw.get("proper_name", {})
    blocked: dict[str, str] = {}
    if obscene.get("blocklist"):
        for row in _read_list(path.parent / obscene["blocklist"]):
            reason = row[1] if len(row) > 1 else "obscene"
            if reason not in REASONS:
                raise BuildError(f"blocklist word {row[0]!r} has unknown reason {reason!r}; "
                                 f"use one of {', '.join(REASONS)}")
            blocked[row[0]] = reason
    allowed = ([row[0] for row in _read_list(path.parent / obscene["allowlist"])]
               if obscene.get("allowlist") else [])
    return Policy(
        vulgar_tag_ids=frozenset(str(i) for i in obscene.get("tag_ids", [36, 38])),
        vulgar_tag_names=frozenset(obscene.get("tag_names", ["kaba konuşmada", "hakaret yollu"])),
        proper_by_flag=proper.get("ozel_mi", True),
        proper_by_capital=proper.get("capitalised", True),
        blocked=blocked, allowed=allowed, path=path,
    )


# --- TDK entries → candidates ---------------------------------------------------------------

SOURCE_NAME = "TDK Güncel Türkçe Sözlük (sozluk.gov.tr)"
SOURCE_LICENCE = ("content © Türk Dil Kurumu, used under TDK's terms of use; "
                  "kelime stores only derived game words and their verdicts")


@dataclass(frozen=True)
class _Entry:
    """What the filters need from one TDK entry."""

    headword: str
    word: str  # normalised game word
    proper: bool
    vulgar: bool  # has senses, and every one carries a vulgar/insulting tag


def _text(value) -> str:
    """A TDK string field, trimmed; None and non-strings become ''."""
    return value.strip() if isinstance(value, str) else ""


def is_proper(entry: dict, policy: Policy) -> bool:
    """A proper name: flagged ``ozel_mi == "1"``, or a headword with a capital letter
    (``İstanbul``, ``Abaza peyniri``, chemical symbols ``Cm``, junk ``örnekKelime``)."""
    if policy.proper_by_flag and _text(entry.get("ozel_mi")) == "1":
        return True
    return policy.proper_by_capital and any(ch.isupper() for ch in _text(entry.get("madde")))


def is_vulgar_sense(sense: dict, policy: Policy) -> bool:
    """A sense tagged `kaba konuşmada` or `hakaret yollu` (by ozellik_id or tam_adi)."""
    for tag in sense.get("ozelliklerListe") or ():
        if not isinstance(tag, dict):
            continue
        if _text(tag.get("ozellik_id")) in policy.vulgar_tag_ids:
            return True
        if " ".join(_text(tag.get("tam_adi")).split()) in policy.vulgar_tag_names:
            return True
    return False


def is_vulgar_entry(entry: dict, policy: Policy) -> bool:
    """Every sense of the entry is vulgar; an entry with no senses is not vulgar."""
    senses = [s for s in entry.get("anlamlarListe") or () if isinstance(s, dict)]
    return bool(senses) and all(is_vulgar_sense(s, policy) for s in senses)


def _summarise(entry, policy: Policy, alphabet: Alphabet) -> _Entry | None:
    if not isinstance(entry, dict):
        return None
    headword = _text(entry.get("madde"))
    word = normalize(headword, alphabet)
    if not word:
        return None
    return _Entry(headword, word, is_proper(entry, policy), is_vulgar_entry(entry, policy))


def classify_entries(entries: Iterable[dict], policy: Policy,
                     alphabet: Alphabet = TURKISH) -> Iterator[Candidate]:
    """Raw /gts entries → one Candidate per usable entry, with the reason to refuse it.

    - A proper name (see `is_proper`) gives ``proper_name``. The build keeps a word valid
      when any candidate is valid, so ``abdal`` stays valid beside ``Abdal``.
    - Obscenity is decided per game word, across entries, before any candidate is emitted:
      a word is ``obscene`` when it has common (non-proper) entries and every sense of every
      one of them is tagged vulgar or insulting. One ordinary sense in any common homonym
      keeps the word (``inek``, ``mal``); a common entry with no senses counts as ordinary;
      ``argo`` alone never refuses. Proper-name entries do not vote.
    - Letters decide the rest in `compile_words`: a space gives ``phrase`` (``dulda tutmak``),
      other non-letters ``invalid_chars`` (``e-posta``, ``bak!``, ``örnekKelime 3``).
    - Headwords are trimmed (TDK sends ``"Acem ağzı "``); circumflex variants fold together
      (``âdet`` and ``adet`` are both ``adet``). Rows without a headword are skipped.

    The entries are read once, in full, before the first candidate comes out.
    """
    seen = [s for s in (_summarise(e, policy, alphabet) for e in entries) if s is not None]
    ordinary = {s.word for s in seen if not s.proper and not s.vulgar}
    for s in seen:
        if s.proper:
            yield Candidate(s.headword, "proper_name")
        else:
            yield Candidate(s.headword, None if s.word in ordinary else "obscene")


# --- the TDK crawl cache as a build source --------------------------------------------------

def _open(path):
    """The cache at `path` and the cache module; CacheError becomes BuildError."""
    from . import cache

    try:
        return cache, cache.open_cache(path)
    except cache.CacheError as e:
        raise BuildError(str(e)) from None


def cache_candidates(path: str | Path, policy: Policy,
                     progress: Callable[[Iterator[dict], int], Iterator[dict]] | None = None,
                     ) -> Iterator[Candidate]:
    """Candidates from every entry of a crawl cache (`kelime crawl`), filtered by `policy`.

    The cache is opened now (a bad path fails at once); `progress(entries, total)` may wrap
    the entry stream, e.g. with a progress bar.
    """
    cache, db = _open(path)
    entries = cache.iter_entries(db)
    if progress is not None:
        entries = progress(entries, cache.cache_stats(db)["entries"])
    return _guarded(classify_entries(entries, policy), cache.CacheError)


def _guarded(candidates: Iterator[Candidate], error: type[Exception]) -> Iterator[Candidate]:
    try:
        yield from candidates
    except error as e:
        raise BuildError(str(e)) from None


def cache_source(path: str | Path) -> dict:
    """The manifest's `source` for a build from the cache: what, when crawled, and whose."""
    cache, db = _open(path)
    stats = cache.cache_stats(db)
    if not stats["entries"]:
        raise BuildError(f"cache {path} holds no TDK entries yet: run `kelime crawl --cache "
                         f"{path}` first")
    crawled = (stats["newest_fetch"] or "unknown date")[:10]
    return {"kind": "tdk-cache", "name": f"{SOURCE_NAME}, crawled {crawled}",
            "licence": SOURCE_LICENCE, "entries": stats["entries"], "date": stats["newest_fetch"]}
