"""One normalisation for every word that enters kelime (CONTRACT.md, "Words").

    >>> normalize("  İSTANBUL ")
    'istanbul'
    >>> normalize("IĞDIR"), normalize("Âdet")
    ('ığdır', 'adet')
    >>> letters_problem("e-posta"), letters_problem("dulda tutmak"), letters_problem("kitap")
    ('invalid_chars', 'phrase', None)
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property

#: Bumped whenever `normalize` changes; stored in every lexicon manifest.
NORMALIZATION_VERSION = 2

ALPHABET = "abcçdefgğhıijklmnoöprsştuüvyz"
_CIRCUMFLEX = {"â": "a", "î": "i", "û": "u"}
#: Unicode White_Space. Not str.isspace(), which also counts the separators U+001C–U+001F:
#: those are control characters, to be refused, never silently trimmed.
WHITESPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
              "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_SPACES = re.compile(f"[{WHITESPACE}]+")


@dataclass(frozen=True)
class Alphabet:
    """A lexicon's letters. Turkish by default; a Kurdish list brings its own.

    Casing is Turkish (I → ı) when the alphabet has a dotless ı, plain otherwise;
    a circumflexed vowel is folded only when it is not itself a letter of the alphabet.
    """

    letters: str = ALPHABET

    @cached_property
    def letter_set(self) -> frozenset[str]:
        return frozenset(self.letters)

    @cached_property
    def settled(self) -> frozenset[str]:
        """Letters that normalisation leaves alone: a word of only these is already normal."""
        return frozenset(ch for ch in self.letters if ch.islower() and ch not in _CIRCUMFLEX
                         and unicodedata.is_normalized("NFC", ch) and ch.strip() == ch)

    @cached_property
    def _upper(self) -> dict[int, str]:
        return str.maketrans({"I": "ı" if "ı" in self.letter_set else "i", "İ": "i"})

    @cached_property
    def _fold(self) -> dict[int, str]:
        return str.maketrans({k: v for k, v in _CIRCUMFLEX.items() if k not in self.letter_set})

    @cached_property
    def _order(self) -> dict[str, int]:
        return {ch: i for i, ch in enumerate(self.letters)}


TURKISH = Alphabet()


def turkish_lower(text: str, alphabet: Alphabet = TURKISH) -> str:
    """Lower-case with Turkish rules: I → ı and İ → i, then the usual rules.

    An ``i`` followed by a combining dot above (what ``"İ".lower()`` gives outside Turkish
    rules) is the same letter ``i``: the dot is the i's own, not a stray mark.
    """
    if "I" in text or "İ" in text:  # translate() costs ~0.5 µs even when nothing matches
        text = text.translate(alphabet._upper)
    text = text.lower()
    if "\u0307" in text:  # "i̇": İ lower-cased by the wrong rules (str.lower, JS toLowerCase)
        text = text.replace("i\u0307", "i")
    return text


def fold_circumflex(text: str, alphabet: Alphabet = TURKISH) -> str:
    """Fold â, î, û to a, i, u: tile sets have no circumflex tiles."""
    if "â" in text or "î" in text or "û" in text:
        text = text.translate(alphabet._fold)
    return text


def normalize(text: str, alphabet: Alphabet = TURKISH) -> str:
    """NFC, trim, Turkish lower-case, fold circumflexes. Never strips other characters.

    Repeated until nothing changes, so that normalize(normalize(x)) == normalize(x) and the
    result is NFC even for stray combining marks: ``İ`` + U+0302 lower-cases to ``i`` + U+0302,
    which composes to ``î`` and folds to ``i``; ``â`` + U+0308 folds to ``a`` + U+0308 = ``ä``.
    Ordinary words settle in one or two rounds.
    """
    if alphabet.settled.issuperset(text):  # the common case: already a plain game word
        return text
    text = unicodedata.normalize("NFC", text).strip(WHITESPACE)
    for _ in range(8):
        step = unicodedata.normalize("NFC", fold_circumflex(turkish_lower(text, alphabet), alphabet))
        if step == text:
            break
        text = step
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


def turkish_sorted(words, alphabet: Alphabet = TURKISH) -> list[str]:
    """Words in the alphabet's order (Turkish by default)."""
    return sorted(words, key=lambda w: sort_key(w, alphabet))
