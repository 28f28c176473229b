"""The fast path of POST /v1/anagram (service/fast.py, `FastAnagram`) answers exactly what the
whole app would: the same status, headers and bytes, the same metrics and access log. It
answers only quick questions, and only when the searches' gate has a free turn at once;
everything else (refusals, slow questions, a busy gate) reaches the whole app with its body
intact."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from kelime.service.routes.anagram import ANAGRAM, searches
from tests.service_helpers import TestClient
from tests.test_service_anagram import make_data
from tests.test_service_fast import JSON, answer, call, request, served_apps, spy_on
from tests.test_service_health import sample

GZIP = [*JSON, (b"accept-encoding", b"gzip")]


@pytest.fixture(scope="module")
def apps(tmp_path_factory):
    """`served_apps` on a small lexicon with an anagram index."""
    yield from served_apps(make_data(tmp_path_factory.mktemp("data")))


@pytest.fixture
def handed_on(apps):
    """The requests each app's fast path of /v1/anagram handed on to the whole app."""
    yield from spy_on(apps, ANAGRAM)


def same(app, ask: dict | bytes, headers=JSON, **kwargs) -> tuple[int, list, bytes]:
    """The fast path's answer to `ask`, once checked equal to the whole app's."""
    body = ask if isinstance(ask, bytes) else orjson.dumps(ask)
    fast = answer(call(app, body, headers, path=ANAGRAM, hold=True, **kwargs))
    whole = answer(call(app.stack, body, headers, path=ANAGRAM, hold=True, **kwargs))
    assert fast == whole
    return fast


@pytest.mark.parametrize(("settings", "ask", "headers"), [
    ("default", {"rack": "kale?"}, JSON),
    ("default", {"rack": "kale??", "limit": 1000}, JSON),
    ("default", {"rack": "KALE?M", "sort": "alpha", "limit": 3}, JSON),
    ("default", {"rack": "kalem??", "sort": "length", "limit": 0}, JSON),
    ("default", {"rack": "kale?", "mode": "exact"}, JSON),
    ("default", {"rack": "kalem?", "exclude": ["Kalem", "ALEM"], "min_length": 3}, JSON),
    ("default", {"rack": "kitap?", "game": "kelimatik", "what_if": True}, JSON),
    ("default", {"rack": "kitapl", "game": "harfbank", "what_if": True}, JSON),
    ("default", {"rack": "kale??"}, GZIP),
    ("default", {"rack": "kale??"}, []),  # no Content-Type is taken as JSON
    ("cors", {"rack": "kale?"}, JSON),
    ("cors", {"rack": "kale?"}, GZIP),
])
def test_the_fast_path_answers_as_the_whole_app(apps, handed_on, settings, ask, headers):
    status, sent, reply = same(apps[settings], ask, headers)
    assert handed_on == []  # answered by the fast path itself
    assert status == 200
    assert b"content-encoding" not in dict(sent)  # even when asked: nginx compresses
    assert orjson.loads(reply)["count"] > 0


@pytest.mark.parametrize(("ask", "status"), [
    ({"rack": "kaletn?[lm]ıs", "game": "kelimatik"}, 200),  # two-letter tiles: not quick
    ({"rack": "kitap?", "game": "kelimatik"}, 422),  # not a Kelimatik deal: rack_not_dealt
    ({"rack": "kitapkitap", "game": "kelimelik"}, 422),  # 10 tiles: rack_not_dealt
    ({"rack": "ia", "pattern": "k.t.p"}, 200),  # a pattern: not quick
    ({"rack": "kale?", "exclude": [f"at{'a' * n}" for n in range(11)]}, 200),  # many words to exclude: not quick
    ({"rack": "kale?", "limit": 100_000}, 413),
    ({"rack": "kale!"}, 422),
    ({"rack": "kale?", "game": "scrabble"}, 404),
    ({"rack": "kale?", "lexicon": "xx"}, 404),
    (b'{"rack": "kale?"', 422),
])
def test_what_the_fast_path_leaves_to_the_whole_app(apps, handed_on, ask, status):
    assert same(apps["default"], ask)[0] == status
    assert handed_on == ["default"]


def test_a_full_gate_sends_the_question_to_the_whole_app(apps, handed_on):
    """A gate that would refuse the question (none may wait) refuses it there: `busy`."""
    app, gate = apps["default"], searches(apps["default"].state)
    most_waiting, gate.most_waiting = gate.most_waiting, 0
    try:
        status, _, reply = same(app, {"rack": "kale?"})
    finally:
        gate.most_waiting = most_waiting
    assert (status, orjson.loads(reply)["error"]["code"]) == (503, "busy")
    assert handed_on == ["default"]


def test_a_busy_gate_sends_the_question_to_the_whole_app(apps):
    """While another search holds the gate's one turn, the question is the stack's (which
    waits for it); the turn is given back as the stack is called, so it answers at once."""
    app, body, taken, handed = apps["default"], orjson.dumps({"rack": "kale??"}), object(), []

    async def full(scope, receive, send):
        handed.append(searches(app.state).turns.borrowed_tokens)
        searches(app.state).turns.release_on_behalf_of(taken)
        await app.stack(scope, receive, send)

    async def busy() -> list[dict]:
        searches(app.state).turns.acquire_on_behalf_of_nowait(taken)
        scope, receive, send, sent = request(body, path=ANAGRAM)
        await app.fast[ANAGRAM](scope, receive, send)
        return sent

    app.fast[ANAGRAM].full = full
    try:
        status, _, reply = answer(asyncio.run(busy()))
    finally:
        app.fast[ANAGRAM].full = app.stack
    assert handed == [1] and status == 200
    assert reply == answer(call(app.stack, body, path=ANAGRAM))[2]
    assert searches(app.state).turns.borrowed_tokens == 0


def test_the_fast_path_is_counted_and_logged_as_the_whole_app(apps, capfd):
    app, body = apps["log"], orjson.dumps({"rack": "kale?"})
    capfd.readouterr()
    call(app, body, path=ANAGRAM)
    call(app.stack, body, path=ANAGRAM)
    fast, whole = (orjson.loads(line) for line in capfd.readouterr().err.splitlines())
    for line in (fast, whole):
        del line["ts"], line["ms"]
    assert fast == whole
    assert fast["route"] == ANAGRAM and fast["status"] == 200 and "lexicon" in fast
    with TestClient(app) as client:
        text = client.get("/metrics").text
    assert sample(text, "kelime_http_requests_total", method="POST", route=ANAGRAM,
                  status="200") == 2
    assert sample(text, "kelime_searches_total", complete="true", kind="anagram") == 2
    assert sample(text, "kelime_search_seconds_count", kind="anagram") == 2
