"""Only TDK writes the cache: certificates verified on every path that fetches (the Scrapy
crawl with its robots.txt and sitemaps, `kelime define`, `kelime reports check`), redirects
kept on the configured host, and only UTF-8 JSON of the expected shape and types stored as
a good reply. Against the fake TDK on 127.0.0.1, over HTTPS with certificates made here."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest

from kelime.reports import ReportStore
from kelime.tdk import store as cache

from .fake_tdk import FakeProcess
from .service_helpers import build_data
from .test_crawl import FAST, KELIME, LOG_SLACK, crawl, env, gts_queries, replies

trustme = pytest.importorskip("trustme")  # a test dependency (the `dev` extra)


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    """A certificate authority no system trusts, and three server certificates: one for
    127.0.0.1 (signed by it), one for evil.example (signed by it: the wrong name)."""
    folder = tmp_path_factory.mktemp("tls")
    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    for name, host in (("good", "127.0.0.1"), ("evil", "evil.example")):
        ca.issue_cert(host).private_key_and_cert_chain_pem.write_to_path(
            str(folder / f"{name}.pem"))
    return folder


def words_file(tmp_path, *words):
    path = tmp_path / "words.txt"
    path.write_text("\n".join(words) + "\n", encoding="utf-8")
    return path


def answered(fake) -> list[str]:
    return [r["path"] for r in fake.log()]


def test_a_crawl_refuses_a_certificate_it_cannot_verify(tls, tmp_path):
    """It logged "Remote certificate is not valid", stored 3 of 3 replies and exited 0."""
    words = words_file(tmp_path, "kitap", "inek", "adet")
    with FakeProcess("--tls", str(tls / "good.pem")) as fake:  # its CA is not trusted
        path = tmp_path / "c.sqlite"
        result = crawl("run", "--base-url", fake.url, "--cache", str(path), "--words", str(words),
                       "--delay", "0", *FAST)
        asked = answered(fake)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "certificate of 127.0.0.1" in output and "cannot be verified" in output
    assert "certificate verify failed" in output and "SSL_CERT_FILE" in output
    assert "Traceback" not in output
    assert asked == []  # not even robots.txt was read from it
    assert replies(path) == {}


@pytest.mark.slow
def test_a_crawl_trusts_what_ssl_cert_file_names_and_nothing_else(tls, tmp_path):
    words = words_file(tmp_path, "kitap", "inek")
    trusted = env(SSL_CERT_FILE=str(tls / "ca.pem"))
    with FakeProcess("--tls", str(tls / "good.pem")) as fake:
        path = tmp_path / "good.sqlite"
        good = crawl("run", "--base-url", fake.url, "--cache", str(path), "--words", str(words),
                     "--delay", "0", *FAST, environ=trusted)
    assert good.returncode == 0, good.stdout + good.stderr
    assert {q: r["outcome"] for q, r in replies(path).items()} == {"kitap": "ok", "inek": "ok"}
    with FakeProcess("--tls", str(tls / "evil.pem")) as fake:  # a trusted CA, the wrong name
        path = tmp_path / "evil.sqlite"
        evil = crawl("run", "--base-url", fake.url, "--cache", str(path), "--words", str(words),
                     "--delay", "0", *FAST, environ=trusted)
        asked = answered(fake)
    output = evil.stdout + evil.stderr
    assert evil.returncode == 1 and "cannot be verified" in output, output
    assert "Mismatch" in output and asked == [] and replies(path) == {}


def define(path, base_url, word):
    import subprocess

    return subprocess.run([*KELIME, "define", word, "--cache", str(path), "--base-url",
                           base_url], capture_output=True, text=True, env=env(), timeout=120)


def reports_check(tmp_path, path, base_url, word):
    """`kelime reports check --refresh --json` of one player's report of `word`."""
    import subprocess

    data = build_data(tmp_path / "data")
    store = tmp_path / "reports.sqlite"
    with ReportStore(store, create=True) as s:
        s.submit(word=word, sent=word, kind="wrong", lexicon="tr", client="1.2.3.4")
    return subprocess.run([*KELIME, "reports", "check", "--reports", str(store), "--data",
                           str(data), "--cache", str(path), "--base-url", base_url, "--delay",
                           "0", "--refresh", "--json"], capture_output=True, text=True,
                          env=env(), timeout=60)


def test_define_and_reports_check_refuse_an_unverified_certificate(tls, tmp_path):
    with FakeProcess("--tls", str(tls / "good.pem")) as fake:
        path = tmp_path / "c.sqlite"
        refused = define(path, fake.url, "kitap")
        check = reports_check(tmp_path, path, fake.url, "kitap")
        asked = answered(fake)
    assert refused.returncode == 1 and "cannot be verified" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    assert check.returncode == 1, check.stdout + check.stderr
    [group] = json.loads(check.stdout)["open"]
    assert group["tdk"]["source"] == "error" and "cannot be verified" in group["tdk"]["error"]
    assert asked == [] and not path.exists()


def test_robots_txt_redirected_to_another_host_stops_the_crawl(tmp_path):
    words = words_file(tmp_path, "kitap")
    with FakeProcess("--fault", "/robots.txt=offsite") as fake:
        result = crawl("run", "--base-url", fake.url, "--cache", str(tmp_path / "c.sqlite"),
                       "--words", str(words), "--delay", "0", *FAST)
        asked = gts_queries(fake.log())
    output = result.stdout + result.stderr
    assert result.returncode == 1 and "redirected to http://evil.example/robots.txt" in output
    assert asked == []


def test_a_gts_redirect_to_another_host_is_a_failed_reply_with_its_reason(tmp_path):
    words = words_file(tmp_path, "kitap", "inek")
    with FakeProcess() as fake:
        fake.fault("kitap", "offsite")
        path = tmp_path / "c.sqlite"
        crawl("run", "--base-url", fake.url, "--cache", str(path), "--words", str(words),
              "--delay", "0", *FAST)
    got = replies(path)
    assert got["kitap"]["outcome"] == "failed" and "evil.example" in got["kitap"]["error"]
    assert "not followed" in got["kitap"]["error"] and got["inek"]["outcome"] == "ok"


@pytest.mark.parametrize("kind, outcome, says", [
    ("latin", "failed", "not UTF-8"),
    ("deep", "failed", "nested hundreds of levels deep"),
    ("typed", "failed", "ozel_mi: 1 is not one of"),
    ("bom", "ok", None),
])
@pytest.mark.slow
def test_only_utf8_json_of_the_right_types_is_a_good_reply(tmp_path, kind, outcome, says):
    """ISO-8859-9 bodies were stored as good replies (`�a�layan`, fresh for 30 days), a BOM
    was called broken JSON and retried, 200,000 `[` raised RecursionError, and an integer
    `ozel_mi` passed the shape check while the policy ignored it."""
    words = words_file(tmp_path, "istanbul", "kitap")
    with FakeProcess() as fake:
        fake.fault("istanbul", kind)
        path = tmp_path / "c.sqlite"
        result = crawl("run", "--base-url", fake.url, "--cache", str(path), "--words", str(words),
                       "--delay", "0", *FAST)
        asked = gts_queries(fake.log())
    assert "Traceback" not in result.stderr, result.stderr
    row = replies(path)["istanbul"]
    assert row["outcome"] == outcome, row
    if says:
        assert says in row["error"]
        db = cache.open_readonly(path)
        assert cache.entries_for_word(db, "istanbul") == []
    assert asked.count("istanbul") == 1  # none of these is worth asking again at once


@pytest.mark.parametrize("kind, says", [("deep", "nested"), ("latin", "not UTF-8"),
                                        ("offsite", "evil.example")])
def test_define_stores_nothing_bad_and_raises_nothing(tmp_path, kind, says):
    with FakeProcess() as fake:
        fake.fault("kitap", kind)
        path = tmp_path / "c.sqlite"
        cache.open_cache(path, create=True).close()
        result = define(path, fake.url, "kitap")
    assert result.returncode == 1 and says in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    row = replies(path)["kitap"]
    assert row["outcome"] == "failed" and says in row["error"]


@pytest.mark.parametrize("args, says", [
    (["-s", "USER_AGENT=python-requests/2.31"], "contains 'Python'"),
    (["-s", "USER_AGENT=Mozilla/5.0 (Windows NT 10.0)"], "does not name kelime"),
    (["--user-agent", ""], "does not name kelime"),
    (["--user-agent", "kelime-bot python"], "Python"),
    (["-s", "DOWNLOAD_VERIFY_CERTIFICATES=false"], "certificates are always verified"),
    (["-s", "DOWNLOADER_CLIENTCONTEXTFACTORY=x.Y"], "certificates are always verified"),
])
def test_overrides_that_would_lie_or_trust_anyone_are_refused(tmp_path, args, says):
    result = crawl("run", "--base-url", "http://127.0.0.1:9", "--cache", str(tmp_path / "c.sqlite"),
                   *args)
    assert result.returncode == 2 and says in result.stderr, result.stderr
    assert not (tmp_path / "c.sqlite").exists()


# --- look-ups outside the crawl: robots.txt and one politeness clock per cache ---------------

@pytest.mark.slow
def test_define_and_reports_check_obey_robots_txt(tmp_path):
    """They asked /gts?ara=gizli, which robots.txt disallows."""
    path = tmp_path / "c.sqlite"
    cache.open_cache(path, create=True).close()
    with FakeProcess() as fake:
        refused = define(path, fake.url, "gizli")
        first = define(path, fake.url, "kitap")
        second = define(path, fake.url, "inek")
        check = reports_check(tmp_path, path, fake.url, "gizli")
        log = fake.log()
    assert refused.returncode == 1 and "robots.txt disallows /gts?ara=gizli" in refused.stderr
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert "gizli" not in gts_queries(log) and gts_queries(log) == ["kitap", "inek"]
    assert [r["path"] for r in log].count("/robots.txt") == 1  # kept in the cache a day
    assert replies(path)["gizli"]["outcome"] == "disallowed"
    [group] = json.loads(check.stdout)["open"]
    assert check.returncode == 1 and "robots.txt disallows" in group["tdk"]["error"]


def test_an_unreadable_robots_txt_lets_define_ask_nothing(tmp_path):
    with FakeProcess("--fault", "/robots.txt=503") as fake:
        result = define(tmp_path / "c.sqlite", fake.url, "kitap")
        asked = gts_queries(fake.log())
    assert result.returncode == 1 and "RFC 9309" in result.stderr, result.stderr
    assert asked == [] and "Traceback" not in result.stderr


@pytest.mark.slow
def test_a_look_up_and_a_crawl_on_one_cache_share_one_politeness_clock(tmp_path):
    """`kelime define` during a crawl on the same cache: 2 requests in flight, 3 ms apart."""
    import subprocess

    path = tmp_path / "c.sqlite"
    gap = 0.3
    with FakeProcess("--synthetic", "40") as fake:
        crawler = subprocess.Popen([*KELIME, "crawl", "run", "--base-url", fake.url, "--cache",
                                    str(path), "--delay", str(gap), *FAST], env=env(),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            from .test_crawl import done_count, wait_for

            wait_for(lambda: done_count(path) >= 3, timeout=60)
            looked = [define(path, fake.url, word) for word in ("yağış", "ev", "dangalak")]
        finally:
            crawler.wait(120)
        log = fake.log()
    assert all(r.returncode == 0 for r in looked), [r.stderr for r in looked]
    assert {"yağış", "ev", "dangalak"} <= set(gts_queries(log))
    for before, after in pairwise(log):
        assert after["start"] >= before["end"], ("two requests at once", before, after)
        assert after["start"] - before["end"] >= gap - LOG_SLACK, (before, after)


@pytest.mark.parametrize("existing", [False, True])
def test_define_waits_robots_crawl_delay_after_reading_robots_txt(tmp_path, existing):
    """`kelime define` sent /gts 0.000 s after robots.txt (no cache yet: no clock), and
    1.0 s after it (the delay) with a cache, robots.txt's Crawl-delay of 1.5 s ignored.
    The fake stamps a reply's end before the client has it: the gap it sees is never
    larger than the client's, so 1 ms is for clock granularity only."""
    path = tmp_path / "c.sqlite"
    if existing:
        cache.open_cache(path, create=True).close()
    with FakeProcess("--crawl-delay", "1.5") as fake:
        result = define(path, fake.url, "kitap")
        log = fake.log()
    assert result.returncode == 0, result.stderr
    assert [r["path"].split("?")[0] for r in log] == ["/robots.txt", "/gts"]
    assert log[1]["start"] - log[0]["end"] >= 1.5 - 0.001, log
