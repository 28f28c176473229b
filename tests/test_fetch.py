"""`kelime define` and crawler.fetch: httpx + tenacity against the fake TDK (in a thread).
Retries run without sleeping via `fetch.retry_with(wait=wait_none())`."""

from __future__ import annotations

import json
from urllib.parse import unquote

import httpx
import pytest
from click.testing import CliRunner
from tenacity import wait_none

from kelime.cli import cli
from kelime.crawler.fetch import fetch, lookup, make_client
from kelime.errors import FetchError
from kelime.tdk import store as cache

from .fake_tdk import serve_in_thread

NO_WAIT = fetch.retry_with(wait=wait_none())


@pytest.fixture
def fake():
    server = serve_in_thread()
    yield server.fake
    server.shutdown()
    server.server_close()


@pytest.fixture
def db(tmp_path):
    """The cache's path: `lookup` opens it itself (read-only first, a writer to store)."""
    return tmp_path / "c.sqlite"


def reply(path, query):
    return cache.get_reply(cache.open_readonly(path), query)


def gts(fake) -> list[str]:
    return [unquote(r["path"].split("=", 1)[1]) for r in fake.log if r["path"].startswith("/gts")]


def test_fetches_when_absent_then_answers_from_the_cache(fake, db):
    with make_client() as client:
        first = lookup(db, "Âdet", base_url=fake.base, client=client, fetcher=NO_WAIT)
        again = lookup(db, "ADET", base_url=fake.base, client=client, fetcher=NO_WAIT)
    assert first["source"] == "live" and again["source"] == "cache"
    assert [e["madde"] for e in first["entries"]] == ["âdet", "adet"] == \
        [e["madde"] for e in again["entries"]]
    assert gts(fake) == ["âdet"]
    assert reply(db, "âdet")["outcome"] == "ok"
    r = fake.log[0]
    assert "kelime" in r["user_agent"] and r["accept"] == "application/json"


def test_refresh_asks_again(fake, db):
    with make_client() as client:
        lookup(db, "kitap", base_url=fake.base, client=client, fetcher=NO_WAIT)
        lookup(db, "kitap", base_url=fake.base, client=client, fetcher=NO_WAIT, refresh=True)
    assert gts(fake) == ["kitap", "kitap"]


def test_not_found_is_cached(fake, db):
    with make_client() as client:
        first = lookup(db, "massa", base_url=fake.base, client=client, fetcher=NO_WAIT)
        again = lookup(db, "massa", base_url=fake.base, client=client, fetcher=NO_WAIT)
    assert first["outcome"] == again["outcome"] == "not_found" and again["entries"] == []
    assert gts(fake) == ["massa"]


@pytest.mark.parametrize("kind, times", [("429", 2), ("503", 3), ("html", 1), ("broken", 2),
                                         ("close", 2), ("empty", 1)])
def test_transient_faults_are_retried(fake, db, kind, times):
    fake.add_fault("kitap", kind, times, 0)
    with make_client() as client:
        result = lookup(db, "kitap", base_url=fake.base, client=client, fetcher=NO_WAIT)
    assert result["outcome"] == "ok" and result["entries"][0]["madde"] == "kitap"
    assert len(gts(fake)) == times + 1
    assert reply(db, "kitap")["attempts"] == times + 1


def test_a_fault_that_persists_is_recorded_failed_never_not_found(fake, db):
    cache.open_cache(db, create=True).close()
    fake.add_fault("kalem", "html", -1)
    with make_client() as client, pytest.raises(FetchError, match="HTML instead of JSON"):
        lookup(db, "kalem", base_url=fake.base, client=client, fetcher=NO_WAIT)
    assert len(gts(fake)) == 4
    row = reply(db, "kalem")
    assert row["outcome"] == "failed" and "HTML" in row["error"]


def test_a_failed_look_up_leaves_no_new_cache_behind(db):
    with make_client() as client, pytest.raises(FetchError, match="refused the connection"):
        lookup(db, "kitap", base_url="http://127.0.0.1:1", client=client, fetcher=NO_WAIT)
    assert not db.exists() and list(db.parent.iterdir()) == []


def test_403_is_not_retried(fake, db):
    fake.add_fault("kitap", "403", -1)
    with make_client() as client, pytest.raises(FetchError, match="403"):
        lookup(db, "kitap", base_url=fake.base, client=client, fetcher=NO_WAIT)
    assert len(gts(fake)) == 1


def test_the_last_httpx_error_is_raised_not_a_retry_error(fake):
    fake.add_fault("kitap", "close", -1)
    with make_client() as client, pytest.raises(httpx.RemoteProtocolError):
        NO_WAIT(client, fake.base, "kitap")


def test_timeouts_are_retried(fake, db):
    fake.add_fault("kitap", "slow", 1, 1.0)
    with make_client(timeout=0.3) as client:
        result = lookup(db, "kitap", base_url=fake.base, client=client, fetcher=NO_WAIT)
    assert result["outcome"] == "ok"


def test_network_errors_read_as_actions(fake, db):
    https = fake.base.replace("http://", "https://")
    with make_client() as client, pytest.raises(FetchError, match="TLS handshake.*--ciphers"):
        lookup(db, "kitap", base_url=https, client=client, fetcher=NO_WAIT)
    with make_client() as client, pytest.raises(FetchError, match="refused the connection"):
        lookup(db, "kitap", base_url="http://127.0.0.1:1", client=client, fetcher=NO_WAIT)
    with pytest.raises(FetchError, match="--ciphers 'NOPE'"):
        make_client(ciphers="NOPE")


def test_define_command(fake, tmp_path):
    runner = CliRunner()
    args = ["define", "--cache", str(tmp_path / "c.sqlite"), "--base-url", fake.base]
    text = runner.invoke(cli, [*args, "inek"])
    assert text.exit_code == 0, text.output
    assert "inek" in text.output and "kaba  Aptal, anlayışsız kimse" in text.output
    as_json = runner.invoke(cli, [*args, "--json", "abdal"])
    data = json.loads(as_json.output)
    assert {e["madde"] for e in data["entries"]} == {"abdal", "Abdal"}
    assert data["entries"][1]["ozel_mi"] == "1"
    missing = runner.invoke(cli, [*args, "massa"])
    assert missing.exit_code == 1 and "not in TDK" in missing.output


def test_define_with_an_unusable_cache_says_so(tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_text("no")
    result = CliRunner().invoke(cli, ["define", "--cache", str(bad), "kitap"])
    assert result.exit_code == 1 and "not an SQLite database" in result.output
