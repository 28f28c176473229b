"""Player reports on PostgreSQL (KELIME_REPORTS=postgresql://…): the same store as the
SQLite file (the semantics below run on both), on a real PostgreSQL server (tests/postgres.py:
initdb + pg_ctl in a temporary folder; skipped when Debian's `postgresql` is not
installed) that real `kelime serve` replicas write to: reports from every replica land in
one store, a replica killed stops nothing, and PostgreSQL restarted under load answers 503
with Retry-After meanwhile and loses no report acknowledged with 202."""

from __future__ import annotations

import json
import re
import threading

import httpx
import pytest

from kelime.lexicon import Lexicon
from kelime.reports import (
    SCHEMA_VERSION,
    NoOpenReport,
    RateLimited,
    ReportError,
    ReportLimits,
    StoreFull,
    _sqlite_v1,
)
from kelime.service.routes.reports import open_store
from kelime.service.settings import Settings

from .postgres import MISSING, postgres_server, server_bin
from .servers import kelime_serve, start_kelime_serve, stop, unused_port, wait_ready
from .service_helpers import build_data
from .test_reports import policy, run  # noqa: F401 - `policy` is a fixture
from .waiting import wait_until

psycopg = pytest.importorskip("psycopg", reason="the report store on PostgreSQL needs "
                                                "psycopg: pip install 'kelime[postgres]'")
from kelime.reports_pg import FIRST_MIGRATION  # noqa: E402 - needs psycopg

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pg():
    """One PostgreSQL server for the module's tests (each gets its own database)."""
    if server_bin() is None:
        pytest.skip(MISSING)
    with postgres_server() as server:
        yield server


@pytest.fixture
def pg_url(pg, request) -> str:
    """A new, empty database of `pg` for this test; its URL."""
    return pg.database(re.sub(r"\W", "_", request.node.name).lower()[:60])


@pytest.fixture(params=["sqlite", "postgresql"])
def store_at(request, tmp_path):
    """Where a report store is: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        return tmp_path / "r.sqlite"
    return request.getfixturevalue("pg_url")


def _report(store, word: str, client: str, kind: str = "missing", **more):
    return store.submit(word=word, sent=word, kind=kind, lexicon="tr", client=client, **more)


# --- one store, two dialects ----------------------------------------------------------------

def test_duplicates_rate_limits_and_decisions_are_the_same_on_both_stores(store_at):
    with open_store(store_at, create=True, limits=ReportLimits(per_client_hour=3)) as store:
        a = _report(store, "kitap", "1.1.1.1", now=1000.0, version="aaaaaaaaaaaa")
        b = _report(store, "kitap", "2.2.2.2", now=1001.0, version="bbbbbbbbbbbb")
        c = _report(store, "kitap", "2.2.2.2", kind="wrong", now=1002.0)
        assert (a.count, a.duplicate) == (1, False)
        assert (b.id, b.count, b.duplicate) == (a.id, 2, True) and c.id != a.id
        [tr] = store.open_reports("tr")
        assert (tr["count"], tr["players"], tr["kinds"]) == (3, 2, {"missing": 2, "wrong": 1})
        assert tr["versions"] == ["aaaaaaaaaaaa", "bbbbbbbbbbbb"]
        assert store.report(a.id)["version"] == "bbbbbbbbbbbb"  # the latest answer's
        # three an hour from one address; an IPv6 /64 is one client
        _report(store, "ev", "2.2.2.2", now=1003.0)
        with pytest.raises(RateLimited) as refused:
            _report(store, "at", "2.2.2.2", now=1100.0)
        assert refused.value.retry_after == 3600 - 99 and "the limit is 3" in str(refused.value)
        for host in ("2001:db8::1", "2001:db8::2", "2001:db8::ffff:3"):
            _report(store, "at", host, kind="wrong", now=2000.0)
        with pytest.raises(RateLimited):
            _report(store, "at", "2001:db8::9", kind="wrong", now=2000.0)
        # closing: the kinds asked, history kept, a second close refused
        closed = store.decide("kitap", "tr", "accepted", "TDK lists it", "valid",
                              kinds=("missing",))
        assert [r["id"] for r in closed] == [a.id]
        with pytest.raises(NoOpenReport, match="no open report of 'kitap' in lexicon 'tr' "
                                               "of kind missing"):
            store.decide("kitap", "tr", "accepted", "again", "valid", kinds=("missing",))
        [left] = store.open_reports("tr", "kitap")
        assert left["kinds"] == {"wrong": 1}
        assert [(h["status"], h["decision"]) for h in left["history"]] == [("accepted",
                                                                             "valid")]
        assert store.counts()["accepted"] == 1 and store.counts()["open"] == 3
        store.forget_keys(now=10_000.0)  # every key over an hour old: gone
        assert store.prune("9999-01-01") == 1 and store.counts()["accepted"] == 0


def test_a_version_1_store_is_migrated_to_record_the_lexicon_version(store_at, tmp_path):
    """Stores written before the version column (schema 1) are migrated when opened: their
    reports are kept and new ones record the version."""
    meta = [("format", "kelime-reports"), ("version", "1"), ("secret", "ab" * 16)]
    if isinstance(store_at, str):
        with psycopg.connect(store_at, autocommit=True) as conn:
            for statement in FIRST_MIGRATION:
                conn.execute(statement)
            conn.cursor().executemany("INSERT INTO meta (key, value) VALUES (%s, %s)", meta)
            conn.execute("INSERT INTO reports (lexicon, word, kind, status, count, players) "
                         "VALUES ('tr', 'ev', 'wrong', 'open', 1, 1)")
    else:
        import sqlite_utils

        db = sqlite_utils.Database(store_at)
        _sqlite_v1(db)
        db.table("meta").insert_all([{"key": k, "value": v} for k, v in meta], pk="key")
        db.execute("INSERT INTO reports (lexicon, word, kind, status, count, players) "
                   "VALUES ('tr', 'ev', 'wrong', 'open', 1, 1)")
        db.conn.commit()
        db.close()
    with open_store(store_at, limits=None) as store:
        done = _report(store, "ev", "1.2.3.4", kind="wrong", version="d4323d22aa28")
        assert (done.id, done.count) == (1, 2)  # the report from before is kept and joined
        assert store.report(1)["version"] == "d4323d22aa28"
    with open_store(store_at, limits=None) as store, store._errors():
        assert store._meta("version") == str(SCHEMA_VERSION) == "2"


def test_postgres_store_errors_say_what_to_do(pg, pg_url):
    with pytest.raises(ReportError, match="is empty, not a kelime report store"):
        open_store(pg_url)  # a maintainer's tools never make one
    with open_store(pg_url, create=True, limits=ReportLimits(store_bytes=64 * 1024)) as store:
        with pytest.raises(StoreFull, match=r"the report store is full \(.* bytes in use; "
                                            r"its limit is 65,536\)"):
            _report(store, "ev", "1.2.3.4")
    url = pg.url("no_such_database").replace("kelime@", "kelime:secret@")
    with pytest.raises(ReportError) as caught:
        open_store(url, timeout=1)
    message = str(caught.value)
    assert "secret" not in message and "kelime:***@" in message
    assert 'database "no_such_database" does not exist' in message
    assert "check that PostgreSQL runs" in message
    other = pg.database("not_kelimes")
    with psycopg.connect(other, autocommit=True) as conn:
        conn.execute("CREATE TABLE meta (key text, value text)")
    with pytest.raises(ReportError, match="holds tables but is not a kelime report store"):
        open_store(other, create=True)


def test_a_postgresql_url_is_kept_as_the_url_it_is(tmp_path):
    """KELIME_REPORTS and --reports take a URL as it is: read as a path, its `//` folded
    (`postgresql:/kelime@…`) and it named a folder that does not exist."""
    url = "postgresql://kelime:pw@db.example:5432/reports?sslmode=require"
    assert Settings.from_env({"KELIME_REPORTS": url}).reports == url
    assert Settings(reports=str(tmp_path / "r.sqlite")).reports == tmp_path / "r.sqlite"
    listed = run("reports", "--reports", f"postgresql://kelime@127.0.0.1:{unused_port()}/r",
                 ok=False)
    assert listed.exit_code == 1 and "cannot be reached" in listed.output
    assert "postgresql://kelime@127.0.0.1:" in listed.output


def test_serve_refuses_a_postgres_it_cannot_reach(tmp_path):
    data = build_data(tmp_path / "data")
    url = f"postgresql://kelime@127.0.0.1:{unused_port()}/reports"
    result = run("serve", "--data", data, "--reports", url, ok=False)
    assert result.exit_code == 1, result.output
    assert f"the report store {url} cannot be reached" in result.output
    assert "Connection refused" in result.output and "check that PostgreSQL runs" in result.output


# --- real replicas --------------------------------------------------------------------------

def _post(url: str, word: str, kind: str = "missing", **body) -> httpx.Response:
    return httpx.post(url + "/v1/reports", json={"word": word, "kind": kind, **body},
                      timeout=30)


@pytest.fixture
def replica_env(monkeypatch):
    monkeypatch.setenv("KELIME_REPORTS_PER_HOUR", str(10**6))  # the tests send many


def test_two_replicas_write_one_store_and_one_killed_stops_nothing(pg_url, tmp_path,
                                                                   replica_env):
    data = build_data(tmp_path / "data")
    version = Lexicon.load(data / "tr").info["version"]
    with kelime_serve("--data", str(data), "--reports", pg_url) as first:
        second, port = start_kelime_serve("--data", str(data), "--reports", pg_url)
        other = f"http://127.0.0.1:{port}"
        try:
            wait_ready(other, second)
            replies = [_post(url, word) for url in (first, other) for word in ("kitap", "ev")]
            assert [r.status_code for r in replies] == [202] * 4, replies[0].text
            assert [r.json()["count"] for r in replies] == [1, 1, 2, 2]  # one store
            assert replies[2].json()["id"] == replies[0].json()["id"]
            assert replies[0].json()["lexicon"]["version"] == version
            second.kill()  # SIGKILL: no clean shutdown
            second.wait(timeout=30)
            after = [_post(first, "at").status_code for _ in range(5)]
            assert after == [202] * 5
        finally:
            stop(second)
    listed = json.loads(run("reports", "--reports", pg_url, "--data", data, "--json").output)
    assert {g["word"]: (g["count"], g["versions"]) for g in listed["open"]} == {
        "kitap": (2, [version]), "ev": (2, [version]), "at": (5, [version])}


LETTERS = "abcçdefgğhıijklmnoöprsştuüvyz"


def _word(n: int) -> str:
    """The n-th word made of Turkish letters (each a new report)."""
    out = ""
    while True:
        n, i = divmod(n, len(LETTERS))
        out += LETTERS[i]
        if not n:
            return "ke" + out
        n -= 1


def test_postgres_restarted_under_load_loses_no_acknowledged_report(pg, pg_url, tmp_path,
                                                                    replica_env):
    """Reports sent one after another while PostgreSQL stops and starts again: 503
    `reports_unavailable` with Retry-After meanwhile (validation goes on), 202 again once it
    is back (the pool reconnects), and every report acknowledged with 202 is in the store."""
    data = build_data(tmp_path / "data")
    acked: list[int] = []
    refused: list[httpx.Response] = []
    halt = threading.Event()

    def load(url: str) -> None:
        for n in range(20_000):  # bounded; stopped by `halt` long before
            if halt.is_set():
                return
            r = _post(url, _word(n), "wrong")
            if r.status_code == 202:
                acked.append(r.json()["id"])
            else:
                refused.append(r)

    with kelime_serve("--data", str(data), "--reports", pg_url) as url:
        sender = threading.Thread(target=load, args=(url,), daemon=True)
        sender.start()
        try:
            wait_until(lambda: len(acked) >= 20, "20 reports acknowledged before the stop")
            pg.stop()
            wait_until(lambda: refused, "a report refused while PostgreSQL is down")
            during = httpx.get(url + "/v1/validate", params={"word": "kitap"}, timeout=10)
            assert during.status_code == 200 and during.json()["results"][0]["valid"]
            down = len(acked)
            pg.start()
            wait_until(lambda: len(acked) >= down + 20, "reports acknowledged again after "
                                                        "PostgreSQL is back", timeout=60)
        finally:
            halt.set()
            sender.join(60)
    assert {r.status_code for r in refused} == {503}, refused[0].text
    assert {r.json()["error"]["code"] for r in refused} == {"reports_unavailable"}
    assert all(int(r.headers["retry-after"]) > 0 for r in refused)
    with open_store(pg_url, limits=None) as store:
        stored = {i for g in store.open_reports() for i in g["ids"]}
    assert set(acked) <= stored, sorted(set(acked) - stored)
    assert len(acked) >= 40


def test_kelime_reports_lists_rejects_and_accepts_on_postgres(pg_url, tmp_path, policy):  # noqa: F811
    data = build_data(tmp_path / "data")
    version = Lexicon.load(data / "tr").info["version"]
    with open_store(pg_url, create=True) as store:
        for client in ("198.51.100.1", "198.51.100.2"):
            store.submit(word="yağış", sent="Yağış", kind="missing", lexicon="tr",
                         client=client, game="kelimelik", note="TDK'de var", version=version)
        store.submit(word="ev", sent="ev", kind="wrong", lexicon="tr", client="198.51.100.3",
                     version=version)
    listed = json.loads(run("reports", "--reports", pg_url, "--data", data, "--json").output)
    assert listed["store"] == pg_url
    by_word = {g["word"]: g for g in listed["open"]}
    assert (by_word["yağış"]["count"], by_word["yağış"]["players"]) == (2, 2)
    assert by_word["yağış"]["versions"] == [version]
    assert by_word["yağış"]["notes"][0]["note"] == "TDK'de var"
    pretty = run("reports", "--reports", pg_url, "--data", data).output
    assert f"answered from version {version}" in pretty
    rejected = run("reports", "reject", "ev", "--why", "a common noun", "--reports", pg_url,
                   "--data", data).output
    assert rejected.startswith("Rejected 1 report(s) of ev")
    accepted = run("reports", "accept", "Yağış", "--as", "valid", "--why", "TDK: isim",
                   "--policy", policy, "--reports", pg_url, "--data", data).output
    assert accepted.startswith("Accepted 1 report(s) of yağış (#1; 2 submission(s)) as valid")
    assert "yağış  # report 1" in (policy.parent / "allowlist.txt").read_text()
    with open_store(pg_url, limits=None) as store:
        assert store.open_reports() == []
        assert store.counts() | {"bytes": 0} == {"open": 0, "accepted": 1, "rejected": 1,
                                                 "bytes": 0}


@pytest.mark.parametrize("url", ["postgresql://kelime@127.0.0.1:1/k?password=S3cretPw",
                                 "postgresql://kelime:S3cret@Pw@127.0.0.1:1/k",
                                 "postgresql://kelime:p%40ss:/S3cret@127.0.0.1:1/k"])
def test_no_message_shows_a_password_wherever_the_url_puts_it(url):
    """Only `user:pass@` was masked: a password in the query, or with an `@` not encoded,
    was printed in full (the start's error, `kelime reports`' header, the journal)."""
    from kelime.reports import ReportError, shown
    from kelime.reports_pg import PgReportStore

    with pytest.raises(ReportError) as refused:
        PgReportStore(url, timeout=1)
    for text in (str(refused.value), shown(url)):
        assert "S3cret" not in text, text
    assert shown(url).endswith("127.0.0.1:1/k" + ("?…" if "?" in url else ""))
