"""The crawler's pure parts: reply classification, backoff, sitemap parsing, error wording,
politeness settings. No network; the real crawl is tests/test_crawl.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kelime.crawler.failures import RETRY, RetryPolicy, describe, failure_kind, retry_after
from kelime.crawler.settings import POLITE, USER_AGENT, check_user_agent, crawl_settings
from kelime.crawler.spider import (
    NOT_A_SITEMAP,
    what_came_back,
    words_from_autocomplete,
    words_from_sitemap,
)
from kelime.normalize import normalize
from kelime.tdk.replies import MAX_ENTRIES, classify, gts_url, off_word, query_for

from .fake_tdk import SPA_HTML, builtin_entries, make_server

SAMPLES = Path(__file__).resolve().parents[2] / "shared" / "tdk-samples"
#: The query each real /gts sample answers (tdk-samples/README.md).
SAMPLE_QUERIES = {"gts-adet": "adet", "gts-adet-circumflex-query": "âdet", "gts-arayis": "arayış",
                  "gts-cigdem": "çiğdem", "gts-cikmak": "çıkmak", "gts-igdir": "ığdır",
                  "gts-istanbul": "istanbul", "gts-jeton": "jeton", "gts-kitap": "kitap",
                  "gts-meric": "meriç", "gts-notfound-massa": "massa", "gts-sozluk": "sözlük"}


def test_entries_not_found_and_failures_are_told_apart_by_body():
    server = make_server()
    server.server_close()
    ok = classify(200, server.fake.gts_body("adet"), "adet")
    assert ok.outcome == "ok" and [e["madde"] for e in ok.entries] == ["âdet", "adet"]
    assert classify(200, server.fake.gts_body("massa"), "massa").outcome == "not_found"


@pytest.mark.parametrize("status, body, kind", [
    (200, SPA_HTML.encode(), "html"),
    (200, b"   \n", "empty"),
    (200, b'[{"madde_id":"1","madde":"kit', "bad_json"),
    (200, b'{"durum":"bakim"}', "unexpected_json"),
    (200, b'[{"madde":"kitap"}]', "unexpected_json"),
    (200, b'{"error":"Something else"}', "unexpected_json"),
    (429, b'{"error":"Too Many Requests"}', "http_429"),
    (503, b"<html>503</html>", "http_503"),
])
def test_transient_failures_are_retried_never_not_found(status, body, kind):
    c = classify(status, body, "kitap")
    assert (c.outcome, c.kind, c.transient) == ("failed", kind, True)
    assert c.error


def test_403_and_404_fail_for_good():
    assert classify(403, b'{"error":"FORBIDDEN"}', "kitap").kind == "forbidden"
    c = classify(404, b"", "kitap")
    assert (c.outcome, c.transient) == ("failed", False)


def test_new_api_empty_list_means_not_found():
    assert classify(200, b"[]", "massa").outcome == "not_found"


def test_real_samples_classify():
    if not SAMPLES.is_dir():
        pytest.skip("../shared/tdk-samples is not beside the repo")
    for path in SAMPLES.glob("gts-*.json"):
        c = classify(200, path.read_bytes(), SAMPLE_QUERIES[path.stem])
        expected = "not_found" if "notfound" in path.name else "ok"
        assert c.outcome == expected, path.name
        assert c.entries == (json.loads(path.read_bytes()) if expected == "ok" else [])


def test_every_real_headword_is_a_reply_about_its_own_query():
    """The word-match rule (`off_word`) refuses no headword of TDK's autocomplete list (99,227
    rows: `İstanbul`, `Ural-Altay`, `pH`, `SAT komandosu`, `anasını sattığımın …`) asked as
    itself, nor the real replies' entries beside their twins (`âdet` and `adet`)."""
    if not SAMPLES.is_dir():
        pytest.skip("../shared/tdk-samples is not beside the repo")
    rows = json.loads((SAMPLES / "autocomplete-v12-2026-01.json").read_bytes())
    refused = [(r["madde"], c.error) for r in rows if (q := query_for(r["madde"]))
               and (c := off_word(q, [{"madde_id": "1", "madde": r["madde"]}]))]
    assert len(rows) == 99_227 and refused == []
    by_word: dict[str, list] = {}
    for r in rows:
        if word := normalize(r["madde"]):  # 15 rows are empty: no query asks for them
            by_word.setdefault(word, []).append({"madde_id": "1", **r})
    assert max(map(len, by_word.values())) * 10 <= MAX_ENTRIES  # the bound's margin
    assert off_word("abdal", by_word["abdal"]) is None  # Abdal and abdal


def test_fake_entries_have_the_real_shape():
    """Every key and value type of the fake's entries also occurs in the real samples."""
    if not SAMPLES.is_dir():
        pytest.skip("../shared/tdk-samples is not beside the repo")
    real = [e for p in SAMPLES.glob("gts-*.json") if "notfound" not in p.name
            for e in json.loads(p.read_bytes())]
    keys = lambda rows: {k for r in rows for k in r}
    senses = lambda rows: [s for r in rows for s in r.get("anlamlarListe", [])]
    fake = builtin_entries()
    assert keys(fake) <= keys(real)
    assert keys(senses(fake)) <= keys(senses(real))
    for e in fake:
        assert all(v is None or isinstance(v, (str, list)) for v in e.values()), e["madde"]
        assert all(v != [] for v in e.values()), "empty lists are left out, as TDK does"


def test_queries_are_turkish_lowercased_and_url_encoded():
    assert query_for(" İSTANBUL ") == "istanbul"
    assert query_for("IĞDIR") == "ığdır"
    assert query_for("Âdet") == "âdet"  # the circumflex is TDK's business
    assert gts_url("https://sozluk.gov.tr/", "dulda tutmak") == \
        "https://sozluk.gov.tr/gts?ara=dulda%20tutmak"
    assert gts_url("http://x", "a/b&c") == "http://x/gts?ara=a%2Fb%26c"


def test_sitemap_index_and_urlset():
    server = make_server()
    fake = server.fake
    server.server_close()
    kind, urls = words_from_sitemap(fake.sitemap_index())
    assert kind == "sitemapindex" and urls == [f"{fake.base}/sitemap-1.xml",
                                               f"{fake.base}/sitemap-2.xml"]
    words = words_from_sitemap(fake.sitemap(1))[1] + words_from_sitemap(fake.sitemap(2))[1]
    assert words == fake.words  # slugs decoded, the non-word page skipped
    assert "dulda tutmak" in words and "âdet" in words


@pytest.mark.parametrize("body", [SPA_HTML.encode(), b"", b"   ", b"<?xml version='1.0'?>",
                                  b'{"durum":"bakim"}', b"<rss><channel/></rss>",
                                  b"\x1f\x8b\x08\x00cut gzip"])
def test_what_is_not_a_sitemap_says_so(body):
    assert words_from_sitemap(body) == (NOT_A_SITEMAP, [])


def test_what_came_back_is_short():
    assert what_came_back(404, "", b"") == "HTTP 404 with an empty body"
    text = what_came_back(200, "text/html", SPA_HTML.encode())
    assert text.startswith("HTTP 200 (text/html) beginning '<!doctype html>") and "…" in text
    assert len(text) < 120


def test_autocomplete_json_or_html():
    assert words_from_autocomplete('[{"madde":"kitap"},{"madde":"Acem ağzı "}]'.encode()) == \
        ["kitap", "Acem ağzı "]
    assert words_from_autocomplete(SPA_HTML.encode()) is None


@given(st.integers(1, 12), st.floats(0, 1), st.floats(0, 1000))
def test_backoff_grows_is_capped_and_honours_retry_after(attempt, r, asked):
    policy = RetryPolicy(tries=4, base=2.0, cap=300.0)
    wait = policy.wait(attempt, rng=lambda: r)
    assert min(300.0, 2.0 * 2 ** (attempt - 1)) <= wait <= 300.0
    assert wait <= 1.5 * 2.0 * 2 ** (attempt - 1)
    assert policy.wait(attempt, asked, rng=lambda: r) == max(wait, asked)


def test_the_crawl_and_define_share_one_retry_policy():
    from kelime.crawler import fetch

    s = crawl_settings(cache="c.sqlite")
    assert s["KELIME_RETRY_TIMES"] + 1 == RETRY.tries == fetch.fetch.retry.stop.max_attempt_number
    assert (s["KELIME_BACKOFF_BASE"], s["KELIME_BACKOFF_MAX"]) == (RETRY.base, RETRY.cap)


def test_retry_after_seconds_and_dates():
    assert retry_after(b"7") == 7.0
    assert retry_after(None) == 0.0 and retry_after("soon") == 0.0
    assert 59 <= retry_after("Wed, 21 Oct 2015 07:29:00 GMT", now=1445412480.0) <= 61


def test_network_failures_are_named():
    from twisted.internet.error import ConnectionDone, ConnectionRefusedError, TimeoutError
    from twisted.python.failure import Failure
    from twisted.web._newclient import ResponseNeverReceived

    closed = ResponseNeverReceived([Failure(ConnectionDone())])
    assert failure_kind(closed) == "closed"
    assert failure_kind(ConnectionRefusedError()) == "refused"
    assert failure_kind(TimeoutError("Getting x took longer than 1 seconds.")) == "timeout"
    from OpenSSL import SSL

    tls = ResponseNeverReceived([Failure(SSL.Error([("SSL routines", "", "wrong version number")]))])
    assert failure_kind(tls) == "tls"
    text = describe("tls", tls, "https://sozluk.gov.tr/gts?ara=kitap")
    assert "sozluk.gov.tr" in text and "wrong version number" in text and "--ciphers" in text
    assert "Failure" not in text


def test_politeness_defaults():
    s = crawl_settings(cache="c.sqlite")
    assert s["ROBOTSTXT_OBEY"] and s["AUTOTHROTTLE_ENABLED"]
    assert s["CONCURRENT_REQUESTS"] == s["CONCURRENT_REQUESTS_PER_DOMAIN"] == 1
    assert s["DOWNLOAD_DELAY"] >= 1 and s["DOWNLOAD_DELAY_JITTER"] == 0
    assert s["DEFAULT_REQUEST_HEADERS"]["Accept"] == "application/json"
    assert check_user_agent(USER_AGENT) is None and "kelime" in USER_AGENT
    assert "http" in USER_AGENT and "python" not in USER_AGENT.lower()
    assert s["KELIME_CACHE"] == "c.sqlite" and s["USER_AGENT"] == USER_AGENT


def test_flags_change_only_their_settings():
    s = crawl_settings(cache="c.sqlite", delay=2.5, concurrency=2, user_agent="kelime-test/1",
                       ciphers="ECDHE-RSA-AES256-GCM-SHA384", extra={"DOWNLOAD_TIMEOUT": 5})
    changed = {k for k in s if s[k] != POLITE.get(k)}
    assert changed == {"KELIME_CACHE", "DOWNLOAD_DELAY", "AUTOTHROTTLE_START_DELAY",
                       "CONCURRENT_REQUESTS", "CONCURRENT_REQUESTS_PER_DOMAIN", "USER_AGENT",
                       "DOWNLOADER_CLIENT_TLS_CIPHERS", "DOWNLOAD_TIMEOUT"}
    assert (s["DOWNLOAD_DELAY"], s["CONCURRENT_REQUESTS_PER_DOMAIN"]) == (2.5, 2)
    assert s["DOWNLOADER_CLIENT_TLS_CIPHERS"] == "ECDHE-RSA-AES256-GCM-SHA384"


@pytest.mark.parametrize("ua", ["python-requests/2.31", "Mozilla/5.0 (compatible; Googlebot/2.1)",
                                "APIs-Google (+https://developers.google.com)"])
def test_dishonest_or_blocked_user_agents_are_refused(ua):
    assert check_user_agent(ua)


def test_an_unclassified_failure_names_its_own_type():
    text = describe("other", RuntimeError("boom"), "https://sozluk.gov.tr/gts?ara=kitap")
    assert text == "request to sozluk.gov.tr failed: RuntimeError: boom"


def test_httpx_failures_use_the_same_vocabulary():
    import httpx

    url = "https://sozluk.gov.tr/gts?ara=kitap"
    assert failure_kind(httpx.ConnectError("[Errno 111] Connection refused")) == "refused"
    assert failure_kind(httpx.ConnectError("[Errno -2] Name or service not known")) == "dns"
    assert failure_kind(httpx.ReadTimeout("timed out")) == "timeout"
    assert failure_kind(httpx.RemoteProtocolError("Server disconnected")) == "closed"
    assert failure_kind(httpx.ConnectError("[SSL: WRONG_VERSION_NUMBER] wrong version")) == "tls"
    assert "--user-agent" in describe("closed", httpx.RemoteProtocolError("x"), url)


@pytest.mark.parametrize("extra, own", [({}, True), ({"AUTOTHROTTLE_ENABLED": False}, True),
                                        ({"AUTOTHROTTLE_ENABLED": False, "DOWNLOAD_DELAY": 0},
                                         False)])
def test_a_paced_request_asks_for_its_own_connection(extra, own):
    """Twisted's pool re-sends a GET at once when a reused connection closes before the
    reply (Backoff never sees it; the crawl test's `abdal` close fault passed in one try):
    a paced crawl reuses no connection. One with no pause at all (politeness off) may."""
    from scrapy.utils.test import get_crawler

    from kelime.crawler.middlewares import Pacing

    pacing = Pacing(get_crawler(settings_dict=crawl_settings(cache="", extra=extra)))
    assert pacing.paced() is own
    assert pacing.paced(slot_delay=0.5)  # robots.txt's Crawl-delay


# --- the politeness clock: one implementation for the crawl and the look-ups -----------------

def test_the_gap_after_a_reply_is_the_delay_or_as_long_as_it_took_up_to_the_cap():
    from kelime.crawler.clock import gap_after

    assert [gap_after(1.0, took, 60.0) for took in (0.2, 3.0, 500.0)] == [1.0, 3.0, 60.0]


def test_a_crawl_and_a_look_up_wait_for_each_other_on_one_cache(tmp_path):
    from kelime.crawler.clock import Clock

    crawl = Clock(tmp_path / "c.sqlite", "crawl", lease=60.0, create=True)
    look_up = Clock(tmp_path / "c.sqlite", "look-up", lease=60.0)
    try:
        assert crawl.wait() == 0.0 and crawl.wait() == 0.0  # its own turns never wait
        assert 59.0 < look_up.wait() <= 60.0  # the crawl's request is in flight
        crawl.ended(5.0)
        assert 4.0 < look_up.wait() <= 5.0  # then its gap
        assert crawl.wait() > 0  # and the look-up, which waited, goes next
    finally:
        crawl.close()
        look_up.close()


def test_a_clock_without_a_cache_paces_no_one_and_creates_none(tmp_path):
    from kelime.crawler.clock import Clock

    clock = Clock(tmp_path / "none.sqlite", "look-up", lease=60.0)
    assert clock.wait() == 0.0
    clock.ended(1.0)
    clock.close()
    assert not (tmp_path / "none.sqlite").exists()



# --- a fast crawl: what Scrapy would do per response that the crawl does not need ------------

def test_no_spider_callback_is_a_generator_returning_a_value():
    """WARN_ON_GENERATOR_RETURN_VALUE is off (Scrapy re-read each callback's source for
    every response: ~7% of a fast crawl), so this checks once what it checked each time."""
    from scrapy.utils.misc import is_generator_with_return_value

    from kelime.crawler.spider import TdkSpider

    assert POLITE["WARN_ON_GENERATOR_RETURN_VALUE"] is False
    callbacks = [getattr(TdkSpider, n) for n in dir(TdkSpider)
                 if n.startswith(("parse_", "on_")) or n.endswith("_failed")]
    assert len(callbacks) >= 6
    assert [c.__name__ for c in callbacks if is_generator_with_return_value(c)] == []


@pytest.mark.parametrize("autothrottle, cap", [(True, POLITE["AUTOTHROTTLE_MAX_DELAY"]),
                                               (False, 0.0)])
def test_a_slow_reply_lengthens_the_gap_only_with_autothrottle(autothrottle, cap):
    """With AutoThrottle off (politeness off, --delay 0) the next request waited as long as
    the last reply took: a crawl at half the speed the site answers."""
    from scrapy.utils.test import get_crawler

    from kelime.crawler.clock import gap_after
    from kelime.crawler.middlewares import Pacing

    settings = crawl_settings(cache="", extra={"AUTOTHROTTLE_ENABLED": autothrottle})
    pacing = Pacing(get_crawler(settings_dict=settings))
    assert pacing.max_gap == cap
    assert gap_after(1.0, 3.0, pacing.max_gap) == (3.0 if autothrottle else 1.0)
