"""service.errors: one JSON error shape for domain errors, FastAPI/Starlette errors and bugs."""

from __future__ import annotations

import pytest
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request

from kelime.service.app import create_app
from kelime.service.errors import describe, error_body
from kelime.service.settings import Settings
from tests.service_helpers import TestClient


def request(method="GET", path="/v1/x") -> Request:
    return Request({"type": "http", "method": method, "path": path, "query_string": b"",
                    "headers": [], "root_path": "", "scheme": "http", "server": ("t", 80)})


@pytest.mark.parametrize("ask, status, code", [
    ({"words": ["kitap"], "game": "monopoly"}, 404, "unknown_game"),
    ({"words": ["kitap"] * 10_001}, 413, "too_many_words"),
    ({"words": ["kitap"], "lexicon": "xx"}, 404, "unknown_lexicon"),
])
def test_domain_errors_reach_the_client_with_their_status(client, ask, status, code):
    reply = client.post("/v1/validate", json=ask)
    assert reply.status_code == status
    assert reply.json()["error"]["code"] == code and reply.json()["error"]["message"]


def test_no_lexicon_is_a_503_in_the_one_shape(tmp_path):
    with TestClient(create_app(Settings(data=tmp_path))) as empty:
        reply = empty.post("/v1/validate", json={"words": ["kitap"]})
    assert reply.status_code == 503 and reply.json()["error"]["code"] == "not_ready"
    assert "kelime build" in reply.json()["error"]["message"]


def test_details_appear_only_when_given():
    assert error_body("c", "m") == {"error": {"code": "c", "message": "m"}}
    assert error_body("c", "m", {"index": 0}) == {"error": {"code": "c", "message": "m",
                                                            "details": {"index": 0}}}


def test_request_validation_errors_are_summarised():
    exc = RequestValidationError([{"loc": ("query", "game"), "msg": "String should have at "
                                   "most 64 characters", "type": "string_too_long", "ctx": {}}])
    status, body, _ = describe(exc, request())
    assert status == 422
    assert body["error"]["message"] == "query game: String should have at most 64 characters"
    assert body["error"]["details"] == [{"loc": ["query", "game"], "type": "string_too_long",
                                         "msg": "String should have at most 64 characters"}]


def test_http_errors_and_bugs():
    assert describe(HTTPException(404), request())[1]["error"]["code"] == "not_found"
    status, body, headers = describe(HTTPException(405, headers={"Allow": "POST"}),
                                     request("PUT", "/v1/validate"))
    assert (status, headers) == (405, {"Allow": "POST"})
    assert body["error"]["message"] == "PUT /v1/validate: method not allowed here (allowed: POST)"
    status, body, _ = describe(HTTPException(418, "teapot"), request())  # kelime raises
    assert (status, body["error"]["code"]) == (500, "internal_error")  # its own: a bug
    assert describe(ClientDisconnect(), request())[0] == 400
    status, body, _ = describe(RuntimeError("secret path /srv/x"), request())
    assert status == 500 and body["error"]["code"] == "internal_error"
    assert "secret" not in body["error"]["message"]


def test_the_app_renders_404_405_and_422_in_the_one_shape(client):
    missing = client.get("/v2/validate")
    assert missing.status_code == 404
    assert missing.json() == {"error": {"code": "not_found", "message": "GET /v2/validate "
                                        "matches no route; the API is listed at /docs"}}
    wrong = client.put("/v1/validate", json={"words": ["ev"]})
    assert wrong.status_code == 405 and wrong.headers["allow"] == "GET, HEAD, POST"
    assert wrong.json()["error"]["code"] == "method_not_allowed"
    long = client.get("/v1/words/ev", params={"game": "x" * 65})
    assert long.status_code == 422
    assert long.json()["error"]["code"] == "invalid_request"
    assert long.json()["error"]["details"][0]["loc"] == ["query", "game"]


def test_an_unexpected_exception_is_a_500_in_the_one_shape(data_dir):
    app = create_app(Settings(data=data_dir))

    @app.get("/boom")
    async def boom():
        raise RuntimeError("a bug with /secret/paths in it")

    with TestClient(app, raise_server_exceptions=False) as test_client:
        reply = test_client.get("/boom")
        assert reply.status_code == 500
        assert reply.json() == {"error": {"code": "internal_error",
                                          "message": "unexpected server error; it has been logged"}}
        metrics = test_client.get("/metrics").text
    assert 'kelime_http_requests_total{method="GET",route="/boom",status="500"} 1.0' in metrics


def test_every_code_raised_is_in_the_table_with_its_status():
    """A code is raised by name and gets its status from `CODES`; one raised with a family
    of another status is refused where it is raised, not sent with the wrong status."""
    import importlib
    import pkgutil
    import re
    from pathlib import Path

    import kelime.service
    from kelime.anagram import errors as anagram_errors
    from kelime.service.errors import CODES, Invalid, ServiceError, TooLarge

    for module in pkgutil.walk_packages(kelime.service.__path__, "kelime.service."):
        importlib.import_module(module.name)
    families, todo = {}, [ServiceError]
    while todo:  # every ServiceError class, by name
        cls = todo.pop()
        families[cls.__name__] = cls
        todo.extend(cls.__subclasses__())
    root = Path(__file__).resolve().parent.parent
    raised, mismatched = set(), []
    for path in [*root.glob("service/**/*.py")]:
        for name, code in re.findall(r"\b([A-Z]\w*|by_code)\(\s*\"([a-z_]+)\"",
                                     path.read_text()):
            if name not in families and name != "by_code":
                continue
            raised.add(code)
            status = getattr(families.get(name), "family", None)
            if code in CODES and status not in (None, CODES[code].status):
                mismatched.append((path.name, name, code))
    raised |= {cls.CODE for cls in vars(anagram_errors).values()
               if isinstance(cls, type) and hasattr(cls, "CODE")}
    assert {"reload_refused", "busy", "invalid_rack"} <= raised
    assert raised <= set(CODES), raised - set(CODES)
    assert not mismatched, mismatched
    assert ServiceError("unauthorized", "m").status == 401
    assert TooLarge("word_too_long", "m").status == 413
    with pytest.raises(ValueError, match="'word_too_long' is a 413, not a Invalid"):
        Invalid("word_too_long", "m")
    with pytest.raises(KeyError):
        ServiceError("no_such_code", "m")


def test_service_errors_are_kelime_errors_and_core_errors_map_through_the_table():
    from kelime.anagram.errors import OverLimit, RackError
    from kelime.errors import KelimeError, NoAnagramIndex
    from kelime.service.errors import Invalid

    assert issubclass(Invalid, KelimeError)
    assert describe(OverLimit("too many"), request())[0] == 413
    assert describe(RackError("bad"), request())[:2] == (422, error_body("invalid_rack", "bad"))
    assert describe(NoAnagramIndex("rebuild"), request())[0] == 503


def test_the_docs_list_every_code_of_the_table():
    from pathlib import Path

    from kelime.service.errors import codes_table

    docs = Path(__file__).resolve().parent.parent / "docs" / "api.md"
    text = docs.read_text(encoding="utf-8")
    shown = text.split("<!-- error codes: begin -->\n")[1].split("\n<!-- error codes: end -->")[0]
    assert shown == codes_table(), "paste codes_table() into docs/api.md"


def test_the_schema_lists_the_codes_of_each_error_status(client):
    responses = client.get("/openapi.json").json()["paths"]["/v1/lexicons"]["get"]["responses"]
    assert "`too_many_words`" in responses["413"]["description"]
    assert "`unknown_lexicon`" in responses["404"]["description"]
    assert "`invalid_encoding`" in responses["422"]["description"]


def test_a_game_not_of_the_lexicons_letters_is_a_conflict_everywhere(data_dir, tmp_path):
    """The schema cannot know which loaded lexicon a game fits (it is the same on every
    replica): a Turkish game with the Kurmanji lexicon is a 409, in a report as in an
    anagram question, where a report of `kitapçık` was a 422 not_a_word of `ku`'s letters."""
    settings = Settings(data=data_dir, reports=tmp_path / "reports.sqlite")
    with TestClient(create_app(settings)) as api:
        for path, body in (("/v1/reports", {"word": "kitapçık", "kind": "wrong"}),
                           ("/v1/anagram", {"rack": "kitap"}),
                           # a rack of the game's letters, not the lexicon's: the conflict
                           # first, not 422 invalid_rack (schemathesis found it on split)
                           ("/v1/anagram", {"rack": "üçgen"}),
                           ("/v1/split", {"rack": "üçgenkitap"})):
            reply = api.post(path, json={**body, "lexicon": "ku", "game": "kelimelik"})
            assert reply.status_code == 409, (path, reply.text)
            error = reply.json()["error"]
            assert error["code"] == "game_not_for_lexicon" and error["details"]["games"]
            assert "409" in api.get("/openapi.json").json()["paths"][path]["post"]["responses"]
