"""The anagram index: a lexicon's valid words with their letter counts as bit planes.

Written once per lexicon build (``anagram.idx`` beside ``words.marisa``) by `build_index`,
which is pure and deterministic (the same words give the same bytes); read with
`AnagramIndex.load` (mmap) or `AnagramIndex.from_buffer`.

Format ``KELIMEAN``, version 1; integers little-endian::

    offset  size        field
    0       8           magic b"KELIMEAN"
    8       4           version (u32) = 1
    12      4           header length H (u32)
    16      H           header: UTF-8 JSON, sorted keys, no spaces:
                        {"alphabet": letters, "crc32": CRC of the body, "max_counts": [the
                         largest count of each letter in one word, in alphabet order],
                         "max_length": L, "plane_bytes": B = ceil(N / 8),
                         "text_bytes": T, "words": N}
    16+H    0-7         zero bytes up to a multiple of 8: the body starts here
    body    4 (N + 1)   word offsets (u32): word i is text[offsets[i]:offsets[i + 1]]
            T           text: the words in UTF-8, back to back, in the alphabet's order,
                        deduplicated (a word's id is its rank: id order is Turkish order)
            0-7         zero bytes up to a multiple of 8
            P × B       bit planes, each a little-endian bitset whose bit i is word i:
                        for each letter in alphabet order and c = 1 … max_counts[letter],
                        "the word has at least c of the letter"; then for n = 1 … L,
                        "the word has at least n letters"

The planes are the per-word letter counts, sliced: a 62,000-word lexicon needs ~140 planes
of 7.7 KB. Loading copies the planes into Python ints (about 1 MB) and leaves the words in
the map; nothing is created per word.

Worked example: ``kale``, ``ak``, ``ala`` (and ``ak`` again) give N = 3, B = 1, offsets
0, 2, 5, 9, text ``akalakale``, max_counts a = 2, e = k = l = 1, L = 4, and nine planes:
a≥1 = words {0, 1, 2} = 0x07, a≥2 = {1} = 0x02, e≥1 = 0x04, k≥1 = 0x05, l≥1 = 0x06,
then length ≥ 1, 2, 3, 4 = 0x07, 0x07, 0x06, 0x04:

    >>> data = build_index(["kale", "ak", "ala", "ak"])
    >>> data[:8], data[-9:].hex()
    (b'KELIMEAN', '070204050607070604')
    >>> index = AnagramIndex.from_buffer(data)
    >>> len(index), index.word(2), index.plane("a", 2), index.length_at_least(3)
    (3, 'kale', 2, 6)
    >>> AnagramIndex.from_buffer(b"KELIMEAX" + data[8:])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    kelime.anagram.errors.IndexFormatError: not a kelime anagram index (it starts with ...
"""

from __future__ import annotations

import bisect
import json
import mmap
import struct
import sys
import zlib
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..normalize import TURKISH, Alphabet, sort_key, turkish_sorted
from .errors import IndexFormatError

#: What an index is read from: its bytes, or a file mapped into memory.
Buffer = bytes | bytearray | memoryview | mmap.mmap

MAGIC = b"KELIMEAN"
VERSION = 1
INDEX_FILE = "anagram.idx"
_FIXED = struct.Struct("<8sII")
REBUILD = "rebuild the lexicon with `kelime build`"
HEADER_KEYS = {"alphabet", "crc32", "max_counts", "max_length", "plane_bytes", "text_bytes",
               "words"}


def _pad(n: int) -> bytes:
    return b"\0" * (-n % 8)


def _u32(values: Iterable[int]) -> bytes:
    out = array("I", values)
    if sys.byteorder != "little":
        out.byteswap()
    return out.tobytes()


def _planes(words: list[str], alphabet: Alphabet) -> tuple[list[int], int, list[bytearray]]:
    """(max count per letter, max length, the planes) of words in id order."""
    nbytes = (len(words) + 7) // 8
    counts: dict[str, list[bytearray]] = {ch: [] for ch in alphabet.letters}  # c = 1, 2, …
    lengths: list[bytearray] = []
    for i, word in enumerate(words):
        byte, bit = i >> 3, 1 << (i & 7)
        for ch, n in Counter(word).items():
            planes = counts[ch]
            while len(planes) < n:
                planes.append(bytearray(nbytes))
            for plane in planes[:n]:
                plane[byte] |= bit
        while len(lengths) < len(word):
            lengths.append(bytearray(nbytes))
        for plane in lengths[:len(word)]:
            plane[byte] |= bit
    maxima = [len(counts[ch]) for ch in alphabet.letters]
    return maxima, len(lengths), [p for ch in alphabet.letters for p in counts[ch]] + lengths


def build_index(words: Iterable[str], alphabet: Alphabet = TURKISH) -> bytes:
    """The index file of `words` (normalised game words; deduplicated and sorted here)."""
    unique = set(words)
    strays = sorted(w for w in unique if not w or not alphabet.letter_set.issuperset(w))
    if strays:
        raise ValueError(f"not words of the alphabet {alphabet.letters}: {strays[:5]}")
    ordered = turkish_sorted(unique, alphabet)
    encoded = [w.encode("utf-8") for w in ordered]
    offsets = [0]
    for raw in encoded:
        offsets.append(offsets[-1] + len(raw))
    text = b"".join(encoded)
    maxima, max_length, planes = _planes(ordered, alphabet)
    body = _u32(offsets) + text + _pad(4 * len(offsets) + len(text)) + b"".join(planes)
    header = json.dumps({
        "alphabet": alphabet.letters, "crc32": zlib.crc32(body), "max_counts": maxima,
        "max_length": max_length, "plane_bytes": (len(ordered) + 7) // 8,
        "text_bytes": len(text), "words": len(ordered),
    }, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    head = _FIXED.pack(MAGIC, VERSION, len(header)) + header
    return head + _pad(len(head)) + body


def _bad(message: str) -> IndexFormatError:
    return IndexFormatError(f"{message}: {REBUILD}")


def read_header(buf: Buffer) -> tuple[dict[str, Any], int]:
    """(header, where the body starts); IndexFormatError on a foreign or damaged file."""
    if len(buf) < _FIXED.size:
        raise _bad(f"the anagram index is truncated ({len(buf)} bytes)")
    magic, version, size = _FIXED.unpack_from(buf, 0)
    if magic != MAGIC:
        raise _bad(f"not a kelime anagram index (it starts with {magic!r}, not {MAGIC!r})")
    if version != VERSION:
        raise _bad(f"the anagram index is version {version}; this kelime reads version {VERSION}")
    end = _FIXED.size + size
    if end > len(buf):
        raise _bad(f"the anagram index is truncated in its header ({len(buf)} bytes)")
    try:
        header = json.loads(bytes(buf[_FIXED.size:end]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise _bad("the anagram index's header is not JSON") from None
    if not isinstance(header, dict) or set(header) != HEADER_KEYS:
        raise _bad("the anagram index's header does not have the fields of version 1")
    return header, end + (-end % 8)


def _layout(header: dict[str, Any]) -> tuple[int, int, int, int]:
    """(offsets size, text size, planes start, body size) the header promises."""
    words, text = header["words"], header["text_bytes"]
    planes = sum(header["max_counts"]) + header["max_length"]
    offsets = 4 * (words + 1)
    start = offsets + text + (-(offsets + text) % 8)
    return offsets, text, start, start + planes * header["plane_bytes"]


class AnagramIndex:
    """A loaded index: words by id, and bit planes of their letter counts and lengths."""

    def __init__(self, buf: Buffer, header: dict[str, Any], body: int,
                 keep: mmap.mmap | None = None):
        self._keep = keep  # the mmap, when loaded from a file
        self.alphabet = Alphabet(header["alphabet"])
        self.size: int = header["words"]
        self.nbytes: int = header["plane_bytes"]
        self.all: int = (1 << self.size) - 1
        offsets, text, start, _ = _layout(header)
        view = memoryview(buf)[body:]
        planes = [int.from_bytes(view[start + i * self.nbytes:start + (i + 1) * self.nbytes],
                                 "little") for i in range(sum(header["max_counts"]) +
                                                          header["max_length"])]
        if keep is None:  # bytes read whole: keep a copy of the words only, not the planes
            view = memoryview(bytes(view[:offsets + text]))  # twice (as bytes and as ints)
        self._offsets = _offsets(view[:offsets])
        self._text = view[offsets:offsets + text]
        self._counts: dict[str, list[int]] = {}
        for ch, n in zip(self.alphabet.letters, header["max_counts"]):
            self._counts[ch], planes = [self.all, *planes[:n]], planes[n:]
        self._lengths = [self.all, *planes]
        self._sorted: dict[int, str] = {}  # `letters`, kept once asked for

    @classmethod
    def from_buffer(cls, buf: Buffer, keep: mmap.mmap | None = None) -> AnagramIndex:
        """Read an index from bytes, a memoryview or an mmap; checks size and checksum."""
        header, body = read_header(buf)
        _, _, _, size = _layout(header)
        if len(buf) - body != size:
            raise _bad(f"the anagram index is {len(buf):,} bytes but its header promises "
                       f"{body + size:,} (truncated or padded)")
        if zlib.crc32(memoryview(buf)[body:]) != header["crc32"]:
            raise _bad("the anagram index is damaged (its checksum does not match)")
        index = cls(buf, header, body, keep)
        if index._offsets[index.size] != header["text_bytes"]:
            raise _bad("the anagram index's word offsets do not match its text")
        return index

    @classmethod
    def load(cls, path: str | Path) -> AnagramIndex:
        """Map an index file into memory (read-only) and read it."""
        try:
            with open(path, "rb") as f:
                mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as e:  # ValueError: an empty file cannot be mapped
            raise _bad(f"cannot read the anagram index {path} ({e})") from None
        return cls.from_buffer(mapped, keep=mapped)

    def __len__(self) -> int:
        return self.size

    @property
    def max_length(self) -> int:
        """The most letters a word has (0 for an index of no word)."""
        return len(self._lengths) - 1

    def word(self, i: int) -> str:
        """The word with id `i`."""
        return str(self._text[self._offsets[i]:self._offsets[i + 1]], "utf-8")

    def letters(self, i: int) -> str:
        """The letters of word `i`, sorted (what it shares with its anagrams), kept once
        asked for: a split looks at thousands of words a hand, mostly the same ones (~70
        bytes a word kept, ~3 MB once every word of 40,831 has been asked for)."""
        found = self._sorted.get(i)
        if found is None:
            found = self._sorted[i] = "".join(sorted(self.word(i)))
        return found

    def words(self, ids: Iterable[int]) -> list[str]:
        return [self.word(i) for i in ids]

    def id_of(self, word: str) -> int | None:
        """The id of a normalised word, or None when the index does not hold it."""
        key = sort_key(word, self.alphabet)
        i = bisect.bisect_left(range(self.size), key, key=lambda j: sort_key(self.word(j),
                                                                              self.alphabet))
        return i if i < self.size and self.word(i) == word else None

    def count_planes(self, letter: str) -> list[int]:
        """[all words, words with ≥ 1 of `letter`, with ≥ 2, …] up to the largest count."""
        return self._counts.get(letter) or [self.all]

    def plane(self, letter: str, count: int) -> int:
        """The words with at least `count` of `letter`."""
        if count <= 0:
            return self.all
        planes = self._counts.get(letter, ())
        return planes[count] if count < len(planes) else 0

    def length_at_least(self, n: int) -> int:
        """The words of at least `n` letters."""
        if n <= 0:
            return self.all
        return self._lengths[n] if n < len(self._lengths) else 0

    def length_between(self, low: int, high: int) -> int:
        """The words of `low` … `high` letters."""
        return self.length_at_least(low) ^ self.length_at_least(high + 1) if high >= low else 0


def _offsets(view: memoryview) -> Sequence[int]:
    if sys.byteorder == "little":
        return view.cast("I")
    out = array("I")
    out.frombytes(view)
    out.byteswap()
    return out
