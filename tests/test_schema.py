"""The OpenAPI schema is exact: schemathesis finds nothing against a live server, and the
replies of the routes' interesting cases validate against it.

Schemathesis runs as its CLI against a real uvicorn server (all checks; positive and
negative data; its examples, coverage, fuzzing and stateful phases), bounded in examples
and with a fixed seed, so a red run can be replayed: `KELIME_SCHEMATHESIS_SEED` and
`KELIME_SCHEMATHESIS_EXAMPLES` change them (the seeds 1–7 at 200 examples also pass).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema_rs
import pytest

from kelime.normalize import TURKISH, normalize
from kelime.service.app import create_app
from kelime.service.openapi import LAST_TYPED, rack_pattern, typed_letters
from kelime.service.settings import Settings
from kelime.tdk import store as cache
from tests.fake_tdk import builtin_entries
from tests.service_helpers import KURDISH, TestClient, serve_in_thread

ROOT = Path(__file__).resolve().parent.parent
SEED = os.environ.get("KELIME_SCHEMATHESIS_SEED", "171069833554537347926157825675153086776")
EXAMPLES = os.environ.get("KELIME_SCHEMATHESIS_EXAMPLES", "60")


def schemathesis_cli() -> str:
    found = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("schemathesis is not installed (pip install -e '.[dev]')")
    return found


@pytest.fixture(scope="module")
def with_cache(data_dir, tmp_path_factory) -> Path:
    """A TDK cache holding the entries of `kitap`, so GET /v1/words answers some."""
    path = tmp_path_factory.mktemp("cache") / "tdk.sqlite"
    db = cache.open_cache(path, create=True)
    entries = [e for e in builtin_entries() if e["madde"] == "kitap"] or builtin_entries()[:1]
    for entry in entries:
        entry = {**entry, "madde": "kitap"}
        cache.save_reply(db, {"query": "kitap", "url": "u", "status": 200, "outcome": "ok",
                              "body": "[]", "error": None, "attempts": 1}, [entry])
    db.close()
    return path


@pytest.mark.slow
def test_schemathesis_finds_no_failure(data_dir, with_cache, tmp_path):
    """Every check passes: no 5xx, every status and header documented, every reply in its
    schema, schema-valid requests accepted and schema-violating ones refused."""
    cli = schemathesis_cli()
    settings = Settings(data=data_dir, cache=with_cache, admin_token="s3cret-s3cret-s3cret",
                        reports=tmp_path / "reports.sqlite")
    app = create_app(settings)
    with serve_in_thread(app) as url:
        run = subprocess.run(
            [cli, "--config-file", str(ROOT / "schemathesis.toml"), "run",
             f"{url}/openapi.json", "--checks", "all", "--mode", "all",
             "--max-examples", EXAMPLES, "--seed", SEED, "--workers", "1",
             "--request-timeout", "30", "--no-color",
             "--header", "Authorization: Bearer s3cret-s3cret-s3cret"],  # the admin route, authorised
            cwd=tmp_path, capture_output=True, text=True, timeout=600,
            env={**os.environ, "NO_COLOR": "1"})
    report = run.stdout[-6000:] + run.stderr[-2000:]
    assert run.returncode == 0, report
    assert "FAILURES" not in run.stdout and "WARNINGS" not in run.stdout, report
    cases = re.search(r"(\d+) generated, (\d+) passed", run.stdout)
    assert cases and cases.group(1) == cases.group(2) and int(cases.group(1)) > 300, report
    tested = re.search(r"Tested:\s+(\d+)", run.stdout)
    assert tested and int(tested.group(1)) >= 12, report  # every operation was tried


@pytest.fixture(scope="module")
def live(data_dir, with_cache):
    settings = Settings(data=data_dir, cache=with_cache)
    with TestClient(create_app(settings)) as api:
        yield api, api.get("/openapi.json").json()


def reply_validator(schema: dict, path: str, method: str, status: str = "200"):
    """A validator of one operation's reply, resolving `#/components/...` in `schema`."""
    node = schema["paths"][path][method]["responses"][status]["content"]["application/json"]
    return jsonschema_rs.validator_for({**node["schema"], "components": schema["components"]})


@pytest.mark.parametrize("method, path, body, route", [
    ("post", "/v1/validate", {"words": ["KITAP", "kitap", "İstanbul", "göt"], "suggest": True},
     "/v1/validate"),
    ("get", "/v1/validate?word=ev&word=xq", None, "/v1/validate"),
    ("get", "/v1/words/kitap", None, "/v1/words/{word}"),      # with TDK entries
    ("get", "/v1/words/KITAP", None, "/v1/words/{word}"),      # with suggestions
    ("get", "/v1/words/mêr?lexicon=ku", None, "/v1/words/{word}"),
    ("post", "/v1/anagram", {"rack": "kitap?", "game": "kelimelik"}, "/v1/anagram"),
    ("post", "/v1/anagram", {"rack": "kit[ap]", "game": "kelimatik"}, "/v1/anagram"),
    ("post", "/v1/split", {"rack": "kitapev?"}, "/v1/split"),
    ("post", "/v1/split", {"rack": "zzz"}, "/v1/split"),
    ("get", "/v1/lexicons", None, "/v1/lexicons"),
    ("get", "/v1/games", None, "/v1/games"),
    ("get", "/healthz", None, "/healthz"),
    ("get", "/readyz", None, "/readyz"),
])
def test_replies_match_their_schema(live, method, path, body, route):
    api, schema = live
    reply = api.request(method.upper(), path, json=body)
    assert reply.status_code == 200, reply.text
    errors = [str(e) for e in reply_validator(schema, route, method).iter_errors(reply.json())]
    assert not errors, errors


def test_errors_match_the_error_schema(live):
    api, schema = live
    for reply, route, method, status in [
        (api.post("/v1/validate", json={"words": []}), "/v1/validate", "post", "422"),
        (api.post("/v1/anagram", json={"rack": "k" * 40}), "/v1/anagram", "post", "413"),
        (api.get("/v1/words/kitap?lexicon=zz"), "/v1/words/{word}", "get", "404")]:
        assert reply.status_code == int(status)
        assert reply_validator(schema, route, method, status).is_valid(reply.json())


def test_a_reply_with_a_field_the_schema_lacks_is_caught(live):
    """The models forbid extra fields, so a reply that grows one fails the schemathesis run."""
    api, schema = live
    body = api.post("/v1/validate", json={"words": ["ev"]}).json()
    body["results"][0]["score"] = 3
    assert not reply_validator(schema, "/v1/validate", "post").is_valid(body)


def test_the_limits_are_the_settings(data_dir):
    settings = Settings(data=data_dir, max_words=500, max_word_chars=20, max_get_words=50,
                        max_rack_tiles=9, max_blanks=1, max_results=30, max_pattern_length=7)
    with TestClient(create_app(settings)) as api:
        schema = api.get("/openapi.json").json()
    body = schema["paths"]["/v1/validate"]["post"]["requestBody"]["content"]["application/json"]
    words = body["schema"]["properties"]["words"]
    assert (words["maxItems"], words["items"]["maxLength"]) == (500, 20)
    assert body["schema"]["allOf"][0]["then"]["properties"]["words"]["maxItems"] == 1000
    assert body["schema"]["properties"]["lexicon"]["default"] == "tr"
    query = schema["paths"]["/v1/validate"]["get"]["parameters"][0]["schema"]
    assert query["maxItems"] == 50
    anagram = schema["paths"]["/v1/anagram"]["post"]["requestBody"]["content"][
        "application/json"]["schema"]["properties"]
    assert "{1,9}" in anagram["rack"]["pattern"] and "{0,1}" in anagram["rack"]["allOf"][0][
        "pattern"]
    assert anagram["limit"]["anyOf"][0]["maximum"] == 30
    assert anagram["pattern"]["anyOf"][0]["maxLength"] == 7
    word = schema["paths"]["/v1/words/{word}"]["get"]["parameters"][0]
    assert word["name"] == "word" and word["schema"]["maxLength"] == 20


def test_names_are_enums_of_what_is_loaded(live):
    _, schema = live
    body = schema["paths"]["/v1/anagram"]["post"]["requestBody"]["content"]["application/json"]
    props = body["schema"]["properties"]
    assert props["lexicon"]["enum"] == ["ku", "tr", None]
    assert props["game"]["enum"][-1] is None and "kelimatik" in props["game"]["enum"]
    download = schema["paths"]["/v1/lexicons/{name}/words"]["get"]["parameters"][0]
    assert download["schema"]["enum"] == ["ku", "tr"]


def test_each_lexicon_and_game_has_its_own_rack_rule(live):
    """Kurdish racks use Kurdish letters; two-letter tiles only where a game has them; a
    split holds at most the game's hand (Harfbank: 14, and one to throw away)."""
    _, schema = live
    split = schema["paths"]["/v1/split"]["post"]["requestBody"]["content"]["application/json"]
    validator = jsonschema_rs.validator_for(split["schema"])
    assert validator.is_valid({"rack": "kalemkitapsilg?"})                 # harfbank, 15
    assert not validator.is_valid({"rack": "kalemkitapsilg?", "game": "kelimatik"})  # 10
    assert not validator.is_valid({"rack": "kale[lm]", "game": "kelimelik"})
    assert validator.is_valid({"rack": "mêr", "lexicon": "ku", "game": "kelimatik-ku"})
    assert not validator.is_valid({"rack": "mêr", "lexicon": "ku"})  # harfbank is Turkish
    assert not validator.is_valid({"rack": "ılık", "lexicon": "ku", "game": "kelimatik-ku"})
    assert not validator.is_valid({"rack": "kale???"})
    anagram = schema["paths"]["/v1/anagram"]["post"]["requestBody"]["content"][
        "application/json"]
    validator = jsonschema_rs.validator_for(anagram["schema"])
    assert validator.is_valid({"rack": "abcdefg"}) and validator.is_valid({"rack": "kale??"})
    assert not validator.is_valid({"rack": "abcdefgğhıijkl"})  # kelimelik's rack is 7
    assert not validator.is_valid({"rack": "kale??", "game": "kelimatik"})  # 1 joker
    assert not validator.is_valid({"rack": "xweş", "lexicon": "ku", "game": "kelimatik"})


def test_the_rack_letters_are_what_normalisation_reads():
    typed = typed_letters(TURKISH)
    assert all(normalize(ch) in TURKISH.letter_set for ch in typed)
    assert {"I", "İ", "Â", "ç", "Ç"} <= set(typed) and "x" not in typed and "q" not in typed
    assert "ı" not in typed_letters(KURDISH) and "ê" in typed_letters(KURDISH)
    pattern = re.compile(rack_pattern(typed, 7, pairs=True))
    assert pattern.fullmatch("KALE?[LM]") and not pattern.fullmatch("kale x")


@pytest.mark.parametrize("alphabet", [TURKISH, KURDISH], ids=["tr", "ku"])
def test_no_letter_is_typed_beyond_the_scanned_plane(alphabet):
    """typed_letters reads the Basic Multilingual Plane only: nothing beyond it normalises
    to a letter (else the schema would refuse what the parser reads)."""
    beyond = [ch for ch in map(chr, range(LAST_TYPED + 1, sys.maxunicode + 1))
              if normalize(ch, alphabet) in alphabet.letter_set]
    assert beyond == []


def test_the_cacheable_gets_document_their_etag_and_304(live):
    api, schema = live
    for path, url in (("/v1/validate", "/v1/validate?word=ev"), ("/v1/words/{word}",
                      "/v1/words/ev"), ("/v1/games", "/v1/games"),
                      ("/v1/lexicons/{name}/words", "/v1/lexicons/tr/words")):
        responses = schema["paths"][path]["get"]["responses"]
        assert "ETag" in responses["200"]["headers"] and "304" in responses, path
        tag = api.get(url).headers["etag"]
        assert api.get(url, headers={"If-None-Match": tag}).status_code == 304
    for path in ("/v1/anagram", "/v1/validate"):
        assert "headers" not in schema["paths"][path]["post"]["responses"]["200"]


def test_suggestions_are_bounded_per_request(live):
    """10,000 words with "suggest": true held a worker 0.9 s; the limit (1,000 by default,
    KELIME_MAX_SUGGEST_WORDS) is in the schema too."""
    api, _ = live
    reply = api.post("/v1/validate", json={"words": ["cay"] * 1001, "suggest": True})
    assert reply.status_code == 413 and "suggest" in reply.json()["error"]["message"]
    assert api.post("/v1/validate", json={"words": ["cay"] * 1001}).status_code == 200


def test_the_schema_names_the_default_lexicon_the_server_uses(data_dir):
    with TestClient(create_app(Settings(data=data_dir, default_lexicon="ku"))) as api:
        schema = api.get("/openapi.json").json()
    for path in ("/v1/validate", "/v1/anagram"):
        body = schema["paths"][path]["post"]["requestBody"]["content"]["application/json"]
        assert body["schema"]["properties"]["lexicon"]["default"] == "ku", path


@pytest.mark.parametrize("path, body", [
    ("/v1/reports", {"word": "ılık", "kind": "missing", "game": "kelimatik-ku"}),
    ("/v1/reports", {"word": "xêz", "kind": "missing", "game": "kelimatik-ku"}),
    ("/v1/reports", {"word": "xêz", "kind": "missing", "game": "kelimatik"}),
    ("/v1/reports", {"word": "ılık", "kind": "missing", "lexicon": "tr",
                     "game": "kelimatik-ku"}),
    ("/v1/anagram", {"rack": "ığ", "game": "kelimatik-ku"}),
    ("/v1/anagram", {"rack": "xêz", "game": "kelimatik-ku"}),
    ("/v1/anagram", {"rack": "xêz", "lexicon": "ku"}),
    ("/v1/split", {"rack": "xêz", "game": "kelimatik-ku"}),
])
def test_a_body_played_with_its_games_lexicon_is_what_the_schema_says(data_dir, tmp_path,
                                                                     path, body):
    """Without a `lexicon`, a body is played with its game's own (Kürtçe Kelimatik: `ku`):
    the schema read it as the default `tr`, so `{"word": "ılık", "game": "kelimatik-ku"}`
    was schema-valid and refused 422 `not_a_word` (the docs' schemathesis command failed),
    and a Kurdish word for that game schema-invalid yet accepted."""
    settings = Settings(data=data_dir, reports=tmp_path / "reports.sqlite")
    with TestClient(create_app(settings)) as api:
        schema = api.get("/openapi.json").json()
        node = schema["paths"][path]["post"]["requestBody"]["content"]["application/json"]
        valid = jsonschema_rs.validator_for(node["schema"]).is_valid(body)
        reply = api.post(path, json=body)
    assert valid == (reply.status_code < 400), (valid, reply.status_code, reply.text)
