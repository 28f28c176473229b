"""The fast path of POST /v1/validate: the reply's bytes from a bounded memo of serialised results.

`Lexicon.validate` builds a dict per word that the service then serialises: ~1.5 µs a word.
Game servers send the same few thousand words all day, so `validate_json` keeps, for each
word as sent, its result already serialised (the very bytes orjson writes for that result's
dict inside the reply) and a code for its verdict; a batch is then one dict lookup per word,
a join and a sum, all in C. A word the memo does not hold goes through `Lexicon.judge`'s rule
(`Lexicon._judge`) into the memo: a miss costs ~1.7× what `Lexicon.validate` + orjson.dumps
spend on a word, a hit ~0.15× (benchmarks/validate.py).

    body, tally = validate_json(lex, ["kitap", "KİTAP", "evler"])
    body == orjson.dumps(lex.validate(["kitap", "KİTAP", "evler"]))   # True
    tally == {None: 2, "not_in_dictionary": 1}                         # True

The bytes are exactly ``orjson.dumps(lex.validate(words, min_length))`` (property-tested
against `Lexicon.check` in tests/test_validate_fast.py).

Memory stays bounded whatever clients send: each entry is charged its size (the word, its
fragment, the tuple and its share of the dict), and the memo keeps two generations of at
most half the budget each. New entries go to the young one; when it is full it becomes
the old one and the previous old one is dropped; a word found in the old generation moves
back to the young one. That is an LRU to within a generation, and a hit costs a plain dict
lookup, with no bookkeeping. It is not locked: under the GIL two threads may at worst judge
a word twice or lose an entry.
"""

from __future__ import annotations

import sys
from collections.abc import Container
from operator import itemgetter
from typing import TYPE_CHECKING, cast

import orjson

if TYPE_CHECKING:
    from .reader import Lexicon

#: Bytes a lexicon's memo may hold, for all minimum lengths together (two generations of
#: half this). A game word is charged ~330 bytes (it holds ~240): ~50,000 words, ~25,000 young.
MEMO_BYTES = 16 << 20
#: An entry's size besides its word and fragment: its tuple (56) and its share of the dict
#: table (8 + 24 bytes a slot, up to 3 slots an entry just after the table grows).
ENTRY_BYTES = 56 + 3 * 32
#: A verdict's code is 1 << (WIDTH * its index) (index 0: valid), so the sum of a batch's
#: codes counts each verdict in its own WIDTH bits; batches are summed in chunks below 2**WIDTH.
WIDTH = 20
_MASK = (1 << WIDTH) - 1
_BYTES_HEAD = sys.getsizeof(b"")  # a bytes object's size is this + its length
#: An entry's fragment and code. Two C maps over the hits cost a 1,000-word batch ~30 µs;
#: `zip(*hits)` (an iterator per hit) cost ~105 µs, more than the lookups themselves.
_FRAGMENT, _CODE = itemgetter(0), itemgetter(1)


def validate_json(lex: Lexicon, words: list[str], min_length: int = 2
                  ) -> tuple[bytes, dict[str | None, int]]:
    """``orjson.dumps(lex.validate(words, min_length))``, and how many words got each verdict
    (reason, None for valid), from the lexicon's memo."""
    return lex._verdicts.reply(words, min_length)


class Verdicts:
    """A lexicon's memo of serialised results, for each minimum length, sharing one budget."""

    def __init__(self, lex: Lexicon, budget: int = MEMO_BYTES,
                 valid: Container[str] | None = None) -> None:
        """`valid`: what a normalised word is looked up in when the memo misses: the lexicon's
        trie by default. A frozenset of its words makes a miss 10-17% cheaper, but only misses
        look anything up, and every worker would hold ~110-150 bytes a word for it (3.7 MiB
        for 26,500 words, 6.3 MiB for 62,000: benchmarks/validate.py)."""
        self._judge = lex._judge
        self.valid = lex.words if valid is None else valid
        self.budget = budget
        self._head = b'{"lexicon":' + orjson.dumps(lex.info) + b',"all_valid":'
        self._young: dict[int, dict[str, tuple[bytes, int]]] = {}
        self._old: dict[int, dict[str, tuple[bytes, int]]] = {}
        self.used = 0  # bytes charged to the young generation
        self._reasons: list[str | None] = [None]
        self._codes: dict[str | None, int] = {None: 1}

    def __len__(self) -> int:
        """Entries held, both generations (a word in both counts twice)."""
        return sum(map(len, self._young.values())) + sum(map(len, self._old.values()))

    def reply(self, words: list[str], min_length: int = 2) -> tuple[bytes, dict[str | None, int]]:
        """The reply's bytes and the tally of verdicts, as `validate_json`."""
        young = self._young.get(min_length)
        if young is None:
            young = self._generation(min_length)
        found = list(map(young.get, words))
        if not all(found):  # a tuple is true, a miss is None
            self._fill(words, found, min_length)
        hits = cast("list[tuple[bytes, int]]", found)  # every miss filled
        if not hits:
            return self._head + b'true,"results":[]}', {}
        n = len(hits)
        if n <= _MASK:
            total = sum(map(_CODE, hits))
            if total == n:  # every code is 1: all valid
                return self._join(b'true,"results":[', hits), {None: n}
            tally = self._decode(total, {})
        else:
            tally = {}
            for start in range(0, n, _MASK):
                self._decode(sum(map(_CODE, hits[start:start + _MASK])), tally)
        all_valid = tally.keys() == {None}
        return self._join(b'true,"results":[' if all_valid else b'false,"results":[', hits), tally

    def _join(self, middle: bytes, hits: list[tuple[bytes, int]]) -> bytes:
        return b"".join((self._head, middle, b",".join(map(_FRAGMENT, hits)), b"]}"))

    def _decode(self, total: int, tally: dict[str | None, int]) -> dict[str | None, int]:
        reasons, index = self._reasons, 0
        while total:
            count = total & _MASK
            if count:
                reason = reasons[index]
                tally[reason] = tally.get(reason, 0) + count
            total >>= WIDTH
            index += 1
        return tally

    def _generation(self, min_length: int) -> dict[str, tuple[bytes, int]]:
        young = self._young[min_length] = {}
        self.used += sys.getsizeof(young)
        return young

    def _fill(self, words: list[str], hits: list[tuple[bytes, int] | None],
              min_length: int) -> None:
        """Put each missing verdict in `hits`: from the old generation, else judged; either
        way into the young generation, which becomes the old one when it is full."""
        young = self._young[min_length]
        old = self._old.get(min_length, {})
        half, getsizeof = self.budget // 2, sys.getsizeof
        for i, hit in enumerate(hits):
            if hit is not None:
                continue
            word = words[i]
            hit = young.get(word)  # the batch's own repeats
            if hit is not None:
                hits[i] = hit
                continue
            hit = hits[i] = old.get(word) or self._verdict(word, min_length)
            cost = getsizeof(word) + len(hit[0]) + (_BYTES_HEAD + ENTRY_BYTES)
            if cost > half:
                continue  # never held: it alone would fill a generation
            if self.used + cost > half:
                self._old, self._young, self.used = self._young, {}, 0
                young, old = self._generation(min_length), self._old.get(min_length, {})
            young[word] = hit
            self.used += cost

    def _verdict(self, word: str, min_length: int) -> tuple[bytes, int]:
        norm, problem = self._judge(word, min_length, self.valid)
        code = self._codes.get(problem)
        if code is None:
            code = self._codes[problem] = 1 << (WIDTH * len(self._reasons))
            self._reasons.append(problem)
        # In a list and sliced out: a copy of exactly its size. orjson's own bytes sit in a
        # 1 KiB allocation shrunk in place; kept by the thousand they fragment the heap and
        # each dumps then costs ~5 µs instead of ~0.3.
        return orjson.dumps([{"word": word, "normalized": norm, "valid": problem is None,
                              "reason": problem}])[1:-1], code
