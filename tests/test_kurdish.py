"""The offline Kurmanji lexicon (KLPT) for Kurdish Kelimatik, end to end: built by
`kelime build --bootstrap --name ku`, it validates and answers anagrams in Kurmanji letters,
with Kurmanji casing (I → i, î û ê kept), over HTTP as on the command line."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest
from click.testing import CliRunner

from kelime.cli import cli
from kelime.lexicon import Lexicon
from kelime.service.app import create_app
from kelime.service.settings import Settings
from tests.service_helpers import TestClient

KURMANJI = set("abcçdeêfghiîjklmnopqrsştuûvwxyz")
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def data(offline_lexicons):
    """`kelime build --bootstrap --name ku` (and tr): the session's, only read here."""
    return offline_lexicons


def test_the_kurmanji_lexicon_names_its_source_and_licence(data):
    lex = Lexicon.load(data / "ku")
    source = lex.manifest.source
    assert lex.manifest.alphabet == "abcçdeêfghiîjklmnopqrsştuûvwxyz"
    assert source["licence"] == "CC BY-SA 4.0" and "Sina Ahmadi" in source["attribution"]
    assert [s["key"] for s in source["sources"]] == ["klpt"]
    assert lex.info["words"] > 15_000
    assert source["policy"]["applied"]  # the name rules and its own list, no Turkish one:
    assert source["policy"]["policy"] == "kelime's default for Kurmanji"
    assert "kelime crawl" not in source["note"] and "KLPT" in source["note"]
    assert "kelime build --wordlist ku.txt --name ku" in source["note"]


#: The reviewed Kurmanji obscene list (kelime/policy/kurmanji-blocklist.txt), held here.
KURMANJI_OBSCENE = ["dêlik", "dêliktî", "dêliktîkirî", "heramzadeyane", "kîr", "kîrê", "pûşt",
                    "qehbe", "qehbebûyî", "qehbekirî", "qehbik", "qehpe", "qehpetî", "qûn",
                    "qûnfiroş"]
#: Reviewed and kept (docs/lexicons.md says why): a sense that is not an insult.
KURMANJI_KEPT = ["fis", "fisîn", "bêbav", "bênamûs", "bêşeref", "dêl", "dêlegur", "qûntax"]


def test_the_kurmanji_obscene_list_is_refused_and_the_turkish_one_is_not_applied(data):
    lex = Lexicon.load(data / "ku")
    reasons = {r["normalized"]: r["reason"] for r in lex.validate(
        [*KURMANJI_OBSCENE, *KURMANJI_KEPT, "göt", "kavat", "xwîn", "welat"])["results"]}
    assert all(reasons[w] == "obscene" for w in KURMANJI_OBSCENE), reasons
    assert all(reasons[w] is None for w in KURMANJI_KEPT), reasons
    listed = (files("kelime.policy") / "kurmanji-blocklist.txt").read_text(encoding="utf-8")
    assert [line.split()[0] for line in listed.splitlines()
            if line.strip() and not line.startswith("#")] == KURMANJI_OBSCENE
    assert reasons["göt"] == "invalid_chars" and reasons["kavat"] == "not_in_dictionary"
    assert reasons["xwîn"] is None and reasons["welat"] is None


def test_the_kurmanji_list_holds_no_bare_verb_stems_or_rr_variants(data):
    """KLPT lists each verb's present and past stems (avêj, avêt of avêtin) as entries of
    their own; they are not words a player plays, nor `jênegerr` beside `jêneger`."""
    lex = Lexicon.load(data / "ku")
    reasons = {r["normalized"]: r["reason"] for r in lex.validate(
        ["avêj", "axiv", "jênegerr", "bazarr", "avêtin", "axivîn", "jêneger", "bazar", "kir"]
    )["results"]}
    assert reasons == {"avêj": "not_in_dictionary", "axiv": "not_in_dictionary",
                       "jênegerr": "not_in_dictionary", "bazarr": "not_in_dictionary",
                       "avêtin": None, "axivîn": None, "jêneger": None, "bazar": None,
                       "kir": None}


def test_kurmanji_casing_and_messages_on_the_command_line(data):
    result = CliRunner().invoke(cli, ["check", "--data", str(data), "--lexicon", "ku",
                                      "BIRÎN", "ışık"])
    assert "birîn" in result.output and "not a Kurmanji word" in result.output


def test_validate_and_anagram_in_kurmanji_over_http(data):
    with TestClient(create_app(Settings(data=data))) as api:
        reply = api.post("/v1/validate", json={"words": ["BIRÎN", "ışık", "ÇAV", "av"],
                                               "lexicon": "ku", "game": "kelimatik"}).json()
        assert [(r["normalized"], r["reason"]) for r in reply["results"]] == [
            ("birîn", None), ("ışık", "invalid_chars"), ("çav", None), ("av", "too_short")]
        assert reply["lexicon"]["name"] == "ku"
        found = api.post("/v1/anagram", json={"rack": "mêr?[an]", "lexicon": "ku",
                                              "game": "kelimatik-ku", "what_if": True})
        assert found.status_code == 200, found.text
        words = [w["word"] for w in found.json()["words"]]
        assert words and all(set(w) <= KURMANJI for w in words)
        turkish = api.post("/v1/anagram", json={"rack": "kıtap", "lexicon": "ku"})
        assert turkish.status_code == 409  # kelimelik (the default game) is not ku's
        assert turkish.json()["error"]["details"]["games"] == ["kelimatik-ku"]
        turkish = api.post("/v1/anagram", json={"rack": "kıtap", "lexicon": "ku",
                                                "game": "kelimatik-ku"})
        assert turkish.status_code == 422 and turkish.json()["error"]["code"] == "invalid_rack"
        assert api.post("/v1/validate", json={"words": ["kitap"]}).json()["lexicon"]["name"] == "tr"


def test_did_you_mean_knows_kurmanji_marks(data):
    """The twins were Turkish only: `buk` found no `bûk`."""
    with TestClient(create_app(Settings(data=data))) as api:
        body = api.get("/v1/words/buk?lexicon=ku").json()
    assert not body["valid"] and "bûk" in body["suggestions"]


def test_kurdish_kelimatik_scores_kurmanji_letters_over_http_and_on_the_command_line(data):
    """`xweş` scored 20 (x and w worth 0) under Turkish Kelimatik's table; Kurdish Kelimatik
    values every Kurmanji letter, and a Turkish game refuses the Kurmanji lexicon."""
    with TestClient(create_app(Settings(data=data))) as api:
        games = {g["name"]: g for g in api.get("/v1/games").json()["games"]}
        assert games["kelimatik-ku"]["lexicon"] == "ku"
        assert games["kelimatik-ku"]["title"] == "Kürtçe Kelimatik"
        assert games["kelimatik-ku"]["min_hand_average"] == 50
        reply = api.post("/v1/anagram", json={"rack": "xweşîn", "lexicon": "ku",
                                              "game": "kelimatik-ku", "limit": 50,
                                              "what_if": True})
        assert reply.status_code == 200, reply.text
        scores = {w["word"]: w["score"] for w in reply.json()["words"]}
        assert scores["xweş"] == (5 + 6 + 1 + 5) * 4
        exact = api.post("/v1/anagram", json={"rack": "xwî", "lexicon": "ku", "mode": "exact",
                                              "game": "kelimatik-ku", "what_if": True}
                         ).json()["words"]
        assert [(w["word"], w["score"]) for w in exact] == [("xwî", (5 + 6 + 2) * 3)]
        turkish = api.post("/v1/anagram", json={"rack": "xweşîn", "lexicon": "ku",
                                                "game": "kelimatik"})
        assert turkish.status_code == 409
        error = turkish.json()["error"]
        assert error["code"] == "game_not_for_lexicon" and "kelimatik-ku" in error["message"]
        assert error["details"]["letters"] == ["ê", "î", "q", "û", "w", "x"]
    shown = CliRunner().invoke(cli, ["anagram", "xweşîn", "--game", "kelimatik-ku", "-l", "ku",
                                     "--what-if", "--data", str(data)])
    assert shown.exit_code == 0 and "xweş   68" in shown.output, shown.output
    own = CliRunner().invoke(cli, ["anagram", "xweşîn", "--game", "kelimatik-ku", "--what-if",
                                   "--data", str(data)])  # the game brings its lexicon
    assert own.exit_code == 0 and own.output == shown.output


def test_a_game_played_with_its_own_lexicon_brings_it_over_http(data):
    """Kürtçe Kelimatik names `ku` as its lexicon: a question that names the game and no
    lexicon is asked of `ku` on every route (it was asked of the default `tr`)."""
    with TestClient(create_app(Settings(data=data))) as api:
        checked = api.post("/v1/validate", json={"words": ["xweş"], "game": "kelimatik-ku"})
        assert checked.json()["lexicon"]["name"] == "ku"
        assert checked.json()["results"][0]["valid"], checked.text
        got = api.get("/v1/validate?word=xweş&game=kelimatik-ku").json()
        assert got["lexicon"]["name"] == "ku" and got["all_valid"]
        word = api.get("/v1/words/xweş?game=kelimatik-ku").json()
        assert word["lexicon"]["name"] == "ku" and word["valid"]
        found = api.post("/v1/anagram", json={"rack": "xweşîn", "game": "kelimatik-ku",
                                              "what_if": True})
        assert found.status_code == 200 and found.json()["lexicon"]["name"] == "ku"
        assert api.post("/v1/validate", json={"words": ["kitap"],
                                              "game": "kelimatik"}).json()["lexicon"]["name"] \
            == "tr"


def test_the_reviewed_sample_of_the_kurmanji_list_and_its_machine_made_forms(data):
    """docs/data/ku-sample-review.tsv: 200 words of the `ku` list, each judged (real,
    plausible, machine-made, unverified). KLPT's adjectives made by stacking a participle on
    a word in -î (durûtîkirî, westiyayîbûyî) were valid; they are left out now, and no real
    or plausible word of the sample is."""
    review = ROOT / "docs" / "data" / "ku-sample-review.tsv"
    rows = [line.split("\t") for line in review.read_text(encoding="utf-8").splitlines()
            if not line.startswith("#")][1:]
    verdicts = {word: verdict for word, verdict, *_ in rows}
    assert len(verdicts) == len(rows) >= 200
    assert set(verdicts.values()) == {"real", "plausible", "machine-made", "unverified"}
    dropped = {row[0] for row in rows if row[5] == "yes"}
    assert len(dropped) >= 10 and {verdicts[w] for w in dropped} == {"machine-made"}
    lex = Lexicon.load(data / "ku")
    reasons = {r["normalized"]: r["reason"] for r in lex.validate(
        [*verdicts, "westiyayîbûyî", "aqilmendîkirî", "spîkirî", "tijîkirî"])["results"]}
    assert {w for w in verdicts if reasons[w] == "not_in_dictionary"} == dropped
    assert reasons["westiyayîbûyî"] == reasons["aqilmendîkirî"] == "not_in_dictionary"
    assert reasons["spîkirî"] is reasons["tijîkirî"] is None  # spî kirin: to whiten
    assert lex.info["words"] < 18_000
