"""The reply of POST /v1/anagram as JSON bytes, built without an object per word.

``orjson.dumps(lex.anagram(…))`` lays each listed word tile by tile into a `Hit`, then a
dict: ~3 µs a word, ten times the search for a 1,000-word answer, and thousands of
short-lived objects that wake the garbage collector. But most questions are plain (single
tiles and blanks, no pattern, no two-letter tiles), and then every word is laid the same
way: real tiles from the left, a blank for each copy of a letter beyond the rack's. Which
tile covers a square, and its value, depend only on which copy of its letter the square
holds (the 2nd ``l``) and on the rack.

So `Replies` keeps, for each word once asked for, what depends on the word alone: its
*codes*, one byte per letter, the number of "the k-th copy of this letter" (1 … 255; 0
pads the word's row of the codes' table), and its length; and its JSON object, UTF-8,
with ``%d`` for the score and a *marker* byte before each letter of its tiles, one marker
per copy, a byte that JSON text made of the alphabet never holds (a control character, or
a byte UTF-8 never uses for these letters):
``{"word":"kat","score":%d,"tiles":["␁k","␂a","␃t"]},``. A question takes the listed
words' rows of codes (the ids a NumPy array, `bits.members`), looks up what each code
is worth under the rack and sums each row (the tiles' value; × the game's factor + its
bonus by length: the score), sorts them stably when by score (`rank.pick` gives the rest
of the order), joins the listed words' objects, formats the scores in with one ``%``, and
makes the markers into text with one ``bytes.translate``: a copy the rack holds as a real
tile is deleted, the others become ``?``, the blank's mark. Each step is one call into C
over all the words; nothing is decoded or encoded:

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
sorts). What the tables cannot describe — a pattern, two-letter tiles, an index with more
letter copies than marker bytes (105 copies in the 40,831-word lexicon, ~150 markers), a
score that may not fit in 63 bits — is answered by `search` and orjson.

A word's codes and object cost ~170 bytes, kept once the word has been in an answer: 7 MB
once every word of a 40,831-word lexicon has, and filling them all would take ~0.5 s. A
1,000-word answer (5 letters and ``??``) makes a few objects, not thousands: the worker's
full garbage collections (~55 ms each) went from 17 to 1 in 2,100 requests
(benchmarks/anagram_http.py measures it over HTTP). Reading the listed ids, scoring and
sorting them as arrays (NumPy) rather than a Python object a word halved the reply again:
~0.75 to ~0.38 ms for a 1,000-word answer.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt
import orjson

from ..games import Game
from .bits import Ids
from .index import AnagramIndex
from .query import Query
from .rack import BLANK, Rack
from .search import answer, choose

#: Codes are bytes below CODES; code PAD fills a word's row of codes past its letters.
CODES, PAD = 256, 0
#: Printable ASCII, which the JSON around the letters is made of: never a marker.
PRINTABLE = frozenset(range(0x20, 0x7F))
#: The most words listed, and excluded, in a question `Replies.quick` calls quick.
QUICK_WORDS, QUICK_EXCLUDE = 1000, 10
#: Scores are summed in these: a game whose scores might not fit is not `Scoring.fits`.
SCORE = np.int64
#: Every number a score is made of stays below this, either way (SCORE holds ±2 ** 63).
BOUND = 2 ** 62

Scores = npt.NDArray[np.int64]


class Scoring:
    """What a game makes of a word's codes: its tiles are worth the sum of its codes' `worth`
    (the rack's real tiles' values put in, see `Replies._worth`), and it scores that ×
    `factor` + `bonus` by its length."""

    def __init__(self, game: Game, max_length: int, first: Mapping[str, int]):
        self.game = game
        self.value = {letter: game.tile_value(letter) for letter in first}
        bonus = [game.score_parts(0, n, n) for n in range(max_length + 1)]
        factor = [game.score_parts(1, n, n) - b for n, b in enumerate(bonus)]
        values = [*self.value.values(), game.blank_value]
        ends = (min(0, *values), max(0, *values))
        #: every number a whole one (a Game made in Python may say 1.5), and no word's
        #: score, nor its tiles' value, overflows SCORE: n tiles are worth between n × the
        #: least and n × the most a tile is (a tile can be worth less than nothing in a
        #: Game made in Python), × its factor, + its bonus
        self.fits = all(isinstance(x, int) for x in [*values, *bonus, *factor]) and all(
            -BOUND < x < BOUND for x in values) and all(
            -BOUND < x < BOUND for n, (f, b) in enumerate(zip(factor, bonus)) for v in ends
            for x in (n * v, n * v * f + b))
        if not self.fits:  # the tables are never asked; none of it would fit in them
            bonus = factor = [0] * (max_length + 1)
        self.bonus, self.factor = np.array(bonus, SCORE), np.array(factor, SCORE)
        worth = np.full(CODES, game.blank_value if self.fits else 0, SCORE)
        worth[PAD] = 0
        self.worth: Scores = worth


def _bare(letter: str) -> bool:
    """Whether a letter stands in JSON as itself (orjson escapes no letter, but say so)."""
    return orjson.dumps(letter) == f'"{letter}"'.encode()


class Replies:
    """One index's words' pieces, filled in as they are asked for, and the replies they make
    (each with `lexicon`, the service's description of the lexicon, first)."""

    def __init__(self, index: AnagramIndex, lexicon: Mapping[str, object] | None = None):
        self.index, self.lexicon = index, lexicon
        self._start = b'{"lexicon":' + orjson.dumps(lexicon)
        self.copies = [(letter, k) for letter in index.alphabet.letters
                       for k in range(1, len(index.count_planes(letter)))]
        self._first = {letter: code for code, (letter, k) in enumerate(self.copies, 1)
                       if k == 1}
        self._held = {letter: len(index.count_planes(letter)) - 1
                      for letter in index.alphabet.letters}
        used = PRINTABLE.union(*(letter.encode() for letter in index.alphabet.letters))
        markers = [b for b in range(CODES) if b not in used]
        self.describable = (len(self.copies) < CODES and len(self.copies) <= len(markers)
                            and all(map(_bare, index.alphabet.letters)))
        marks = bytes(markers[:len(self.copies)])
        self._marker = bytes([0, *marks])  # code → its marker byte
        # every marker a blank's `?` (a rack's real tiles' markers are deleted)
        self._blanks = bytes.maketrans(marks, BLANK.encode() * len(marks))
        # the codes of word i along row i (PAD after its last letter: a listed word's codes
        # are summed along rows; a row a word, so the memory touched grows with the words
        # listed, not the lexicon), its length (0 until it is filled in) and its JSON
        # object, by word id
        self._codes = np.zeros((len(index), index.max_length), np.uint8)
        self._lengths = np.zeros(len(index), np.uint8)  # (a word of 255 letters at most)
        # {"word":"kat","score":%d,"tiles":["␁k","␂a","␃t"]},
        self._objects: npt.NDArray[np.object_] = np.full(len(index), None, object)
        self._scoring_of: Scoring | None = None  # the last game's

    def reply(self, query: Query, game: Game) -> bytes:
        """``orjson.dumps({"lexicon": lexicon, **search(index, query, game).as_dict()})``."""
        found, everyone, chosen = choose(self.index, query, game)
        if not self.plain(query, game):
            return orjson.dumps({"lexicon": self.lexicon, **answer(
                self.index, query, game, found, everyone, chosen).as_dict()})
        count = everyone.bit_count()
        truncated = b"true" if count > len(chosen) else b"false"
        return b"".join((self._start, b',"count":%d,"truncated":' % count, truncated,
                         b',"words":[', self._words(query, game, chosen), b"]}"))

    def quick(self, query: Query, game: Game) -> bool:
        """Whether `reply` takes a few milliseconds at most: a plain question (a search of
        ~0.1-0.3 ms and ~0.3 µs a word listed) of at most QUICK_WORDS words and QUICK_EXCLUDE
        words to exclude (up to ~130 µs each to find in the index)."""
        return (self.plain(query, game) and query.limit <= QUICK_WORDS
                and len(query.exclude) <= QUICK_EXCLUDE)

    def plain(self, query: Query, game: Game) -> bool:
        """Whether the tables describe the question's layings (see above)."""
        return (self.describable and query.pattern is None and not query.rack.multi
                and self._scoring(game).fits)

    def _scoring(self, game: Game) -> Scoring:
        """The game's `Scoring` of this index's words, kept for the last game asked."""
        if self._scoring_of is None or self._scoring_of.game is not game:
            self._scoring_of = Scoring(game, self.index.max_length, self._first)
        return self._scoring_of

    def _worth(self, rack: Rack, scoring: Scoring) -> tuple[Scores, bytes]:
        """code → what it adds to a word's tiles' value under this rack, and the markers of
        the copies the rack holds as real tiles. Every copy of a letter is a blank's unless
        the rack holds that many."""
        worth, real = scoring.worth.copy(), bytearray()
        for letter, n in rack.letters.items():
            first = self._first.get(letter)
            if first is None:  # a letter no word holds covers no square
                continue
            last = first + min(n, self._held[letter])
            worth[first:last] = scoring.value[letter]
            real += self._marker[first:last]
        return worth, bytes(real)

    def _words(self, query: Query, game: Game, chosen: Ids) -> bytes:
        """The listed words' JSON objects, in order, comma-separated: each step taken over
        all of them at once, in C (see above). `chosen` is in the answer's order but for
        scores (`rank.pick`), which one stable sort puts first."""
        lengths = self._lengths[chosen]
        if not lengths.all():  # words never listed before
            for i in chosen[lengths == 0].tolist():
                self._fill(i)
            lengths = self._lengths[chosen]
        scoring = self._scoring(game)
        worth, real = self._worth(query.rack, scoring)
        scores = (worth.take(self._codes.take(chosen, axis=0)).sum(axis=1)
                  * scoring.factor[lengths] + scoring.bonus[lengths])
        if query.sort == "score":  # best first; equal scores keep `chosen`'s Turkish order
            order = np.argsort(-scores, kind="stable")
            chosen, scores = chosen[order], scores[order]
        text = b"".join(self._objects.take(chosen).tolist()) % tuple(scores.tolist())
        return text[:-1].translate(self._blanks, real)  # no comma after the last

    def _fill(self, i: int) -> None:
        """Word `i`'s codes, length and JSON object, kept."""
        seen: dict[str, int] = {}
        codes, tiles = bytearray(), []
        word = self.index.word(i)
        for letter in word:
            k = seen.get(letter, 0)
            seen[letter] = k + 1
            codes.append(self._first[letter] + k)
            tiles.append(b'"%c%s"' % (self._marker[codes[-1]], letter.encode()))
        self._objects[i] = b'{"word":"%s","score":%%d,"tiles":[%s]},' % (word.encode(),
                                                                          b",".join(tiles))
        self._codes[i, :len(codes)] = np.frombuffer(codes, np.uint8)
        self._lengths[i] = len(word)  # last: the word is filled in
