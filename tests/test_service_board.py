"""POST /v1/play and POST /v1/moves on a real uvicorn server with the offline `tr` lexicon:
each answer is the core's (`kelime.board.check`, `moves`), every refusal in the one error
shape with its status and code, and a lexicon pinned `name@version` answers as itself."""

from __future__ import annotations

import httpx
import pytest

from kelime.board import Position, Tile, check, moves
from kelime.games import GAMES
from kelime.lexicon import Lexicon
from kelime.service.app import create_app
from kelime.service.settings import Settings
from tests.service_helpers import serve_in_thread


def empty_board() -> list[list[str]]:
    return [[""] * 15 for _ in range(15)]


def kal_board() -> list[list[str]]:
    board = empty_board()
    board[7][7:10] = ["k", "a", "l"]
    return board


@pytest.fixture(scope="module")
def lex(offline_lexicons) -> Lexicon:
    return Lexicon.load(offline_lexicons / "tr")


@pytest.fixture(scope="module")
def http(offline_lexicons):
    with serve_in_thread(create_app(Settings(data=offline_lexicons))) as url, \
            httpx.Client(base_url=url, timeout=30) as client:
        yield client


def error(reply: httpx.Response, status: int, code: str) -> dict:
    assert reply.status_code == status, reply.text
    body = reply.json()
    assert set(body) == {"error"} and body["error"]["code"] == code, body
    return body["error"]


def test_a_play_is_checked_scored_and_its_words_judged(http, lex):
    tiles = [{"row": 7, "col": 10, "letter": "e"}, {"row": 8, "col": 10, "letter": "l"}]
    reply = http.post("/v1/play", json={"game": "kelimelik", "board": kal_board(),
                                        "tiles": tiles})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    spot = Position.read(kal_board(), GAMES["kelimelik"])
    expected = check(spot, [Tile(**t) for t in tiles], lambda w: lex.judge(w)[1])
    assert body == {"lexicon": lex.info, **expected}
    assert body["legal"] and [w["word"] for w in body["words"]] == ["el", "kale"]
    assert body["words"][1]["valid"] and not body["words"][0]["valid"] is None


def test_an_invalid_word_scores_nothing(http):
    tiles = [{"row": 7, "col": 10, "letter": "ğ"}]
    body = http.post("/v1/play", json={"board": kal_board(), "tiles": tiles}).json()
    assert body["legal"] and body["words"] == [
        {"word": "kalğ", "valid": False, "reason": "not_in_dictionary", "score": 10}]
    assert body["score"] == 0 and not body["bingo"]


@pytest.mark.parametrize(("board", "tiles", "reason", "said"), [
    (empty_board(), [(7, 6, "e"), (7, 8, "v")], "gap", "row 7, column 7 is empty"),
    (empty_board(), [(7, 7, "e"), (8, 8, "v")], "not_in_line", "row 8, column 8"),
    (kal_board(), [(1, 1, "e"), (1, 2, "v")], "not_touching", "row 1, column 1"),
    (empty_board(), [(0, 0, "e"), (0, 1, "v")], "off_centre", "row 7, column 7"),
    (empty_board(), [(7, 7, "o")], "one_letter", "one-letter word"),
])
def test_an_illegal_placement_is_200_with_its_reason(http, board, tiles, reason, said):
    ask = {"board": board, "tiles": [{"row": r, "col": c, "letter": ch} for r, c, ch in tiles]}
    reply = http.post("/v1/play", json=ask)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert (body["legal"], body["reason"], body["score"]) == (False, reason, 0)
    assert said in body["message"]


def test_moves_are_the_cores_best_first(http, lex):
    ask = {"game": "sozce", "board": kal_board(), "rack": "kale?ab", "limit": 5}
    reply = http.post("/v1/moves", json=ask)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    found = moves(Position.read(kal_board(), GAMES["sozce"]), "kale?ab", lex.board_graph)
    assert body == {"lexicon": lex.info, **found.as_dict(5)}
    assert body["count"] > 5 and body["truncated"] and body["complete"]
    assert len(body["moves"]) == 5 and body["moves"][0]["score"] >= body["moves"][-1]["score"]
    first = body["moves"][0]
    checked = http.post("/v1/play", json={"game": "sozce", "board": kal_board(),
                                          "tiles": first["tiles"]}).json()
    assert checked["legal"] and checked["score"] == first["score"]
    default = http.post("/v1/moves", json={"board": empty_board(), "rack": "kale"}).json()
    assert len(default["moves"]) == min(20, default["count"])


def test_a_pinned_lexicon_answers_as_itself(http, lex):
    pinned = f"tr@{lex.info['version']}"
    body = http.post("/v1/moves", json={"board": empty_board(), "rack": "ev", "lexicon": pinned,
                                        "limit": 1}).json()
    assert body["lexicon"] == lex.info and body["moves"][0]["word"] == "ev"
    error(http.post("/v1/play", json={"board": empty_board(), "tiles": [],
                                      "lexicon": "tr@000000000000"}), 404, "unknown_version")



def test_a_rack_is_read_as_the_anagrams_are_and_quoted_short(http):
    """`KALE`, a decomposed ş or spaces around it are the rack the anagram reads (they were
    refused: `'kaş' has '̧'`); a huge rack's refusal quotes its start, not all of it (a
    300,000-tile rack came back whole in a 300 KB message)."""
    ask = {"game": "sozce", "board": kal_board(), "limit": 5}
    plain = http.post("/v1/moves", json={**ask, "rack": "kaşe?b"}).json()
    for typed in ("KAŞE?B", "kas\u0327e?b", " kaşe?b "):
        assert http.post("/v1/moves", json={**ask, "rack": typed}).json() == plain, typed
    for what_if in (True, False):
        refused = http.post("/v1/moves", json={**ask, "rack": "a" * 30_000, "what_if": what_if})
        assert len(error(refused, 413, "over_limit")["message"]) < 300


def test_a_rack_the_game_cannot_deal_is_refused_as_the_anagram_refuses_it(http):
    """kelimelik's bag has one j: `jjkale` is refused with the anagram's code, message and
    details (it was answered); `what_if` answers it. A rack past the search's bound (8
    tiles, 3 blanks) is 413 over_limit, `what_if` or not, as the anagram's past its own:
    it was a 422 whose advice, `"what_if": true`, then met the 413."""
    ask = {"game": "kelimelik", "board": kal_board()}
    refused = error(http.post("/v1/moves", json={**ask, "rack": "jjkale"}), 422,
                    "rack_not_dealt")
    assert refused["details"]["rule"] == "letter", refused
    assert refused == error(http.post("/v1/anagram", json={"rack": "jjkale"}), 422,
                            "rack_not_dealt")
    jj = error(http.post("/v1/moves", json={**ask, "rack": "jjkale"}), 422, "rack_not_dealt")
    assert jj["message"].startswith("Kelimelik's bag has 1 j; this rack has 2")
    assert jj["details"] == {"game": "kelimelik", "rule": "letter", "least": 0, "most": 1,
                             "found": 2, "letter": "j"}
    answered = http.post("/v1/moves", json={**ask, "rack": "jjkale", "what_if": True})
    assert answered.status_code == 200, answered.text
    assert answered.json()["count"] > 0 and answered.json()["moves"]
    for rack in ("kalemize", "kale???"):
        for what_if in (True, False):
            over = error(http.post("/v1/moves", json={**ask, "rack": rack, "what_if": what_if}),
                         413, "over_limit")
            assert "a kelimelik rack holds at most 7 tiles, 2 of them blanks" in over["message"]


@pytest.mark.parametrize(("path", "ask", "status", "code", "said"), [
    ("/v1/play", {"board": empty_board()[:14], "tiles": []}, 422, "invalid_board",
     "must be 15 rows of 15 cells (the kelimelik board), not 14"),
    ("/v1/play", {"board": [["x"] * 15] * 15, "tiles": []}, 422, "invalid_board",
     "the cell at row 0, column 0 is 'x'"),
    ("/v1/play", {"board": kal_board(), "tiles": [{"row": 7, "col": 8, "letter": "e"}]}, 422,
     "invalid_tiles", "tile 0 (row 7, column 8) is on a taken square: 'a' is there already"),
    ("/v1/play", {"board": empty_board(), "tiles": [{"row": 15, "col": 0, "letter": "e"}]},
     422, "invalid_tiles", "is off the board"),
    ("/v1/play", {"board": empty_board(), "tiles": "e"}, 422, "invalid_tiles",
     "'tiles' must be"),
    ("/v1/moves", {"board": empty_board(), "rack": "kalex"}, 422, "invalid_rack", "'x'"),
    ("/v1/moves", {"board": kal_board(), "rack": "  "}, 422, "invalid_rack",
     "the rack is empty"),
    ("/v1/moves", {"board": empty_board(), "rack": "kale???", "what_if": True}, 413,
     "over_limit", "2 of them blanks"),
    ("/v1/moves", {"board": empty_board(), "rack": "kale???"}, 413, "over_limit",
     "2 of them blanks"),
    ("/v1/moves", {"board": empty_board(), "rack": "kale", "what_if": 1}, 422,
     "invalid_option", "'what_if'"),
    ("/v1/moves", {"board": empty_board(), "rack": "kale", "limit": 5000}, 422,
     "invalid_option", "ask for 0 to 1000 moves"),
    ("/v1/moves", {"board": empty_board(), "rack": "kale", "game": "harfbank"}, 422,
     "invalid_board", "harfbank is not played on a board"),
    ("/v1/moves", {"board": empty_board(), "rack": "kale", "size": 15}, 422,
     "invalid_request", "unknown field(s) 'size'"),
])
def test_a_malformed_question_is_refused_in_the_error_shape(http, path, ask, status, code,
                                                              said):
    assert said in error(http.post(path, json=ask), status, code)["message"]


def board_with(row: int, col: int, cell: object) -> list[list[object]]:
    board: list[list[object]] = [list(r) for r in empty_board()]
    board[row][col] = cell
    return board


@pytest.mark.parametrize(("ask", "code", "said", "at"), [
    ({"board": board_with(7, 7, 1), "tiles": []}, "invalid_board",
     "board[7][7] is a number (1), not a string", "board[7][7]"),
    ({"board": board_with(3, 4, None), "tiles": []}, "invalid_board",
     "board[3][4] is null, not a string", "board[3][4]"),
    ({"board": [5] * 15, "tiles": []}, "invalid_board",
     "board[0] is a number (5), not an array", "board[0]"),
    ({"board": empty_board(), "tiles": [{"row": True, "col": 7, "letter": "e"}]},
     "invalid_tiles", "tiles[0].row is a boolean (true), not a whole number", "tiles[0].row"),
    ({"board": empty_board(), "tiles": [{"row": 7, "col": 7, "letter": "e", "blank": "yes"}]},
     "invalid_tiles", "tiles[0].blank is a string ('yes'), not true or false",
     "tiles[0].blank"),
    ({"board": empty_board(), "tiles": [{"row": 7, "col": 7, "letter": "e", "size": 1}]},
     "invalid_tiles", "tiles[0] has an unknown field 'size'", "tiles[0]"),
    ({"board": empty_board(), "tiles": [{"row": 7, "col": 7}]},
     "invalid_tiles", "tiles[0] has no 'letter'", "tiles[0]"),
])
def test_a_bad_value_inside_the_board_or_a_tile_is_named_by_its_path(http, ask, code, said,
                                                                     at):
    """msgspec's path (`$.board[7][7]`, `$.tiles[0].row`) is the message's: not "board[7]
    is an array, not a string" (the list-of-strings message of validate's words)."""
    refused = error(http.post("/v1/play", json=ask), 422, code)
    assert said in refused["message"] and refused["details"]["at"] == at, refused


def test_the_schema_describes_both_paths(http):
    schema = http.get("/openapi.json").json()
    play, found = schema["paths"]["/v1/play"]["post"], schema["paths"]["/v1/moves"]["post"]
    assert play["operationId"] == "checkPlay" and found["operationId"] == "findMoves"
    parts = schema["components"]["schemas"]
    assert {"PlayRequest", "MovesRequest", "PlayReply", "MovesReply"} <= set(parts)
    assert set(parts["MovesReply"]["properties"]) == {"lexicon", "count", "truncated",
                                                       "complete", "moves"}


def test_a_moves_question_refused_busy_says_it_waits_with_the_searches(offline_lexicons):
    """Moves take their turn at the searches' gate: its 503 says so (it said "1 anagram and
    split questions are already waiting here" to a moves question)."""
    from kelime.service.routes.anagram import searches
    from tests.service_helpers import TestClient

    with TestClient(create_app(Settings(data=offline_lexicons))) as client:
        gate = client.portal.call(lambda: searches(client.app.state))
        gate.most_waiting = 0  # full
        reply = client.post("/v1/moves", json={"board": empty_board(), "rack": "kale"})
        refused = error(reply, 503, "busy")
        assert "searches (anagram, split and moves questions)" in refused["message"]
        assert int(reply.headers["retry-after"]) >= 1
