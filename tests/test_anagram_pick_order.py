"""`rank.pick` lists the chosen words in the answer's order for `alpha` and `length`, and for
`score` so that one stable sort by score alone gives it (what `reply.Replies` does instead of
sorting by (score, Turkish order)): the same order as the general path's full sort, and as
brute force's."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kelime.anagram.brute import brute_search
from kelime.anagram.query import SORTS
from kelime.anagram.search import choose, search
from tests.test_anagram_support import asked


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_picks_order_sorted_stably_by_score_is_the_answers_order(data):
    lexicon, game, index, query = data.draw(asked(lambda _: st.fixed_dictionaries(
        {"sort": st.sampled_from(SORTS), "limit": st.sampled_from([0, 1, 2, 5, 100])})))
    _, _, chosen = choose(index, query, game)
    answer = search(index, query, game)
    score = {index.id_of(hit.word): hit.score for hit in answer.words}
    if query.sort == "score":
        chosen = sorted(chosen, key=score.__getitem__, reverse=True)
    assert index.words(chosen) == [hit.word for hit in answer.words]
    # the order, and each word's score; equal-scoring layings may differ (a two-letter tile
    # first or last), as in test_anagram_query.same_answer
    slow = brute_search(lexicon, query, game).words
    assert [(h.word, h.score) for h in answer.words] == [(h.word, h.score) for h in slow]
