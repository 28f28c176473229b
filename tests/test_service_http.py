"""HTTP done right across the API: HEAD on every GET, 304 on every ETag the client has,
no redirects built from the client's Host header, no verdict on an empty word."""

from __future__ import annotations

import httpx
import pytest

from kelime.service.app import create_app
from kelime.service.settings import Settings
from tests.service_helpers import serve_in_thread

GETS = ["/healthz", "/readyz", "/v1/lexicons", "/v1/games", "/v1/words/kitap",
        "/v1/validate?word=kitap", "/", "/openapi.json", "/metrics", "/docs"]


@pytest.fixture(scope="module")
def url(data_dir):
    with serve_in_thread(create_app(Settings(data=data_dir))) as base:
        yield base


@pytest.fixture(scope="module")
def http():
    """A client that waits as long as a loaded machine needs: httpx's default 5 s timed out
    on the first /openapi.json and /metrics with the suite on both cores."""
    with httpx.Client(timeout=60) as client:
        yield client


@pytest.mark.parametrize("path", GETS)
def test_head_answers_every_get_without_its_body(http, url, path):
    get, head = http.get(url + path), http.head(url + path)
    assert get.status_code == head.status_code == 200
    assert head.content == b""
    assert head.headers["content-type"] == get.headers["content-type"]
    if path != "/metrics":  # its counters moved between the two requests
        assert head.headers["content-length"] == get.headers["content-length"]


@pytest.mark.parametrize("path", [p for p in GETS if p not in ("/healthz", "/readyz",
                                                               "/metrics", "/openapi.json",
                                                               "/docs")])
def test_every_etag_answers_304(http, url, path):
    tag = http.get(url + path).headers["etag"]
    for method in ("GET", "HEAD"):
        reply = http.request(method, url + path, headers={"If-None-Match": tag})
        assert reply.status_code == 304 and reply.content == b"" and reply.headers["etag"] == tag
    weak = http.get(url + path, headers={"If-None-Match": f"W/{tag.removeprefix('W/')}, "
                                                          '"other"'})
    assert weak.status_code == 304
    assert http.get(url + path, headers={"If-None-Match": '"other"'}).status_code == 200


def test_no_redirect_built_from_the_host_header(url):
    reply = httpx.get(url + "/healthz/", headers={"Host": "evil.example"})
    assert reply.status_code == 404 and "location" not in reply.headers
    assert reply.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("path", ["/v1/words", "/v1/words/"])
def test_no_verdict_on_an_empty_word(url, path):
    reply = httpx.get(url + path)
    assert reply.status_code in (404, 422) and "error" in reply.json()
    assert "location" not in reply.headers


def test_a_replica_never_compresses_and_takes_the_edges_weak_etag(url):
    """On loopback or a LAN gzip costs more than it saves (benchmarks/compression.py): a
    replica answers as it is whatever the client takes, and nginx compresses at the edge,
    turning the strong ETag weak, which a 304 still matches."""
    body = {"words": ["kitap"] * 5000}
    for asked in ("gzip", "br;q=1, gzip;q=0.2", "identity", "GZIP"):
        reply = httpx.post(url + "/v1/validate", json=body, headers={"Accept-Encoding": asked})
        assert reply.status_code == 200 and len(reply.json()["results"]) == 5000
        assert "content-encoding" not in reply.headers, asked
    games = httpx.get(url + "/v1/games", headers={"Accept-Encoding": "gzip"})
    tag = games.headers["etag"]
    assert "content-encoding" not in games.headers and tag.startswith('"')
    again = httpx.get(url + "/v1/games", headers={"If-None-Match": "W/" + tag})
    assert again.status_code == 304


def test_cors_is_off_by_default_and_allows_only_the_configured_origins(data_dir, url):
    origin = {"Origin": "https://oyun.example"}
    assert "access-control-allow-origin" not in httpx.get(url + "/healthz", headers=origin).headers
    settings = Settings(data=data_dir, cors_origins="https://oyun.example, https://b.example")
    with serve_in_thread(create_app(settings)) as other:
        ok = httpx.get(other + "/v1/validate?word=kitap", headers=origin)
        assert ok.headers["access-control-allow-origin"] == "https://oyun.example"
        assert "etag" in ok.headers["access-control-expose-headers"].lower()
        preflight = httpx.options(other + "/v1/anagram", headers={
            **origin, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type"})
        assert preflight.status_code == 200
        stranger = httpx.get(other + "/healthz", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in stranger.headers


def test_the_lexicon_as_a_download(url, data_dir):
    from kelime.lexicon import load_lexicon
    from kelime.normalize import turkish_sorted

    lex = load_lexicon(data_dir, "tr")
    plain = httpx.get(url + "/v1/lexicons/tr/words", headers={"Accept-Encoding": "identity"})
    assert plain.status_code == 200 and plain.headers["content-type"].startswith("text/plain")
    assert plain.text.splitlines() == turkish_sorted(lex.words.keys())
    assert plain.headers["etag"] == f'"{lex.info["sha256"]}"'
    assert plain.headers["x-kelime-licence"] == "n/a"
    packed = httpx.get(url + "/v1/lexicons/tr/words")  # httpx asks for gzip
    assert packed.headers["content-encoding"] == "gzip" and packed.text == plain.text
    assert packed.headers["etag"] == f'"{lex.info["sha256"]}-gzip"'
    for reply in (plain, packed):
        again = httpx.get(url + "/v1/lexicons/tr/words", headers={
            "If-None-Match": reply.headers["etag"],
            "Accept-Encoding": reply.headers.get("content-encoding", "identity")})
        assert again.status_code == 304 and again.content == b""
    ku = httpx.get(url + "/v1/lexicons/ku/words").text.splitlines()
    assert "şîr" in ku and "kitap" not in ku
    missing = httpx.get(url + "/v1/lexicons/zz/words")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "unknown_lexicon"


def test_docs_load_nothing_from_outside(url):
    import re

    page = httpx.get(url + "/docs")
    assert page.status_code == 200
    sources = re.findall(r'(?:src|href)=["\']([^"\']+)', page.text)
    assert sources and all(s.startswith("/") for s in sources), sources
    assert "cdn" not in page.text.lower()
    for source in sources:
        asset = httpx.get(url + source)
        assert asset.status_code == 200 and len(asset.content) > 500, source
    assert httpx.get(url + "/docs/secrets.txt").status_code == 404
    assert httpx.get(url + "/openapi.json").json()["info"]["title"] == "kelime"


@pytest.mark.parametrize("query, code", [
    ("?lexicon=%FF", "invalid_encoding"), ("?colour=red", "invalid_request"),
    ("?game=kelimatik&game=harfbank", "invalid_request"),
    ("?a=1&b=2&c=3", "too_many_parameters")])
def test_words_reads_its_query_as_strictly_as_validate(url, query, code):
    reply = httpx.get(url + "/v1/words/kitap" + query)
    assert reply.status_code in (413, 422) and reply.json()["error"]["code"] == code


def test_names_are_matched_the_same_way_and_quoted_short(url):
    assert httpx.get(url + "/v1/words/kitap?lexicon=TR&game=Kelimelik").status_code == 200
    assert httpx.post(url + "/v1/validate", json={"words": ["ev"], "lexicon": " TR "}
                      ).status_code == 200
    huge = httpx.post(url + "/v1/validate", json={"words": ["ev"], "lexicon": "x" * 100_000})
    assert huge.status_code == 404 and len(huge.content) < 300


@pytest.mark.parametrize("method, path, body", [
    ("GET", "/v1/validate?word=ev&game=", None), ("GET", "/v1/validate?word=ev&lexicon=", None),
    ("GET", "/v1/words/ev?lexicon=", None), ("GET", "/v1/words/ev?game=", None),
    ("POST", "/v1/validate", {"words": ["ev"], "game": ""}),
    ("POST", "/v1/anagram", {"rack": "ev", "lexicon": ""}),
    ("POST", "/v1/split", {"rack": "ev", "game": ""}),
])
def test_an_empty_name_is_refused_not_read_as_the_default(url, method, path, body):
    """`?game=` answered as the default game: a form field left empty hid a client's bug,
    and the schema (an enum of the names) says "" is none of them."""
    reply = httpx.request(method, url + path, json=body)
    assert reply.status_code == 422, reply.text
    assert "is empty" in reply.json()["error"]["message"]


def test_empty_fields_are_not_parameters(url):
    """`?word=kitap` plus 1,500 `&` was "1,501 query parameters; the limit is 1,000 words"."""
    reply = httpx.get(url + "/v1/validate?word=kitap" + "&" * 1500)
    assert reply.status_code == 200 and len(reply.json()["results"]) == 1
    assert httpx.get(url + "/v1/words/kitap?" + "&" * 1500 + "game=kelimatik").status_code == 200


def test_a_byte_order_mark_is_skipped(url):
    reply = httpx.post(url + "/v1/validate", content=b'\xef\xbb\xbf{"words": ["kitap"]}',
                       headers={"Content-Type": "application/json"})
    assert reply.status_code == 200 and reply.json()["all_valid"]


@pytest.mark.parametrize("method, path, body", [
    ("GET", "/nope/" + "a" * 30_000, None),
    ("DELETE", "/v1/words/" + "a" * 30_000, None),
    ("GET", "/v1/validate?word=kitap&" + "b" * 30_000 + "=1", None),
    ("POST", "/v1/validate", {"words": ["ev"], **{f"k{i}" + "x" * 50: 1 for i in range(20_000)}}),
    ("POST", "/v1/anagram", {"rack": "kale", "sort": "s" * 100_000}),
    ("POST", "/v1/anagram", {"rack": "kale", "mode": "m" * 100_000}),
    ("GET", "/static/" + "c" * 300, None),
])
def test_errors_quote_a_short_excerpt_of_what_was_sent(url, method, path, body):
    """A 30 KB unknown parameter came back twice in a 60 KB 422; 200,000 unknown keys in a
    3.98 MB one."""
    reply = httpx.request(method, url + path, json=body, timeout=30)
    assert 400 <= reply.status_code < 500 and len(reply.content) < 2_000, reply.content[:200]
    assert "error" in reply.json()


@pytest.mark.parametrize("method, path", [
    ("POST", "/v1/validate?game=kelimatik"), ("POST", "/v1/anagram?limit=1"),
    ("GET", "/v1/lexicons?x=1"), ("GET", "/v1/games?lexicon=tr"), ("GET", "/healthz?x"),
    ("GET", "/readyz?x=1"), ("GET", "/metrics?x=1"), ("GET", "/v1/lexicons/tr/words?x=1")])
def test_no_route_ignores_a_query_parameter(url, method, path):
    """`POST /v1/validate?game=kelimatik` answered for the default game: `ev` was valid."""
    body = {"words": ["ev"]} if "validate" in path else {"rack": "kale"}
    reply = httpx.request(method, url + path, json=body if method == "POST" else None)
    assert reply.status_code == 422, reply.text
    assert "unknown query parameter" in reply.json()["error"]["message"]


def test_the_page_and_its_files_take_their_queries(url):
    for path in ("/?w=kitap", "/static/page.js?v=2", "/docs?x=1", "/v1/games?&&"):
        assert httpx.get(url + path).status_code == 200, path


def test_a_304_keeps_its_cors_headers(data_dir):
    """A browser fetch sending If-None-Match (allowed by the CORS settings) failed its CORS
    check on the 304, which had lost Access-Control-Allow-Origin."""
    settings = Settings(data=data_dir, cors_origins="https://oyun.example")
    origin = {"Origin": "https://oyun.example"}
    with serve_in_thread(create_app(settings)) as url:
        for path in ("/v1/words/kitap", "/v1/games", "/v1/validate?word=ev", "/"):
            tag = httpx.get(url + path, headers=origin).headers["etag"]
            again = httpx.get(url + path, headers={**origin, "If-None-Match": tag})
            assert again.status_code == 304, path
            assert again.headers["access-control-allow-origin"] == "https://oyun.example", path


def test_the_word_download_reads_accept_encoding_weights(url):
    """`gzip;q=0` was sent gzipped; `GZIP` was compressed twice over with a doubled Vary."""
    plain = httpx.get(url + "/v1/lexicons/tr/words", headers={"Accept-Encoding": "identity"})
    for asked, packed in (("gzip;q=0", False), ("GZIP", True), ("br, gzip;q=0.5", True)):
        reply = httpx.get(url + "/v1/lexicons/tr/words", headers={"Accept-Encoding": asked})
        assert (reply.headers.get("content-encoding") == "gzip") is packed, asked
        assert reply.text == plain.text and reply.headers["vary"] == "Accept-Encoding", asked
        assert reply.headers["etag"].endswith('-gzip"' if packed else '"'), asked


def test_a_405_allows_head_beside_get_and_if_none_match_may_come_twice(url):
    reply = httpx.delete(url + "/v1/words/kitap")
    assert reply.status_code == 405 and reply.headers["allow"] == "GET, HEAD"
    for path in ("/v1/games", "/v1/validate?word=ev"):
        tag = httpx.get(url + path).headers["etag"]
        twice = httpx.get(url + path, headers=[("If-None-Match", '"other"'),
                                               ("If-None-Match", tag)])
        assert twice.status_code == 304, path


@pytest.mark.parametrize("path", ["/v1/words/%20", "/v1/words/%09", "/v1/words/%E2%80%83"])
def test_no_verdict_on_a_word_of_spaces(url, path):
    reply = httpx.get(url + path)
    assert reply.status_code == 422 and "no word" in reply.json()["error"]["message"]


@pytest.mark.parametrize("request_head", [
    b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
    b"CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: x\r\n\r\n"])  # a proxy's verb: not served
def test_a_request_that_is_not_http_gets_a_400_and_a_close(url, request_head):
    """Directly on a replica it is uvicorn's own refusal, in plain text, as the schema says
    (errors.UNREADABLE); behind nginx, nginx's own in the JSON error shape
    (tests/test_nginx.py::test_what_nginx_refuses_itself_is_in_the_error_shape)."""
    import socket
    from urllib.parse import urlsplit

    where = urlsplit(url)
    with socket.create_connection((where.hostname, where.port), timeout=5) as conn:
        conn.sendall(request_head)
        raw = b""
        while chunk := conn.recv(65536):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and b"text/plain" in head, raw
    assert body == b"Invalid HTTP request received."


def test_a_browser_script_can_read_retry_after_under_cors(data_dir, tmp_path):
    """A refusal that says when to try again (429 `too_many_reports` here, as 503 `busy`)
    exposes Retry-After to the calling page, not only ETag: a browser hides every header
    the reply does not list in Access-Control-Expose-Headers."""
    origin = {"Origin": "https://oyun.example"}
    settings = Settings(data=data_dir, cors_origins="https://oyun.example",
                        reports=tmp_path / "reports.sqlite", reports_per_hour=1)
    with serve_in_thread(create_app(settings)) as base:
        report = {"word": "kitapçık", "kind": "missing"}
        assert httpx.post(base + "/v1/reports", json=report, headers=origin).status_code == 202
        refused = httpx.post(base + "/v1/reports", json={**report, "word": "evcik"},
                             headers=origin)
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) > 0
    assert refused.headers["access-control-allow-origin"] == "https://oyun.example"
    exposed = {h.strip().lower() for h in refused.headers["access-control-expose-headers"].split(",")}
    assert {"etag", "retry-after"} <= exposed
