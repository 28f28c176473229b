"""POST /v1/anagram, POST /v1/split and the hooks of GET /v1/words, through the real app.

Each answer is compared with the core's (`Lexicon.anagram`, `Lexicon.split`, which
`kelime anagram --json` prints), and every refusal is checked for its status and code in
the one error shape."""

from __future__ import annotations

import json
import math

import pytest

from kelime.lexicon import Candidate, Lexicon, compile_words, write_lexicon
from kelime.service.app import create_app
from kelime.service.settings import Settings
from tests.service_helpers import TestClient
from tests.waiting import until

WORDS = ["kol", "haksız", "olmaz", "kale", "kalem", "ela", "kel", "ak", "elma", "alem", "lale",
         "kitap", "kat", "tak", "at", "kitaplık", "silgi", "ilk", "sil", "gel", "kalp"]
SOURCE = {"kind": "test", "name": "tests/test_service_anagram.py", "licence": "n/a"}


def make_data(root, words=WORDS):
    write_lexicon(compile_words([Candidate(w) for w in words]), root, "tr", SOURCE,
                  created="2026-01-01T00:00:00Z")
    return root


@pytest.fixture(scope="module")
def lexicon_dir(tmp_path_factory):
    return make_data(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="module")
def api(lexicon_dir):
    with TestClient(create_app(Settings(data=lexicon_dir))) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def lex(lexicon_dir):
    return Lexicon.load(lexicon_dir / "tr")


def error(reply, status: int, code: str) -> dict:
    assert reply.status_code == status, reply.text
    assert reply.headers["content-type"] == "application/json"
    body = reply.json()
    assert set(body) == {"error"} and body["error"]["code"] == code, body
    return body["error"]


@pytest.mark.parametrize("ask", [
    {"rack": "kale?"},
    {"rack": "KALE?M", "sort": "alpha", "limit": 3},
    {"rack": "kale?", "mode": "exact"},
    {"rack": "ia", "pattern": "k.t.p"},
    {"rack": "kalem?", "exclude": ["Kalem", "ALEM"], "min_length": 3, "max_length": 4},
    {"rack": "kale?[lm]", "game": "kelimatik", "sort": "length", "what_if": True},
    {"rack": "kaletn?[lm]ıs", "game": "kelimatik", "sort": "length"},
])
def test_anagram_answers_exactly_what_the_core_answers(api, lex, ask):
    reply = api.post("/v1/anagram", json=ask)
    assert reply.status_code == 200, reply.text
    options = {k: v for k, v in ask.items() if k not in ("rack", "game")}
    assert reply.json() == lex.anagram(ask["rack"], ask.get("game"), **options)
    assert reply.json()["lexicon"]["name"] == "tr" and "etag" not in reply.headers


def test_kelimatik_worked_examples_over_http(api):
    def best(rack: str, word: str) -> dict:
        words = api.post("/v1/anagram", json={"rack": rack, "game": "kelimatik",
                                              "limit": 1000, "what_if": True}).json()["words"]
        return next(w for w in words if w["word"] == word)

    assert best("kol", "kol") == {"word": "kol", "score": 18, "tiles": ["k", "o", "l"]}
    assert best("hak?ız", "haksız") == {"word": "haksız", "score": 78,
                                        "tiles": ["h", "a", "k", "?s", "ı", "z"]}
    assert best("?[lm]az", "olmaz") == {"word": "olmaz", "score": 24,
                                        "tiles": ["?o", "lm", "a", "z"]}


def test_truncated_answers_count_every_word(api):
    full = api.post("/v1/anagram", json={"rack": "kalem??", "limit": 1000}).json()
    cut = api.post("/v1/anagram", json={"rack": "kalem??", "limit": 2}).json()
    assert cut["count"] == full["count"] > 2 and cut["truncated"] and not full["truncated"]
    assert cut["words"] == full["words"][:2]


def test_lengths_no_word_can_have_ask_for_no_word(api):
    """min_length over max_length is like min_length 40: no word fits, and no error (a JSON
    Schema cannot compare two fields, so a client could not know it is refused)."""
    for ask in ({"min_length": 5, "max_length": 3}, {"min_length": 40}):
        reply = api.post("/v1/anagram", json={"rack": "kale", **ask})
        assert reply.status_code == 200 and reply.json()["count"] == 0, reply.text


def test_a_whole_number_may_be_written_with_a_point(api):
    """JSON has numbers, not integers: `"limit": 2.0` is 2 (and JSON Schema's integer)."""
    reply = api.post("/v1/anagram", json={"rack": "kale", "limit": 2.0, "max_length": 4.0})
    assert reply.status_code == 200 and len(reply.json()["words"]) == 2, reply.text
    error(api.post("/v1/anagram", json={"rack": "kale", "limit": 2.5}), 422, "invalid_option")


@pytest.fixture(scope="module")
def patient_api(lexicon_dir):
    """The app with the longest split budget the settings allow (10 s, for milliseconds of
    work here): its splits search to the end however loaded the machine is."""
    with TestClient(create_app(Settings(data=lexicon_dir, split_budget_ms=10_000))) as client:
        yield client


def test_split_answers_exactly_what_the_core_answers(patient_api, lex):
    """Both search to the end, so the answers are the same on any machine: the core with no
    deadline, the server within its 10 s. (Within the default 500 ms a loaded machine gave
    the server its best layout so far, not the core's.)"""
    for rack in ("kalpkitapkalem", "kitapsilgkalem?", "kalemkitap?ilg"):
        reply = patient_api.post("/v1/split", json={"rack": rack})
        assert reply.status_code == 200, reply.text
        body = reply.json()
        assert body["complete"] is True, body
        assert body == lex.split(rack, "harfbank", deadline=math.inf)
        laid = [t for w in body["words"] for t in w["tiles"]] + body["discarded"]
        laid += [body["thrown"]] if body["thrown"] else []
        assert len(laid) == len(rack)  # every tile accounted for once
    assert patient_api.post("/v1/split", json={"rack": "kalpkitapkalem"}).json()["found"] is True


@pytest.mark.parametrize("path, body, status, code", [
    ("/v1/anagram", b"", 422, "invalid_json"),
    ("/v1/anagram", b"[1]", 422, "invalid_request"),
    ("/v1/anagram", b'{"rack": "kale", "rack2": 1}', 422, "invalid_request"),
    ("/v1/anagram", b"{}", 422, "invalid_rack"),
    ("/v1/anagram", b'{"rack": 7}', 422, "invalid_rack"),
    ("/v1/anagram", b'{"rack": ""}', 422, "invalid_rack"),
    ("/v1/anagram", b'{"rack": "kale[lm"}', 422, "invalid_rack"),
    ("/v1/anagram", b'{"rack": "ka\\u0000le"}', 422, "invalid_rack"),
    ("/v1/anagram", b'{"rack": "kalex"}', 422, "invalid_rack"),
    ("/v1/anagram", b'{"rack": "kale[lm]"}', 422, "invalid_rack"),  # kelimelik: no such tile
    ("/v1/anagram", b'{"rack": "kale", "pattern": "k.x"}', 422, "invalid_pattern"),
    ("/v1/anagram", b'{"rack": "kale", "pattern": "kale"}', 422, "invalid_pattern"),
    ("/v1/anagram", b'{"rack": "kale", "mode": "all"}', 422, "invalid_option"),
    ("/v1/anagram", b'{"rack": "kale", "sort": "random"}', 422, "invalid_option"),
    ("/v1/anagram", b'{"rack": "kale", "limit": "5"}', 422, "invalid_option"),
    ("/v1/anagram", b'{"rack": "kale", "limit": true}', 422, "invalid_option"),
    ("/v1/anagram", b'{"rack": "kale", "min_length": 0}', 422, "invalid_option"),
    ("/v1/anagram", b'{"rack": "kale", "game": ""}', 422, "invalid_request"),
    ("/v1/anagram", b'{"rack": "kale", "lexicon": ""}', 422, "invalid_request"),
    ("/v1/anagram", b'{"rack": "kale", "exclude": "kale"}', 422, "invalid_option"),
    ("/v1/anagram", b'{"rack": "kale", "exclude": [1]}', 422, "invalid_option"),
    ("/v1/anagram", b'{"rack": "kale", "game": "scrabble"}', 404, "unknown_game"),
    ("/v1/anagram", b'{"rack": "kale", "lexicon": "zz"}', 404, "unknown_lexicon"),
    ("/v1/anagram", b'{"rack": "kale???"}', 413, "over_limit"),
    ("/v1/anagram", b'{"rack": "abcdefghijklmnoprs"}', 413, "over_limit"),
    ("/v1/anagram", b'{"rack": "kale", "limit": 1001}', 413, "over_limit"),
    ("/v1/anagram", b'{"rack": "kale", "pattern": "................"}', 413, "over_limit"),
    ("/v1/anagram", json.dumps({"rack": "k" * 300}).encode(), 413, "over_limit"),
    ("/v1/anagram", json.dumps({"rack": "kale", "exclude": ["ev"] * 1001}).encode(), 413,
     "over_limit"),
    ("/v1/anagram", json.dumps({"rack": "kale", "exclude": ["e" * 65]}).encode(), 413,
     "word_too_long"),
    ("/v1/split", b'{"rack": "kale", "mode": "exact"}', 422, "invalid_request"),
    ("/v1/split", b'{"rack": "[lm"}', 422, "invalid_rack"),
    ("/v1/split", b'{"rack": "kalemkitapsilgiev"}', 413, "over_limit"),
    ("/v1/split", b'{"rack": "kalemkitapsilgie"}', 422, "rack_not_dealt"),  # 16 > 14 + 1
    ("/v1/split", b'{"rack": "kalem"}', 422, "rack_not_dealt"),  # 5 < 14
    ("/v1/anagram", b'{"rack": "kalem", "game": "kelimatik"}', 422, "rack_not_dealt"),
    ("/v1/anagram", b'{"rack": "kalem", "what_if": 1}', 422, "invalid_option"),
    ("/v1/split", b'{"rack": "kalem", "what_if": "yes"}', 422, "invalid_request"),
])
def test_bad_questions_get_the_error_shape(api, path, body, status, code):
    message = error(api.post(path, content=body), status, code)["message"]
    assert message and "Traceback" not in message


BAD_QUESTIONS = [case for case in test_bad_questions_get_the_error_shape.pytestmark[0].args[1]]


def test_a_question_is_checked_whole_before_it_waits(lexicon_dir):
    """Everything a question carries is read and checked before it waits for a search:
    with the searches' queue full, a bad question still gets its own error (not `busy`),
    and a good one gets `busy` at once. (An exclude list of 838,840 words used to be counted
    only in the search, after the queue: 120 of them took a worker to 7 GiB.)"""
    from kelime.service.gate import Gate

    with TestClient(create_app(Settings(data=lexicon_dir))) as full:
        full.app.state.searches = full.portal.call(lambda: Gate(  # (made in the server's loop)
            "questions", threads=1, most_waiting=0, most_wait=1, guess=0.01))  # always full
        for path, body, status, code in BAD_QUESTIONS:
            error(full.post(path, content=body), status, code)
        for path, body in (("/v1/anagram", b'{"rack": "kale"}'),
                           ("/v1/split", b'{"rack": "kalemkitapsilg?"}')):
            reply = full.post(path, content=body)
            assert error(reply, 503, "busy")["details"]["waiting"] == 0
            assert reply.headers["retry-after"] == "1"


def test_search_bodies_are_bounded_by_what_a_question_can_carry(api):
    """An anagram or split body may carry a rack, a pattern and max_exclude_words words:
    395 KiB with every character \\u-escaped, not validate's 4 MiB; more is refused
    before it is read."""
    settings = Settings()
    limit = settings.search_body_bytes
    assert 300_000 < limit < settings.max_body_bytes
    most = {"rack": "kale?", "pattern": "k.t.p", "exclude": [
        "ğ" * settings.max_word_chars] * settings.max_exclude_words, "limit": 5}
    body = json.dumps(most).encode()  # ensure_ascii: each ğ is 6 bytes
    assert len(body) < limit
    reply = api.post("/v1/anagram", content=body)
    assert reply.status_code == 200, reply.text
    for path in ("/v1/anagram", "/v1/split"):
        big = b'{"rack": "kale", "exclude": [' + b'"aa", ' * (limit // 6) + b'"aa"]}'
        details = error(api.post(path, content=big), 413, "body_too_large")["details"]
        assert details == {"size": len(big), "limit": limit}


def test_limits_come_from_the_settings(lexicon_dir):
    settings = Settings(data=lexicon_dir, max_rack_tiles=4, max_blanks=0, max_results=3,
                        default_results=2)
    with TestClient(create_app(settings)) as api:
        assert "limit is 4" in error(api.post("/v1/anagram", json={"rack": "kalem"}), 413,
                                     "over_limit")["message"]
        assert "limit is 0" in error(api.post("/v1/anagram", json={"rack": "ka?"}), 413,
                                     "over_limit")["message"]
        error(api.post("/v1/anagram", json={"rack": "kale", "limit": 4}), 413, "over_limit")
        assert len(api.post("/v1/anagram", json={"rack": "kale"}).json()["words"]) == 2


def test_settings_read_the_limits_from_the_environment():
    settings = Settings.from_env({"KELIME_MAX_RACK_TILES": "20", "KELIME_MAX_BLANKS": "0",
                                  "KELIME_SPLIT_BUDGET_MS": "250"})
    assert (settings.limits.rack_tiles, settings.limits.blanks,
            settings.limits.time_budget) == (20, 0, 0.25)
    assert Settings.from_env(settings.as_env()).limits == settings.limits


def test_a_lexicon_without_an_index_validates_and_says_to_rebuild_for_anagrams(tmp_path):
    from tests.test_lexicon_format import without_index

    without_index(make_data(tmp_path) / "tr")
    with TestClient(create_app(Settings(data=tmp_path))) as api:
        assert api.post("/v1/validate", json={"words": ["kale"]}).json()["all_valid"] is True
        for path in ("/v1/anagram", "/v1/split"):
            message = error(api.post(path, json={"rack": "kale"}), 503,
                            "no_anagram_index")["message"]
            assert "kelime build" in message


def test_words_list_their_hooks(api):
    body = api.get("/v1/words/kale").json()
    assert body["hooks"] == {"front": [], "back": ["m"]}
    assert api.get("/v1/words/ala").json()["hooks"] == {"front": [], "back": []}
    assert api.get("/v1/words/il").json()["hooks"] == {"front": ["s"], "back": ["k"]}
    assert api.get("/v1/words/at").json()["hooks"] == {"front": ["k"], "back": []}
    assert api.get("/v1/words/el").json()["hooks"] == {"front": ["g", "k"], "back": ["a"]}
    # Kelimatik's minimum is 3 letters: "ak" is too short there, so no hook makes it.
    assert api.get("/v1/words/a?game=kelimatik").json()["hooks"] == {"front": [], "back": []}
    assert api.get("/v1/words/k%C4%B1").json()["hooks"]["front"] == []
    assert api.get("/v1/words/e-l").json()["hooks"] == {"front": [], "back": []}


def test_the_schema_documents_both_routes(api):
    paths = api.get("/openapi.json").json()["paths"]
    for path in ("/v1/anagram", "/v1/split"):
        assert {"200", "413", "422", "503"} <= set(paths[path]["post"]["responses"])
    assert api.get("/v1/anagram").status_code == 405


KIDS = '''name = "cocuk"
description = "A children's game: rack of 5, every letter worth 2, words of 3+ letters"
rack_size = 5
min_length = 3
scoring = "sum"

[blank]
value = 0
count = 1

[tiles]
''' + "".join(f'"{ch}" = {{ value = 2 }}\n' for ch in "abcçdefgğhıijklmnoöprsştuüvyz")


def test_a_deployment_adds_its_own_game_profile(lexicon_dir, tmp_path):
    (tmp_path / "cocuk.toml").write_text(KIDS, encoding="utf-8")
    with TestClient(create_app(Settings(data=lexicon_dir, games=tmp_path))) as api:
        names = [g["name"] for g in api.get("/v1/games").json()["games"]]
        assert names[-1] == "cocuk" and "kelimelik" in names
        words = api.post("/v1/anagram", json={"rack": "kale?", "game": "Cocuk"}).json()["words"]
        assert words[0] == {"word": "kale", "score": 8, "tiles": ["k", "a", "l", "e"]}
        assert "ak" not in [w["word"] for w in words]  # its minimum is 3
        assert api.get("/v1/words/ak?game=cocuk").json()["reason"] == "too_short"
    from click.testing import CliRunner

    from kelime.cli import cli
    run = CliRunner().invoke(cli, ["anagram", "kale?", "-g", "cocuk", "--json", "--data",
                                   str(lexicon_dir)], env={"KELIME_GAMES": str(tmp_path)})
    assert run.exit_code == 0, run.output
    assert json.loads(run.output)["words"] == words


def test_a_broken_deployment_profile_stops_the_start_saying_which(lexicon_dir, tmp_path):
    (tmp_path / "bozuk.toml").write_text('name = "bozuk"\n', encoding="utf-8")
    from kelime.games import GameProfileError
    with pytest.raises(GameProfileError) as err:
        with TestClient(create_app(Settings(data=lexicon_dir, games=tmp_path))):
            pass
    assert "bozuk.toml" in str(err.value)


def test_min_length_never_goes_under_the_games_minimum(api):
    """`ev` is too short for kelimatik, so min_length 1 must not list it."""
    words = api.post("/v1/anagram", json={"rack": "kale", "game": "kelimatik",
                                          "min_length": 1, "what_if": True}).json()["words"]
    assert words and all(len(w["word"]) >= 3 for w in words)
    verdicts = api.post("/v1/validate", json={"words": [w["word"] for w in words],
                                              "game": "kelimatik"}).json()
    assert verdicts["all_valid"]


def blocked(ran: list, release) -> callable:
    """Work number n: noted in `ran`, then held until `release` is set."""
    def work(n):
        def run():
            ran.append(n)
            release.wait(10)
            return n
        return run
    return work


def test_one_search_at_a_time_a_bounded_queue_and_no_work_for_departed_clients():
    """40 concurrent 16-two-letter-tile questions used to run at once on the thread pool,
    starving /healthz for 70 s and taking the worker to 1.16 GB."""
    import threading

    import anyio
    from starlette.requests import ClientDisconnect

    from kelime.service.errors import Unavailable
    from kelime.service.gate import Gate

    release, ran, outcomes = threading.Event(), [], []
    work = blocked(ran, release)

    async def ask(gate, n, gone=False):
        async def ready():
            if gone:
                raise ClientDisconnect()
        try:
            outcomes.append(await gate.run(work(n), ready=ready))
        except (Unavailable, ClientDisconnect) as e:
            outcomes.append(type(e).__name__)

    async def main():
        gate = Gate("questions", threads=1, most_waiting=2, most_wait=30, guess=0.001)
        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, gate, 1)
            await until(lambda: ran, "question 1 searching in the gate's thread")
            assert ran == [1] and gate.waiting == 0  # running, nobody waiting
            tg.start_soon(ask, gate, 2, True)
            tg.start_soon(ask, gate, 3)
            await anyio.wait_all_tasks_blocked()  # each question as far as it can go
            assert gate.waiting == 2 and outcomes == []  # both queued behind the search
            tg.start_soon(ask, gate, 4)  # two wait already: refused at once
            await anyio.wait_all_tasks_blocked()  # queued, it would be blocked, not refused
            assert outcomes == ["Unavailable"] and ran == [1] and gate.waiting == 2
            release.set()
        assert sorted(map(str, outcomes)) == ["1", "3", "ClientDisconnect", "Unavailable"]
        assert ran == [1, 3]  # the departed client's question was never searched

    anyio.run(main)


def test_a_question_that_would_wait_too_long_is_refused_and_none_waits_past_the_limit():
    """A flood of splits waited in a queue of 256 for longer than nginx's 10 s timeout, which
    then took every replica out of its rotation. Now a question is refused at once when
    those ahead of it would take longer than the wait limit, and one let in on a wrong
    estimate is refused when the limit passes, while the search ahead still runs."""
    import threading

    import anyio

    from kelime.service.errors import Unavailable
    from kelime.service.gate import Gate

    release, ran, refusals = threading.Event(), [], []
    work = blocked(ran, release)

    async def ask(gate, n):
        try:
            await gate.run(work(n))
        except Unavailable as e:
            refusals.append((n, e, len(ran), release.is_set()))

    async def main():
        # Searches lately took 1 s each: with one running, the next would wait ~1 s.
        slow = Gate("questions", threads=1, most_waiting=100, most_wait=0.5, guess=1.0)
        # Searches lately took 1 ms each: 100 may wait... but the one running never ends.
        wrong = Gate("questions", threads=1, most_waiting=100, most_wait=0.3, guess=0.001)
        async with anyio.create_task_group() as tg:
            tg.start_soon(ask, slow, 1)
            tg.start_soon(ask, wrong, 2)
            await until(lambda: len(ran) == 2, "a search running in each gate's thread")
            tg.start_soon(ask, slow, 3)   # refused at once: ~1 s of work ahead
            tg.start_soon(ask, wrong, 4)  # let in, then refused after 0.3 s of waiting
            # 3 and 4 take their first steps in the loop's next turn, before this task goes
            # on; 4's 0.3 s can end only in a later turn: 3 is refused and 4 waits, however
            # loaded the machine.
            await anyio.wait_all_tasks_blocked()
            assert [n for n, *_ in refusals] == [3] and wrong.waiting == 1
            await until(lambda: len(refusals) == 2, "question 4 refused once it had waited "
                                                    "its 0.3 s")
            release.set()
        assert [n for n, *_ in refusals] == [3, 4]
        for n, e, started, released in refusals:
            assert e.status == 503 and e.code == "busy" and not released and started == 2
            assert int(e.headers["Retry-After"]) >= 1
            assert e.details["wait_limit_ms"] in (500, 300)
        assert sorted(ran) == [1, 2]  # the refused questions were never searched

    anyio.run(main)


@pytest.mark.parametrize("path, ask, rule, says", [
    ("/v1/anagram", {"rack": "ka[lm][ar][ek]e?tnm", "game": "kelimatik"}, "two_letter",
     "Kelimatik deals 1 two-letter tile; this rack has 3"),
    ("/v1/anagram", {"rack": "aeıioöuüae", "game": "kelimatik"}, "vowels",
     "Kelimatik deals 3 vowels; this rack has 10"),
    ("/v1/split", {"rack": "kalem"}, "tiles",
     "Harfbank deals 14 tiles (15 with the one drawn to throw away); this rack has 5"),
    ("/v1/anagram", {"rack": "kalem", "game": "harfbank"}, "tiles",
     "Harfbank deals 14 tiles (15 with the one drawn to throw away); this rack has 5"),
])
def test_a_rack_the_game_cannot_deal_is_refused_unless_what_if(api, lex, path, ask, rule, says):
    """Issue 32: these were answered as if the game could deal them."""
    refused = error(api.post(path, json=ask), 422, "rack_not_dealt")
    assert refused["message"].startswith(says + "; fix the rack, or ask anyway: "
                                         '"what_if": true')
    assert refused["details"]["game"] == ask.get("game", "harfbank")
    assert refused["details"]["rule"] == rule
    answered = api.post(path, json={**ask, "what_if": True})
    assert answered.status_code == 200, answered.text
    again = error(api.post(path, json={**ask, "what_if": False}), 422, "rack_not_dealt")
    assert again == refused
