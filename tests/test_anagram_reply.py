"""The reply's bytes (`kelime.anagram.reply`, what POST /v1/anagram sends) are exactly the
general path's, ``orjson.dumps({"lexicon": …, **search(…).as_dict()})``, whichever way they
are made: random lexicons, racks (blanks, two-letter tiles), patterns, modes, exclusions,
limits and every sort."""

from __future__ import annotations

import random
from dataclasses import replace

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kelime.anagram import AnagramIndex, build_index, make_query, search
from kelime.anagram.query import SORTS
from kelime.anagram.reply import Replies
from kelime.games import get_game
from kelime.lexicon import Candidate, Lexicon, compile_words, write_lexicon
from kelime.normalize import TURKISH
from tests.test_anagram_support import asked

INFO = {"name": "tr", "version": "test", "sha256": "0" * 64, "words": 0}


def general(index: AnagramIndex, query, game) -> bytes:
    return orjson.dumps({"lexicon": INFO, **search(index, query, game).as_dict()})


@st.composite
def options(draw, lexicon: list[str]) -> dict:
    return {"sort": draw(st.sampled_from(SORTS)), "mode": draw(st.sampled_from(["build", "exact"])),
            "limit": draw(st.sampled_from([0, 1, 2, 5, 100])),
            "exclude": draw(st.lists(st.sampled_from(lexicon), max_size=2)),
            "min_length": draw(st.sampled_from([None, 1, 3])),
            "max_length": draw(st.sampled_from([None, 2, 4]))}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_reply_is_the_general_paths_bytes(data):
    _, game, index, query = data.draw(asked(options))
    assert Replies(index, INFO).reply(query, game) == general(index, query, game)


def test_many_racks_on_a_bigger_lexicon_take_the_quick_path_and_give_the_same_bytes():
    """2,000 words of the whole alphabet; racks of up to 7 tiles with up to 2 blanks, as
    each game deals them (and with a two-letter tile or a pattern now and then: the general
    path), every sort and limit."""
    rng = random.Random(22)
    letters = TURKISH.letters
    lexicon = sorted({"".join(rng.choice(letters) for _ in range(rng.randint(2, 8)))
                      for _ in range(2000)} | {"kalem", "kelam", "lale", "çiğ", "şık"})
    index = AnagramIndex.from_buffer(build_index(lexicon))
    replies, quick = Replies(index, INFO), 0
    for n in range(400):
        game = get_game(rng.choice(["kelimelik", "sozce", "kelimatik", "harfbank"]))
        blanks = rng.randint(0, min(2, game.blanks))
        rack = "".join(rng.choice(letters) for _ in range(rng.randint(2, 7 - blanks)))
        rack += "?" * blanks
        if game.has_two_letter_tiles and n % 5 == 0:
            rack += "[lm]"
        pattern = (rng.choice(lexicon)[:2] + "..") if n % 7 == 0 else None
        query = make_query(rack, game, index.alphabet, pattern=pattern, what_if=True,
                           sort=rng.choice(SORTS), limit=rng.choice([0, 3, 100, 1000]))
        quick += replies.quick(query, game)
        assert replies.reply(query, game) == general(index, query, game), (rack, game.name)
    assert 250 < quick < 400  # both paths were taken


def test_every_words_kept_json_is_the_general_paths_with_real_tiles_and_with_blanks():
    """What `Replies` keeps per word (its codes, its JSON object with a marker per letter)
    makes the general path's bytes for every word of a lexicon of the whole alphabet: laid
    from real tiles only, from blanks only, and half and half."""
    rng = random.Random(23)
    letters = TURKISH.letters
    lexicon = sorted({"".join(rng.choice(letters) for _ in range(rng.randint(2, 7)))
                      for _ in range(1500)} | {"kelek", "lale", "çiğ", "şık", "ağaç"})
    index = AnagramIndex.from_buffer(build_index(lexicon))
    replies, game = Replies(index, INFO), get_game("kelimelik")
    for word in lexicon:
        for rack in (word, "??" if len(word) == 2 else None, word[2:] + "??",
                     word[:1] + "?" + word[2:]):
            if rack is None:
                continue
            query = make_query(rack, game, index.alphabet, mode="exact", limit=1000,
                               what_if=True)
            assert replies.quick(query, game)
            assert replies.reply(query, game) == general(index, query, game), rack
    assert replies._lengths.all()  # every word's kept JSON was checked


def test_what_the_tables_cannot_describe_goes_the_general_way():
    """A word with more copies of a letter than a byte can number, and a tile worth so much
    that a score might not fit in 63 bits, are answered by `search` and orjson: still the
    same bytes. A tile worth more than a byte is no longer beyond the tables."""
    lexicon = ["a" * 300, "kale", "ela", "alem"]
    index = AnagramIndex.from_buffer(build_index(lexicon))
    game = get_game("kelimelik")
    wide = Replies(index, INFO)
    query = make_query("kale??", game, index.alphabet)
    assert not wide.describable and not wide.quick(query, game)
    assert wide.reply(query, game) == general(index, query, game)

    small = AnagramIndex.from_buffer(build_index(lexicon[1:]))
    for k, plain in [(300, True), (2 ** 60, False)]:
        rich = replace(game, letter_values={**game.letter_values, "k": k})
        query = make_query("kale?", rich, small.alphabet)
        assert Replies(small, INFO).plain(query, rich) is plain
        assert Replies(small, INFO).reply(query, rich) == general(small, query, rich)
        assert b'"score":%d' % (k + 3) in Replies(small, INFO).reply(query, rich)


def outcome(make, *args):
    """The bytes `make(*args)` returns, or the kind of error it raises."""
    try:
        return make(*args)
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return type(e)


def test_numbers_beyond_63_bits_go_the_general_way_and_never_wrap_around():
    """A bingo or a blank worth 2 ** 63 or more (a deployment's profile may say so, and
    orjson writes scores up to 2 ** 64 - 1) is not refused before the question is even
    answered, and a tile worth less than nothing (a Game made in Python) does not wrap a
    score below -2 ** 63 round into a large one: the same bytes as the general path, or
    the same error. A tile worth a little less than nothing still fits the tables; one worth
    1.5 does not, nor a bonus of 0.5 (an int64 would make them 1 and 0)."""
    index = AnagramIndex.from_buffer(build_index(["araba", "kale", "kalemli", "lale"]))
    game = get_game("kelimelik")
    for rich, rack, sort, plain in [
            (replace(game, bingo_bonus=10 ** 19), "kalemli", "score", False),
            (replace(game, bingo_bonus=2 ** 64), "kale", "score", False),
            (replace(game, blank_value=2 ** 63), "kale", "score", False),
            (replace(game, letter_values={**game.letter_values, "a": -2 ** 62}), "araba",
             "alpha", False),
            (replace(game, letter_values={**game.letter_values, "a": -1}), "araba", "alpha",
             True),
            (replace(game, letter_values={**game.letter_values, "a": 1.5}), "araba", "alpha",
             False),
            (replace(game, bingo_bonus=0.5), "kalemli", "alpha", False)]:
        query = make_query(rack, rich, index.alphabet, sort=sort)
        replies = Replies(index, INFO)
        assert replies.plain(query, rich) is plain, rack
        assert outcome(replies.reply, query, rich) == outcome(general, index, query, rich), (
            rack, rich.bingo_bonus, rich.blank_value)
    rich = replace(game, bingo_bonus=10 ** 19)
    assert b'"score":%d' % rich.score(list("kalemli")) in Replies(index, INFO).reply(
        make_query("kalemli", rich, index.alphabet), rich)


def test_a_lexicons_json_reply_is_its_dict_reply_serialised(tmp_path):
    words = ["kol", "kale", "kalem", "ela", "kel", "ak", "elma", "alem", "lale", "kitap"]
    write_lexicon(compile_words([Candidate(w) for w in words]), tmp_path, "tr",
                  {"kind": "test", "name": "test", "licence": "n/a"},
                  created="2026-01-01T00:00:00Z")
    lex = Lexicon.load(tmp_path / "tr")
    for rack, game, options in [("kalem??", None, {}),
                                ("kaletn?[lm]ıs", "kelimatik", {"sort": "alpha"}),
                                ("kale?[lm]", "kelimatik", {"limit": 2, "what_if": True}),
                                ("ia", None, {"pattern": "k.t.p"}),
                                ("kale", "harfbank", {"exclude": ["kale"], "mode": "exact",
                                                      "what_if": True})]:
        assert lex.anagram_json(rack, game, **options) == orjson.dumps(
            lex.anagram(rack, game, **options))
