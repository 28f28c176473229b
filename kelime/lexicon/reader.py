"""A loaded lexicon: membership, the reason a word is refused, and its identity.

`Lexicon.load(folder)` verifies every claim of the manifest (see `kelime.lexicon.format`)
and loads the tries and the anagram index from the very bytes it hashed, read into memory
(a few MB, not mapped: a file rewritten in place under a running server cannot change or
crash what it serves); `judge` is the one verdict rule.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import marisa_trie

from ..anagram import AnagramIndex, Limits, Query, anagram, split
from ..anagram.rack import Rack
from ..anagram.reply import Replies
from ..anagram.search import question
from ..board.graph import Graph, word_graph
from ..errors import LexiconError, NoAnagramIndex
from ..games import Game
from ..normalize import TURKISH, Alphabet, letters_problem, normalize
from .format import INDEX_FILE, MANIFEST_FILE, REBUILD, REJECTED_FILE, WORDS_FILE, Manifest

if TYPE_CHECKING:
    from .verdicts import Verdicts


@dataclass(frozen=True)
class Verdict:
    word: str
    normalized: str
    valid: bool
    reason: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"word": self.word, "normalized": self.normalized, "valid": self.valid,
                "reason": self.reason}



class LexiconInfo(TypedDict):
    """Which lexicon answered: the ``lexicon`` object of every reply."""

    name: str
    version: str
    sha256: str
    words: int


def _trie(kind: type[Any], data: bytes, path: Path) -> Any:
    try:
        return kind().frombytes(data)
    except Exception as e:  # noqa: BLE001 - marisa raises bare errors of several kinds
        raise LexiconError(f"{path} is not a readable trie ({e}): {REBUILD}") from None


def _check_alphabet(manifest: Manifest, index: AnagramIndex | None, folder: Path) -> None:
    """The alphabet judges words, so the version must cover it: the manifest's must be the
    one anagram.idx (a versioned file) was built with. A folder built before the index
    existed predates every alphabet but Turkish."""
    built = index.alphabet.letters if index is not None else TURKISH.letters
    if manifest.alphabet != built:
        raise LexiconError(f"{folder}/{MANIFEST_FILE} says the alphabet is "
                           f"{manifest.alphabet!r}, but its files were built for {built!r}: "
                           f"the manifest was edited, and its version ({manifest.version}) "
                           f"does not cover the change, so its verdicts cannot be trusted; "
                           f"{REBUILD} (with --alphabet for another alphabet)")


class Lexicon:
    """A loaded lexicon folder."""

    def __init__(self, words: marisa_trie.Trie, rejected: marisa_trie.BytesTrie,
                 manifest: Manifest, path: Path | None = None,
                 index: AnagramIndex | None = None):
        self.words, self.rejected, self.manifest, self.path = words, rejected, manifest, path
        self.index = index
        self.name: str = manifest.name
        self.alphabet = Alphabet(manifest.alphabet)
        self._settled = self.alphabet.settled
        self.info: LexiconInfo = {"name": self.name, "version": manifest.version,
                     "sha256": manifest.sha256, "words": manifest.words}

    @classmethod
    def load(cls, folder: str | Path) -> Lexicon:
        """Load a lexicon folder into memory after checking every claim of its manifest."""
        folder = Path(folder)
        manifest = Manifest.read(folder)
        data = manifest.verify(folder)
        words = _trie(marisa_trie.Trie, data[WORDS_FILE], folder / WORDS_FILE)
        if len(words) != manifest.words:
            raise LexiconError(f"{folder / WORDS_FILE} holds {len(words):,} words but the "
                               f"manifest says {manifest.words:,}: {REBUILD}")
        index = None
        if INDEX_FILE in manifest.files:
            index = AnagramIndex.from_buffer(data[INDEX_FILE])
            if len(index) != manifest.words:
                raise LexiconError(f"{folder / INDEX_FILE} indexes {len(index):,} words but the "
                                   f"manifest says {manifest.words:,}: {REBUILD}")
        _check_alphabet(manifest, index, folder)
        rejected = _trie(marisa_trie.BytesTrie, data[REJECTED_FILE], folder / REJECTED_FILE)
        return cls(words, rejected, manifest, folder, index)

    @property
    def anagrams(self) -> AnagramIndex:
        """The anagram index; `NoAnagramIndex` when the folder was built before it existed."""
        if self.index is None:
            raise NoAnagramIndex(f"the lexicon {self.name!r} "
                              f"({self.manifest.version}) was built without an anagram index, "
                              f"so it can validate words but not answer anagrams: rebuild it "
                              f"with `kelime build`")
        return self.index

    def anagram(self, rack: str | Rack | Query, game: Game | str | None = None,
                limits: Limits = Limits(), **options: Any) -> dict[str, Any]:
        """The reply of POST /v1/anagram (and `kelime anagram --json`); see `kelime.anagram`."""
        return {"lexicon": self.info,
                **anagram(self.anagrams, rack, game, limits, **options).as_dict()}

    def anagram_json(self, rack: str | Rack | Query, game: Game | str | None = None,
                     limits: Limits = Limits(), **options: Any) -> bytes:
        """``orjson.dumps(self.anagram(…))``, made without a dict a word (what the service
        sends; see `kelime.anagram.reply`)."""
        return self._replies.reply(*question(self.anagrams, rack, game, limits, **options))

    def anagram_quick(self, query: Query, game: Game) -> bool:
        """Whether `anagram_json` answers `query` in a few milliseconds at most, whatever its
        limit (`kelime.anagram.reply.Replies.quick`)."""
        return self.index is not None and self._replies.quick(query, game)

    @cached_property
    def board_graph(self) -> Graph:
        """The words as the board search's word graph (`kelime.board.graph`), made on first
        use (~1.5 s and ~50 MB for 40,000 words) and kept."""
        return word_graph(self.words.keys())

    @cached_property
    def _replies(self) -> Replies:
        """The anagram index's words as codes (`kelime.anagram.reply`), kept from first use."""
        return Replies(self.anagrams, self.info)

    def split(self, rack: str | Rack, game: Game | str | None = None,
              limits: Limits = Limits(), **options: Any) -> dict[str, Any]:
        """The reply of POST /v1/split (and `kelime split --json`); see `kelime.anagram.split`
        (its `options`: clock, deadline, what_if)."""
        return {"lexicon": self.info,
                **split(self.anagrams, rack, game, limits, **options).as_dict()}

    def hooks(self, normalized: str, min_length: int = 2) -> dict[str, list[str]]:
        """The letters that make a valid word of at least `min_length` letters when put
        before (``front``) or after (``back``) a normalised word, in the alphabet's order."""
        if not normalized or not self.alphabet.letter_set.issuperset(normalized) \
                or len(normalized) + 1 < min_length:
            return {"front": [], "back": []}
        words, letters = self.words, self.alphabet.letters
        return {"front": [c for c in letters if c + normalized in words],
                "back": [c for c in letters if normalized + c in words]}

    def __contains__(self, word: str) -> bool:
        return word in self.words

    def __len__(self) -> int:
        return len(self.words)

    def reason_for(self, normalized: str) -> str:
        """Why a normalised word that is not valid is refused."""
        found = self.rejected.get(normalized)
        return found[0].decode("ascii") if found else "not_in_dictionary"

    def judge(self, word: str, min_length: int = 2) -> tuple[str, str | None]:
        """(normalised word, reason it is refused or None when valid): the one verdict rule."""
        return self._judge(word, min_length, self.words)

    def _judge(self, word: str, min_length: int, valid: Container[str]) -> tuple[str, str | None]:
        """`judge`, with `valid` (the trie, or a set of the same words) for membership."""
        if word and self._settled.issuperset(word):  # already normal, only letters
            norm, problem = word, None
        else:
            norm = normalize(word, self.alphabet)
            problem = letters_problem(norm, self.alphabet) if norm else "too_short"
        if problem is None and len(norm) < min_length:
            problem = "too_short"
        if problem is None and norm not in valid:
            problem = self.reason_for(norm)
        return norm, problem

    @cached_property
    def _verdicts(self) -> Verdicts:
        """The batch fast path (`kelime.lexicon.verdicts.validate_json`), made on first use."""
        from .verdicts import Verdicts

        return Verdicts(self)

    def check(self, word: str, min_length: int = 2) -> Verdict:
        """The verdict on one word as a player typed it."""
        norm, problem = self.judge(word, min_length)
        return Verdict(word, norm, problem is None, problem)

    def validate(self, words: list[str], min_length: int = 2) -> dict[str, Any]:
        """The reply of POST /v1/validate (and `kelime check --json`) for these words."""
        results = []
        for word in words:
            norm, problem = self.judge(word, min_length)
            results.append({"word": word, "normalized": norm, "valid": problem is None,
                            "reason": problem})
        return {"lexicon": self.info, "all_valid": all(r["valid"] for r in results),
                "results": results}
