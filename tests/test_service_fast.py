"""The fast path of POST /v1/validate (service/fast.py) answers exactly what the whole app
would: the same status, headers and bytes, the same metrics and access log; and whatever
it does not answer itself (refusals, other content types, bodies in pieces, suggestions,
CORS requests) reaches the whole app with its body intact."""

from __future__ import annotations

import asyncio
import gzip

import httpx
import orjson
import pytest

from kelime.service.app import create_app
from kelime.service.settings import Settings
from tests.service_helpers import TestClient, serve_in_thread
from tests.test_service_health import sample

WORDS = ["kitap", "KİTAP", "göt", "İstanbul", "evler", "e-posta", "a", "kitap"]
ORIGIN = "https://oyun.example"
JSON = [(b"content-type", b"application/json")]


def call(app, *args, **kwargs) -> list[dict]:
    """The messages `app` (any ASGI callable) sends for `request(*args, **kwargs)`."""
    scope, receive, send, sent = request(*args, **kwargs)
    asyncio.run(app(scope, receive, send))
    return sent


def request(body: bytes | list[bytes], headers=JSON, query: bytes = b"",
            first: dict | None = None, path: str = "/v1/validate", hold: bool = False) -> tuple:
    """(scope, receive, send, the list of messages sent) of a POST to `path` of `body`
    (a list: sent in that many pieces); `first`: the first message received instead;
    `hold`: the client stays (else it is gone once its body is read)."""
    pieces = body if isinstance(body, list) else [body]
    inbox = [{"type": "http.request", "body": p, "more_body": i < len(pieces) - 1}
             for i, p in enumerate(pieces)]
    if first is not None:
        inbox = [first]
    if not isinstance(body, list):
        headers = [*headers, (b"content-length", b"%d" % len(body))]
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": path,
             "raw_path": path.encode(), "root_path": "", "query_string": query,
             "headers": [(b"host", b"127.0.0.1"), *headers], "server": ("127.0.0.1", 80),
             "client": ("127.0.0.1", 5000), "state": {}}
    sent: list[dict] = []

    async def receive() -> dict:
        if not inbox and hold:
            await asyncio.Event().wait()
        return inbox.pop(0) if inbox else {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        sent.append(message)

    return scope, receive, send, sent


def answer(sent: list[dict]) -> tuple[int, list, bytes]:
    """(status, headers, body) of the messages an app sent."""
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], list(start["headers"]), body


def served_apps(data):
    """Apps on the lexicons in `data`, each with its lifespan run while in use: by default;
    with CORS on; with the JSON access log."""
    made = {"default": create_app(Settings(data=data)),
            "cors": create_app(Settings(data=data, cors_origins=ORIGIN)),
            "log": create_app(Settings(data=data, access_log="json"))}
    clients = [TestClient(app) for app in made.values()]
    for client in clients:
        client.__enter__()
    yield made
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture(scope="module")
def apps(data_dir):
    """`served_apps` on the test lexicons."""
    yield from served_apps(data_dir)


def spy_on(apps, path: str):
    """The requests each app's fast path for `path` hands on to the whole app, while in use."""
    seen: list[str] = []
    for name, app in apps.items():
        def spy(scope, receive, send, full=app.fast[path].full, name=name):
            seen.append(name)
            return full(scope, receive, send)
        app.fast[path].full = spy
    yield seen
    for app in apps.values():
        app.fast[path].full = app.stack


@pytest.fixture
def handed_on(apps):
    """The requests each app's fast path of /v1/validate handed on to the whole app."""
    yield from spy_on(apps, "/v1/validate")


def same(app, *args, **kwargs) -> tuple[int, list, bytes]:
    """The fast path's answer, once checked equal to the whole app's."""
    fast, whole = answer(call(app, *args, **kwargs)), answer(call(app.stack, *args, **kwargs))
    assert fast == whole
    return fast


GZIP = [*JSON, (b"accept-encoding", b"gzip, deflate")]
BIG = orjson.dumps({"words": WORDS * 40})


@pytest.mark.parametrize(("settings", "body", "headers"), [
    ("default", orjson.dumps({"words": WORDS}), JSON),
    ("default", orjson.dumps({"words": WORDS, "game": "kelimatik", "lexicon": "tr"}), JSON),
    ("default", orjson.dumps({"words": ["av", "nan"], "lexicon": "ku"}), JSON),
    ("default", BIG, GZIP),  # asked: still as it is (nginx compresses at the edge)
    ("default", BIG, []),  # no Content-Type is taken as JSON
    ("default", BIG, [(b"content-type", b"Application/JSON; charset=UTF-8")]),
    ("cors", orjson.dumps({"words": WORDS}), JSON),
    ("cors", orjson.dumps({"words": WORDS}), GZIP),
])
def test_the_fast_path_answers_as_the_whole_app(apps, handed_on, settings, body, headers):
    status, sent_headers, reply = same(apps[settings], body, headers)
    assert handed_on == []  # answered by the fast path itself
    assert status == 200
    fields = dict(sent_headers)
    assert b"content-encoding" not in fields
    if settings == "cors":  # the reply depends on Origin, even when none was sent
        assert fields[b"vary"] == b"Origin"
    words = orjson.loads(body)["words"]
    assert [r["word"] for r in orjson.loads(reply)["results"]] == words


@pytest.mark.parametrize(("body", "headers", "status", "code"), [
    (b'{"words": ["kitap"', JSON, 422, "invalid_json"),
    (b"", JSON, 422, "invalid_json"),
    (b'{"words": []}', JSON, 422, "invalid_request"),
    (b'{"words": ["kitap"], "extra": 1}', JSON, 422, "invalid_request"),
    (b'{"words": ["kitap"], "lexicon": "xx"}', JSON, 404, "unknown_lexicon"),
    (b'{"words": ["kitap"], "game": "scrabble"}', JSON, 404, "unknown_game"),
    (orjson.dumps({"words": ["a"] * 10_001}), JSON, 413, "too_many_words"),
    (orjson.dumps({"words": ["a" * 200]}), JSON, 413, "word_too_long"),
    (b'{"words": ["kitap"]}', [(b"content-type", b"text/plain")], 415,
     "unsupported_media_type"),
    (b"\xff\xfe", JSON, 422, "invalid_encoding"),
    (gzip.compress(b'{"words": ["kitap"]}', mtime=0), [*JSON, (b"content-encoding", b"gzip")], 415,
     "unsupported_media_type"),  # was "not valid UTF-8 (byte 0x8b)"
    (b'{"words": ["kitap"]}', [*JSON, (b"content-encoding", b"br")], 415,
     "unsupported_media_type"),  # was answered, the coding ignored
])
def test_every_refusal_comes_from_the_whole_app(apps, handed_on, body, headers, status, code):
    got, _, reply = same(apps["default"], body, headers)
    assert (got, orjson.loads(reply)["error"]["code"]) == (status, code)
    assert handed_on == ["default"]


def test_what_the_fast_path_leaves_to_the_whole_app(apps, handed_on):
    app, body = apps["default"], orjson.dumps({"words": WORDS})
    status, _, reply = same(app, orjson.dumps({"words": ["kitab"], "suggest": True}))
    assert status == 200 and "suggestions" in orjson.loads(reply)["results"][0]
    assert same(app, [body[:5], body[5:]])[0] == 200  # a body in pieces: the stack's budget
    assert same(app, body, query=b"game=kelimatik")[0] == 422
    assert same(app, body, [(b"content-type", b"text/plain")])[0] == 415
    assert same(app, body, [*JSON, (b"content-type", b"text/plain")])[0] == 200  # the first
    assert same(app, body, [*JSON, (b"content-type", b"application/merge-patch+json")]
                )[0] == 200
    assert same(app, body, [*JSON, (b"content-encoding", b"identity")])[0] == 200
    big = app.state.kelime.settings.max_body_bytes + 1
    assert same(app, b"", [*JSON, (b"content-length", b"%d" % big)])[0] == 413
    gone = {"type": "http.disconnect"}
    assert same(app, body, first=gone)[0] == 400
    status, headers, _ = same(apps["cors"], body, [*JSON, (b"origin", ORIGIN.encode())])
    assert dict(headers)[b"access-control-allow-origin"] == ORIGIN.encode()
    assert handed_on == ["default"] * 9 + ["cors"]


def test_the_fast_path_is_counted_and_logged_as_the_whole_app(apps, capfd):
    app, body = apps["log"], orjson.dumps({"words": WORDS})
    capfd.readouterr()
    call(app, body)
    call(app.stack, body)
    fast, whole = (orjson.loads(line) for line in capfd.readouterr().err.splitlines())
    for line in (fast, whole):
        del line["ts"], line["ms"]
    assert fast == whole == {"method": "POST", "route": "/v1/validate", "status": 200}
    with TestClient(app) as client:
        text = client.get("/metrics").text
    assert sample(text, "kelime_http_requests_total", method="POST", route="/v1/validate",
                  status="200") == 2
    assert sample(text, "kelime_http_request_duration_seconds_count",
                  route="/v1/validate") == 2
    assert sample(text, "kelime_words_validated_total", lexicon="tr", verdict="valid") == 6


def test_counts_of_one_turn_of_the_loop_are_summed_and_all_scraped(data_dir):
    """Requests answered in one turn of the server's event loop are counted together (one
    increment a series); counts made off the loop are counted at once; a scrape counts
    everything before it."""
    app, body = create_app(Settings(data=data_dir)), orjson.dumps({"words": WORDS})
    with serve_in_thread(app) as url:
        async def together() -> list[int]:
            async with httpx.AsyncClient(base_url=url) as client:
                replies = await asyncio.gather(*(
                    client.post("/v1/validate", content=body, headers=dict(JSON))
                    for _ in range(40)))
            return [r.status_code for r in replies]

        assert asyncio.run(together()) == [200] * 40
        app.state.kelime.metrics.count_tally("tr", {None: 1})  # off the loop: at once
        text = httpx.get(url + "/metrics").text
    assert sample(text, "kelime_http_requests_total", method="POST", route="/v1/validate",
                  status="200") == 40
    assert sample(text, "kelime_words_validated_total", lexicon="tr", verdict="valid") == \
        40 * 3 + 1
