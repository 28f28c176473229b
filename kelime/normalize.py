"""One normalisation for every word that enters kelime.

    >>> normalize("  İSTANBUL ")
    'istanbul'
    >>> normalize("IĞDIR"), normalize("Âdet")
    ('ığdır', 'adet')
    >>> letters_problem("e-posta"), letters_problem("dulda tutmak"), letters_problem("kitap")
    ('invalid_chars', 'phrase', None)

A stray mark is kept, never dropped: a doubled circumflex or a doubled dot is not a letter.

    >>> normalize("a\u0302\u0302det") == "\u00e2\u0302det", letters_problem("\u00e2\u0302det")
    (True, 'invalid_chars')
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, cached_property

#: Bumped whenever `normalize` changes; stored in every lexicon manifest.
#: 3: one pass instead of "repeat until nothing changes". The loop silently dropped one stacked
#: mark per round (a + ̂ + ̂ + det gave the valid "adet", ki + ̇ + ̇ + tap gave "kitap"); a letter
#: now absorbs at most its own dot and one circumflex, and a stack stays in the word, which is
#: then invalid_chars. Outputs changed only for such stacks.
NORMALIZATION_VERSION = 3

ALPHABET = "abcçdefgğhıijklmnoöprsştuüvyz"
KURMANJI_LETTERS = "abcçdeêfghiîjklmnopqrsştuûvwxyz"   # Hawar's 31 letters
#: The languages whose alphabets kelime knows, by their letters (messages name them).
LANGUAGES = {ALPHABET: "Turkish", KURMANJI_LETTERS: "Kurmanji"}
_CIRCUMFLEX = {"â": "a", "î": "i", "û": "u"}
#: Unicode White_Space. Not str.isspace(), which also counts the separators U+001C–U+001F:
#: those are control characters, to be refused, never silently trimmed.
WHITESPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
              "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_SPACES = re.compile(f"[{WHITESPACE}]+")
_DOT = "\u0307"  # COMBINING DOT ABOVE: the dot of İ, once lower-cased to i + U+0307
_CIRCUMFLEX_MARK = "\u0302"
_UNSTACKED_DOT = re.compile("i\u0307(?!\u0307)")
#: Every code point with a non-zero canonical combining class lies below this (Unicode 14:
#: the last is U+1E94A); tests/test_normalize.py checks it against the whole code space.
_MARKS_END = 0x20000


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def _own_dot(seq: str) -> str | None:
    """The NFC sequence ``i`` + marks with the i's own dot taken out; None if it has none.

    The i's own dot is the U+0307 that NFC would compose with a capital I into İ.
    """
    if seq[0] != "i" or _DOT not in seq:
        return None
    upper = _nfc("I" + seq[1:])
    return _nfc("i" + upper[1:]) if upper[0] == "İ" else None


@cache
def _lone_dot() -> re.Pattern[str]:
    """i + U+0307 with no other mark after it: İ lower-cased, its dot its own (a plain i)."""
    return re.compile(f"i\u0307(?!{_marks_class()})")


@cache
def _marks_class() -> str:
    """A regex class of the combining marks (canonical combining class > 0)."""
    ranges: list[list[int]] = []
    for cp in range(_MARKS_END):
        if unicodedata.combining(chr(cp)):
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1][1] = cp
            else:
                ranges.append([cp, cp])
    return "[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges) + "]"


@dataclass(frozen=True)
class Alphabet:
    """A lexicon's letters. Turkish by default; a Kurdish list brings its own.

    Casing is Turkish (I → ı) when the alphabet has a dotless ı, plain otherwise;
    a circumflexed vowel is folded only when it is not itself a letter of the alphabet.
    """

    letters: str = ALPHABET

    @property
    def language(self) -> str | None:
        """The language these letters spell ("Turkish", "Kurmanji"), None when unknown."""
        return LANGUAGES.get(self.letters)

    @cached_property
    def letter_set(self) -> frozenset[str]:
        return frozenset(self.letters)

    @cached_property
    def settled(self) -> frozenset[str]:
        """Letters that normalisation leaves alone: a word of only these is already normal."""
        return frozenset(ch for ch in self.letters if ch.islower() and ch not in _CIRCUMFLEX
                         and unicodedata.is_normalized("NFC", ch) and ch.strip() == ch)

    @cached_property
    def _dotless(self) -> str:
        return "ı" if "ı" in self.letter_set else "i"

    def _lower(self, text: str) -> str:
        """I → ı (i without a dotless ı), İ → i + U+0307, then str.lower().

        İ keeps its dot, spelt out, so that a stray second dot (İ + U+0307) is a stack of
        two dots, exactly like i + U+0307 + U+0307. str.replace, not translate(): ~10×
        faster on a mixed-case word.
        """
        if "I" in text:
            text = text.replace("I", self._dotless)
        if "İ" in text:
            text = text.replace("İ", "i" + _DOT)
        return text.lower()

    @cached_property
    def _fold_map(self) -> dict[str, str]:
        return {k: v for k, v in _CIRCUMFLEX.items() if k not in self.letter_set}

    @cached_property
    def _fold(self) -> dict[int, str]:
        return str.maketrans(self._fold_map)

    @cached_property
    def _marked(self) -> tuple[str, ...]:
        """What `_settle` looks at: the dot of an i and the circumflexed vowels to fold."""
        return (_DOT, *self._fold_map)

    @cached_property
    def _settle_re(self) -> re.Pattern[str]:
        """An i with a U+0307 among its marks, or a foldable vowel; with all its marks."""
        marks = _marks_class()
        heads = f"i(?={marks}*\u0307)" + (f"|[{''.join(self._fold_map)}]" if self._fold_map else "")
        return re.compile(f"(?:{heads}){marks}*")

    @cached_property
    def _order(self) -> dict[str, int]:
        return {ch: i for i, ch in enumerate(self.letters)}

    def _settle(self, match: re.Match[str]) -> str:
        """One NFC combining sequence (an i with a dot, or a foldable vowel, and its marks).

        The letter absorbs at most its own dot and one circumflex, in whichever order they
        come, and each result is composed again (â + U+0308 → a + U+0308 → ä). The i's own
        dot is the U+0307 that would make İ of a capital I: ``i`` + U+0307, also behind a
        lower mark (``i`` + U+0327 + U+0307 is İ + U+0327 lower-cased), not behind a mark
        above. If what is left would be absorbed again (a second dot, a second circumflex),
        the marks are a stack, not a letter: the sequence is kept as typed, visible and
        invalid_chars. Either way the result is NFC and never changes again.
        """
        seq = match.group()
        fold = self._fold_map
        text = seq
        dot = _own_dot(text)
        if dot is not None:
            if text[1:2] == _DOT == dot[1:2]:  # two dots in a row: a stack
                return seq
            text = dot
        if text[0] in fold:
            if text[1:2] == _CIRCUMFLEX_MARK:  # a second circumflex: it would compose again
                return seq
            text = _nfc(fold[text[0]] + text[1:]) if len(text) > 1 else fold[text[0]]
            if dot is None:
                dot = _own_dot(text)
                text = dot if dot is not None else text
        if text[0] in fold or _own_dot(text) is not None:
            return seq
        return text


TURKISH = Alphabet()
KURMANJI = Alphabet(KURMANJI_LETTERS)


def turkish_lower(text: str, alphabet: Alphabet = TURKISH) -> str:
    """Lower-case with Turkish rules: I → ı and İ → i, then the usual rules.

    An ``i`` followed by a combining dot above (what ``"İ".lower()`` gives outside Turkish
    rules) is the same letter ``i``: the dot is the i's own, not a stray mark. A second dot
    (``i`` + U+0307 + U+0307, or ``İ`` + U+0307) is not: both dots stay.
    """
    text = alphabet._lower(text)
    if _DOT in text:  # "i̇": İ lower-cased by the wrong rules (str.lower, JS toLowerCase)
        text = _UNSTACKED_DOT.sub("i", text)
    return text


def fold_circumflex(text: str, alphabet: Alphabet = TURKISH) -> str:
    """Fold â, î, û to a, i, u: tile sets have no circumflex tiles.

    Character by character; `normalize` folds the same letters, but only a vowel that carries
    one circumflex (``â`` + U+0302 is a stack, kept).
    """
    if "â" in text or "î" in text or "û" in text:
        text = text.translate(alphabet._fold)
    return text


def normalize(text: str, alphabet: Alphabet = TURKISH) -> str:
    """NFC, trim, Turkish lower-case, fold circumflexes. Never strips other characters.

    One pass, linear in the input: NFC; trim Unicode White_Space; Turkish lower-case (I → ı,
    İ → i + U+0307, then str.lower); NFC once more, since lower-casing can decompose
    (``T`` + U+0308 → ``t`` + U+0308 = ``ẗ``; ``İ`` + U+0302 → i + U+0307 + U+0302); then each
    dotted i and foldable vowel absorbs its own dot and one circumflex (`Alphabet._settle`).
    The result is NFC and a fixed point: normalize(normalize(x)) == normalize(x), tested.
    """
    if alphabet.settled.issuperset(text):  # the common case: already a plain game word
        return text
    text = _nfc(text).strip(WHITESPACE)
    lower = alphabet._lower(text)
    if _DOT in lower:  # the dot of each İ, in C; a dot with other marks is left to _settle
        lower = _lone_dot().sub("i", lower)
    if lower != text:  # lower-casing can decompose; compose again, once
        text = _nfc(lower)
    for mark in alphabet._marked:
        if mark in text:
            return alphabet._settle_re.sub(alphabet._settle, text)
    return text


def is_game_word(word: str, alphabet: Alphabet = TURKISH) -> bool:
    """True when a normalised word is 1+ letters of the alphabet and nothing else."""
    return bool(word) and alphabet.letter_set.issuperset(word)


def letters_problem(word: str, alphabet: Alphabet = TURKISH) -> str | None:
    """Why a normalised word cannot be a game word: 'phrase', 'invalid_chars' or None.

    A phrase is two or more game words separated by spaces (``dulda tutmak``); anything
    else that is not a game word has invalid characters (``e-posta``, ``örnekkelime 3``).
    """
    if is_game_word(word, alphabet):
        return None
    parts = _SPACES.split(word)
    if len(parts) > 1 and all(is_game_word(p, alphabet) for p in parts):
        return "phrase"
    return "invalid_chars"


def invalid_chars(word: str, alphabet: Alphabet = TURKISH) -> list[str]:
    """The characters of a normalised word that are not letters, in order, once each."""
    return list(dict.fromkeys(ch for ch in word if ch not in alphabet.letter_set))


def sort_key(word: str, alphabet: Alphabet = TURKISH) -> tuple[int, ...]:
    """Key for Turkish alphabetical order (ç after c, ı before i); others sort last."""
    order = alphabet._order
    return tuple(order.get(ch, 1000 + ord(ch)) for ch in word)


def turkish_sorted(words: Iterable[str], alphabet: Alphabet = TURKISH) -> list[str]:
    """Words in the alphabet's order (Turkish by default)."""
    return sorted(words, key=lambda w: sort_key(w, alphabet))
