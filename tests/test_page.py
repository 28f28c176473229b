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
from urllib.parse import urlsplit

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
    "kale", "elma", "lale", "kalem", "alem", "elmalık", "kel", "ela",  # from kale?[lm]
    "galip", "ikamet", "ilk"))]                                         # kalemkitap?ilgi
PAGE_KU_WORDS = [Candidate(w) for w in ("xweş", "xwîn", "şîn", "mêr", "mêran", "mêrane", "hêman",
                                        "nan")]


@pytest.fixture(scope="module")
def page_settings(tmp_path_factory) -> Settings:
    """Settings with a small lexicon and a TDK cache (kitap, kalem, ...)."""
    root = tmp_path_factory.mktemp("page")
    write_lexicon(compile_words(PAGE_WORDS), root / "data", "tr", SOURCE, created=CREATED)
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
    open_page(browser, site, "?rack=kale%3F%5Blm%5D&game=kelimatik")
    asked = httpx.post(f"{site}/v1/anagram", json={"rack": "kale?[lm]", "game": "kelimatik"})
    expected = [w["word"] for w in asked.json()["words"]]
    assert "elmalık" in expected
    shown = rack_words(browser)
    assert sorted(shown) == sorted(expected) and len(shown) == len(expected)
    lengths = [len(w) for w in shown]
    assert lengths == sorted(lengths, reverse=True)  # grouped by length, the longest first
    assert browser.find_element("id", "rack").get_attribute("value") == "kale?[lm]"
    assert browser.find_element("id", "game").get_attribute("value") == "kelimatik"
    assert query_of(browser) == "rack=kale%3F%5Blm%5D&game=kelimatik"
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
def test_errors_show_the_message_and_data_is_never_html(browser, site):
    open_page(browser, site, "?w=%3Cb%3Ex%3C%2Fb%3E&rack=kale%5Blm&game=kelimatik")
    assert "never closed" in browser.find_element("css selector", "#rack-out .error").text
    assert verdicts(browser) == [("<b>x</b>", "false", "invalid_chars")]
    assert browser.find_elements("css selector", "#words-out b") == []


@needs_browser
def test_the_provenance_of_the_lexicon(browser, site):
    open_page(browser, site)
    text = browser.find_element("id", "lexicons").text
    for shown in ("tests/service_helpers.py", "n/a", "Lisans", "Kaynak", "Sürüm",
                  str(len(compile_words(PAGE_WORDS).words))):
        assert shown in text


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
    open_page(browser, site, "?w=kitap+%C4%B0stanbul+evler+kalem&rack=kale%3F%5Blm%5D"
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
    assert "el başına ortalama en az 50 puan" in browser.find_element("id", "game-desc").text
    rack = browser.find_element("id", "rack")
    rack.send_keys("xweşîn", Keys.ENTER)
    settle(browser)
    asked = httpx.post(f"{site}/v1/anagram", json={"rack": "xweşîn", "game": "kelimatik-ku",
                                                    "lexicon": "ku"}).json()
    scores = {e.get_attribute("data-word"): e.get_attribute("data-score")
              for e in browser.find_elements("css selector", "#anagram-results [data-word]")}
    assert scores == {w["word"]: str(w["score"]) for w in asked["words"]}
    assert scores["xweş"] == "68"  # (x 5 + w 6 + e 1 + ş 5) × 4
    assert query_of(browser) == "rack=xwe%C5%9F%C3%AEn&game=kelimatik-ku&lex=ku"
    lexicons.select_by_value("tr")  # a Turkish lexicon brings a game for its letters
    settle(browser)
    assert games.first_selected_option.text == "Kelimelik"


@needs_browser
def test_every_game_s_example_rack_works_in_that_game(browser, site):
    """The placeholder kale?[lm] was an error in the default game (no two-letter tiles)."""
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
        assert error.startswith("Hata: ıstaka okunamadı") and "never closed" in error
        open_page(browser, url, "?rack=abcdefgh%C4%9F%C4%B1ijkl")
        error = browser.find_element("css selector", "#rack-out .error").text
        assert "Hata: ıstaka okunamadı ya da bu oyunun ıstakası değil" in error
        assert "kelimelik hand holds 7 tiles, not 14" in error


@needs_browser
def test_a_refused_report_says_why_and_keeps_the_form(browser, page_settings, tmp_path):
    """The server's message for a phrase; for a client over its hour's reports, when to
    send again (Retry-After, in minutes)."""
    app = create_app(page_settings.changed(reports=tmp_path / "reports.sqlite",
                             reports_per_hour=1))
    with serve_in_thread(app) as url:
        open_page(browser, url, "?w=dulda+tutmak%2C+evler")
        shown = report(browser, "dulda tutmak")
        assert shown.startswith("Bildirim gönderilemedi: ") and "(not_a_word)" in shown
        assert "is not a single word" in shown
        assert verdict_of(browser, "dulda tutmak").find_elements("css selector", ".report")
        assert report(browser, "evler").startswith("Teşekkürler: bildirim #1 ")
        shown = report(browser, "evler", kind="wrong", note="ikinci")
    later = re.fullmatch(r"Çok fazla bildirim: (\d+) dakika sonra yeniden deneyin\. Too many "
                         r"reports: try again in \1 minutes?\.", shown)
    assert later and 1 <= int(later[1]) <= 60, shown
    form = verdict_of(browser, "evler").find_element("css selector", ".report")
    assert form.find_element("tag name", "textarea").get_attribute("value") == "ikinci"
    assert [body["word"] for body in reports_sent(browser)] == ["dulda tutmak", "evler", "evler"]
