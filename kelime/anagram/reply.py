"""The reply of POST /v1/anagram as JSON bytes, built without an object per word.

``orjson.dumps(lex.anagram(…))`` lays each listed word tile by tile into a `Hit`, then a
dict: ~3 µs a word, ten times the search for a 1,000-word answer, and thousands of
short-lived objects that wake the garbage collector. But most questions are plain (single
tiles and blanks, no pattern, no two-letter tiles), and then every word is laid the same
way: real tiles from the left, a blank for each copy of a letter beyond the rack's. Which
tile covers a square, and its value, depend only on which copy of its letter the square
holds (the 2nd ``l``) and on the rack.

So `Replies` keeps, for each word once asked for, its *codes*: one byte per letter, the
number of "the k-th copy of this letter" (1 … 255; 0 separates words). A question makes
two tables, code → the tile's JSON text (``"l",`` or ``"?l",``) and code → the tile's
value, and takes all its listed words at once, each step one call into C: their codes
joined, decoded (`codecs.charmap_decode`) into words and into tiles and split again,
values by ``bytes.translate`` and ``sum``, then the order and one join:

    >>> from kelime.anagram.index import AnagramIndex, build_index
    >>> from kelime.anagram.query import make_query
    >>> from kelime.games import get_game
    >>> index = AnagramIndex.from_buffer(build_index(["kat", "at", "kitap"]))
    >>> game = get_game("kelimelik")
    >>> Replies(index).reply(make_query("ta?", game), game)
    b'{"lexicon":null,"count":2,"truncated":false,"words":[{"word":"at","score":3,"tiles":\
["a","t"]},{"word":"kat","score":3,"tiles":["?k","a","t"]}]}'

The bytes are exactly ``orjson.dumps({"lexicon": …, **search(…).as_dict()})``
(tests/test_anagram_reply.py holds them equal on random lexicons, racks, patterns and
sorts). What the tables cannot describe — a pattern, two-letter tiles, an index of more
than 255 letter copies, a tile worth 256 or more — is answered by `search` and orjson.

A word's codes cost ~50 bytes, kept once the word has been in an answer: 2 MB once every
word of a 40,720-word lexicon has (~3 MB for 62,000 words), and filling them all would
take 0.1 s. On this machine a 1,000-word answer (5 letters and ``??``) costs ~2 ms of CPU
this way against ~5 ms through `search` and orjson, and makes a few objects, not thousands:
the worker's full garbage collections (~55 ms each) went from 17 to 1 in 2,100 requests
(benchmarks/anagram_http.py measures it over HTTP).
"""

from __future__ import annotations

from codecs import charmap_decode
from collections.abc import Mapping
from itertools import repeat
from operator import add, mul
from typing import cast

import orjson

from ..games import Game
from .index import AnagramIndex
from .query import Query, bounds
from .rack import Rack
from .search import answer, choose, rank

#: Codes are characters below CODES (code 0 separates words).
CODES, SEP = 256, "\0"
#: The most words listed, and excluded, in a question `Replies.quick` calls quick.
QUICK_WORDS, QUICK_EXCLUDE = 1000, 10


def _bare(letter: str) -> bool:
    """Whether a letter stands in JSON as itself (orjson escapes no letter, but say so)."""
    return orjson.dumps(letter) == f'"{letter}"'.encode()


class Replies:
    """One index's words as codes, filled in as they are asked for, and the replies they make
    (each with `lexicon`, the service's description of the lexicon, first)."""

    def __init__(self, index: AnagramIndex,
                 lexicon: Mapping[str, object] | None = None) -> None:
        self.index, self.lexicon = index, lexicon
        self._start = '{"lexicon":' + orjson.dumps(lexicon).decode("utf-8")
        self.copies = [(letter, k) for letter in index.alphabet.letters
                       for k in range(1, len(index.count_planes(letter)))]
        self._first = {letter: code for code, (letter, k) in enumerate(self.copies, 1)
                       if k == 1}
        self._codes: list[bytes | None] = [None] * len(index)
        # code → letter, a decoding table (U+FFFE: no such code)
        self._letters = (SEP + "".join(letter for letter, _ in self.copies)).ljust(
            CODES, "\ufffe")
        self.describable = len(self.copies) < CODES and all(
            map(_bare, index.alphabet.letters))

    def reply(self, query: Query, game: Game) -> bytes:
        """``orjson.dumps({"lexicon": lexicon, **search(index, query, game).as_dict()})``."""
        found, everyone, chosen = choose(self.index, query, game)
        if not self.plain(query, game):
            return orjson.dumps({"lexicon": self.lexicon, **answer(
                self.index, query, game, found, everyone, chosen).as_dict()})
        count = everyone.bit_count()
        truncated = "true" if count > len(chosen) else "false"
        return (f'{self._start},"count":{count},"truncated":{truncated},'
                f'"words":[{self._words(query, game, chosen)}]}}').encode()

    def quick(self, query: Query, game: Game) -> bool:
        """Whether `reply` takes a few milliseconds at most: a plain question (a search of
        ~0.2-0.6 ms and 1-2 µs a word listed) of at most QUICK_WORDS words and QUICK_EXCLUDE
        words to exclude (up to ~130 µs each to find in the index)."""
        return (self.plain(query, game) and query.limit <= QUICK_WORDS
                and len(query.exclude) <= QUICK_EXCLUDE)

    def plain(self, query: Query, game: Game) -> bool:
        """Whether the tables describe the question's layings (see above)."""
        return (self.describable and query.pattern is None and not query.rack.multi
                and all(0 <= game.tile_value(letter) < CODES for letter in self._first)
                and 0 <= game.blank_value < CODES)

    def _tables(self, rack: Rack, game: Game) -> tuple[list[str], bytes]:
        """code → the tile's JSON text, and code → its value (a `bytes.translate` table),
        under this rack; code 0, the words' separator, stays itself."""
        tiles, worth = [SEP], bytearray(CODES)
        for code, (letter, k) in enumerate(self.copies, 1):
            real = k <= rack.letters.get(letter, 0)
            tiles.append(f'"{letter}",' if real else f'"?{letter}",')
            worth[code] = game.tile_value(letter) if real else game.blank_value
        return tiles, bytes(worth)

    def _words(self, query: Query, game: Game, chosen: list[int]) -> str:
        """The listed words' JSON objects, in order, comma-separated: each step taken over
        all of them at once, in C (their codes joined, decoded and split again)."""
        kept = list(map(self._codes.__getitem__, chosen))
        if None in kept:
            kept = [code or self._fill(i) for code, i in zip(kept, chosen)]
        codes = cast("list[bytes]", kept)  # every one filled just above
        tiles, worth = self._tables(query.rack, game)
        joined = b"\0".join(codes) + b"\0"
        words = charmap_decode(joined, "strict", self._letters)[0].split(SEP)
        laid = charmap_decode(joined, "strict", tiles)[0].split("," + SEP)  # no last comma
        lengths = list(map(len, codes))
        _, high = bounds(query, game)  # score = value × factor + bonus, by word length
        bonus = [game.score_parts(0, n, n) for n in range(high + 1)]
        factor = [game.score_parts(1, n, n) - bonus[n] for n in range(high + 1)]
        values = map(sum, map(bytes.translate, codes, repeat(worth)))
        scores = list(map(add, map(mul, values, map(factor.__getitem__, lengths)),
                          map(bonus.__getitem__, lengths)))
        objects = [f'{{"word":"{w}","score":{s},"tiles":[{t}]}}'
                   for w, s, t in zip(words, scores, laid)]
        keys = rank(query.sort, len(self.index), scores, lengths, chosen)
        return ",".join(map(objects.__getitem__, sorted(range(len(keys)), key=keys.__getitem__)))

    def _fill(self, i: int) -> bytes:
        """Word `i`'s codes, kept."""
        seen: dict[str, int] = {}
        out = []
        for letter in self.index.word(i):
            k = seen.get(letter, 0)
            seen[letter] = k + 1
            out.append(self._first[letter] + k)
        code = self._codes[i] = bytes(out)
        return code
