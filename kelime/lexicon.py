"""A compiled lexicon on disk, and the verdicts it gives.

Format (``format_version`` 1), one folder per lexicon, e.g. ``data/tr/``:

- ``words.marisa``: a marisa ``Trie`` of the valid game words (normalised, deduplicated).
- ``rejected.marisa``: a marisa ``BytesTrie`` from each rejected normalised word to its
  reason code in ASCII (``proper_name``, ``obscene``, ``phrase``, ...), one value per key.
- ``manifest.json``: ``{"format": "kelime-lexicon", "format_version": 1, "name", "version",
  "created", "normalization_version", "alphabet", "source": {...}, "counts": {...},
  "files": {file: sha256}, "sha256"}``. ``files`` covers every other file (all checked on
  load); ``sha256`` hashes the two tries' hashes and ``version`` is its first 12 digits.
  ``created`` is SOURCE_DATE_EPOCH, else the source's own date, else the build time.
- ``changes.json``: what this build added and removed against the previous one.

Worked example: built from the list ``kitap``, ``Kitap``, ``İstanbul`` (proper name),
``words.marisa`` holds ``kitap``; ``rejected.marisa`` holds ``istanbul → proper_name``;
``kelime check İstanbul`` answers ``proper_name``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import marisa_trie

from .normalize import Alphabet, letters_problem, normalize

FORMAT = "kelime-lexicon"
FORMAT_VERSION = 1
WORDS_FILE = "words.marisa"
REJECTED_FILE = "rejected.marisa"
MANIFEST_FILE = "manifest.json"
CHANGES_FILE = "changes.json"
DATA_FILES = (WORDS_FILE, REJECTED_FILE)

#: Every reason a word can be refused, most serious first (a word with several keeps the first).
REASONS = ("obscene", "proper_name", "phrase", "invalid_chars", "too_short", "not_in_dictionary")


class LexiconError(Exception):
    """A lexicon folder that cannot be used; the message says what to do."""


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_manifest(folder: Path) -> dict:
    """The manifest of a lexicon folder; LexiconError when missing or not ours."""
    path = Path(folder) / MANIFEST_FILE
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LexiconError(f"{folder} has no {MANIFEST_FILE}: build it with `kelime build`") from None
    except (OSError, ValueError) as e:
        raise LexiconError(f"{path} is unreadable ({e}): rebuild with `kelime build`") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise LexiconError(f"{path} is not a kelime lexicon manifest")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise LexiconError(
            f"{path} has format_version {manifest.get('format_version')!r}; this kelime reads "
            f"{FORMAT_VERSION}: rebuild it with `kelime build`"
        )
    return manifest


@dataclass(frozen=True)
class Verdict:
    word: str
    normalized: str
    valid: bool
    reason: str | None

    def as_dict(self) -> dict:
        return {"word": self.word, "normalized": self.normalized, "valid": self.valid,
                "reason": self.reason}


class Lexicon:
    """A loaded lexicon: membership, rejection reasons and its identity."""

    def __init__(self, words: marisa_trie.Trie, rejected: marisa_trie.BytesTrie, manifest: dict):
        self.words = words
        self.rejected = rejected
        self.manifest = manifest
        self.name: str = manifest["name"]
        self.alphabet = Alphabet(manifest.get("alphabet") or Alphabet().letters)
        self._settled = self.alphabet.settled
        self.info = {"name": self.name, "version": manifest["version"],
                     "sha256": manifest["sha256"], "words": manifest["counts"]["words"]}

    @classmethod
    def load(cls, folder: str | Path, verify: bool = True) -> "Lexicon":
        """Map a lexicon folder into memory, checking every file against the manifest."""
        folder = Path(folder)
        manifest = read_manifest(folder)
        if verify:
            for name, digest in manifest["files"].items():
                path = folder / name
                if not path.is_file():
                    raise LexiconError(f"{path} is missing: rebuild with `kelime build`")
                if sha256_file(path) != digest:
                    raise LexiconError(f"{path} does not match its manifest (corrupt or edited): "
                                       "rebuild with `kelime build`")
        try:
            words = marisa_trie.Trie().mmap(str(folder / WORDS_FILE))
            rejected = marisa_trie.BytesTrie().mmap(str(folder / REJECTED_FILE))
        except Exception as e:  # marisa raises bare RuntimeError/ValueError on bad files
            raise LexiconError(f"{folder} has an unreadable trie ({e}): rebuild it") from None
        return cls(words, rejected, manifest)

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
        if word and self._settled.issuperset(word):  # already normal, only letters
            norm, problem = word, None
        else:
            norm = normalize(word, self.alphabet)
            problem = letters_problem(norm, self.alphabet) if norm else "too_short"
        if problem is None and len(norm) < min_length:
            problem = "too_short"
        if problem is None and norm not in self.words:
            problem = self.reason_for(norm)
        return norm, problem

    def check(self, word: str, min_length: int = 2) -> Verdict:
        """The verdict on one word as a player typed it."""
        norm, problem = self.judge(word, min_length)
        return Verdict(word, norm, problem is None, problem)

    def validate(self, words: list[str], min_length: int = 2) -> dict:
        """The reply of POST /v1/validate (and `kelime check --json`) for these words."""
        results = []
        for word in words:
            norm, problem = self.judge(word, min_length)
            results.append({"word": word, "normalized": norm, "valid": problem is None,
                            "reason": problem})
        return {"lexicon": self.info, "all_valid": all(r["valid"] for r in results),
                "results": results}
