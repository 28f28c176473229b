"""TDK entries → candidate game words, with the reason to refuse each (proper name, obscene).

Pure functions over the entries as TDK sends them (`/gts` JSON objects) and a `Policy`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..lexicon.compile import Candidate, compile_words
from ..normalize import TURKISH, Alphabet, normalize
from ..policy import Policy

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


def _text(value: object) -> str:
    """A TDK string field, trimmed; None and non-strings become ''."""
    return value.strip() if isinstance(value, str) else ""


def is_proper(entry: dict[str, Any], policy: Policy) -> bool:
    """A proper name: flagged ``ozel_mi == "1"``, or a headword with a capital letter
    (``İstanbul``, ``Abaza peyniri``, chemical symbols ``Cm``, junk ``örnekKelime``)."""
    if policy.proper_by_flag and _text(entry.get("ozel_mi")) == "1":
        return True
    return policy.proper_by_capital and any(ch.isupper() for ch in _text(entry.get("madde")))


def is_vulgar_sense(sense: dict[str, Any], policy: Policy) -> bool:
    """A sense tagged `kaba konuşmada` or `hakaret yollu` (by ozellik_id or tam_adi)."""
    for tag in sense.get("ozelliklerListe") or ():
        if not isinstance(tag, dict):
            continue
        if _text(tag.get("ozellik_id")) in policy.vulgar_tag_ids:
            return True
        if " ".join(_text(tag.get("tam_adi")).split()) in policy.vulgar_tag_names:
            return True
    return False


def is_vulgar_entry(entry: dict[str, Any], policy: Policy) -> bool:
    """Every sense of the entry is vulgar; an entry with no senses is not vulgar."""
    senses = [s for s in entry.get("anlamlarListe") or () if isinstance(s, dict)]
    return bool(senses) and all(is_vulgar_sense(s, policy) for s in senses)


def _summarise(entry: object, policy: Policy, alphabet: Alphabet) -> _Entry | None:
    if not isinstance(entry, dict):
        return None
    headword = _text(entry.get("madde"))
    word = normalize(headword, alphabet)
    if not word:
        return None
    return _Entry(headword, word, is_proper(entry, policy), is_vulgar_entry(entry, policy))


def classify_entries(entries: Iterable[object], policy: Policy,
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



def headwords(entries: Iterable[object]) -> list[dict[str, Any]]:
    """Each entry's headword, proper-name flag, number of senses and register tags (the
    tags' full names, each once), as `kelime reports check` shows them."""
    found = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        senses = [s for s in entry.get("anlamlarListe") or () if isinstance(s, dict)]
        tags: list[str] = []
        for sense in senses:
            for tag in sense.get("ozelliklerListe") or ():
                name = " ".join(_text(tag.get("tam_adi")).split()) if isinstance(tag, dict) else ""
                if name and name not in tags:
                    tags.append(name)
        found.append({"madde": _text(entry.get("madde")), "ozel_mi": _text(entry.get("ozel_mi"))
                      == "1", "senses": len(senses), "tags": tags})
    return found


def tdk_view(entries: list[dict[str, Any]], word: str,
             alphabet: Alphabet = TURKISH) -> dict[str, Any]:
    """What TDK's entries say of the normalised `word`: their `headwords`, and the verdict
    TDK's own flags and register tags give it (kelime's default tag and name rules, no
    blocklist or allowlist): ``valid``, a reason, or ``not_in_dictionary``."""
    compiled = compile_words(classify_entries(entries, Policy(), alphabet), alphabet)
    if word in set(compiled.words):
        says = "valid"
    else:
        says = compiled.rejected.get(word, "not_in_dictionary")
    return {"headwords": headwords(entries), "verdict": says}
