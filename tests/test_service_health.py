"""GET /healthz, /readyz and /metrics."""

from __future__ import annotations

import re

from kelime.service.app import create_app
from kelime.service.settings import Settings
from tests.service_helpers import TestClient


def sample(metrics: str, name: str, **labels) -> float:
    """The value of one Prometheus sample (0 when absent)."""
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    pattern = rf"^{re.escape(name)}{{{re.escape(want)}}} (\S+)$" if labels else rf"^{name} (\S+)$"
    found = re.search(pattern, metrics, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def test_ready_names_the_lexicons(data_dir):
    with TestClient(create_app(Settings(data=data_dir))) as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        versions = {lex["name"]: lex["version"]
                    for lex in client.get("/v1/lexicons").json()["lexicons"]}
        assert client.get("/readyz").json() == {"status": "ready", "lexicons": ["ku", "tr"],
                                                "versions": versions, "default": "tr",
                                                "held": {k: [v] for k, v in versions.items()}}


def test_ready_is_503_while_the_default_lexicon_is_missing(data_dir):
    """A dangling data/tr beside ku/ used to be "ready" while every request without a
    lexicon failed with 404."""
    with TestClient(create_app(Settings(data=data_dir, default_lexicon="xx"))) as client:
        reply = client.get("/readyz")
        assert reply.status_code == 503
        error = reply.json()["error"]
        assert error["code"] == "default_lexicon_missing" and "'xx'" in error["message"]
        assert set(error["details"]["lexicons"]) == {"ku", "tr"}


def test_no_lexicon_is_503_not_ready_with_the_fix(tmp_path):
    empty = tmp_path / "empty"
    with TestClient(create_app(Settings(data=empty))) as client:
        assert client.get("/healthz").status_code == 200
        for reply in (client.get("/readyz"), client.post("/v1/validate", json={"words": ["ev"]}),
                      client.get("/v1/validate?word=ev"), client.get("/v1/words/ev")):
            assert reply.status_code == 503
            error = reply.json()["error"]
            assert error["code"] == "not_ready"
            assert f"kelime build --bootstrap --out {empty}" in error["message"]
        assert client.get("/v1/lexicons").json() == {"lexicon": None, "default": "tr",
                                                     "lexicons": []}


def test_metrics_count_requests_words_and_lexicons(data_dir):
    with TestClient(create_app(Settings(data=data_dir))) as client:
        client.post("/v1/validate", json={"words": ["kitap", "ev", "İstanbul", "evler"]})
        client.get("/v1/validate?word=kitap&lexicon=ku")
        client.get("/v1/validate?word=kitap&lexicon=ku")
        client.post("/v1/validate", content=b"nope")
        client.get("/no/such/path")
        client.get("/v1/words/göt")
        ku_version = client.get("/v1/lexicons").json()["lexicons"][0]["version"]
        reply = client.get("/metrics")
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/plain")
    text = reply.text
    requests = "kelime_http_requests_total"
    assert sample(text, requests, method="POST", route="/v1/validate", status="200") == 1
    assert sample(text, requests, method="POST", route="/v1/validate", status="422") == 1
    assert sample(text, requests, method="GET", route="/v1/validate", status="200") == 2
    assert sample(text, requests, method="GET", route="unmatched", status="404") == 1
    assert sample(text, requests, method="GET", route="/v1/words/{word:path}", status="200") == 1
    words = "kelime_words_validated_total"
    assert sample(text, words, lexicon="tr", verdict="valid") == 2
    assert sample(text, words, lexicon="tr", verdict="proper_name") == 1
    assert sample(text, words, lexicon="tr", verdict="not_in_dictionary") == 1
    assert sample(text, words, lexicon="tr", verdict="obscene") == 1
    assert sample(text, words, lexicon="ku", verdict="not_in_dictionary") == 2
    latency = "kelime_http_request_duration_seconds_count"
    assert sample(text, latency, route="/v1/validate") == 4
    assert sample(text, "kelime_lexicons_loaded") == 2
    assert sample(text, "kelime_lexicon_words", lexicon="ku", version=ku_version) == 6


def test_each_app_has_its_own_registry(data_dir):
    with TestClient(create_app(Settings(data=data_dir))) as one, \
            TestClient(create_app(Settings(data=data_dir))) as two:
        one.get("/healthz")
        assert sample(one.get("/metrics").text, "kelime_http_requests_total", method="GET",
                      route="/healthz", status="200") == 1
        assert sample(two.get("/metrics").text, "kelime_http_requests_total", method="GET",
                      route="/healthz", status="200") == 0
