"""Player word reports, end to end: POST /v1/reports on a real uvicorn → the report store
(a real SQLite file) → `kelime reports` (list, check against the fake TDK, accept, reject)
→ the policy's lists → `kelime build`, whose changes list the words reports changed."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import sqlite3
import subprocess
from datetime import date
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from click.testing import CliRunner

from kelime.cli import cli
from kelime.errors import PolicyError
from kelime.lexicon import Lexicon
from kelime.policy import default_policy_path, load_policy
from kelime.policy.review import record_review
from kelime.reports import (
    MIN_STORE_BYTES,
    SLACK_PAGES,
    NoOpenReport,
    RateLimited,
    ReportError,
    ReportLimits,
    ReportStore,
    StoreFull,
    note_problem,
)
from kelime.service.app import create_app
from kelime.service.settings import Settings, uvicorn_options

from .fake_tdk import serve_in_thread as fake_tdk
from .service_helpers import build_data, serve_in_thread

SCRIPT = "<script>alert('x')</script><b>bold</b> [red]markup[/red]"


def _json(url: str, path: str, body, **headers) -> httpx.Response:
    return httpx.post(url + path, content=json.dumps(body, ensure_ascii=False).encode(),
                      headers={"Content-Type": "application/json", **headers}, timeout=10)


def run(*args: str, ok: bool = True):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    if ok:
        assert result.exit_code == 0, result.output
    return result


# --- the store ---------------------------------------------------------------------------

def test_duplicates_count_instead_of_adding_rows(tmp_path):
    with ReportStore(tmp_path / "r.sqlite", create=True) as store:
        a = store.submit(word="kitap", sent="KİTAP", kind="missing", lexicon="tr", client="1.1.1.1")
        b = store.submit(word="kitap", sent="kitap", kind="missing", lexicon="tr", client="2.2.2.2")
        c = store.submit(word="kitap", sent="kitap", kind="wrong", lexicon="tr", client="2.2.2.2")
        d = store.submit(word="kitap", sent="kitap", kind="missing", lexicon="ku", client="3.3.3.3")
        assert (a.count, a.duplicate) == (1, False)
        assert (b.id, b.count, b.duplicate) == (a.id, 2, True)
        assert len({a.id, c.id, d.id}) == 3  # another kind, another lexicon: other reports
        [tr] = store.open_reports("tr")
        assert (tr["count"], tr["players"], tr["kinds"]) == (3, 2, {"missing": 2, "wrong": 1})
        assert tr["sent"] == ["KİTAP", "kitap"]
        assert store.db.execute("SELECT count(*) FROM reports").fetchone()[0] == 3
        # a closed report is not joined: the next report of the word opens a new one
        store.decide("kitap", "tr", "rejected", "it is valid")
        e = store.submit(word="kitap", sent="kitap", kind="missing", lexicon="tr", client="4.4.4.4")
        assert e.id not in (a.id, c.id) and e.count == 1


def test_rate_limit_per_client_and_hour(tmp_path):
    limits = ReportLimits(per_client_hour=3)
    with ReportStore(tmp_path / "r.sqlite", create=True, limits=limits) as store:
        for i in range(3):
            store.submit(word=f"ev{'i' * i}", sent="x", kind="missing", lexicon="tr",
                         client="198.51.100.1", now=1000.0 + i)
        with pytest.raises(RateLimited) as refused:
            store.submit(word="ev", sent="ev", kind="missing", lexicon="tr",
                         client="198.51.100.1", now=1100.0)
        assert refused.value.retry_after == 3600 - 100  # the oldest ages out then
        store.submit(word="ev", sent="ev", kind="missing", lexicon="tr", client="198.51.100.2",
                     now=1100.0)  # another address is not held back
        store.submit(word="ev", sent="ev", kind="missing", lexicon="tr", client="198.51.100.1",
                     now=1000.0 + 3600.5)  # an hour after the first: allowed again
        # the address itself is never stored, and its keyed hash only for the hour
        clients = [c for (c,) in store.db.execute("SELECT client FROM submissions ORDER BY id")]
        assert clients[0] is None  # over an hour old: erased
        assert all(c and "198.51" not in c for c in clients[1:]) and len(set(clients[1:])) == 2
        # an IPv6 client is its /64: another address in it is the same client
        store.submit(word="ev", sent="ev", kind="wrong", lexicon="tr", client="2001:db8::1",
                     now=9000.0)
        store.submit(word="ev", sent="ev", kind="wrong", lexicon="tr", client="2001:db8::2",
                     now=9000.0)
        store.submit(word="ev", sent="ev", kind="wrong", lexicon="tr",
                     client="2001:db8:0:0:ffff::9", now=9000.0)
        with pytest.raises(RateLimited):
            store.submit(word="ev", sent="ev", kind="wrong", lexicon="tr",
                         client="2001:db8::3", now=9000.0)
        store.submit(word="ev", sent="ev", kind="wrong", lexicon="tr", client="2001:db8:1::1",
                     now=9000.0)  # another /64
        clients = [c for (c,) in store.db.execute("SELECT client FROM submissions ORDER BY id")]
        assert clients[:5] == [None] * 5 and None not in clients[5:]


def test_store_full_refuses_and_the_file_stays_bounded(tmp_path):
    limits = ReportLimits(store_bytes=64 * 1024)
    path = tmp_path / "r.sqlite"
    with ReportStore(path, create=True, limits=limits) as store:
        with pytest.raises(StoreFull) as full:
            for i in range(10_000):
                store.submit(word=f"kelime{i}", sent="x", kind="missing", lexicon="tr",
                             client=f"10.0.{i // 250}.{i % 250}", note="n" * 400)
        assert "full" in str(full.value) and i < 10_000
        stored = store.counts()["open"]
        assert stored == i  # every report before the refusal is kept
        assert path.stat().st_size <= 64 * 1024 + SLACK_PAGES * 4096  # one file: no WAL beside it
        assert not Path(f"{path}-wal").exists()
        # closing reports frees their space: the store takes reports again
        for word in [f"kelime{k}" for k in range(i)]:
            store.decide(word, "tr", "rejected", "not a word")
        store.submit(word="yeni", sent="yeni", kind="missing", lexicon="tr", client="10.9.9.9")
        assert path.stat().st_size <= 64 * 1024 + SLACK_PAGES * 4096


def test_not_a_report_store_or_damaged(tmp_path):
    cache = tmp_path / "tdk.sqlite"
    sqlite3.connect(cache).execute("CREATE TABLE replies (query TEXT)").connection.commit()
    with pytest.raises(ReportError, match="not a kelime report store"):
        ReportStore(cache, create=True)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not SQLite at all" * 100)
    with pytest.raises(ReportError, match="damaged|not a database"):
        ReportStore(junk, create=True)
    with pytest.raises(ReportError, match="no report store"):
        ReportStore(tmp_path / "absent.sqlite")
    with pytest.raises(ReportError, match="folder"):
        ReportStore(tmp_path / "no" / "such" / "r.sqlite", create=True)
    edited = tmp_path / "edited.sqlite"
    ReportStore(edited, create=True).close()
    db = sqlite3.connect(edited)
    db.execute("UPDATE meta SET value = randomblob(16) WHERE key = 'secret'")
    db.commit()
    with pytest.raises(ReportError, match="edited"):
        ReportStore(edited)
    db.execute("UPDATE meta SET value = ? WHERE key = 'secret'", ["ab" * 16])
    db.execute("DROP TABLE submissions")
    db.commit()
    db.close()
    with pytest.raises(ReportError, match="tables missing"):
        ReportStore(edited, create=True)


def test_notes_refuse_control_characters_only():
    assert note_problem("TDK'de var!\nSatır 2\t<script>") is None
    assert "U+001B" in note_problem("\x1b[31mred")
    assert "U+202E" in note_problem("abc\u202edef")
    assert note_problem("emoji 👍🏽 and ZWJ 👨‍👩‍👧") is None
    for hidden in ("\u200b", "\ufeff", "\u00ad", "\U000e0041", "\u2028"):  # zero-width …
        assert note_problem(f"a{hidden}b"), hex(ord(hidden))


def _submit_many(path: str, client: str, n: int) -> None:
    with ReportStore(path, limits=ReportLimits(per_client_hour=10_000)) as store:
        for i in range(n):
            store.submit(word=f"söz{i % 5}", sent="x", kind="missing", lexicon="tr",
                         client=client)


@pytest.mark.slow
def test_two_processes_write_one_store(tmp_path):
    path = tmp_path / "r.sqlite"
    ReportStore(path, create=True).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_submit_many, args=(str(path), f"10.0.0.{k}", 40))
             for k in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with ReportStore(path) as store:
        groups = store.open_reports()
        assert sum(g["count"] for g in groups) == 80 and len(groups) == 5
        assert store.db.execute("SELECT count(*) FROM submissions").fetchone()[0] == 80


# --- the policy's lists ----------------------------------------------------------------------

@pytest.fixture
def policy(tmp_path) -> Path:
    """A copy of the shipped policy (the TOML and its lists) to edit."""
    folder = tmp_path / "policy"
    folder.mkdir()
    for name in ("policy.toml", "allowlist.txt", "blocklist.txt", "tdk-vulgar.txt"):
        shutil.copy(default_policy_path().parent / name, folder / name)
    return folder / "policy.toml"


def test_record_review_sorted_and_exclusive(policy):
    block = policy.parent / "blocklist.txt"
    edits = record_review("dangalak", "obscene", [4], "TDK: hakaret yollu", "2026-12-01",
                          policy=policy)
    lines = block.read_text(encoding="utf-8").splitlines()
    at = lines.index("dangalak  # report 4 (2026-12-01): TDK: hakaret yollu")
    assert lines[at - 1] == "dalyarak" and lines[at + 1] == "deyyus"  # Turkish order
    assert [e.action for e in edits] == ["added"]
    # a word the blocklist holds, accepted as valid, leaves it: the verdict is what was accepted
    edits = record_review("göt", "valid", [5, 9], "test of the move", "2026-12-02", policy=policy)
    assert "göt" not in [ln.split()[0] for ln in block.read_text().splitlines() if ln.strip()
                         and not ln.startswith("#")]
    assert [e.action for e in edits] == ["added", "removed"]
    loaded = load_policy(policy)
    assert "göt" in loaded.allowed and "göt" not in loaded.blocked
    assert loaded.reviewed["göt"] == {"list": "allowlist", "verdict": "valid",
                                      "date": "2026-12-02", "why": "test of the move",
                                      "reports": [5, 9]}
    assert loaded.reviewed["dangalak"]["verdict"] == "obscene"
    # accepting again replaces the line instead of adding a second one
    record_review("dangalak", "proper_name", [4, 11], "a name after all", "2026-12-03",
                  policy=policy)
    assert block.read_text().count("dangalak") == 1
    assert load_policy(policy).blocked["dangalak"] == "proper_name"
    with pytest.raises(PolicyError, match="why"):
        record_review("ev", "valid", [1], "   ", "2026-12-01", policy=policy)


# --- the whole loop ---------------------------------------------------------------------------

@pytest.fixture
def served(tmp_path):
    """A real uvicorn with a report store (3 reports per client an hour), and the paths."""
    data = build_data(tmp_path / "data")
    store = tmp_path / "reports.sqlite"
    settings = Settings(data=data, reports=store, reports_per_hour=3,
                        forwarded_allow_ips=THE_TESTS)
    with serve_in_thread(create_app(settings), settings=settings) as url:
        yield url, data, store


#: The tests play the proxy: the servers they start believe their X-Forwarded-For, so each
#: forged address is another client (as each client behind nginx is).
THE_TESTS = "127.0.0.1"


def test_a_forged_x_forwarded_for_from_a_peer_not_named_is_ignored(tmp_path):
    """X-Forwarded-For is believed only from the proxies named in KELIME_FORWARDED_ALLOW_IPS
    (none by default). uvicorn used to believe any loopback peer: 100 of 100 forged
    addresses were 100 clients, each with its own share of the reports' rate limit."""
    data = build_data(tmp_path / "data")
    assert uvicorn_options(Settings())["proxy_headers"] is False  # service/trust.py decides
    for trusted in ("", "127.0.0.2"):  # nobody (the default); a proxy on another address
        settings = Settings(data=data, reports=tmp_path / f"r{trusted}.sqlite",
                            reports_per_hour=3, forwarded_allow_ips=trusted)
        with serve_in_thread(create_app(settings), settings=settings) as url:
            for i in range(3):  # a peer not named, a new forged address each time
                r = _json(url, "/v1/reports", {"word": "ev", "kind": "wrong"},
                          **{"X-Forwarded-For": f"198.51.100.{i}"})
                assert r.status_code == 202, r.text
            r = _json(url, "/v1/reports", {"word": "ev", "kind": "wrong"},
                      **{"X-Forwarded-For": "198.51.100.99"})
            assert r.status_code == 429, r.text  # all four were 127.0.0.1's
            if trusted:  # the named proxy's word is taken: each address its own client
                transport = httpx.HTTPTransport(local_address=trusted)
                with httpx.Client(transport=transport, base_url=url) as proxy:
                    for i in range(5):
                        r = proxy.post("/v1/reports", json={"word": "ev", "kind": "wrong"},
                                       headers={"X-Forwarded-For": f"203.0.113.{i}"})
                        assert r.status_code == 202, r.text


def test_report_through_the_api_shows_in_kelime_reports(served):
    url, data, store = served
    r = _json(url, "/v1/reports", {"word": "KİTAP", "kind": "wrong", "note": SCRIPT})
    assert r.status_code == 202, r.text
    assert r.headers["content-type"] == "application/json"
    reply = r.json()
    assert reply["verdict"] == {"word": "KİTAP", "normalized": "kitap", "valid": True,
                                "reason": None}
    assert (reply["kind"], reply["count"], reply["duplicate"], reply["game"]) == (
        "wrong", 1, False, "kelimelik")
    again = _json(url, "/v1/reports", {"word": "kitap", "kind": "wrong", "game": "kelimatik"},
                  **{"X-Forwarded-For": "203.0.113.7"})  # the tests play the proxy
    assert (again.json()["id"], again.json()["count"]) == (reply["id"], 2)
    missing = _json(url, "/v1/reports", {"word": "İstanbul", "kind": "missing"})
    assert missing.json()["verdict"]["reason"] == "proper_name"
    metrics = httpx.get(url + "/metrics").text
    assert 'kelime_reports_total{kind="wrong",lexicon="tr",outcome="duplicate"} 1.0' in metrics

    listed = json.loads(run("reports", "--reports", store, "--data", data, "--json").output)
    by_word = {g["word"]: g for g in listed["open"]}
    kitap = by_word["kitap"]
    assert (kitap["count"], kitap["players"], kitap["kinds"]) == (2, 2, {"wrong": 2})
    assert kitap["verdict"]["valid"] is True and kitap["games"] == ["kelimatik", "kelimelik"]
    assert kitap["notes"][0]["note"] == SCRIPT  # stored and returned as sent: plain text
    assert by_word["istanbul"]["verdict"]["reason"] == "proper_name"
    pretty = run("reports", "--reports", store, "--data", data).output
    assert SCRIPT in pretty  # printed as the text it is: rich markup not read, no HTML made
    assert "now refused: proper_name" in pretty


def test_limits_answer_429_and_413(tmp_path, served):
    url, data, store = served
    for i in range(3):
        assert _json(url, "/v1/reports", {"word": "ev", "kind": "wrong"}).status_code == 202
    over = _json(url, "/v1/reports", {"word": "ev", "kind": "wrong"})
    assert over.status_code == 429
    assert over.json()["error"]["code"] == "too_many_reports"
    assert 0 < int(over.headers["retry-after"]) <= 3600
    long_note = _json(url, "/v1/reports", {"word": "ev", "kind": "wrong", "note": "n" * 501},
                      **{"X-Forwarded-For": "203.0.113.8"})
    assert long_note.status_code == 413 and long_note.json()["error"]["code"] == "note_too_long"
    long_word = _json(url, "/v1/reports", {"word": "e" * 65, "kind": "wrong"},
                      **{"X-Forwarded-For": "203.0.113.8"})
    assert long_word.status_code == 413
    for body, code in (({"word": "ev", "kind": "spam"}, "invalid_request"),
                       ({"word": "ev1", "kind": "missing"}, "not_a_word"),
                       ({"word": "hoş geldin", "kind": "missing"}, "not_a_word"),
                       ({"word": "ev", "kind": "wrong", "note": "\x1b[2J"}, "invalid_request"),
                       ({"word": "ev", "kind": "wrong", "extra": 1}, "invalid_request"),
                       ({"kind": "wrong"}, "invalid_request")):
        r = _json(url, "/v1/reports", body, **{"X-Forwarded-For": "203.0.113.9"})
        assert (r.status_code, r.json()["error"]["code"]) == (422, code), body

    # a full store: 413, and the reports already in it are kept
    small = tmp_path / "small.sqlite"
    settings = Settings(data=data, reports=small, reports_max_bytes=MIN_STORE_BYTES,
                        max_note_chars=8000, reports_per_hour=10_000,
                        forwarded_allow_ips=THE_TESTS)
    with serve_in_thread(create_app(settings), settings=settings) as other:
        statuses = []
        for i in range(400):  # ~130 notes of 7.9 KB fill the least store allowed, 1 MiB
            r = _json(other, "/v1/reports", {"word": f"ev{'e' * (i % 40)}", "kind": "wrong",
                                             "note": f"{i} " + "n" * 7900},
                      **{"X-Forwarded-For": f"10.1.{i // 200}.{i % 200}"})
            statuses.append(r.status_code)
            if r.status_code != 202:
                break
        assert statuses[-1] == 413 and set(statuses[:-1]) == {202}
        assert r.json()["error"]["code"] == "reports_full"
    with ReportStore(small) as s:
        assert sum(g["count"] for g in s.open_reports()) == len(statuses) - 1


def test_reports_off_is_404(tmp_path):
    settings = Settings(data=build_data(tmp_path / "data"))
    with serve_in_thread(create_app(settings)) as url:
        r = _json(url, "/v1/reports", {"word": "ev", "kind": "wrong"})
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
        assert "/v1/reports" not in httpx.get(url + "/openapi.json").json()["paths"]


def gts_queries(server) -> list[str]:
    return [parse_qs(urlsplit(e["path"]).query)["ara"][0] for e in server.fake.log
            if urlsplit(e["path"]).path == "/gts"]


def test_check_shows_what_tdk_says(tmp_path):
    data = build_data(tmp_path / "data")
    store, cache = tmp_path / "reports.sqlite", tmp_path / "tdk.sqlite"
    with ReportStore(store, create=True) as s:
        for word, kind in (("dangalak", "offensive"), ("abdal", "wrong"), ("massa", "missing")):
            s.submit(word=word, sent=word, kind=kind, lexicon="tr", client="1.2.3.4")
    server = fake_tdk()
    try:
        out = run("reports", "check", "--reports", store, "--data", data, "--cache", cache,
                  "--base-url", server.fake.base, "--delay", "0", "--json").output
        asked = gts_queries(server)
        again = run("reports", "check", "--reports", store, "--data", data, "--cache", cache,
                    "--base-url", server.fake.base, "--delay", "0").output
        asked_again = gts_queries(server)
    finally:
        server.shutdown()
    groups = {g["word"]: g for g in json.loads(out)["open"]}
    dangalak = groups["dangalak"]["tdk"]
    assert dangalak["headwords"] == [{"madde": "dangalak", "ozel_mi": False, "senses": 1,
                                      "tags": ["sıfat", "hakaret yollu"]}]
    assert (dangalak["verdict"], dangalak["source"]) == ("obscene", "live")
    assert groups["dangalak"]["verdict"]["reason"] == "not_in_dictionary"  # the lexicon's
    abdal = groups["abdal"]["tdk"]
    assert [(h["madde"], h["ozel_mi"]) for h in abdal["headwords"]] == [
        ("abdal", False), ("Abdal", True)]
    assert abdal["verdict"] == "valid"
    assert groups["massa"]["tdk"]["verdict"] == "not_in_dictionary"
    assert sorted(asked) == ["abdal", "dangalak", "massa"]  # once each
    assert asked_again == asked  # the second check read the cache: no request
    assert "hakaret yollu" in again and "(cache)" in again


def test_check_goes_on_when_tdk_cannot_be_asked(tmp_path):
    data = build_data(tmp_path / "data")
    store = tmp_path / "reports.sqlite"
    with ReportStore(store, create=True) as s:
        s.submit(word="ev", sent="ev", kind="wrong", lexicon="tr", client="1.2.3.4")
    result = run("reports", "check", "--reports", store, "--data", data, "--cache",
                 tmp_path / "tdk.sqlite", "--base-url", "http://127.0.0.1:9", "--delay", "0",
                 "--json", ok=False)
    assert result.exit_code == 1  # a script sees that some word could not be asked
    [group] = json.loads(result.stdout)["open"]
    assert group["tdk"]["source"] == "error" and "127.0.0.1:9" in group["tdk"]["error"]
    # a cache that is no cache stops the run at once, naming it (not once per word)
    result = run("reports", "check", "--reports", store, "--data", data, "--cache", store,
                 "--base-url", "http://127.0.0.1:9", "--delay", "0", ok=False)
    assert result.exit_code == 1 and "Error:" in result.output and str(store) in result.output


def test_accept_then_build_changes_the_verdict_and_lists_it(tmp_path, policy):
    words = tmp_path / "tr.txt"
    words.write_text("kitap\nev\ndangalak\nabdal\n", encoding="utf-8")
    data = tmp_path / "data"
    run("build", "--wordlist", words, "--name", "tr", "--out", data, "--policy", policy)
    store = tmp_path / "reports.sqlite"
    with ReportStore(store, create=True) as s:
        yagis = s.submit(word="yağış", sent="Yağış", kind="missing", lexicon="tr", client="a")
        s.submit(word="yağış", sent="yağış", kind="missing", lexicon="tr", client="b")
        bad = s.submit(word="dangalak", sent="dangalak", kind="offensive", lexicon="tr",
                       client="a")
        s.submit(word="ev", sent="ev", kind="wrong", lexicon="tr", client="c")
    assert Lexicon.load(data / "tr").check("yağış").reason == "not_in_dictionary"

    accepted = json.loads(run("reports", "accept", "Yağış", "--as", "valid", "--why",
                              "TDK lists it (isim)", "--reports", store, "--data", data,
                              "--policy", policy, "--json").output)
    assert accepted["reports"] == [yagis.id] and accepted["verdict"] == "valid"
    run("reports", "accept", "dangalak", "--as", "obscene", "--why", "hakaret yollu",
        "--reports", store, "--data", data, "--policy", policy)
    rejected = run("reports", "reject", "ev", "--why", "a common noun", "--reports", store,
                   "--data", data).output
    assert "Rejected 1 report(s) of ev" in rejected
    allow = (policy.parent / "allowlist.txt").read_text(encoding="utf-8")
    assert f"yağış  # report {yagis.id} (" in allow and "TDK lists it (isim)" in allow
    with ReportStore(store) as s:
        assert s.open_reports() == []
        assert s.report(yagis.id)["decision"] == "valid"
        assert s.report(bad.id)["status"] == "accepted"
    none_left = run("reports", "accept", "ev", "--as", "valid", "--why", "x", "--reports",
                    store, "--data", data, "--policy", policy, ok=False)
    assert none_left.exit_code == 1 and "no open report of 'ev'" in none_left.output

    built = run("build", "--wordlist", words, "--name", "tr", "--out", data, "--policy",
                policy, "--accept-changes")  # 2 words of 4: the change guard asks
    assert "changed by player reports: 2 word(s)" in built.output
    assert "yağış  not_in_dictionary → valid  (report #" in built.output
    lex = Lexicon.load(data / "tr")
    assert lex.check("yağış").valid and lex.check("dangalak").reason == "obscene"
    changes = json.loads((data / "tr" / "changes.json").read_text(encoding="utf-8"))
    by_word = {c["word"]: c for c in changes["by_reports"]}
    assert by_word["yağış"] == {"word": "yağış", "before": "not_in_dictionary",
                                "after": "valid", "reports": [yagis.id],
                                "date": by_word["yağış"]["date"],
                                "why": "TDK lists it (isim)"}
    assert (by_word["dangalak"]["before"], by_word["dangalak"]["after"]) == ("valid", "obscene")
    # the next build changes nothing more, so it lists no word again
    assert "Unchanged" in run("build", "--wordlist", words, "--name", "tr", "--out", data,
                              "--policy", policy).output


def test_accept_needs_a_store_and_an_open_report(tmp_path, policy):
    data = build_data(tmp_path / "data")
    for command in (["accept", "ev", "--as", "valid", "--policy", policy], ["reject", "ev"],
                    ["check"], []):
        result = run("reports", *command, "--why", "x", "--data", data, ok=False) \
            if command[:1] in (["accept"], ["reject"]) else run("reports", *command, ok=False)
        assert result.exit_code == 2 and "KELIME_REPORTS" in result.output, command  # usage
    store = tmp_path / "r.sqlite"
    ReportStore(store, create=True).close()
    with pytest.raises(NoOpenReport):
        with ReportStore(store) as s:
            s.decide("ev", "tr", "rejected", "x")


def test_a_store_moved_aside_is_followed_by_a_new_one(served, tmp_path):
    """The server keeps its store open; a maintainer who moves the file aside (to archive
    it, or a full one) gets the next reports in a new file, none in the moved one."""
    url, data, store = served
    assert _json(url, "/v1/reports", {"word": "ev", "kind": "wrong"}).status_code == 202
    archived = tmp_path / "archived.sqlite"
    store.rename(archived)  # the file alone: everything committed is in it
    r = _json(url, "/v1/reports", {"word": "kitap", "kind": "wrong"},
              **{"X-Forwarded-For": "203.0.113.20"})
    assert r.status_code == 202 and r.json()["count"] == 1
    with ReportStore(store) as fresh, ReportStore(archived) as old:
        assert [g["word"] for g in fresh.open_reports()] == ["kitap"]
        assert [g["word"] for g in old.open_reports()] == ["ev"]


def test_serve_refuses_a_store_it_cannot_use(tmp_path):
    data = build_data(tmp_path / "data")
    result = run("serve", "--data", data, "--reports", tmp_path / "missing" / "r.sqlite",
                 ok=False)
    assert result.exit_code == 1 and "folder of the report store" in result.output
    store = tmp_path / "r.sqlite"
    ReportStore(store, create=True).close()
    if subprocess.run(["chattr", "+i", str(store)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here (it needs root and a file system "
                    "that has it)")
    try:  # a store that opens but cannot be written: refused before serving, not at a report
        result = run("serve", "--data", data, "--reports", store, ok=False)
    finally:
        subprocess.run(["chattr", "-i", str(store)], check=True)
    assert result.exit_code == 1 and f"cannot write the report store {store}" in result.output
    assert "check the permissions" in result.output


def test_a_report_needs_a_json_content_type(served):
    """A browser sends a body without Content-Type from any web site, with no CORS
    preflight: a report without one is refused, so no other site can report for its
    visitors."""
    url, data, store = served
    r = httpx.post(url + "/v1/reports", content=b'{"word": "kitap", "kind": "offensive"}',
                   headers={"Origin": "https://elsewhere.example"})
    assert "content-type" not in r.request.headers
    assert r.status_code == 415 and r.json()["error"]["code"] == "unsupported_media_type"
    r = httpx.post(url + "/v1/reports", content=b'{"word": "kitap", "kind": "offensive"}',
                   headers={"Content-Type": "text/plain"})
    assert r.status_code == 415
    huge = _json(url, "/v1/reports", {"word": "kitap", "kind": "wrong", "note": "x" * 20_000})
    assert huge.status_code == 413 and "one word and a short note" in huge.json()["error"][
        "message"]
    with ReportStore(store) as s:
        assert s.open_reports() == []


def test_maintainers_close_reports_on_a_full_store_and_see_history(tmp_path):
    data = build_data(tmp_path / "data")
    store = tmp_path / "r.sqlite"
    with ReportStore(store, create=True, limits=ReportLimits(store_bytes=48 * 1024)) as s:
        with pytest.raises(StoreFull):
            for i in range(2000):
                s.submit(word="kitap", sent="kitap", kind="wrong", lexicon="tr",
                         client=f"10.2.{i // 200}.{i % 200}", note="n" * 400)
    closing = run("reports", "reject", "kitap", "--why", "a common noun " * 200, "--reports",
                  store, "--data", data)
    assert "Rejected 1 report(s) of kitap" in closing.output
    with ReportStore(store, limits=ReportLimits(store_bytes=48 * 1024)) as s:
        s.submit(word="kitap", sent="KİTAP", kind="missing", lexicon="tr", client="10.3.0.1",
                 note="line one\n12 kitap  tr  999 report(s) from 999 player(s): fake")
    listed = run("reports", "--reports", store, "--data", data).output
    assert "earlier: wrong rejected on " in listed and "a common noun" in listed
    assert "line one ⏎ 12 kitap" in listed  # a note cannot print a line of its own
    assert len(listed.splitlines()) == 5
    record = json.loads(run("reports", "--reports", store, "--data", data, "--json").output)
    [group] = record["open"]
    assert group["history"][0]["status"] == "rejected" and group["history"][0]["count"] >= 5


def test_accept_leaves_the_reports_open_when_the_list_cannot_be_written(tmp_path, policy):
    data = build_data(tmp_path / "data")
    store = tmp_path / "r.sqlite"
    with ReportStore(store, create=True) as s:
        s.submit(word="kalem", sent="kalem", kind="missing", lexicon="tr", client="1.2.3.4")
    allow = policy.parent / "allowlist.txt"
    allow.unlink()
    allow.mkdir()  # a list that cannot be read or replaced
    result = run("reports", "accept", "kalem", "--as", "valid", "--why", "TDK lists it",
                 "--reports", store, "--data", data, "--policy", policy, ok=False)
    assert result.exit_code == 1 and "allowlist.txt" in result.output
    with ReportStore(store) as s:
        assert [g["word"] for g in s.open_reports()] == ["kalem"]  # still open
    allow.rmdir()
    allow.write_text("# allowed\n", encoding="utf-8")
    block = policy.parent / "blocklist.txt"
    block.write_text(block.read_text(encoding="utf-8") + "kalem\n", encoding="utf-8")
    before = (allow.read_text(encoding="utf-8"), block.read_text(encoding="utf-8"))
    tmp = allow.with_name(f".{allow.name}.{os.getpid()}.tmp")
    tmp.mkdir()  # the allowlist's new copy cannot be written: the blocklist stays as it was
    try:
        result = run("reports", "accept", "kalem", "--as", "valid", "--why", "TDK lists it",
                     "--reports", store, "--data", data, "--policy", policy, ok=False)
    finally:
        tmp.rmdir()
    assert result.exit_code == 1 and "could not write the policy list" in result.output
    assert (allow.read_text(encoding="utf-8"), block.read_text(encoding="utf-8")) == before
    with ReportStore(store) as s:
        assert [g["word"] for g in s.open_reports()] == ["kalem"]
    wrong_data = run("reports", "accept", "kalem", "--as", "valid", "--why", "x", "--reports",
                     store, "--data", tmp_path / "nowhere", "--policy", policy, ok=False)
    assert wrong_data.exit_code == 1 and "no lexicon 'tr' under" in wrong_data.output
    escape = run("reports", "reject", "kalem", "--why", "\x1b[31mred", "--reports", store,
                 "--data", data, ok=False)
    assert escape.exit_code == 2 and "plain text" in escape.output


def test_a_locked_store_refuses_reports_quickly_and_other_routes_go_on(served, caplog):
    """Another process holds the store's write lock: the reports get 503 with Retry-After
    (after the first waited its busy timeout, the ones queued behind it at once), and an
    anagram question sent meanwhile is answered."""
    import asyncio

    url, data, store = served
    assert _json(url, "/v1/reports", {"word": "ev", "kind": "wrong"}).status_code == 202
    holder = sqlite3.connect(store, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")

    async def load():
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            reports = [client.post("/v1/reports", json={"word": "kitap", "kind": "wrong"},
                                   headers={"X-Forwarded-For": f"10.7.0.{i}"})
                       for i in range(12)]
            anagram = client.post("/v1/anagram", json={"rack": "kitap"})
            return await asyncio.gather(anagram, *reports)

    try:
        anagram, *replies = asyncio.run(load())
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert anagram.status_code == 200
    assert {r.status_code for r in replies} == {503}
    assert {r.json()["error"]["code"] for r in replies} == {"reports_unavailable"}
    assert all(r.headers["retry-after"] for r in replies)
    with ReportStore(store) as s:
        assert [g["word"] for g in s.open_reports()] == ["ev"]
    failures = [r.getMessage() for r in caplog.records if "report not stored" in r.getMessage()]
    waited = [m for m in failures if "locked" in m]
    assert len(failures) == 12 and 1 <= len(waited) < 12  # the rest refused without waiting


def test_accept_answers_its_kinds_and_group_options_reach_the_commands(tmp_path, policy):
    data = build_data(tmp_path / "data")
    store = tmp_path / "r.sqlite"
    with ReportStore(store, create=True) as s:
        for kind in ("offensive", "wrong", "missing"):
            s.submit(word="katil", sent="katil", kind=kind, lexicon="tr", client=kind)
    # the options before the command are the command's too
    done = json.loads(run("reports", "--reports", store, "--data", data, "--json", "accept",
                          "katil", "--as", "obscene", "--why", "an insult here",
                          "--policy", policy).output)
    assert done["status"] == "accepted" and len(done["reports"]) == 2
    assert done["still_open"] == {"missing": 1}  # "missing" is no claim obscene answers
    closing = run("reports", "--reports", store, "--data", data, "reject", "katil", "--why",
                  "stays refused", "--kind", "missing").output
    assert "Rejected 1 report(s) of katil" in closing and "Still open" not in closing
    with ReportStore(store) as s:
        assert s.open_reports() == []
        history = {r["kind"]: (r["status"], r["decision"]) for r in (
            s.report(i) for i in range(1, 4))}
    assert history == {"offensive": ("accepted", "obscene"), "wrong": ("accepted", "obscene"),
                       "missing": ("rejected", None)}


def test_a_first_build_lists_no_word_changed_by_reports(tmp_path, policy):
    """Reviewed lines are only changes against a previous build: the first build of a name
    (or one after the data folder was emptied) lists none."""
    record_review("yağış", "valid", [1], "TDK lists it", "2026-12-01", policy=policy)
    words = tmp_path / "tr.txt"
    words.write_text("kitap\n", encoding="utf-8")
    run("build", "--wordlist", words, "--name", "tr", "--out", tmp_path / "data", "--policy",
        policy)
    changes = json.loads((tmp_path / "data" / "tr" / "changes.json").read_text())
    assert changes["by_reports"] == [] and changes["added_sample"] == ["kitap", "yağış"]


@pytest.mark.slow
def test_prune_gives_the_space_of_old_decisions_back(tmp_path):
    store = tmp_path / "r.sqlite"
    limits = ReportLimits(store_bytes=160 * 1024, per_client_hour=10**6)
    with ReportStore(store, create=True, limits=limits) as s:
        for round_ in range(3):  # fill, close everything, again: decisions pile up
            with pytest.raises(StoreFull):
                for i in range(10_000):
                    s.submit(word=f"söz{round_}x{i}", sent="x", kind="missing", lexicon="tr",
                             client="10.4.4.4", note="ğ" * 500)
            for group in s.open_reports():
                s.decide(group["word"], "tr", "rejected", "not a word")
        full_of_decisions = s.counts()
    out = run("reports", "prune", "--older-than", "0", "--reports", store).output
    assert f"Deleted {full_of_decisions['rejected']} report(s)" in out
    with ReportStore(store, limits=limits) as s:
        left = s.counts()
        assert left["rejected"] == 0 and left["bytes"] < full_of_decisions["bytes"]
        s.submit(word="yeni", sent="yeni", kind="missing", lexicon="tr", client="10.5.5.5")
    kept = run("reports", "prune", "--reports", store, "--json").output  # 90 days: none
    assert json.loads(kept)["deleted"] == 0


def test_accept_undoes_the_lists_when_the_store_cannot_commit(tmp_path, policy):
    """The policy line is written inside the store's transaction; a commit that fails (a
    reader holding the file the whole busy timeout) puts the lists back as they were."""
    data = build_data(tmp_path / "data")
    store = tmp_path / "r.sqlite"
    with ReportStore(store, create=True) as s:
        s.submit(word="kalem", sent="kalem", kind="offensive", lexicon="tr", client="1.2.3.4")
    lists = [policy.parent / "allowlist.txt", policy.parent / "blocklist.txt"]
    before = [p.read_text(encoding="utf-8") for p in lists]
    reader = sqlite3.connect(store, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM reports").fetchone()  # a shared lock till the end
    try:
        result = run("reports", "accept", "kalem", "--as", "obscene", "--why", "x",
                     "--reports", store, "--data", data, "--policy", policy, ok=False)
    finally:
        reader.execute("ROLLBACK")
        reader.close()
    assert result.exit_code == 1 and "locked" in result.output
    assert [p.read_text(encoding="utf-8") for p in lists] == before
    with ReportStore(store) as s:
        assert [g["word"] for g in s.open_reports()] == ["kalem"]


def test_accepting_again_keeps_every_report_on_the_line(tmp_path, policy):
    data = build_data(tmp_path / "data")
    store = tmp_path / "r.sqlite"
    with ReportStore(store, create=True) as s:
        first = s.submit(word="katil", sent="katil", kind="offensive", lexicon="tr", client="a")
    run("reports", "accept", "katil", "--as", "obscene", "--why", "an insult", "--reports",
        store, "--data", data, "--policy", policy)
    with ReportStore(store) as s:
        second = s.submit(word="katil", sent="katil", kind="wrong", lexicon="tr", client="b")
    run("reports", "accept", "katil", "--as", "obscene", "--why", "still an insult",
        "--reports", store, "--data", data, "--policy", policy)
    block = (policy.parent / "blocklist.txt").read_text(encoding="utf-8")
    assert block.count("katil") == 1
    assert f"katil  # reports {first.id}, {second.id} (" in block and "still an insult" in block
    wrong = run("reports", "reject", "katil", "--why", "x", "--reports", store, "--data",
                tmp_path / "nowhere", ok=False)
    assert wrong.exit_code == 1 and "no lexicon 'tr' under" in wrong.output


# --- accept as a core operation, and git only when asked --------------------------------------

def _reported(store: Path, *reports: tuple[str, str]) -> None:
    with ReportStore(store, create=True) as s:
        for i, (word, kind) in enumerate(reports):
            s.submit(word=word, sent=word, kind=kind, lexicon="tr", client=f"10.8.0.{i}")


def test_a_folder_given_as_the_report_store_is_named_as_one(tmp_path, data_dir):
    """KELIME_REPORTS=/srv/kelime (the folder, not the file in it) stopped `kelime serve`
    with SQLite's "unable to open database file" and advice to check permissions."""
    for create in (True, False):
        with pytest.raises(ReportError, match="is a folder: give the path of a file in it"):
            ReportStore(tmp_path, create=create)
    done = CliRunner(env={"KELIME_REPORTS": str(tmp_path)}).invoke(
        cli, ["serve", "--data", str(data_dir), "--port", "1"])
    assert done.exit_code == 1 and "Traceback" not in done.output
    assert f"the report store {tmp_path} is a folder" in done.output, done.output


def test_accept_is_a_core_operation_on_real_files(tmp_path, policy):
    """kelime.reports_accept.accept with no CLI: a real lexicon, a real store, the policy's
    real lists; what it did comes back as an object, and a failure leaves both as they were."""
    from kelime.lexicon import load_lexicon
    from kelime.reports_accept import BadDecision, PolicyMismatch, accept

    data = build_data(tmp_path / "data")
    store = tmp_path / "r.sqlite"
    _reported(store, ("katil", "offensive"), ("katil", "missing"), ("kalem", "missing"))
    lex = load_lexicon(data, "tr")
    block, allow = policy.parent / "blocklist.txt", policy.parent / "allowlist.txt"
    with ReportStore(store) as s:
        done = accept(s, lex, "KATİL", "obscene", "an  insult\nhere", lexicon="tr",
                      policy=policy, today=date(2026, 12, 1))
        assert (done.word, done.verdict, [r["kind"] for r in done.closed]) == (
            "katil", "obscene", ["offensive"])
        assert done.still_open == {"missing": 1}
        line = "katil  # report 1 (2026-12-01): an insult here"
        assert [(e.path, e.action, e.line) for e in done.edits] == [(block, "added", line)]
        assert line in block.read_text(encoding="utf-8").splitlines()
        assert done.as_dict()["reports"] == [1] and done.notes == []
        assert s.report(1)["status"] == "accepted" and s.report(2)["status"] == "open"

        lists = [p.read_text(encoding="utf-8") for p in (allow, block)]
        for word, why, param in (("ev1", "x", "WORD"), ("kalem", "\x1b[2J", "--why")):
            with pytest.raises(BadDecision) as bad:
                accept(s, lex, word, "valid", why, lexicon="tr", policy=policy)
            assert bad.value.param == param
        with pytest.raises(PolicyMismatch, match="not a file of a git checkout"):
            accept(s, lex, "kalem", "valid", "x", lexicon="tr",
                   shipped_check=lambda shipped: f"{shipped} is not a file of a git checkout")
        with pytest.raises(NoOpenReport):
            accept(s, lex, "kitap", "valid", "x", lexicon="tr", policy=policy)
        allow.unlink()
        allow.mkdir()  # the allowlist cannot be replaced: the store's transaction rolls back
        with pytest.raises(PolicyError, match="allowlist.txt"):
            accept(s, lex, "kalem", "valid", "TDK lists it", lexicon="tr", policy=policy)
        allow.rmdir()
        allow.write_text(lists[0], encoding="utf-8")
        assert [p.read_text(encoding="utf-8") for p in (allow, block)] == lists
        assert [g["word"] for g in s.open_reports()] == ["kalem", "katil"]
    assert (default_policy_path().parent / "allowlist.txt").read_text(
        encoding="utf-8").count("kalem") == 0  # the refused accepts touched no shipped list


def _no_git_path(tmp_path: Path) -> str:
    """A PATH with no git on it (only what a report accept may need besides)."""
    bare = tmp_path / "bin-without-git"
    bare.mkdir(exist_ok=True)
    return str(bare)


def test_accept_needs_no_git_unless_asked_to_commit(tmp_path, policy):
    """Without --commit an accept into a policy of one's own runs no git at all (no git on
    the PATH, no repository); --commit without git is refused before anything is written."""
    data = build_data(tmp_path / "data")
    store = tmp_path / "r.sqlite"
    _reported(store, ("yağış", "missing"), ("kalem", "missing"))
    runner = CliRunner(env={"PATH": _no_git_path(tmp_path)})
    assert shutil.which("git", path=_no_git_path(tmp_path)) is None
    args = ["reports", "accept", "--as", "valid", "--why", "TDK lists it", "--reports",
            str(store), "--data", str(data), "--policy", str(policy)]
    done = runner.invoke(cli, [*args[:2], "yağış", *args[2:]])
    assert done.exit_code == 0, done.output
    assert "added in" in done.output and "git diff" in done.output
    allow = policy.parent / "allowlist.txt"
    before = allow.read_text(encoding="utf-8")
    refused = runner.invoke(cli, [*args[:2], "kalem", *args[2:], "--commit"])
    assert refused.exit_code == 1 and "--commit needs git" in refused.output
    assert allow.read_text(encoding="utf-8") == before
    not_a_repo = CliRunner().invoke(cli, [*args[:2], "kalem", *args[2:], "--commit"])
    assert not_a_repo.exit_code == 1 and "no git work tree" in not_a_repo.output
    with ReportStore(store) as s:
        assert [g["word"] for g in s.open_reports()] == ["kalem"]


def test_accept_commit_is_refused_whole_when_git_would_refuse_the_commit(tmp_path, policy):
    """--commit checks, before any report is closed, what makes git refuse the commit: no
    identity to commit as, a merge under way, a list .gitignore'd, or changed and not
    committed (its changes would go into the accept's commit). Each used to close the
    reports and write (and stage) the list, then fail, or commit the maintainer's edit."""
    data = build_data(tmp_path / "data")
    store = tmp_path / "r.sqlite"
    _reported(store, ("dangalak", "offensive"))
    repo = policy.parent
    home = {"HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1", "EMAIL": None,
            **dict.fromkeys(("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
                             "GIT_COMMITTER_EMAIL"))}

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in {**os.environ, **home}.items() if v is not None}
        return subprocess.run(["git", "-C", str(repo), "-c", "user.name=M", "-c",
                               "user.email=m@example.org", *args], capture_output=True,
                              text=True, env=env)

    def accept(*config: str) -> str:
        for args in config:
            assert git(*args.split()).returncode == 0
        done = CliRunner(env=home).invoke(cli, [
            "reports", "accept", "dangalak", "--as", "obscene", "--why", "TDK: hakaret",
            "--reports", str(store), "--data", str(data), "--policy", str(policy), "--commit"])
        assert done.exit_code == 1 and "Traceback" not in done.output
        assert git("diff", "--cached", "--name-only", "--", "blocklist.txt").stdout == ""
        with ReportStore(store) as s:
            assert [g["word"] for g in s.open_reports()] == ["dangalak"]
        return done.output

    git("init", "--quiet")
    git("add", ".")
    git("commit", "--quiet", "-m", "the lists")
    said = accept()
    assert "git does not know who commits" in said and "user.email" in said
    (repo / ".gitignore").write_text("blocklist.txt\n")
    said = accept("config user.name M", "config user.email m@example.org",
                  "rm --quiet --cached blocklist.txt", "commit --quiet -m untracked")
    assert "git ignores" in said and "git add -f" in said
    (repo / "note.txt").write_text("ours\n")
    for args in ("add -f blocklist.txt note.txt", "commit --quiet -m tracked",
                 "checkout --quiet -b other"):
        assert git(*args.split()).returncode == 0
    (repo / "note.txt").write_text("theirs\n")
    git("commit", "--quiet", "-am", "theirs")
    git("checkout", "--quiet", "-")
    (repo / "note.txt").write_text("ours again\n")
    git("commit", "--quiet", "-am", "ours again")
    assert git("merge", "other").returncode != 0  # a conflict: the merge stays under way
    assert "in the middle of a merge" in accept()
    git("merge", "--abort")
    block = repo / "blocklist.txt"
    block.write_text(block.read_text() + "mine  # not reviewed yet\n")
    mine = block.read_text()
    said = accept()  # the maintainer's own line would go into the accept's commit
    assert "the lists have changes not committed (M blocklist.txt)" in said
    assert block.read_text() == mine


def test_accept_commit_commits_the_lists_only(tmp_path, policy):
    """--commit: the accept's list edits become one commit with the reason as its
    message; other changes in the work tree, staged or not, stay out of it."""
    data = build_data(tmp_path / "data")
    store = tmp_path / "r.sqlite"
    _reported(store, ("dangalak", "offensive"))
    repo = policy.parent

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True,
                              text=True, check=True).stdout

    git("init", "--quiet")
    git("config", "user.email", "maintainer@example.org")
    git("config", "user.name", "Maintainer")
    git("add", ".")
    git("commit", "--quiet", "-m", "the lists")
    (repo / "policy.toml").write_text((repo / "policy.toml").read_text() + "\n")
    (repo / "other.txt").write_text("staged, not the accept's\n")
    git("add", "other.txt", "policy.toml")
    done = run("reports", "accept", "dangalak", "--as", "obscene", "--why", "TDK: hakaret "
               "yollu", "--reports", store, "--data", data, "--policy", policy, "--commit",
               "--json")
    answer = json.loads(done.stdout)
    assert answer["commit"] == git("rev-parse", "--short", "HEAD").strip()
    assert git("show", "--name-only", "--format=%B", "HEAD").split() == [
        "reports:", "dangalak", "accepted", "as", "obscene", "in", "tr", "(#1)", "TDK:",
        "hakaret", "yollu", "blocklist.txt"]
    assert sorted(git("diff", "--cached", "--name-only").split()) == ["other.txt",
                                                                      "policy.toml"]
