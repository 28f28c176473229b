"""The lexicon format: one folder per lexicon, described by its manifest. Written and read
only through this module, so that adding a file is one entry in DATA_FILES.

Format ``kelime-lexicon``, ``format_version`` 2. A folder such as ``data/tr/`` holds:

- ``words.marisa``: a marisa ``Trie`` of the valid game words (normalised, deduplicated).
- ``rejected.marisa``: a marisa ``BytesTrie`` from each refused normalised word to its
  reason code in ASCII (one of REASONS), one value per key.
- ``anagram.idx``: the anagram index over the valid words (`kelime.anagram.index`).
  Optional: a lexicon built before it existed still validates, and anagram queries on it
  say to rebuild.
- ``changes.json``: what this build added and removed against the previous one, and
  ``by_reports``: the words of accepted player reports whose verdict it changed.
- ``manifest.json``: every claim about the other files::

    {"format": "kelime-lexicon", "format_version": 2, "name": "tr", "version": "3f2a…",
     "sha256": "3f2a…", "created": "2026-12-01T00:00:00Z", "normalization_version": 3,
     "alphabet": "abcç…", "source": {"kind": …, "name": …, "licence": …},
     "counts": {"words": N, "rejected": N, "rejected_by_reason": {…}},
     "files": {"words.marisa": "<sha256>", …, "changes.json": "<sha256>"},
     "accepted": {"by": "first build", "reference": null, "added": {…}, "removed": {…}}}

  ``accepted`` is present only on a build the maintainer accepted (the first of its name, or
  one built with ``--accept-changes``): later builds are compared with the newest such one
  (`kelime.lexicon.guard`).

**Version rule**: ``sha256`` is the SHA-256 of the lines ``"<file> <sha256>\\n"`` of every
data file in DATA_FILES order (changes.json is hashed in ``files`` but not versioned: the
same words give the same version whatever came before); ``version`` is its first 12 hex
digits. Loading checks every claim: required keys, each file's hash, ``sha256`` against the
files, the word count against the trie, ``normalization_version`` against this kelime's.

Worked example: built from the list ``kitap``, ``Kitap``, ``İstanbul`` (a proper name),
``words.marisa`` holds ``kitap``, ``rejected.marisa`` holds ``istanbul → proper_name``,
``counts`` is ``{"words": 1, "rejected": 1, "rejected_by_reason": {"proper_name": 1}}``,
and ``kelime check İstanbul`` answers ``proper_name``.
"""

from __future__ import annotations

import hashlib
import json
import stat
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import marisa_trie

from ..anagram.index import build_index
from ..errors import LexiconError, OutdatedLexicon
from ..normalize import NORMALIZATION_VERSION, Alphabet

FORMAT = "kelime-lexicon"
FORMAT_VERSION = 2
MANIFEST_FILE = "manifest.json"
CHANGES_FILE = "changes.json"
REBUILD = "rebuild it with `kelime build`"
MAX_MANIFEST_BYTES = 1 << 20  # a manifest is a few KB; more is not one

#: Every reason a word can be refused, most serious first (a word with several keeps the first).
REASONS = ("obscene", "proper_name", "phrase", "invalid_chars", "too_short", "too_long",
           "not_in_dictionary")


def _encode_words(words: list[str], rejected: dict[str, str], alphabet: Alphabet) -> bytes:
    blob: bytes = marisa_trie.Trie(words).tobytes()  # marisa-trie has no types
    return blob


def _encode_rejected(words: list[str], rejected: dict[str, str], alphabet: Alphabet) -> bytes:
    trie = marisa_trie.BytesTrie([(w, r.encode("ascii")) for w, r in rejected.items()])
    blob: bytes = trie.tobytes()
    return blob


@dataclass(frozen=True)
class DataFile:
    """One versioned file of the format: its name, what it holds and how it is made."""

    name: str
    holds: str
    encode: Callable[[list[str], dict[str, str], Alphabet], bytes]
    required: bool = True


def _encode_index(words: list[str], rejected: dict[str, str], alphabet: Alphabet) -> bytes:
    return build_index(words, alphabet)


DATA_FILES = (
    DataFile("words.marisa", "valid words (marisa Trie)", _encode_words),
    DataFile("rejected.marisa", "refused words → reason (marisa BytesTrie)", _encode_rejected),
    DataFile("anagram.idx", "anagram index over the valid words (kelime.anagram.index)",
             _encode_index, required=False),
)
WORDS_FILE, REJECTED_FILE, INDEX_FILE = (f.name for f in DATA_FILES)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_file(path: Path) -> bytes:
    """A data file's bytes (one read: what is hashed is what is loaded)."""
    with open(path, "rb") as f:
        return f.read()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def encode(words: list[str], rejected: dict[str, str], alphabet: Alphabet) -> dict[str, bytes]:
    """The bytes of every data file, by name (pure: the same words give the same bytes)."""
    return {f.name: f.encode(words, rejected, alphabet) for f in DATA_FILES}


def digest(files: dict[str, str]) -> str:
    """The version rule: SHA-256 of ``"<file> <sha256>\\n"`` for each data file present."""
    lines = "".join(f"{f.name} {files[f.name]}\n" for f in DATA_FILES if f.name in files)
    return hashlib.sha256(lines.encode()).hexdigest()


@dataclass(frozen=True)
class Manifest:
    """What a lexicon folder claims about itself; see the module docstring."""

    name: str
    version: str
    sha256: str
    created: str
    normalization_version: int
    alphabet: str
    source: dict[str, Any]
    counts: dict[str, Any]
    files: dict[str, Any]
    format: str = FORMAT
    format_version: int = FORMAT_VERSION
    #: Set on an accepted build (the change guard's reference): how, against which
    #: reference, and the changes accepted (`kelime.lexicon.guard`); absent otherwise.
    accepted: dict[str, Any] | None = None

    @classmethod
    def make(cls, name: str, data: dict[str, bytes], *, created: str, alphabet: Alphabet,
             source: dict[str, Any], counts: dict[str, Any]) -> Manifest:
        """The manifest of freshly encoded data files (their hashes, the version they give)."""
        files = {file: sha256_bytes(blob) for file, blob in data.items()}
        sha = digest(files)
        return cls(name=name, version=sha[:12], sha256=sha, created=created,
                   normalization_version=NORMALIZATION_VERSION, alphabet=alphabet.letters,
                   source=source, counts=counts, files=files)

    def with_file(self, name: str, blob: bytes) -> Manifest:
        """The same manifest also vouching for an unversioned file (changes.json)."""
        return replace(self, files={**self.files, name: sha256_bytes(blob)})

    @property
    def words(self) -> int:
        words: int = self.counts["words"]  # from_dict checked it is a whole number
        return words

    def as_dict(self) -> dict[str, Any]:
        raw = asdict(self)
        if raw["accepted"] is None:
            del raw["accepted"]
        return raw

    def to_bytes(self) -> bytes:
        return json_bytes(self.as_dict())

    @classmethod
    def from_dict(cls, raw: object, where: str = MANIFEST_FILE) -> Manifest:
        """Check a parsed manifest's shape; LexiconError names the first thing wrong."""
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            raise LexiconError(f"{where} is not a kelime lexicon manifest")
        if raw.get("format_version") != FORMAT_VERSION:
            raise OutdatedLexicon(f"{where} has format_version {raw.get('format_version')!r}; this "
                               f"kelime reads {FORMAT_VERSION}: {REBUILD}")
        for key, kind in _SHAPE.items():
            if not isinstance(raw.get(key), kind) or isinstance(raw.get(key), bool):
                raise LexiconError(f"{where} lacks {key!r} (or it is not {_KIND[kind]}): "
                                   f"the file is damaged; {REBUILD}")
        words = raw["counts"].get("words")
        if not isinstance(words, int) or isinstance(words, bool) or words < 0:
            raise LexiconError(f"{where} lacks counts.words (or it is not a whole number): the "
                               f"file is damaged; {REBUILD}")
        if raw["normalization_version"] != NORMALIZATION_VERSION:
            raise OutdatedLexicon(
                f"{where} was built with normalisation version {raw['normalization_version']}; "
                f"this kelime normalises words by version {NORMALIZATION_VERSION}, so its "
                f"verdicts would differ: {REBUILD}")
        accepted = raw.get("accepted")
        return cls(**{key: raw[key] for key in _SHAPE}, format=FORMAT,
                   format_version=FORMAT_VERSION,
                   accepted=accepted if isinstance(accepted, dict) else None)

    @classmethod
    def read(cls, folder: Path) -> Manifest:
        """The manifest of a lexicon folder; LexiconError when missing, unreadable or not ours."""
        path = Path(folder) / MANIFEST_FILE
        try:
            found = path.stat()  # (a FIFO would block a reader, /dev/zero never end)
            if not stat.S_ISREG(found.st_mode) or found.st_size > MAX_MANIFEST_BYTES:
                raise LexiconError(f"{path} is not a manifest (a regular file of at most "
                                   f"{MAX_MANIFEST_BYTES:,} bytes): {REBUILD}")
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise LexiconError(f"{folder} has no {MANIFEST_FILE}: build it with `kelime build`") \
                from None
        except (OSError, ValueError, RecursionError) as e:  # RecursionError: absurd nesting
            raise LexiconError(f"{path} is unreadable ({e}): {REBUILD}") from None
        return cls.from_dict(raw, str(path))

    def verify(self, folder: Path) -> dict[str, bytes]:
        """Every file the manifest lists exists and matches its hash, and `sha256` matches.

        Returns the bytes of every listed file, read once: the caller loads exactly what was
        hashed, so a file rewritten in place afterwards cannot change what is served."""
        contents: dict[str, bytes] = {}
        for file in DATA_FILES:
            if file.required and file.name not in self.files:
                raise LexiconError(f"{folder}/{MANIFEST_FILE} lists no {file.name}: {REBUILD}")
        for name, sha in self.files.items():
            path = Path(folder) / name
            if not path.is_file():
                raise LexiconError(f"{path} is missing: {REBUILD}")
            try:
                contents[name] = read_file(path)
            except OSError as e:  # no permission, an I/O error: not a traceback
                raise LexiconError(f"{path} cannot be read ({e.strerror or e}): fix its "
                                   f"permissions or {REBUILD}") from None
            if sha256_bytes(contents[name]) != sha:
                raise LexiconError(f"{path} does not match its manifest (corrupt or edited): "
                                   f"{REBUILD}")
        if digest(self.files) != self.sha256:
            raise LexiconError(f"{folder}/{MANIFEST_FILE} claims sha256 {self.sha256[:12]}… but "
                               f"its files give {digest(self.files)[:12]}…: {REBUILD}")
        if self.version != self.sha256[:12]:
            raise LexiconError(f"{folder}/{MANIFEST_FILE} claims version {self.version!r} but "
                               f"its sha256 gives {self.sha256[:12]!r}: {REBUILD}")
        return contents


_SHAPE = {"name": str, "version": str, "sha256": str, "created": str,
          "normalization_version": int, "alphabet": str, "source": dict, "counts": dict,
          "files": dict}
_KIND = {str: "a string", int: "a whole number", dict: "an object"}


def json_bytes(obj: object) -> bytes:
    """The JSON of a manifest or change list: sorted keys, UTF-8, so builds are reproducible."""
    return (json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode("utf-8")
