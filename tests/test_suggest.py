"""kelime.suggest: "did you mean" for the dotted/dotless I of upper case and letters typed
without their Turkish marks, checked against a brute-force reference and over HTTP."""

from __future__ import annotations

import itertools

import marisa_trie
from hypothesis import given, settings
from hypothesis import strategies as st

from kelime.normalize import normalize, sort_key
from kelime.suggest import MAX_STEPS, MAX_SUGGESTIONS, TWINS, suggest

LETTERS = "cçgğıioösşuüaekt"


def spellings(word: str):
    """Every spelling of `word` with any of its letters swapped for its twin."""
    options = [(ch, TWINS[ch]) if ch in TWINS else (ch,) for ch in word]
    return {"".join(p) for p in itertools.product(*options)}


def reference(word: str, words: set[str]) -> list[str]:
    found = [w for w in spellings(word) if w in words and w != word]
    changed = lambda w: sum(a != b for a, b in zip(w, word))
    return sorted(found, key=lambda w: (changed(w), sort_key(w)))[:MAX_SUGGESTIONS]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(LETTERS, min_size=1, max_size=6), min_size=1, max_size=40),
       st.text(LETTERS, min_size=1, max_size=6))
def test_suggestions_are_exactly_the_twin_spellings_in_the_lexicon(lexicon, word):
    words = set(lexicon)
    if word in words:
        return
    assert suggest(word, marisa_trie.Trie(lexicon)) == reference(word, words)


def test_the_typing_players_do():
    words = marisa_trie.Trie(["kitap", "çay", "şehir", "öğrenci", "ağaç", "ışık", "iyi", "katil"])
    for typed, meant in [("KITAP", "kitap"), ("cay", "çay"), ("sehir", "şehir"),
                         ("ogrenci", "öğrenci"), ("AGAC", "ağaç"), ("ISIK", "ışık"),
                         ("IYI", "iyi")]:
        assert suggest(normalize(typed), words) == [meant], typed
    assert suggest("kitab", words) == []          # not a twin mistake
    assert suggest("ka-til", words) == []         # not letters
    assert suggest("", words) == []


def test_the_cost_is_bounded_whatever_the_lexicon():
    """A lexicon holding every spelling of a long word: the walk stops after MAX_STEPS."""
    word = "i" * 30
    lexicon = ["".join(p) + "x" for p in itertools.product("iı", repeat=14)]  # 16,384 words
    calls = []

    class Counting:
        def __init__(self, trie):
            self.trie = trie

        def __contains__(self, w):
            return w in self.trie

        def has_keys_with_prefix(self, prefix):
            calls.append(prefix)
            return self.trie.has_keys_with_prefix(prefix)

    assert suggest(word, Counting(marisa_trie.Trie(lexicon))) == []
    assert len(calls) <= MAX_STEPS


def test_words_api_suggests_for_words_that_are_not_valid(client):
    body = client.get("/v1/words/KITAP").json()
    assert (body["normalized"], body["valid"], body["suggestions"]) == ("kıtap", False, ["kitap"])
    assert client.get("/v1/words/kitap").json()["suggestions"] == []
    assert client.get("/v1/words/ılık").json()["suggestions"] == []  # valid itself
    assert client.get("/v1/words/IL%C4%B0K").json()["suggestions"] == ["ılık", "ilik"]  # ILİK


def test_validate_suggests_on_request(client):
    body = {"words": ["KITAP", "kitap", "e-posta"]}
    plain = client.post("/v1/validate", json=body).json()
    assert all("suggestions" not in r for r in plain["results"])  # the hot path stays lean
    asked = client.post("/v1/validate", json={**body, "suggest": True}).json()
    assert [r.get("suggestions") for r in asked["results"]] == [["kitap"], None, []]
    assert [{k: r[k] for k in ("word", "valid", "reason")} for r in asked["results"]] == \
        [{k: r[k] for k in ("word", "valid", "reason")} for r in plain["results"]]
    wrong = client.post("/v1/validate", json={**body, "suggest": "yes"})
    assert wrong.status_code == 422 and "'suggest' must be true or false" in wrong.text
