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
import orjson
import pytest

from kelime.lexicon import compile_words, write_lexicon
from kelime.normalize import TURKISH, normalize
from kelime.service.app import create_app
from kelime.service.errors import CODES
from kelime.service.openapi import LAST_TYPED, OPERATION_IDS, rack_pattern, typed_letters
from kelime.service.schemas import Exact
from kelime.service.settings import Settings
from kelime.tdk import store as cache
from tests.fake_tdk import builtin_entries
from tests.service_helpers import (
    CREATED,
    KURDISH,
    SOURCE,
    TR_WORDS,
    TestClient,
    serve_in_thread,
)

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


def exact_models() -> set[str]:
    """The reply models whose every field kelime lists (`schemas.Exact`)."""
    found, todo = set(), [Exact]
    while todo:
        for sub in todo.pop().__subclasses__():
            found.add(sub.__name__)
            todo.append(sub)
    return found


def closed(components: dict) -> dict:
    """The components with every reply model closed (no field but those listed): what the
    tests hold the replies to, while the schema served leaves them open to new fields."""
    exact = exact_models()
    return {**components, "schemas": {
        name: {**model, "additionalProperties": False} if name in exact else model
        for name, model in components["schemas"].items()}}


def reply_validator(schema: dict, path: str, method: str, status: str = "200",
                    strict: bool = True):
    """A validator of one operation's reply, resolving `#/components/...` in `schema`;
    `strict`: every field of a reply must be in its model."""
    node = schema["paths"][path][method]["responses"][status]["content"]["application/json"]
    components = closed(schema["components"]) if strict else schema["components"]
    return jsonschema_rs.validator_for({**node["schema"], "components": components})


def body_validator(schema: dict, path: str):
    """A validator of one operation's request body, resolving `#/components/...`."""
    node = schema["paths"][path]["post"]["requestBody"]["content"]["application/json"]
    return jsonschema_rs.validator_for({**node["schema"], "components": schema["components"]})


def body_schema(schema: dict, path: str) -> dict:
    """The request body's schema (a named component)."""
    node = schema["paths"][path]["post"]["requestBody"]["content"]["application/json"]
    return schema["components"]["schemas"][node["schema"]["$ref"].rsplit("/", 1)[1]]


@pytest.mark.parametrize("method, path, body, route", [
    ("post", "/v1/validate", {"words": ["KITAP", "kitap", "İstanbul", "göt"], "suggest": True},
     "/v1/validate"),
    ("get", "/v1/validate?word=ev&word=xq", None, "/v1/validate"),
    ("get", "/v1/words/kitap", None, "/v1/words/{word}"),      # with TDK entries
    ("get", "/v1/words/KITAP", None, "/v1/words/{word}"),      # with suggestions
    ("get", "/v1/words/mêr?lexicon=ku", None, "/v1/words/{word}"),
    ("post", "/v1/anagram", {"rack": "kitap?", "game": "kelimelik"}, "/v1/anagram"),
    ("post", "/v1/anagram", {"rack": "kit[ap]", "game": "kelimatik", "what_if": True},
     "/v1/anagram"),
    ("post", "/v1/anagram", {"rack": "kitapm?[ar]ıs", "game": "kelimatik"}, "/v1/anagram"),
    ("post", "/v1/split", {"rack": "kitapev?", "what_if": True}, "/v1/split"),
    ("post", "/v1/split", {"rack": "zzzkitapevlerim"}, "/v1/split"),
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
    """The tests hold the replies to their models closed, so a reply that grows a field
    not in its model fails them."""
    api, schema = live
    body = api.post("/v1/validate", json={"words": ["ev"]}).json()
    body["results"][0]["score"] = 3
    assert not reply_validator(schema, "/v1/validate", "post").is_valid(body)


def test_replies_are_open_to_new_fields_requests_are_not(live):
    """A generated client keeps working when a reply gains a field (the schema served does
    not close replies); a request with a field the server does not read is refused."""
    api, schema = live
    body = api.post("/v1/validate", json={"words": ["ev"]}).json()
    body["results"][0]["score"] = 3
    body["served_by"] = "replica-2"
    assert reply_validator(schema, "/v1/validate", "post", strict=False).is_valid(body)
    replies = {name for name in exact_models() if name in schema["components"]["schemas"]}
    assert replies >= {"ValidateReply", "AnagramReply", "SplitReply", "WordReply"}
    assert not [name for name in replies
                if schema["components"]["schemas"][name].get("additionalProperties") is False]
    for path in ("/v1/validate", "/v1/anagram", "/v1/split"):
        assert body_schema(schema, path)["additionalProperties"] is False, path


def test_the_limits_are_the_settings(data_dir):
    settings = Settings(data=data_dir, max_words=500, max_word_chars=20, max_get_words=50,
                        max_rack_tiles=9, max_blanks=1, max_results=30, max_pattern_length=7)
    with TestClient(create_app(settings)) as api:
        schema = api.get("/openapi.json").json()
    body = body_schema(schema, "/v1/validate")
    words = body["properties"]["words"]
    assert (words["maxItems"], words["items"]["maxLength"]) == (500, 20)
    assert body["allOf"][0]["then"]["properties"]["words"]["maxItems"] == 1000
    assert body["properties"]["lexicon"]["default"] == "tr"
    query = schema["paths"]["/v1/validate"]["get"]["parameters"][0]["schema"]
    assert query["maxItems"] == 50
    anagram = body_schema(schema, "/v1/anagram")["properties"]
    assert "{1,9}" in anagram["rack"]["pattern"] and "{0,1}" in anagram["rack"]["allOf"][0][
        "pattern"]
    assert anagram["limit"]["anyOf"][0]["maximum"] == 30
    assert anagram["pattern"]["anyOf"][0]["maxLength"] == 7
    word = schema["paths"]["/v1/words/{word}"]["get"]["parameters"][0]
    assert word["name"] == "word" and word["schema"]["maxLength"] == 20


def test_the_schema_is_the_same_whatever_is_loaded(data_dir, tmp_path):
    """`lexicon` and `game` are strings (a pattern), not enums of what a replica loaded: a
    replica with another build of `tr` and no `ku` (mid-rollout, or another deployment)
    serves byte for byte the same /openapi.json."""
    other = tmp_path / "other"
    write_lexicon(compile_words(TR_WORDS[:5]), other, "tr", SOURCE, created=CREATED)
    schemas = []
    for data in (data_dir, other):
        with TestClient(create_app(Settings(data=data))) as api:
            schemas.append(api.get("/openapi.json").content)
            versions = api.get("/readyz").json()["versions"]
    assert list(versions) == ["tr"]  # the second replica did load something else
    assert schemas[0] == schemas[1]
    props = body_schema(orjson.loads(schemas[0]), "/v1/anagram")["properties"]
    lexicon = props["lexicon"]["anyOf"][0]
    assert "enum" not in lexicon and re.fullmatch(lexicon["pattern"], "tr@d4323d22aa28")
    assert re.fullmatch(lexicon["pattern"], "ku") and not re.fullmatch(lexicon["pattern"],
                                                                       "tr@42B2")
    assert "enum" not in props["game"]["anyOf"][0]


def test_each_lexicon_and_game_has_its_own_rack_rule(live):
    """Kurdish racks use Kurdish letters; two-letter tiles only where a game has them; a
    rack is one the game deals (Harfbank: 14, or 15 with one to throw away; Kelimatik: 5
    consonants, 3 vowels, 1 two-letter tile, 1 joker), unless the body asks what_if."""
    _, schema = live
    validator = body_validator(schema, "/v1/split")
    assert validator.is_valid({"rack": "kalemkitapsilg?"})                 # harfbank, 15
    assert not validator.is_valid({"rack": "kalemkitapsilg?", "game": "kelimatik"})  # 10
    assert not validator.is_valid({"rack": "kale[lm]", "game": "kelimelik"})
    assert validator.is_valid({"rack": "mêr", "lexicon": "ku", "game": "kelimatik-ku",
                               "what_if": True})
    assert not validator.is_valid({"rack": "mêr", "lexicon": "ku", "game": "kelimatik-ku"})
    assert not validator.is_valid({"rack": "kalem"})                       # harfbank, 5
    assert validator.is_valid({"rack": "kalem", "what_if": True})
    assert not validator.is_valid({"rack": "mêr", "lexicon": "ku", "what_if": True})  # Turkish
    assert not validator.is_valid({"rack": "ılık", "lexicon": "ku", "game": "kelimatik-ku"})
    assert not validator.is_valid({"rack": "kale???"})
    validator = body_validator(schema, "/v1/anagram")
    assert validator.is_valid({"rack": "abcdefg"}) and validator.is_valid({"rack": "kale??"})
    assert not validator.is_valid({"rack": "abcdefgğhıijkl"})  # kelimelik's rack is 7
    assert not validator.is_valid({"rack": "kale??", "game": "kelimatik"})  # 1 joker
    for deal in ("kaletn?[lm]ıs", "KALETN?[LM]IS", "[lm]?âkltnesı", " kaletn?[lm]ıs "):
        assert validator.is_valid({"rack": deal, "game": "kelimatik"}), deal
    for rack in ("ka[lm][ar][ek]e?tnm", "aeıioöuüa?", "kaletn?[lm]ıe", "kaletn?[lm]ıss",
                 "kale?[lm]"):  # 3 two-letter tiles, 9 vowels, 4 vowels, 11 tiles, 6 tiles
        assert not validator.is_valid({"rack": rack, "game": "kelimatik"}), rack
    assert validator.is_valid({"rack": "kale?[lm]", "game": "kelimatik", "what_if": True})
    assert validator.is_valid({"rack": "xwêrn?[ar]dîa", "lexicon": "ku",
                               "game": "kelimatik-ku"})
    assert not validator.is_valid({"rack": "jj"}) and not validator.is_valid({"rack": "jJ"})
    assert validator.is_valid({"rack": "jj", "what_if": True})  # kelimelik's bag has 1 j
    assert not validator.is_valid({"rack": "xweş", "lexicon": "ku", "game": "kelimatik"})


def test_the_moves_rack_is_one_the_game_deals_unless_what_if(live):
    """/v1/moves' body says what the server refuses: a rack the game cannot deal (two j's,
    kelimelik's bag has one; Sözce's counts are not known) unless what_if, and more tiles
    or blanks than a rack holds (413) whatever what_if says; its 422 answers name
    `rack_not_dealt`."""
    api, schema = live
    validator = body_validator(schema, "/v1/moves")
    board = [[""] * 15 for _ in range(15)]
    assert not validator.is_valid({"board": board, "rack": "jJkale", "game": "kelimelik"})
    assert validator.is_valid({"board": board, "rack": "jJkale", "game": "sozce"})
    for game in ("kelimelik", "sozce"):
        assert validator.is_valid({"board": board, "rack": "kaj?e?L", "game": game})
        assert validator.is_valid({"board": board, "rack": "jJkale", "game": game,
                                   "what_if": True})
        for rack in ("kalemize", "kale???"):
            for what_if in (False, True):
                ask = {"board": board, "rack": rack, "game": game, "what_if": what_if}
                assert not validator.is_valid(ask), ask
    assert not validator.is_valid({"board": board, "rack": "jj"})  # kelimelik by default
    assert validator.is_valid({"board": board, "rack": "jj", "what_if": True})
    for rack, what_if, status in (("jjkale", False, 422), ("jjkale", True, 200),
                                  ("kalemize", True, 413), ("kalemize", False, 413)):
        reply = api.post("/v1/moves", json={"board": board, "rack": rack, "what_if": what_if})
        assert reply.status_code == status, reply.text
    answers = schema["paths"]["/v1/moves"]["post"]["responses"]
    assert "`rack_not_dealt`" in answers["422"]["description"]
    assert "what_if" in answers["413"]["description"]


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
        assert body_schema(schema, path)["properties"]["lexicon"]["default"] == "ku", path


@pytest.fixture(scope="module")
def every_route(data_dir, tmp_path_factory) -> dict:
    """The schema of a server with every route: the admin one and reports too."""
    settings = Settings(data=data_dir, admin_token="s3cret-s3cret-s3cret",
                        reports=tmp_path_factory.mktemp("reports") / "reports.sqlite")
    with TestClient(create_app(settings)) as api:
        return api.get("/openapi.json").json()


def operations(schema: dict):
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            yield path, method, operation


def test_every_operation_has_its_own_stable_id(every_route):
    """Generated clients name their functions by operationId: FastAPI's own
    (`readyz_readyz_get`) are replaced by the explicit table, one per operation."""
    ids = {(method, path): op["operationId"] for path, method, op in operations(every_route)}
    assert ids == OPERATION_IDS
    assert len(set(ids.values())) == len(ids)


def test_every_body_and_reply_is_a_named_component(every_route):
    """A request body or JSON reply written inline gets no model in a generated client."""
    inline = []
    for path, method, op in operations(every_route):
        bodies = [("body", op["requestBody"]["content"])] if "requestBody" in op else []
        bodies += [(status, reply.get("content", {})) for status, reply in op["responses"].items()]
        inline += [f"{method} {path} {what}" for what, content in bodies
                   if "application/json" in content
                   and "$ref" not in content["application/json"]["schema"]]
    assert inline == []
    names = set(every_route["components"]["schemas"])
    assert {"ValidateRequest", "AnagramRequest", "SplitRequest", "ReportRequest"} <= names


def test_every_429_and_503_declares_retry_after(every_route):
    missing = [f"{method} {path} {status}" for path, method, op in operations(every_route)
               for status in ("429", "503") if status in op["responses"]
               and "Retry-After" not in op["responses"][status].get("headers", {})]
    assert missing == []
    assert "503" in every_route["paths"]["/v1/anagram"]["post"]["responses"]


#: How the source raises an error by its code: a call of these with the code first, an
#: error class's CODE, a Body's per-field codes, Starlette's statuses' codes.
RAISERS = {"ServiceError", "Invalid", "TooLarge", "NotFound", "Unavailable", "TooMany",
           "by_code", "error_body"}


def codes_in_source() -> dict[str, str]:
    """Every error code the source of kelime and its service can send → where."""
    import ast

    found: dict[str, str] = {}
    sources = [*(ROOT / "kelime").rglob("*.py"), *(ROOT / "service").rglob("*.py")]
    for path in sorted(sources):  # (kelime/service is a link to service: rglob skips it)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            strings: list[ast.expr] = []
            if isinstance(node, ast.Call) and node.args and getattr(
                    node.func, "id", getattr(node.func, "attr", None)) in RAISERS:
                strings = [node.args[0]]
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = {getattr(t, "id", None) for t in targets}
                if "CODE" in names:
                    strings = [node.value]
                elif names & {"codes", "_HTTP_CODES"} and isinstance(node.value, ast.Dict):
                    strings = list(node.value.values)
            for value in strings:
                for const in ast.walk(value):
                    if isinstance(const, ast.Constant) and isinstance(const.value, str) \
                            and re.fullmatch(r"[a-z]+(?:_[a-z]+)+|[a-z]+", const.value):
                        found.setdefault(const.value, f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_error_code_is_an_enum_of_every_code_the_server_sends(every_route):
    """`error.code` lists every code, so a generated client has them as an enum: every
    code the source raises, renders or declares is in it (found by reading the source, so
    a new code raised and not in the table fails here), and nothing else is."""
    enum = every_route["components"]["schemas"]["Error"]["properties"]["error"][
        "properties"]["code"]["enum"]
    sent = codes_in_source()
    assert {"unknown_game", "invalid_rack", "not_found", "busy", "game_not_for_lexicon"
            } <= set(sent)  # the scan does find them
    assert {code: where for code, where in sent.items() if code not in enum} == {}
    assert set(enum) == set(CODES)


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
        valid = jsonschema_rs.validator_for(body_schema(schema, path)).is_valid(body)
        reply = api.post(path, json=body)
    assert valid == (reply.status_code < 400), (valid, reply.status_code, reply.text)
