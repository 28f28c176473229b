"""The page for people at GET /: its files and headers (always), and the page itself in
headless Chromium driven by Selenium against a real uvicorn on 127.0.0.1 (skipped, saying
what to install, when Chromium, chromedriver or selenium is missing).

The screenshot lands in $KELIME_TEST_ARTIFACTS (default: pytest's tmp dir) and its path is
printed."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote_plus, urlsplit

import httpx
import pytest

from kelime.lexicon import Candidate, compile_words, write_lexicon
from kelime.reports import ReportStore
from kelime.service.app import create_app
from kelime.service.settings import Settings
from kelime.tdk import store as tdk_store

from .fake_tdk import builtin_entries
from .service_helpers import CREATED, KURDISH, SOURCE, TR_WORDS, serve_in_thread
from .waiting import wait_until

STATIC = Path(__file__).parents[1] / "service" / "static"


# ---- without a browser ---------------------------------------------------------------

class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def parse(html: str) -> list[tuple[str, dict]]:
    parser = Tags()
    parser.feed(html)
    return parser.tags


def test_the_page_is_html_with_a_strict_csp(client):
    reply = client.get("/")
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "text/html; charset=utf-8"
    csp = reply.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert reply.headers["x-content-type-options"] == "nosniff"
    tags = parse(reply.text)
    scripts = [a for t, a in tags if t == "script"]
    assert scripts and all(a.get("src", "").startswith("static/") for a in scripts)  # no inline
    assert "<style" not in reply.text and " style=" not in reply.text  # CSP forbids inline style


def test_without_javascript_the_form_asks_by_get_and_every_field_has_a_label(client):
    tags = parse(client.get("/").text)
    forms = [a for t, a in tags if t == "form"]
    assert [f.get("method") for f in forms] == ["get"]
    fields = {a["name"]: a for t, a in tags if t in ("input", "select") and "name" in a}
    assert {"w", "rack", "game"} <= set(fields)
    labelled = {a["for"] for t, a in tags if t == "label" and "for" in a}
    assert {a["id"] for a in fields.values()} <= labelled
    assert ("html", {"lang": "tr"}) in tags


@pytest.mark.parametrize("name, content_type", [
    ("page.js", "text/javascript; charset=utf-8"), ("page.css", "text/css; charset=utf-8"),
    ("icon.svg", "image/svg+xml")])
def test_static_files_are_served_with_their_content_type(client, name, content_type):
    reply = client.get(f"/static/{name}")
    assert reply.status_code == 200
    assert reply.headers["content-type"] == content_type
    assert reply.headers["x-content-type-options"] == "nosniff"
    assert reply.content == (STATIC / name).read_bytes()
    again = client.get(f"/static/{name}", headers={"If-None-Match": reply.headers["etag"]})
    assert again.status_code == 304


@pytest.mark.parametrize("path", ["/static/nope.js", "/static/..%2Fapp.py", "/static/.hidden.js",
                                  "/static/index", "/static/index.html", "/static/" + "a" * 300
                                  + ".js"])
def test_other_static_paths_are_404_in_the_error_shape(client, path):
    """A 300-character name was a 500 (the file system's "File name too long")."""
    reply = client.get(path)
    assert reply.status_code == 404
    assert reply.json()["error"]["code"] == "not_found" and len(reply.content) < 300


def test_unknown_static_names_are_not_cached():
    """Every name asked for was cached for ever: 2,000 distinct 3 KB names took a worker from
    137 to 264 MB. Only the shipped files are looked up (and cached) now."""
    from kelime.service.routes.page import FILES, read_static, static_file

    read_static.cache_clear()
    for i in range(500):
        assert static_file(f"{i}{'x' * 3000}.js") is None
    for name in FILES:
        assert static_file(name) is not None
    assert read_static.cache_info().currsize == len(FILES)


def test_the_page_answers_get_and_head_only(client):
    assert client.head("/").status_code == 200
    reply = client.post("/")
    assert reply.status_code == 405 and reply.headers["allow"] == "GET, HEAD"


def test_the_page_loads_nothing_from_outside_and_never_inserts_html():
    for path in STATIC.glob("*.*"):
        text = path.read_text(encoding="utf-8")
        text = text.replace('xmlns="http://www.w3.org/2000/svg"', "")  # a name, not a load
        assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", text, re.IGNORECASE), path.name
        assert "@import" not in text and "url(" not in text, path.name
    js = (STATIC / "page.js").read_text(encoding="utf-8")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in js


# ---- in headless Chromium ----------------------------------------------------------------

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
try:
    import selenium  # noqa: F401
    SELENIUM = True
except ImportError:
    SELENIUM = False
needs_browser = pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER and SELENIUM),
    reason="the page's browser tests need Chromium, chromedriver and selenium: "
           "apt-get install chromium chromium-driver; pip install selenium"
           f" (found: chromium={bool(CHROMIUM)}, chromedriver={bool(CHROMEDRIVER)}, "
           f"selenium={SELENIUM})")

PAGE_WORDS = [*TR_WORDS, *(Candidate(w) for w in (
    "kale", "elma", "lale", "kalem", "alem", "elmalık", "kel", "ela",  # from kale?[lm]trso
    "galip", "ikamet", "ilk"))]                                         # kalemkitap?ilgi
#: Racks Kelimatik and Kurdish Kelimatik deal: 5 consonants, 3 vowels, a two-letter tile and
#: a joker (issue 32, item 5: another rack is refused, rack_not_dealt).
DEALT, DEALT_KU = "kale?[lm]trso", "mêrxweşî?[an]"
DEALT_Q = quote_plus(DEALT)
PAGE_KU_WORDS = [Candidate(w) for w in ("xweş", "xwîn", "şîn", "mêr", "mêran", "mêrane", "hêman",
                                        "nan")]


#: A source as the offline build describes itself: notes for maintainers a player never needs.
PAGE_SOURCE = {**SOURCE, "kind": "bootstrap", "licence": "GPL-3.0: derived from GPL-3.0 data; "
               "build with --permissive for an MIT-only lexicon",
               "note": "offline bootstrap, not a TDK crawl: rebuild with `kelime build --cache`",
               "notes": ["135 headword(s) longer than 15 letters left out"]}


@pytest.fixture(scope="module")
def page_settings(tmp_path_factory) -> Settings:
    """Settings with a small lexicon and a TDK cache (kitap, kalem, ...)."""
    root = tmp_path_factory.mktemp("page")
    write_lexicon(compile_words(PAGE_WORDS), root / "data", "tr", PAGE_SOURCE, created=CREATED)
    write_lexicon(compile_words(PAGE_KU_WORDS, KURDISH), root / "data", "ku", SOURCE,
                  created=CREATED, alphabet=KURDISH)
    db = tdk_store.open_cache(root / "tdk.sqlite", create=True)
    for word in ("kitap", "kalem"):
        entries = [e for e in builtin_entries() if e["madde"] == word]
        tdk_store.save_reply(db, {"query": word, "url": "u", "status": 200, "outcome": "ok",
                                  "body": "[]", "error": None, "attempts": 1}, entries)
    db.close()
    # The longest split budget: the page's split and the test's own end complete, the same.
    return Settings(data=root / "data", cache=root / "tdk.sqlite", split_budget_ms=10_000)


@pytest.fixture(scope="module")
def site(page_settings):
    """A real uvicorn on 127.0.0.1 serving `page_settings` (no report store)."""
    with serve_in_thread(create_app(page_settings)) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1000", "--no-first-run", "--no-default-browser-check",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-extensions", "--lang=tr"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    # An explicit driver path: Selenium Manager (which would look online) is not used.
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(15)
    try:
        yield driver
    finally:
        driver.quit()


def settle(driver, timeout: float = 10.0) -> None:
    """Wait until page.js has run its first question and no section is busy."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, timeout).until(lambda d: d.execute_script(
        "return document.documentElement.dataset.ready === 'true'"
        " && !document.querySelector('[aria-busy]')"))


def open_page(driver, site: str, query: str = "") -> None:
    driver.get(f"{site}/{query}")
    settle(driver)


def verdicts(driver) -> list[tuple[str, str, str]]:
    return [(e.get_attribute("data-word"), e.get_attribute("data-valid"),
             e.get_attribute("data-reason"))
            for e in driver.find_elements("css selector", "#words-out [data-valid]")]


def rack_words(driver, where: str = "#anagram-results") -> list[str]:
    return [e.get_attribute("data-word")
            for e in driver.find_elements("css selector", f"{where} [data-word]")]


def query_of(driver) -> str:
    return urlsplit(driver.current_url).query


@needs_browser
def test_a_link_opens_with_its_verdicts_and_definitions(browser, site):
    open_page(browser, site, "?w=kitap+%C4%B0stanbul+evler")
    assert verdicts(browser) == [("kitap", "true", ""), ("İstanbul", "false", "proper_name"),
                                 ("evler", "false", "not_in_dictionary")]
    assert browser.find_element("id", "w").get_attribute("value") == "kitap İstanbul evler"
    text = browser.find_element("id", "words-out").text
    assert "özel ad" in text and "sözlükte yok" in text
    kitap = browser.find_element("css selector", '[data-word="kitap"] .tdk').text
    assert "Ciltli veya ciltsiz" in kitap  # TDK's sense, from the cache


@needs_browser
def test_typing_words_and_a_rack_and_submitting_by_keyboard(browser, site):
    from selenium.webdriver.common.keys import Keys

    open_page(browser, site)
    assert verdicts(browser) == [] and rack_words(browser) == []
    box = browser.find_element("id", "w")
    box.send_keys("KİTAP göt ev", Keys.ENTER)
    settle(browser)
    assert verdicts(browser) == [("KİTAP", "true", ""), ("göt", "false", "obscene"),
                                 ("ev", "true", "")]
    assert query_of(browser) == "w=K%C4%B0TAP+g%C3%B6t+ev"
    rack = browser.find_element("id", "rack")
    rack.send_keys("kitap?", Keys.ENTER)
    settle(browser)
    asked = httpx.post(f"{site}/v1/anagram", json={"rack": "kitap?", "game": "kelimelik"})
    assert {"kitap", "katil"} <= set(rack_words(browser)) == {w["word"] for w in asked.json()["words"]}
    assert query_of(browser) == "w=K%C4%B0TAP+g%C3%B6t+ev&rack=kitap%3F"
    game = browser.find_element("id", "game")  # choose kelimatik by keyboard: "ev" is too short
    game.send_keys("kelimatik")
    settle(browser)
    assert ("ev", "false", "too_short") in verdicts(browser)
    assert query_of(browser).endswith("&game=kelimatik")


@needs_browser
def test_a_rack_link_shows_the_anagram_words_of_the_api(browser, site):
    open_page(browser, site, f"?rack={DEALT_Q}&game=kelimatik")
    asked = httpx.post(f"{site}/v1/anagram", json={"rack": DEALT, "game": "kelimatik"})
    expected = [w["word"] for w in asked.json()["words"]]
    assert "elmalık" in expected
    shown = rack_words(browser)
    assert sorted(shown) == sorted(expected) and len(shown) == len(expected)
    lengths = [len(w) for w in shown]
    assert lengths == sorted(lengths, reverse=True)  # grouped by length, the longest first
    assert browser.find_element("id", "rack").get_attribute("value") == DEALT
    assert browser.find_element("id", "game").get_attribute("value") == "kelimatik"
    assert query_of(browser) == f"rack={DEALT_Q}&game=kelimatik"
    scores = {e.get_attribute("data-word"): e.get_attribute("data-score")
              for e in browser.find_elements("css selector", "#anagram-results [data-word]")}
    assert scores == {w["word"]: str(w["score"]) for w in asked.json()["words"]}


@needs_browser
def test_harfbank_shows_the_split(browser, site):
    open_page(browser, site, "?rack=kalemkitap%3Filgi&game=harfbank")
    asked = httpx.post(f"{site}/v1/split", json={"rack": "kalemkitap?ilgi", "game": "harfbank"})
    assert asked.json()["complete"] is True, asked.text  # searched to the end, as the page's
    assert rack_words(browser, "#split-results") == [w["word"] for w in asked.json()["words"]]
    text = browser.find_element("id", "split-results").text
    assert "El tamamen dizildi" in text and "Atılan taş" in text


@needs_browser
def test_errors_are_sentences_and_data_is_never_html(browser, site):
    """The useful part of a rack error was the server's English; it is folded away now."""
    open_page(browser, site, "?w=%3Cb%3Ex%3C%2Fb%3E&rack=kale%5Blm&game=kelimatik")
    error = browser.find_element("css selector", "#rack-out .error")
    assert error.text.startswith("Hata: Istaka 5. karakterde okunamadı: ") and "never" not in error.text
    error.find_element("tag name", "summary").click()
    assert "never closed" in error.text  # the server's message, for whoever maintains it
    assert verdicts(browser) == [("<b>x</b>", "false", "invalid_chars")]
    assert browser.find_elements("css selector", "#words-out b") == []


@needs_browser
def test_the_lexicon_card_shows_a_player_which_dictionary_its_size_and_date(browser, site):
    """It showed players maintainer notes in English: build commands, file paths, licence
    advice (on a phone about 2 of the page's 3.6 screens); they are in docs/lexicons.md."""
    open_page(browser, site)
    card = browser.find_element("css selector", '#lexicons [data-lexicon="tr"]').text
    words = f"{len(compile_words(PAGE_WORDS).words)}"
    assert card.split("\n") == [
        "Türkçe (tr)", "Kelime sayısı words", words, "Tarih date", "2026-01-01",
        "Kaynak source", "çevrimdışı kelime listelerinden", "Lisans licence", "GPL-3.0",
        "Sürüm version", card.split("\n")[-1]]
    text = browser.find_element("id", "lexicon-section").text
    for note in ("kelime build", "--permissive", "left out", "tests/", "rebuild", "derived"):
        assert note not in text


@needs_browser
def test_the_api_docs_render_offline(browser, site):
    """Swagger UI from kelime itself: the operations are listed with nothing from outside."""
    browser.get(site + "/docs")
    deadline = time.monotonic() + 15
    while not browser.find_elements("css selector", ".opblock-summary-path"):
        assert time.monotonic() < deadline, browser.page_source[:500]
        time.sleep(0.1)
    paths = {e.get_attribute("data-path") for e in
             browser.find_elements("css selector", ".opblock-summary-path")}
    assert {"/v1/validate", "/v1/anagram", "/v1/split"} <= paths


@needs_browser
def test_no_request_leaves_127_0_0_1_and_a_screenshot(browser, site, tmp_path_factory,
                                                      capsys):
    # Once cached, the icon is taken from the cache unlogged: this page surely asks for it.
    browser.execute_cdp_cmd("Network.clearBrowserCache", {})
    open_page(browser, site, "?w=kitap+%C4%B0stanbul+evler+kalem&rack=" + DEALT_Q +
                             "&game=kelimatik")
    origin = urlsplit(site)
    assert origin.hostname == "127.0.0.1"
    asked: list[dict] = []  # every request of the pages since the log was last read

    def asked_for_the_icon() -> bool:  # after the last page (this one), late beside its own
        sent = [json.loads(e["message"])["message"] for e in browser.get_log("performance")]
        asked.extend(m["params"] for m in sent if m["method"] == "Network.requestWillBeSent")
        page = max(i for i, r in enumerate(asked) if r.get("type") == "Document")
        return any(urlsplit(r["request"]["url"]).path == "/static/icon.svg" for r in asked[page:])

    wait_until(asked_for_the_icon, "this page's request for its icon (static/icon.svg)")
    urls = [r["request"]["url"] for r in asked]
    urls += browser.execute_script("return performance.getEntries().map(e => e.name)"
                                   ".filter(n => n.includes('://'))")
    assert any("/v1/anagram" in u for u in urls) and any("/v1/validate" in u for u in urls)
    outside = [u for u in urls if urlsplit(u).netloc != origin.netloc]
    assert outside == [], outside  # every test's pages, since the log was last read
    console = [e["message"] for e in browser.get_log("browser")]
    assert not [m for m in console if "Content Security Policy" in m or "Uncaught" in m], console
    folder = Path(os.environ.get("KELIME_TEST_ARTIFACTS") or tmp_path_factory.mktemp("artifacts"))
    folder.mkdir(parents=True, exist_ok=True)
    shot = browser.execute_cdp_cmd("Page.captureScreenshot",
                                   {"format": "png", "captureBeyondViewport": True})
    path = folder / "page.png"
    path.write_bytes(base64.b64decode(shot["data"]))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with capsys.disabled():
        print(f"\npage screenshot: {path}")


@needs_browser
def test_every_invalid_word_gets_its_suggestions_not_only_the_first_twenty(browser, site):
    """The details (and with them the suggestions) came from one GET a word for the first 20
    words: the 21st, KITAP, showed no "kitap"."""
    open_page(browser, site, "?w=" + "+".join(["kitap"] * 20 + ["KITAP"]))
    last = browser.find_elements("css selector", "#words-out [data-valid]")[20]
    assert last.get_attribute("data-word") == "KITAP"
    shown = [a.get_attribute("data-suggestion")
             for a in last.find_elements("css selector", "[data-suggestion]")]
    assert shown == ["kitap"]


# ---- reporting a verdict (POST /v1/reports) ----------------------------------------------

NOTE = "<script>window.__pwned=1</script><b>x</b>"


@pytest.fixture
def report_site(page_settings, tmp_path):
    """The page's server with a report store: (its URL, the store's path)."""
    store = tmp_path / "reports.sqlite"
    with serve_in_thread(create_app(page_settings.changed(reports=store))) as url:
        yield url, store


def verdict_of(driver, word: str):
    return driver.find_element("css selector", f'#words-out [data-word="{word}"]')


def checked_kind(item) -> str:
    return item.find_element("css selector", ".report input:checked").get_attribute("value")


def report(driver, word: str, kind: str | None = None, note: str | None = None) -> str:
    """Report `word`'s verdict by the page's form (its default kind unless `kind`), wait for
    the outcome and return its text."""
    from selenium.webdriver.support.ui import WebDriverWait

    item = verdict_of(driver, word)
    if not item.find_elements("css selector", ".report"):
        item.find_element("css selector", ".report-open").click()
    form = item.find_element("css selector", ".report")
    if kind:
        form.find_element("css selector", f'input[value="{kind}"]').click()
    if note:
        form.find_element("tag name", "textarea").send_keys(note)
    outcome = item.find_element("css selector", ".report-outcome")
    driver.execute_script("arguments[0].className = 'report-outcome'", outcome)  # a new one
    form.find_element("css selector", ".report-send").click()
    WebDriverWait(driver, 10).until(lambda d: {"done", "failed"} & set(
        outcome.get_attribute("class").split()))
    return outcome.text


def reports_sent(driver) -> list[dict]:
    """The bodies of the POST /v1/reports the page sent since the log was last read; every
    request of those pages went to 127.0.0.1, and nothing failed in the console."""
    sent = [json.loads(entry["message"])["message"] for entry in driver.get_log("performance")]
    asked = [m["params"]["request"] for m in sent if m["method"] == "Network.requestWillBeSent"]
    assert {urlsplit(r["url"]).hostname for r in asked} <= {"127.0.0.1"}
    console = [e["message"] for e in driver.get_log("browser")]
    assert not [m for m in console if "Content Security Policy" in m or "Uncaught" in m], console
    return [json.loads(r["postData"]) for r in asked
            if r["method"] == "POST" and urlsplit(r["url"]).path == "/v1/reports"]


@needs_browser
def test_a_report_is_stored_and_its_note_stays_plain_text(browser, report_site):
    url, store = report_site
    open_page(browser, url, "?w=Evler+kitap")
    reports_sent(browser)  # the log from here on
    evler, kitap = verdict_of(browser, "Evler"), verdict_of(browser, "kitap")
    opener = evler.find_element("css selector", ".report-open")
    assert opener.tag_name == "button" and "Bildir" in opener.text
    assert "report this word" in opener.text
    opener.click()
    assert opener.get_attribute("aria-expanded") == "true"
    assert checked_kind(evler) == "missing"  # refused: the report says it is a word
    for field in evler.find_elements("css selector", ".report input, .report textarea"):
        assert browser.find_elements("css selector", f'label[for="{field.get_attribute("id")}"]')
    assert evler.find_element("tag name", "textarea").get_attribute("maxlength") == "500"
    evler.find_element("css selector", ".report-cancel").click()
    assert evler.find_elements("css selector", ".report") == []
    assert opener.get_attribute("aria-expanded") == "false"
    assert browser.switch_to.active_element == opener
    kitap.find_element("css selector", ".report-open").click()
    assert checked_kind(kitap) == "wrong"  # accepted: the report says it should not be

    shown = report(browser, "Evler", note=NOTE)
    thanks = re.fullmatch(r"Teşekkürler: bildirim #(\d+) \(1\. kez\) thank you: report #\1 "
                          r"\(reported 1 time\)", shown)
    assert thanks, shown
    outcome = evler.find_element("css selector", ".report-outcome")
    assert outcome.get_attribute("aria-live") == "polite"
    assert evler.find_elements("css selector", ".report") == []  # the form is closed
    assert browser.execute_script("return typeof window.__pwned") == "undefined"
    assert browser.find_elements("css selector", "#words-out b, #words-out script") == []
    assert len(browser.find_elements("tag name", "script")) == 1  # page.js alone
    assert reports_sent(browser) == [{"word": "Evler", "kind": "missing", "game": "kelimelik",
                                      "lexicon": "tr", "note": NOTE}]
    assert "Teşekkürler" in report(browser, "kitap", kind="offensive")
    with ReportStore(store) as reports:
        stored = {r["word"]: r for r in reports.open_reports()}
    assert set(stored) == {"evler", "kitap"}
    evler_report = stored["evler"]
    assert (evler_report["lexicon"], evler_report["kinds"], evler_report["ids"],
            evler_report["sent"], evler_report["games"]) == (
        "tr", {"missing": 1}, [int(thanks[1])], ["Evler"], ["kelimelik"])
    assert [n["note"] for n in evler_report["notes"]] == [NOTE]
    assert (stored["kitap"]["kinds"], stored["kitap"]["notes"]) == ({"offensive": 1}, [])
    assert reports_sent(browser) == [{"word": "kitap", "kind": "offensive",
                                      "game": "kelimelik", "lexicon": "tr", "note": None}]


@needs_browser
def test_a_server_without_reports_shows_no_report_button(browser, site):
    """"Bildir" showed on every server, to say "this server does not collect reports" once
    clicked; a server without a report store answers GET /v1/reports 404 (405 with one)."""
    open_page(browser, site, "?w=kitap+evler")
    assert [w for w, _, _ in verdicts(browser)] == ["kitap", "evler"]
    assert browser.find_elements("css selector", ".report-open") == []
    assert "Bildir" not in browser.find_element("id", "words-out").text
    assert reports_sent(browser) == []


# ---- what players see: Turkish, names, only what the server offers ----------------------

@needs_browser
def test_choosing_kurdish_kelimatik_brings_the_ku_lexicon_and_scores_kurmanji(browser, site):
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    open_page(browser, site)
    games = Select(browser.find_element("id", "game"))
    assert [o.text for o in games.options] == ["Kelimelik", "Sözce", "Kelimatik",
                                               "Kürtçe Kelimatik", "Harfbank"]
    lexicons = Select(browser.find_element("id", "lex"))
    assert {o.get_attribute("value"): o.text for o in lexicons.options} == {
        "ku": "Kürtçe (Kurmancî) (ku)", "tr": "Türkçe (tr)"}
    assert lexicons.first_selected_option.get_attribute("value") == "tr"
    games.select_by_visible_text("Kürtçe Kelimatik")
    settle(browser)
    assert lexicons.first_selected_option.get_attribute("value") == "ku"
    assert "navînî her dest herî kêm 50 xal" in browser.find_element("id", "game-desc").text
    rack = browser.find_element("id", "rack")
    rack.send_keys(DEALT_KU, Keys.ENTER)
    settle(browser)
    asked = httpx.post(f"{site}/v1/anagram", json={"rack": DEALT_KU, "game": "kelimatik-ku",
                                                    "lexicon": "ku"}).json()
    scores = {e.get_attribute("data-word"): e.get_attribute("data-score")
              for e in browser.find_elements("css selector", "#anagram-results [data-word]")}
    assert scores == {w["word"]: str(w["score"]) for w in asked["words"]}
    assert scores["xweş"] == "68"  # (x 5 + w 6 + e 1 + ş 5) × 4
    assert query_of(browser) == f"rack={quote_plus(DEALT_KU)}&game=kelimatik-ku&lex=ku"
    lexicons.select_by_value("tr")  # a Turkish lexicon brings a game for its letters
    settle(browser)
    assert games.first_selected_option.text == "Kelimelik"


@needs_browser
def test_every_game_s_example_rack_works_in_that_game(browser, site):
    """The placeholder kale?[lm] was an error in the default game (no two-letter tiles); each
    is a rack its game deals (Kelimatik's 10 tiles: 5 consonants, 3 vowels, [lm], a joker)."""
    from selenium.webdriver.support.ui import Select

    open_page(browser, site)
    games = Select(browser.find_element("id", "game"))
    for name in [o.get_attribute("value") for o in games.options]:
        games.select_by_value(name)
        settle(browser)
        example = browser.find_element("id", "rack").get_attribute("placeholder")
        lexicon = Select(browser.find_element("id", "lex")).first_selected_option
        asked = httpx.post(f"{site}/v1/anagram", json={
            "rack": example, "game": name, "lexicon": lexicon.get_attribute("value")})
        assert asked.status_code == 200 and asked.json()["count"], (name, example, asked.text)


@needs_browser
def test_an_empty_submit_says_what_to_type(browser, site):
    open_page(browser, site)
    browser.find_element("id", "w-go").click()
    shown = browser.find_element("css selector", "#words-out .empty").text
    assert shown.startswith("Denetlemek için kelime, denemek için taş yazın.")
    assert browser.switch_to.active_element == browser.find_element("id", "w")


@needs_browser
def test_errors_speak_turkish_and_no_maintainer_note_shows(browser, page_settings):
    """Without a TDK cache the page said "sunucuda TDK önbelleği yok (KELIME_CACHE)" under
    every check: a note for maintainers. Errors were the API's English only."""
    with serve_in_thread(create_app(page_settings.changed(cache=None))) as url:
        open_page(browser, url, "?w=kitap+evler&rack=kale%5Blm&game=kelimatik")
        text = browser.find_element("tag name", "main").text
        assert "KELIME_CACHE" not in text and "önbelleğ" not in text
        assert browser.find_elements("css selector", "#words-out .tdk") == []
        error = browser.find_element("css selector", "#rack-out .error").text
        assert error.startswith("Hata: Istaka 5. karakterde okunamadı") and "never" not in error
        # invalid_rack, or rack_not_dealt from a server with the games' deal (issue 32, item 5)
        open_page(browser, url, "?rack=abcdefgh%C4%9F%C4%B1ijkl")
        error = browser.find_element("css selector", "#rack-out .error")
        assert error.text.startswith({
            "invalid_rack": "Hata: Bu oyunda el 7 taş, ıstakada 14 taş var: 7 taşı çıkarın.",
            "rack_not_dealt": "Hata: Kelimelik elde en çok 7 taş dağıtır; bu ıstakada 14 taş "
                              "var: 7 taşı çıkarın."}[error.get_attribute("data-code")]), error.text
        open_page(browser, url, "?rack=abcdefgh%C4%9F%C4%B1ijklmn&game=harfbank")
        error = browser.find_element("css selector", "#rack-out .error")
        assert error.text.startswith({
            "invalid_rack": "Hata: Bu oyunda el 14 taş (15 taşa kadar), ıstakada 16 taş var: "
                            "1 taşı çıkarın.",
            "rack_not_dealt": "Hata: Harfbank elde en çok 15 taş dağıtır; bu ıstakada 16 taş "
                              "var: 1 taşı çıkarın."}[error.get_attribute("data-code")]), error.text
        assert "hand holds" not in error.text and "deals" not in error.text


@needs_browser
def test_a_refused_report_says_why_and_keeps_the_form(browser, page_settings, tmp_path):
    """The server's message for a phrase; for a client over its hour's reports, when to
    send again (Retry-After, in minutes)."""
    app = create_app(page_settings.changed(reports=tmp_path / "reports.sqlite",
                             reports_per_hour=1))
    with serve_in_thread(app) as url:
        open_page(browser, url, "?w=dulda+tutmak%2C+evler")
        shown = report(browser, "dulda tutmak")
        assert shown == ("Bildirim gönderilemedi: Bu, sözlüğün harfleriyle yazılmış tek bir "
                         "kelime değil: bildirilemez. Ayrıntı"), shown
        assert verdict_of(browser, "dulda tutmak").find_elements("css selector", ".report")
        assert report(browser, "evler").startswith("Teşekkürler: bildirim #1 ")
        shown = report(browser, "evler", kind="wrong", note="ikinci")
    later = re.fullmatch(r"Çok fazla bildirim: (\d+) dakika sonra yeniden deneyin\. Too many "
                         r"reports: try again in \1 minutes?\.", shown)
    assert later and 1 <= int(later[1]) <= 60, shown
    form = verdict_of(browser, "evler").find_element("css selector", ".report")
    assert form.find_element("tag name", "textarea").get_attribute("value") == "ikinci"
    assert [body["word"] for body in reports_sent(browser)] == ["dulda tutmak", "evler", "evler"]


# ---- the page speaks to players: Turkish, or Kurmanji for the Kurdish game ----------------

MESSAGES = STATIC / "messages.json"
#: Codes the page meets besides `CODES`: the racks a game cannot deal (issue 32, item 5) and
#: a server it cannot reach at all.
PAGE_CODES = {"rack_not_dealt", "network"}


def messages() -> dict:
    return json.loads(MESSAGES.read_text(encoding="utf-8")) if MESSAGES.exists() else {}


def test_every_error_code_and_verdict_reason_has_a_sentence_in_turkish_and_kurmanji():
    """The page had a Turkish phrase for 13 of the API's codes, followed by the server's
    English message (the useful part); none in Kurmanji, and no `too_long` reason."""
    from kelime.board.play import REASONS as PLAY_REASONS
    from kelime.lexicon import REASONS
    from kelime.service.errors import CODES

    table = messages()
    assert set(table) == {"tr", "ku"}
    for lang, said in table.items():
        missing = (set(CODES) | PAGE_CODES) - set(said["errors"])
        assert not missing, f"{lang}: no sentence for the error codes {sorted(missing)}"
        missing = {*REASONS, "too_long"} - set(said["reasons"])
        assert not missing, f"{lang}: no sentence for the verdict reasons {sorted(missing)}"
        missing = {f"play_{r}" for r in PLAY_REASONS} - set(said["text"])  # POST /v1/play's
        assert not missing, f"{lang}: no sentence for the play reasons {sorted(missing)}"
        for part in ("ui", "errors", "reasons", "text"):
            assert set(said[part]) == set(table["tr"][part]), (lang, part)
            assert all(isinstance(v, str) and v.strip() for v in said[part].values()), (lang, part)
    wanted = {a["data-t"] for _, a in parse((STATIC / "index.html").read_text(encoding="utf-8"))
              if "data-t" in a}
    assert wanted and wanted <= set(table["tr"]["ui"])


@needs_browser
def test_every_error_code_shows_its_sentence_not_the_server_s_message(browser, site):
    """Each code the API can send (and rack_not_dealt, a game's deal rule), answered to the
    page's rack question, shows the player its sentence, in Turkish and in Kurmanji."""
    from kelime.service.errors import CODES

    table = messages()
    for lang, query in (("tr", "?game=kelimatik"), ("ku", "?game=kelimatik-ku")):
        open_page(browser, site, query)
        assert browser.execute_script("return document.documentElement.lang") == lang
        for code in sorted({*CODES, "rack_not_dealt"}):
            error = {"code": code, "message": f"English for maintainers ({code})",
                     "details": {"game": "kelimatik", "rule": "vowels", "least": 3, "most": 3,
                                 "found": 10}}
            browser.execute_script("""
                const [error, status] = arguments;
                window.fetch = async () => new Response(JSON.stringify({error}),
                    {status, headers: {"Content-Type": "application/json"}});""",
                error, CODES[code].status if code in CODES else 422)
            rack = browser.find_element("id", "rack")
            rack.clear()
            rack.send_keys(f"kale{len(code)}{code[:3]}")  # a new question each time
            browser.find_element("id", "rack-go").click()
            settle(browser)
            shown = browser.find_element("css selector", "#rack-out .error")
            expected = table[lang]["errors"][code]
            if code == "rack_not_dealt":  # the rule broken, with the figures
                expected = {"tr": "Kelimatik elde 3 sesli harf dağıtır; bu ıstakada 10 var: "
                                  "taşları düzeltin.",
                            "ku": "Kelimatik di destekî de 3 dengdar dide; di van keviran de "
                                  "10 hene: keviran rast bike."}[lang]
            if code == "invalid_board":  # details naming a game: one without a board
                expected = table[lang]["errors"]["invalid_board_game"].replace("{game}", "Kelimatik")
            expected = re.sub(r"\s*\([^()]*\{\w+\}[^()]*\)|\{\w+\}.*", "", expected)
            assert shown.text.startswith(f"{table[lang]['text']['error']}: {expected}"), (
                code, shown.text)
            assert "English" not in shown.text, shown.text
        browser.refresh()  # page.js's own fetch again


@needs_browser
def test_kurdish_kelimatik_speaks_kurmanji(browser, site):
    """Choosing Kurdish Kelimatik left every label, verdict and error in Turkish."""
    from selenium.webdriver.support.ui import Select

    open_page(browser, site, "?w=xwe%C5%9F+nanik&rack=m%C3%AAr%3Fn%C4%9F")
    assert browser.find_element("id", "rack-h").text.startswith("Taşları dene")
    Select(browser.find_element("id", "game")).select_by_value("kelimatik-ku")
    settle(browser)
    assert browser.execute_script("return document.documentElement.lang") == "ku"
    assert browser.title == "kelime · ferhenga lîstikên peyvan"
    assert browser.find_element("id", "words-h").text == "Peyvan kontrol bike Check words"
    assert browser.find_element("id", "rack-go").text == "Peyvan bibîne"
    assert browser.find_element("id", "words-out").text.startswith(
        "Ji 2 peyvan 1 derbasdar in")
    words = browser.find_element("id", "words-out").text
    assert "di ferhengê de tune" in words and "Pênaseya vê peyvê tune." in words
    assert not re.search("[ğıİ]|kelime|TDK'de", words), words  # no Turkish left
    error = browser.find_element("css selector", "#rack-out .error").text
    assert error.startswith("Çewtî: Tîpa 6. (ğ) ne tîpeke vê ferhengê ye"), error
    assert browser.find_element("css selector", '#lexicons [data-lexicon="ku"] h3').text == (
        "Kurdî (Kurmancî) (ku)")
    Select(browser.find_element("id", "game")).select_by_value("kelimelik")
    settle(browser)
    assert browser.execute_script("return document.documentElement.lang") == "tr"
    assert browser.find_element("id", "rack-go").text == "Kelimeleri bul"


@needs_browser
def test_emptying_only_the_rack_says_so(browser, site):
    """Emptying the rack (words still asked) cleared its results with no word."""
    open_page(browser, site, "?w=kitap&rack=kitap%3F")
    assert rack_words(browser)
    browser.find_element("id", "rack").clear()
    browser.find_element("id", "w-go").click()
    settle(browser)
    assert browser.find_element("id", "rack-out").text == (
        "Istaka boş: kelime bulmak için taş yazın. The rack is empty: type tiles to find words.")
    assert browser.find_element("id", "rack-status").text == "Istaka boş: kelime bulmak için taş yazın."
    assert verdicts(browser) == [("kitap", "true", "")]


def tile_values(element) -> list[tuple[str, str]]:
    """(face, value) of each tile in `element` (a tile's value is its <sub>)."""
    return [(t.get_attribute("textContent")[:-len(v)] if v else t.get_attribute("textContent"), v)
            for t in element.find_elements("css selector", ".tile")
            for v in [(t.find_elements("css selector", ".value") or [None])[0]]
            for v in [v.get_attribute("textContent") if v else ""]]


@needs_browser
def test_tiles_show_their_letter_values(browser, site):
    """No tile showed its value: the game's letter values are on every tile now, and the
    game card lists them."""
    open_page(browser, site, f"?rack={DEALT_Q}&game=kelimatik")
    values = httpx.get(f"{site}/v1/games").json()
    kelimatik = next(g for g in values["games"] if g["name"] == "kelimatik")
    elmalik = browser.find_element("css selector", '#anagram-results [data-word="elmalık"]')
    assert tile_values(elmalik) == [("e", "1"), ("lm", "1"), ("a", "1"), ("l", "3"), ("ı", "0"),
                                    ("k", "1")]  # the blank laid as ı is worth 0
    strip = {e.get_attribute("data-letter"): e.get_attribute("data-value")
             for e in browser.find_elements("css selector", "#values [data-letter]")}
    assert strip == {k: str(v) for k, v in kelimatik["letter_values"].items()}
    assert browser.find_elements("css selector", "#values .provisional") == []
    assert browser.find_element("id", "values").text.split("\n")[0] == "Taş değerleri letter values"
    assert "null" not in browser.find_element("id", "values").text


@needs_browser
def test_starts_with_ends_with_and_contains_use_the_board_letters(browser, site):
    """There were no such filters; each is the API's patterns, one a length and place."""
    open_page(browser, site, "?rack=tap%3F&starts=ki")
    shown = set(rack_words(browser))
    wanted = set()
    for pattern in ("ki.", "ki..", "ki...", "ki....", "ki....."):
        wanted |= {w["word"] for w in httpx.post(f"{site}/v1/anagram", json={
            "rack": "tap?", "pattern": pattern}).json()["words"]}
    assert shown == wanted and "kitap" in shown and all(w.startswith("ki") for w in shown)
    kitap = browser.find_element("css selector", '#anagram-results [data-word="kitap"]')
    assert [e.text for e in kitap.find_elements("css selector", ".tile.board")] == ["k", "i"]
    assert query_of(browser) == "rack=tap%3F&starts=ki"
    open_page(browser, site, "?rack=kale&ends=m")
    assert set(rack_words(browser)) == {"kalem", "alem"}
    open_page(browser, site, "?rack=kale%3F&contains=m")
    assert {"kalem", "elma", "alem"} <= set(rack_words(browser))
    assert all("m" in w for w in rack_words(browser))


def open_lists(driver) -> None:
    """Open the study lists and wait for them (the toggle event comes after the click)."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.find_element("css selector", "#lists summary").click()
    WebDriverWait(driver, 10).until(lambda d: d.find_elements(
        "css selector", "#lists-out [data-list], #lists-out .error"))
    settle(driver)


@needs_browser
def test_the_short_word_lists_players_study(browser, site):
    """Two- and three-letter words and short words with the game's dearest letters, from
    GET /v1/lexicons/{name}/words, for the game chosen."""
    from selenium.webdriver.support.ui import Select

    open_page(browser, site)
    open_lists(browser)
    words = httpx.get(f"{site}/v1/lexicons/tr/words").text.split()

    def listed(key: str) -> list[str]:
        return [e.text for e in browser.find_elements(
            "css selector", f'#lists-out [data-list="{key}"] li')]

    assert listed("two") == [w for w in words if len(w) == 2] == ["at", "ev"]
    assert listed("three") == [w for w in words if len(w) == 3]
    assert "kel" in listed("three")
    lists = [e.get_attribute("data-list") for e in browser.find_elements(
        "css selector", "#lists-out [data-list]")]
    assert lists == ["two", "three", "letter-j", "letter-f", "letter-ğ", "letter-p", "letter-v"]
    assert listed("letter-j") == [] and listed("letter-ğ") == ["iğne"]  # the 5 dearest letters
    assert browser.find_element("css selector", '#lists-out [data-list="letter-j"] .hint').text == (
        "Bu sözlükte bu listeye giren kelime yok.")
    Select(browser.find_element("id", "game")).select_by_value("kelimatik")  # at least 3
    settle(browser)
    assert listed("two") == []
    assert "en az 3 harf" in browser.find_element(
        "css selector", '#lists-out [data-list="two"]').text


# ---- a phone and a desktop, in Turkish and in Kurmanji --------------------------------------
# What is compared: the layout from the element boxes (nothing wider than the screen, the
# sections side by side or stacked, the lexicon card short), and pixels of the screenshot
# where the colours are the page's own (a tile's face, and the ink of its value), which do not
# depend on the fonts a machine has. Reference images of whole pages would: Debian's
# chromium with other fonts wraps lines elsewhere. The full screenshots are saved to look at.

def png_pixels(data: bytes) -> list[list[tuple[int, int, int]]]:
    """The RGB rows of an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes)."""
    import struct
    import zlib

    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, chunks, header = 8, [], b""
    while at < len(data):
        size, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + size]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        at += 12 + size
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and not interlace, (depth, colour, interlace)
    step = 3 if colour == 2 else 4
    raw, stride, rows, previous = zlib.decompress(b"".join(chunks)), width * step, [], None
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        up = previous or bytearray(stride)
        for i in range(stride):
            left = line[i - step] if i >= step else 0
            corner = up[i - step] if i >= step else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up[i]) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up[i]) // 2) & 255
            elif kind == 4:
                p = left + up[i] - corner
                pa, pb, pc = abs(p - left), abs(p - up[i]), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up[i] if pb <= pc
                                      else corner)) & 255
        previous = line
        rows.append([tuple(line[x * step:x * step + 3]) for x in range(width)])
    return rows


def near(colour: tuple[int, int, int], hex_colour: str, tolerance: int = 12) -> bool:
    wanted = tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return all(abs(a - b) <= tolerance for a, b in zip(colour, wanted))


def saved_screenshot(browser, tmp_path_factory, capsys, name: str, width: int) -> Path:
    """The whole page as a PNG in $KELIME_TEST_ARTIFACTS (or a temporary folder), for people
    to look at; nothing may be drawn past the screen's `width`."""
    folder = Path(os.environ.get("KELIME_TEST_ARTIFACTS") or tmp_path_factory.mktemp("artifacts"))
    folder.mkdir(parents=True, exist_ok=True)
    shot = browser.execute_cdp_cmd("Page.captureScreenshot", {"format": "png",
                                                              "captureBeyondViewport": True})
    path = folder / name
    path.write_bytes(base64.b64decode(shot["data"]))
    assert len(png_pixels(path.read_bytes())[0]) == width  # nothing drawn past the screen
    with capsys.disabled():
        print(f"\nscreenshot: {path}")
    return path


def shot_of(driver, element) -> list[list[tuple[int, int, int]]]:
    """The pixels of `element`'s box, from a screenshot of just that box."""
    box = driver.execute_script("const r = arguments[0].getBoundingClientRect();"
                                "return [r.x + scrollX, r.y + scrollY, r.width, r.height]", element)
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "clip": {
        "x": box[0], "y": box[1], "width": box[2], "height": box[3], "scale": 1},
        "captureBeyondViewport": True})
    return png_pixels(base64.b64decode(shot["data"]))


BOXES = """
    const box = (e) => { const r = e.getBoundingClientRect();
      return {left: r.left, right: r.right, top: r.top + scrollY, bottom: r.bottom + scrollY,
              width: r.width, height: r.height, what: e.id || e.className || e.tagName}; };
    const all = (s) => [...document.querySelectorAll(s)].filter((e) => e.getClientRects().length).map(box);
    return {width: document.documentElement.clientWidth,
            scroll: document.documentElement.scrollWidth, page: document.documentElement.scrollHeight,
            words: box(document.getElementById("words-section")),
            rack: box(document.getElementById("rack-section")),
            lexicon: box(document.getElementById("lexicon-section")),
            parts: all("main .card, main input, main select, main button, main .tile, main .error, main li, main h2, main h3"),
            values: [...document.querySelectorAll("#anagram-results .tile")].map((t) =>
              [box(t), t.querySelector(".value") && box(t.querySelector(".value"))])};"""


@needs_browser
@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("lang, query", [
    ("tr", f"?w=kitap+evler&rack={DEALT_Q}&game=kelimatik&contains=a"),
    ("ku", f"?w=xwe%C5%9F+nanik&rack={quote_plus(DEALT_KU)}&game=kelimatik-ku")])
def test_the_page_fits_a_phone_and_a_desktop(browser, site, width, lang, query,
                                             tmp_path_factory, capsys):
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": 844, "deviceScaleFactor": 1, "mobile": width < 500})
    try:
        open_page(browser, site, query)
        open_lists(browser)
        assert browser.execute_script("return document.documentElement.lang") == lang
        seen = browser.execute_script(BOXES)
        assert seen["scroll"] <= seen["width"] <= width, seen  # no sideways scroll
        outside = [p for p in seen["parts"] if p["left"] < -0.5 or p["right"] > width + 0.5]
        assert outside == [], outside[:5]
        words, rack = seen["words"], seen["rack"]
        if width >= 1000:  # side by side
            assert abs(words["top"] - rack["top"]) < 1 and rack["left"] >= words["right"]
        else:              # one above the other
            assert rack["top"] >= words["bottom"]
        # The lexicon card was 2 of a phone's 3.6 screens (notes for maintainers).
        assert seen["lexicon"]["height"] < 844 / 2, seen["lexicon"]
        assert seen["values"], "no tiles shown"
        for tile, value in seen["values"]:
            if value is None:  # a board letter (the filter's): no tile of the rack
                continue
            assert tile["left"] <= value["left"] and value["right"] <= tile["right"] + 0.5
            assert tile["top"] <= value["top"] and value["bottom"] <= tile["bottom"] + 0.5
        # The pixels: a tile of the rack is the tile's colour, with its value's ink at the
        # right (a tile without its value has none there: its letter is centred).
        tile = browser.find_element("css selector", "#anagram-results .tile:not(.blank):not(.board)")
        pixels = shot_of(browser, tile)
        height, across = len(pixels), len(pixels[0])
        face = sum(near(p, "#f3e2b3") for row in pixels for p in row) / (height * across)
        assert face > 0.3, face
        right = [p for row in pixels[height // 2:height - 2] for p in row[across * 3 // 4:across - 2]]
        assert any(near(p, "#3b2f12", 90) for p in right), "no value drawn on the tile"
        saved_screenshot(browser, tmp_path_factory, capsys, f"page-{lang}-{width}.png", width)
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


@needs_browser
def test_a_rack_the_game_cannot_deal_can_be_asked_anyway(browser, site):
    """rack_not_dealt (a 422 naming the rule) offers "Yine de dene": the same question with
    "what_if": true, its answer marked as one the game would not deal."""
    open_page(browser, site, "?game=kelimatik")
    # A server with racks' rule refuses kale? itself; one without it (before issue 32, item 5)
    # is stood in for: the refusal it would send, and the question without what_if after.
    knows = "what_if" in httpx.get(f"{site}/openapi.json").text
    browser.execute_script("""
        const real = window.fetch, knows = arguments[0];
        window.sent = [];
        window.fetch = async (url, init) => {
          if (!String(url).startsWith("v1/anagram")) return real(url, init);
          const body = JSON.parse(init.body);
          window.sent.push({...body});
          if (knows) return real(url, init);
          if (!body.what_if) return new Response(JSON.stringify({error: {
              code: "rack_not_dealt", message: "Kelimatik deals 10 tiles; this rack has 5",
              details: {game: "kelimatik", rule: "tiles", least: 10, most: 10, found: 5}}}),
            {status: 422, headers: {"Content-Type": "application/json"}});
          delete body.what_if;
          return real(url, {...init, body: JSON.stringify(body)});
        };""", knows)
    rack = browser.find_element("id", "rack")
    rack.send_keys("kale?")
    browser.find_element("id", "rack-go").click()
    settle(browser)
    error = browser.find_element("css selector", "#rack-out .error").text
    assert error.startswith("Hata: Kelimatik elde 10 taş dağıtır; bu ıstakada 5 taş var: "
                            "5 taş ekleyin."), error
    assert rack_words(browser) == []
    browser.find_element("css selector", "#rack-out .what-if-go").click()
    settle(browser)
    asked = httpx.post(f"{site}/v1/anagram", json={"rack": "kale?", "game": "kelimatik",
                                                    **({"what_if": True} if knows else {})})
    assert sorted(rack_words(browser)) == sorted(w["word"] for w in asked.json()["words"])
    assert browser.find_element("css selector", "#rack-out .what-if").text.startswith(
        "Bu oyunun dağıtmayacağı taşlarla (ya öyle olsaydı):")
    assert [b.get("what_if") for b in browser.execute_script("return window.sent")] == [None, True]


@needs_browser
def test_reporting_in_kurdish_kelimatik_speaks_kurmanji(browser, report_site):
    """The report form was Turkish whatever the game."""
    url, _ = report_site
    open_page(browser, url, "?w=nan+nanik&game=kelimatik-ku")
    opener = verdict_of(browser, "nanik").find_element("css selector", ".report-open")
    assert opener.text.startswith("Ragihîne")
    opener.click()
    label = browser.find_element("css selector", '.report label[for$="-missing"]').text
    assert label.startswith("Kêm: peyveke rastîn, lîstik qebûl nake")
    assert report(browser, "nanik").startswith("Spas: rapor #")


# ---- the board (Kelimelik, Sözce): filled in or pasted, its best moves drawn ---------------

#: A position as the page and the CLI read it: a row a line, "." empty, a lowercase letter a
#: tile, an uppercase letter a blank standing for that letter (here the L of kaLe).
BOARD_TEXT = "\n".join(["." * 15] * 7 + ["......kaLe....."] + ["." * 15] * 7)
BOARD_RACK = "kalem"


def board_cells(text: str) -> list[list[str]]:
    """The API's board for a board text."""
    return [["" if ch == "." else ch if ch.islower() else "?" + ch.lower() for ch in line]
            for line in text.splitlines()]


def paste_board(driver, text: str) -> None:
    if not driver.find_element("id", "board-paste").get_attribute("open"):
        driver.find_element("css selector", "#board-paste summary").click()
    area = driver.find_element("id", "board-text")
    area.clear()
    area.send_keys(text)
    driver.find_element("id", "board-put").click()


def board_shown(driver) -> list[tuple[int, int, str]]:
    return [tuple(x) for x in driver.execute_script(
        "return [...document.querySelectorAll('#board .sq')].filter((s) => s.dataset.cell)"
        ".map((s) => [Number(s.dataset.row), Number(s.dataset.col), s.dataset.cell])")]


def drawn(driver) -> set[tuple[int, int, str, bool]]:
    return {tuple(x) for x in driver.execute_script(
        "return [...document.querySelectorAll('#board .sq.placed')].map((s) => [Number(s.dataset.row),"
        " Number(s.dataset.col), s.querySelector('.new-tile').textContent,"
        " s.classList.contains('placed-blank')])")}


def tiles_of(move: dict) -> set[tuple[int, int, str, bool]]:
    return {(t["row"], t["col"], t["letter"], t["blank"]) for t in move["tiles"]}


BOARD_BOXES = """
    const box = (e) => { const r = e.getBoundingClientRect();
      return {left: r.left, right: r.right, top: r.top + scrollY, bottom: r.bottom + scrollY,
              width: r.width, height: r.height, what: e.id || e.className || e.tagName}; };
    const all = (s) => [...document.querySelectorAll(s)].filter((e) => e.getClientRects().length).map(box);
    const placed = document.querySelector("#board .sq.placed .new-tile");
    return {width: document.documentElement.clientWidth, scroll: document.documentElement.scrollWidth,
            rack: box(document.getElementById("rack-section")),
            section: box(document.getElementById("board-section")),
            board: box(document.getElementById("board")),
            squares: all("#board .sq"), parts: all("#board-section *"),
            letter: parseFloat(getComputedStyle(placed).fontSize)};"""


@needs_browser
@pytest.mark.parametrize("width", [390, 1280])
def test_a_pasted_board_s_best_moves_are_drawn_on_it(browser, site, width, tmp_path_factory,
                                                     capsys):
    """The page had no board (issue 33, item 4): a pasted position, the rack's best moves
    from POST /v1/moves listed with their scores, the first drawn on the board at the
    squares the API gave (its new tiles marked), another drawn when clicked; on a phone the
    15 squares fit, under the rack."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": 844, "deviceScaleFactor": 1, "mobile": width < 500})
    try:
        open_page(browser, site, f"?rack={BOARD_RACK}")
        paste_board(browser, BOARD_TEXT)
        assert board_shown(browser) == [(7, 6, "k"), (7, 7, "a"), (7, 8, "?l"), (7, 9, "e")]
        assert "blank" in browser.find_element(
            "css selector", '#board .sq[data-row="7"][data-col="8"]').get_attribute("class")
        browser.find_element("id", "moves-go").click()
        settle(browser)
        asked = httpx.post(f"{site}/v1/moves", json={
            "game": "kelimelik", "board": board_cells(BOARD_TEXT), "rack": BOARD_RACK,
            "limit": 20}).json()
        moves = asked["moves"]
        assert len(moves) >= 2, asked
        listed = browser.find_elements("css selector", "#moves .move")
        assert [(b.get_attribute("data-word"), int(b.get_attribute("data-score")))
                for b in listed] == [(m["word"], m["score"]) for m in moves]
        assert listed[0].text.startswith(f"{moves[0]['word']}\n{moves[0]['score']} puan"), (
            listed[0].text)
        assert drawn(browser) == tiles_of(moves[0])
        assert "null" not in browser.find_element("id", "board-out").text
        assert board_shown(browser)[:4] == [(7, 6, "k"), (7, 7, "a"), (7, 8, "?l"), (7, 9, "e")]
        seen = browser.execute_script(BOARD_BOXES)
        assert seen["scroll"] <= seen["width"] <= width, seen["scroll"]  # no sideways scroll
        outside = [p for p in seen["parts"] if p["left"] < -0.5 or p["right"] > width + 0.5]
        assert outside == [], outside[:5]
        assert seen["section"]["top"] >= seen["rack"]["bottom"]  # under the rack
        assert len(seen["squares"]) == 225
        side = min(min(s["width"], s["height"]) for s in seen["squares"])
        assert side >= (18 if width < 500 else 30), side
        assert seen["letter"] >= 11, seen["letter"]  # a letter a player can read
        # The pixels: the first move's first new tile is the tile's colour, marked new.
        row, col = moves[0]["tiles"][0]["row"], moves[0]["tiles"][0]["col"]
        square = browser.find_element("css selector", f'#board .sq[data-row="{row}"][data-col="{col}"]')
        pixels = shot_of(browser, square)
        flat = [p for line in pixels for p in line]
        assert any(near(p, "#0b5cad", 30) for p in flat), "the new tile is not marked"
        assert sum(near(p, "#f3e2b3") or near(p, "#ffffff") for p in flat) / len(flat) > 0.2
        saved_screenshot(browser, tmp_path_factory, capsys, f"page-board-{width}.png", width)
        listed[1].click()  # another move: drawn instead
        assert drawn(browser) == tiles_of(moves[1])
        assert [b.get_attribute("aria-pressed") for b in listed[:2]] == ["false", "true"]
        # The board is in the URL: the link opens with it, its moves asked and drawn.
        link = query_of(browser)
        assert f"board={quote_plus(BOARD_TEXT.replace(chr(10), '/'))}" in link, link
        open_page(browser, site, f"?{link}")
        assert board_shown(browser) == [(7, 6, "k"), (7, 7, "a"), (7, 8, "?l"), (7, 9, "e")]
        assert drawn(browser) == tiles_of(moves[0])
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def square(driver, row: int, col: int):
    return driver.find_element("css selector", f'#board input[data-row="{row}"][data-col="{col}"]')


@needs_browser
def test_a_board_typed_in_square_by_square_and_only_for_board_games(browser, site):
    """Typing runs across the squares; an uppercase letter, or ? and a letter, is a blank;
    the text form shows the board typed. Kelimatik, played without a board, has none."""
    open_page(browser, site, "?game=sozce")
    assert browser.find_element("id", "board-section").is_displayed()
    square(browser, 7, 6).send_keys("k")
    browser.switch_to.active_element.send_keys("a")
    browser.switch_to.active_element.send_keys("L")   # the blank standing for l
    browser.switch_to.active_element.send_keys("e")
    browser.switch_to.active_element.send_keys("?")
    browser.switch_to.active_element.send_keys("m")   # ? and a letter: a blank too
    assert board_shown(browser) == [(7, 6, "k"), (7, 7, "a"), (7, 8, "?l"), (7, 9, "e"),
                                    (7, 10, "?m")]
    assert square(browser, 7, 8).get_attribute("value") == "l"
    from selenium.webdriver.common.keys import Keys

    assert len(browser.find_elements("css selector", '#board input[tabindex="0"]')) == 1
    browser.switch_to.active_element.send_keys(Keys.TAB)  # one Tab past the 225 squares
    assert browser.switch_to.active_element.get_attribute("id") == "moves-go"
    square(browser, 7, 9).click()
    browser.switch_to.active_element.send_keys(Keys.ENTER)  # asks the moves, not the form
    settle(browser)
    assert browser.find_element("id", "board-out").text.startswith(
        "Hamle bulmak için yukarıdaki ıstakaya taş yazın")
    assert browser.find_element("id", "words-out").text == ""
    browser.find_element("css selector", "#board-paste summary").click()
    text = wait_until(lambda: browser.find_element("id", "board-text").get_attribute("value"),
                      "the text form shows the board when opened").split("\n")
    assert len(text) == 15 and text[7] == "......kaLeM...." and text[0] == "." * 15
    label = square(browser, 7, 7).get_attribute("aria-label")
    assert label == "8. satır, 8. sütun, kelime puanı 2 kat, orta kare", label
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element("id", "game")).select_by_value("kelimatik")
    settle(browser)
    assert not browser.find_element("id", "board-section").is_displayed()
    Select(browser.find_element("id", "game")).select_by_value("kelimelik")
    settle(browser)
    assert board_shown(browser)[0] == (7, 6, "k")  # the position kept


@needs_browser
def test_a_board_that_cannot_be_read_says_what_to_fix(browser, site):
    """A pasted text of the wrong shape or character, a rack longer than the game's (the
    API's over_limit, which "what_if" cannot lift: no "Yine de dene") and a cell the API
    refuses (invalid_board) are sentences naming the line, the figure or the square."""
    open_page(browser, site, "?rack=kalemkita")
    paste_board(browser, "\n".join(BOARD_TEXT.splitlines()[:14]))
    error = browser.find_element("css selector", "#board-out .error").text
    assert error == "Hata: Tahta metni 15 satır olmalı, bunda 14 satır var: satırları denetleyin."
    paste_board(browser, BOARD_TEXT[1:])
    error = browser.find_element("css selector", "#board-out .error").text
    assert error == "Hata: Tahta metninin 1. satırı 15 karakter olmalı, 14 karakter var: düzeltin."
    paste_board(browser, BOARD_TEXT.replace("......kaLe", ".....3kaLe", 1))
    error = browser.find_element("css selector", "#board-out .error").text
    assert error.startswith("Hata: Tahta metninin 8. satırının 6. karakteri (3) okunamadı"), error
    paste_board(browser, BOARD_TEXT)
    browser.find_element("id", "moves-go").click()
    settle(browser)
    error = browser.find_element("css selector", "#board-out .error").text
    assert error.startswith("Hata: Bu oyunun ıstakası en çok 7 taş, 2 joker alır: fazlasını "
                            "çıkarın."), error
    assert browser.find_elements("css selector", "#board-out .what-if-go") == []  # (no use)
    browser.execute_script("""window.fetch = async () => new Response(JSON.stringify({error: {
        code: "invalid_board", message: "the cell at row 3, column 4 is 'x'",
        details: {row: 3, col: 4}}}), {status: 422, headers: {"Content-Type": "application/json"}});""")
    browser.find_element("id", "moves-go").click()
    settle(browser)
    error = browser.find_element("css selector", "#board-out .error").text
    assert error.startswith("Hata: Tahtanın 4. satır, 5. sütunundaki kare okunamadı"), error
    browser.find_element("id", "play-go").click()  # "Hamlemi denetle": the same sentence
    settle(browser)
    error = browser.find_element("css selector", "#board-out .error").text
    assert error.startswith("Hata: Tahtanın 4. satır, 5. sütunundaki kare okunamadı"), error
    browser.refresh()


@needs_browser
def test_a_rack_the_game_cannot_deal_can_be_asked_anyway_on_the_board(browser, site):
    """POST /v1/moves refuses a rack the game cannot deal (two j's: kelimelik's bag has one),
    as the anagram does; the page says why in Turkish and offers "Yine de dene": the same
    question with "what_if": true, its moves listed and marked as a what if."""
    open_page(browser, site, "?rack=jjale")
    paste_board(browser, BOARD_TEXT)
    browser.find_element("id", "moves-go").click()
    settle(browser)
    error = browser.find_element("css selector", "#board-out .error").text
    assert error.startswith("Hata: Kelimelik torbasında 1 tane j var; bu ıstakada 2 var: "
                            "taşları düzeltin."), error
    assert browser.find_elements("css selector", "#moves .move") == []
    browser.find_element("css selector", "#board-out .what-if-go").click()
    settle(browser)
    asked = httpx.post(f"{site}/v1/moves", json={
        "game": "kelimelik", "board": board_cells(BOARD_TEXT), "rack": "jjale", "limit": 20,
        "what_if": True}).json()
    assert asked["moves"], asked
    listed = browser.find_elements("css selector", "#moves .move")
    assert [(b.get_attribute("data-word"), int(b.get_attribute("data-score")))
            for b in listed] == [(m["word"], m["score"]) for m in asked["moves"]]
    assert browser.find_element("css selector", "#board-out .what-if").text.startswith(
        "Bu oyunun dağıtmayacağı taşlarla (ya öyle olsaydı):")
    browser.find_element("id", "moves-go").click()  # asked again: the game's rule again
    settle(browser)
    assert browser.find_elements("css selector", "#board-out .what-if-go")


@needs_browser
def test_a_play_typed_on_the_board_is_checked_and_scored(browser, site):
    """The squares typed with "Yeni taşlarım" ticked are the play: POST /v1/play says it is
    legal and what it scores, or which rule it breaks, and judges each word it forms."""
    open_page(browser, site, "?game=kelimelik")
    browser.find_element("id", "board-fresh").click()

    def play(row: int, col: int, letters: str) -> None:
        square(browser, row, col).send_keys(letters[0])
        for letter in letters[1:]:
            browser.switch_to.active_element.send_keys(letter)

    def check() -> tuple[str, list[tuple[str, str]]]:
        browser.find_element("id", "play-go").click()
        settle(browser)
        words = [(e.get_attribute("data-word"), e.get_attribute("data-valid"))
                 for e in browser.find_elements("css selector", "#board-out .play-words li")]
        return browser.find_element("id", "play-verdict").text, words

    empty = [[""] * 15 for _ in range(15)]
    play(7, 6, "kale")
    asked = httpx.post(f"{site}/v1/play", json={"game": "kelimelik", "board": empty, "tiles": [
        {"row": 7, "col": 6 + i, "letter": x} for i, x in enumerate("kale")]}).json()
    assert asked["legal"] and asked["score"] > 0, asked
    verdict, words = check()
    assert verdict == f"Geçerli hamle: {asked['score']} puan", verdict
    assert words == [("kale", "true")]
    assert len(browser.find_elements("css selector", "#board .sq.fresh")) == 4
    play(3, 3, "e")  # a fifth new tile, off the line
    verdict, words = check()
    assert verdict.startswith("Yeni taşlar tek bir satırda ya da sütunda değil"), verdict
    assert browser.find_element("id", "play-verdict").get_attribute("data-reason") == "not_in_line"
    browser.find_element("id", "board-clear").click()
    play(7, 7, "lk")
    verdict, words = check()
    assert words == [("lk", "false")]
    assert verdict == "Taşlar kurallara uygun ama geçersiz kelime var: hamle puan almaz."
    assert "sözlükte yok" in browser.find_element("css selector", "#board-out .play-words").text
