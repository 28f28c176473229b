"""`kelime define` and crawler.fetch: httpx + tenacity against the fake TDK (in a thread).
Retries run without sleeping via `fetch.retry_with(wait=wait_none())`."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import pairwise
from pathlib import Path
from urllib.parse import unquote

try:
    import resource
except ImportError:  # not POSIX
    resource = None

import httpx
import pytest
from click.testing import CliRunner
from tenacity import wait_none

from kelime.cli import cli
from kelime.crawler.fetch import MIB, Limits, fetch, lookup, make_client
from kelime.errors import FetchError
from kelime.tdk import store as cache

from .fake_tdk import entry, gzip_zeros, sense, serve_in_thread

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
    assert len(gts(fake)) == 1 and not db.exists()  # a failure creates no cache
    cache.open_cache(db, create=True).close()
    with make_client() as client, pytest.raises(FetchError, match="403"):
        lookup(db, "kitap", base_url=fake.base, client=client, fetcher=NO_WAIT)
    assert reply(db, "kitap")["outcome"] == "failed" and reply(db, "kitap")["status"] == 403


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


# --- hostile or broken servers: a tiny threaded http.server of our own ------------------------

BOMB_MIB = 128  # decoded; about 130 KB on the wire


ÇIÇEK = json.dumps([entry(900, "çiçek", [sense("Bitkilerin üreme organı")])],
                   ensure_ascii=False).encode()


class Hostile(BaseHTTPRequestHandler):
    """One misbehaviour per path: bomb, huge, drip, endless, charset, redirects (loop, chain,
    moved). Each request's path and monotonic arrival time go to `server.log`."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/robots.txt":  # no rules (what `lookup` reads first)
            return self._head(404, Content_Length="0")
        self.server.log.append((self.path, time.monotonic()))
        route = self.path.split("?")[0].strip("/").split("/")[0]
        try:
            getattr(self, "_" + route)()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up, as it should

    def _head(self, status=200, ctype="application/json", **headers):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        for k, v in headers.items():
            self.send_header(k.replace("_", "-"), v)
        self.end_headers()

    def _bomb(self):
        body = self.server.bomb
        self._head(Content_Encoding="gzip", Content_Length=str(len(body)))
        self.wfile.write(body)

    def _huge(self):  # a 900 MB reply
        self._head(Content_Length=str(900 * MIB))
        while True:
            self.wfile.write(b" " * MIB)

    def _drip(self):  # a byte every 0.2 s: each read is quick, the body never ends in time
        self._head(Content_Length="1000")
        for _ in range(1000):
            self.wfile.write(b" ")
            self.wfile.flush()
            time.sleep(0.2)

    def _endless(self):  # chunked, no last chunk
        self._head(Transfer_Encoding="chunked")
        while True:
            self.wfile.write(b"1\r\n \r\n")
            self.wfile.flush()
            time.sleep(0.01)

    def _charset(self):  # UTF-8 bytes, a header claiming Turkish ISO-8859-9
        self._head(ctype="text/html; charset=iso-8859-9", Content_Length=str(len(ÇIÇEK)))
        self.wfile.write(ÇIÇEK)

    def _redirect(self, to: str):
        self._head(302, ctype="text/html", Location=to, Content_Length="0")

    def _loop(self):  # /loop/a/… → /loop/b/… → /loop/a/…
        a, b = "/loop/a/", "/loop/b/"
        self._redirect(self.path.replace(a, b) if a in self.path else self.path.replace(b, a))

    def _chain(self):  # /chain/1 → /chain/2 → … never an answer
        n = int(self.path.split("/")[2])
        self._redirect(self.path.replace(f"/chain/{n}/", f"/chain/{n + 1}/"))

    def _moved(self):  # within this host: a redirect that ends well
        self._redirect("/gts?" + self.path.split("?", 1)[1])

    def _away(self):  # to the fake TDK, another host: refused
        self._redirect(self.server.target + "/gts?" + self.path.split("?", 1)[1])

    def _gts(self):
        self._head(Content_Length=str(len(ÇIÇEK)))
        self.wfile.write(ÇIÇEK)


@pytest.fixture(scope="module")
def bomb():
    return gzip_zeros(BOMB_MIB * MIB)


@pytest.fixture
def hostile(bomb, fake):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    server.daemon_threads = True
    server.log, server.bomb, server.target = [], bomb, fake.base
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    server.base = f"http://127.0.0.1:{server.server_address[1]}"
    yield server
    server.shutdown()
    server.server_close()


FAST = Limits(redirect_delay=0.05)


def ask(server, route: str, db, limits: Limits = FAST, word: str = "kitap") -> dict:
    with make_client(timeout=10) as client:
        return lookup(db, word, base_url=f"{server.base}/{route}", client=client,
                      fetcher=NO_WAIT, limits=limits)


def test_a_gzip_bomb_is_cut_at_the_cap_not_inflated(hostile, db):
    cache.open_cache(db, create=True).close()
    tracemalloc.start()
    try:
        with pytest.raises(FetchError, match="TDK's reply was over 8 MiB: not a dictionary"):
            ask(hostile, "bomb", db)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 * MIB  # the whole bomb is 128 MiB decoded (about 10 MiB here)
    assert len(hostile.log) == 1  # not retried
    row = reply(db, "kitap")
    assert row["outcome"] == "failed" and "over 8 MiB" in row["error"]
    assert row["final"] == 1  # the crawl does not ask it again before --max-age


def test_a_huge_reply_is_not_read_to_the_end(hostile, db):
    with pytest.raises(FetchError, match="over 8 MiB"):
        ask(hostile, "huge", db)
    assert len(hostile.log) == 1


@pytest.mark.parametrize("route", ["drip", "endless"])
def test_a_reply_that_never_ends_fails_at_the_deadline(hostile, db, route):
    """Each read is quick, the body never ends: it is cut at the deadline of the whole reply.
    Its head came in first (a reply that never begins fails at the deadline too, saying the
    same), so it is the trickling body that was cut."""
    began = []
    with make_client(timeout=10) as client, pytest.raises(
            FetchError, match="whole reply within 1 s"):  # it ran until killed
        client.event_hooks = {"response": [began.append]}  # called with a reply's head
        lookup(db, "kitap", base_url=f"{hostile.base}/{route}", client=client,
               fetcher=NO_WAIT, limits=Limits(deadline=1.0))
    assert [(r.url.path, r.status_code) for r in began] == [
        ("/robots.txt", 404), (f"/{route}/gts", 200)]
    assert len(hostile.log) == 1


def test_a_stalled_reply_fails_at_the_deadline_not_at_the_read_timeout(fake, db):
    fake.add_fault("kitap", "slow", 1, 3.0)
    with make_client(timeout=60) as client, pytest.raises(FetchError, match="within 0.5 s"):
        lookup(db, "kitap", base_url=fake.base, client=client, fetcher=NO_WAIT,
               limits=Limits(deadline=0.5))


def test_a_wrong_charset_is_ignored_the_body_is_utf8(hostile, db):
    result = ask(hostile, "charset", db, word="çiçek")
    assert [e["madde"] for e in result["entries"]] == ["çiçek"]
    assert reply(db, "çiçek")["body"] == ÇIÇEK.decode("utf-8")


def test_a_redirect_loop_fails_clearly_with_paced_hops(hostile, db):
    with pytest.raises(FetchError, match=r"redirects in a loop \(.*/loop/a/.* → .*/loop/a/"):
        ask(hostile, "loop/a", db)
    times = [t for _, t in hostile.log]
    assert len(times) == 2
    assert all(b - a >= 0.05 for a, b in pairwise(times))


def test_redirects_stop_after_a_few_hops(hostile, db):
    with pytest.raises(FetchError, match="redirected more than 5 times"):
        ask(hostile, "chain/1", db)
    assert len(hostile.log) == 6
    times = [t for _, t in hostile.log]
    assert all(b - a >= 0.05 for a, b in pairwise(times))


def test_a_redirect_within_the_host_is_followed(hostile, db):
    result = ask(hostile, "moved", db, word="çiçek")
    assert result["outcome"] == "ok" and [e["madde"] for e in result["entries"]] == ["çiçek"]


def test_a_redirect_to_another_host_is_refused_and_nothing_cached(hostile, fake, db):
    """`kelime define` followed it and cached the other host's answer as TDK's."""
    cache.open_cache(db, create=True).close()
    with pytest.raises(FetchError, match=r"redirected to http://127\.0\.0\.1:\d+/gts\?ara="
                                         r"kitap, off 127\.0\.0\.1:\d+: not followed"):
        ask(hostile, "away", db)
    assert gts(fake) == [] and len(hostile.log) == 1  # not retried, never asked there
    row = reply(db, "kitap")
    assert row["outcome"] == "failed" and cache.entries_for_word(cache.open_readonly(db),
                                                                  "kitap") == []


def test_a_retry_after_too_long_fails_at_once_saying_when(fake, db):
    fake.add_fault("kitap", "429", -1, 100000)
    with make_client() as client, pytest.raises(  # it slept for a day; now no wait at all
            FetchError, match=r"TDK asks to wait 100000 s: try again after \d{4}-\d\d-\d\d "):
        lookup(db, "kitap", base_url=fake.base, client=client)  # the real waits
    assert len(gts(fake)) == 1


@pytest.mark.parametrize("asked", ["1e400", "9" * 400, "Fri, 31 Dec 9999 23:59:59 GMT"])
def test_a_retry_after_of_any_size_fails_at_once_saying_a_week(fake, db, asked):
    """`Retry-After: 1e400` raised OverflowError out of the look-up."""
    fake.add_fault("kitap", "429", -1, asked)
    with make_client() as client, pytest.raises(
            FetchError, match=r"TDK asks to wait 604800 s: try again after \d{4}-\d\d-\d\d "):
        lookup(db, "kitap", base_url=fake.base, client=client)
    assert len(gts(fake)) == 1


@pytest.mark.parametrize("word", ["", "   ", "\t\n"])
def test_an_empty_word_is_refused_and_never_cached(fake, db, word):
    cache.open_cache(db, create=True).close()
    with make_client() as client, pytest.raises(FetchError, match="nothing to look up"):
        lookup(db, word, base_url=fake.base, client=client, fetcher=NO_WAIT)
    assert fake.log == [] and reply(db, "") is None


def test_an_unusable_cache_path_is_one_error_line(fake, tmp_path):
    too_long = tmp_path / ("a" * 300) / "c.sqlite"
    result = CliRunner().invoke(cli, ["define", "--cache", str(too_long), "--base-url",
                                      fake.base, "kitap"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.output.startswith("Error: cannot use cache") and "too long" in result.output


def run_define_on_a_full_disk(cache_path, base_url: str, word: str):
    """`kelime define` in a subprocess that may write no byte (RLIMIT_FSIZE = 1, SIGXFSZ
    ignored, so a write fails with EFBIG as on a full disk): works as root too."""
    def full_disk():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1, 1))

    return subprocess.run([str(Path(sys.executable).parent / "kelime"), "define", "--cache",
                           str(cache_path), "--base-url", base_url, word],
                          preexec_fn=full_disk, capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(resource is None or not hasattr(signal, "SIGXFSZ"),
                    reason="needs POSIX resource limits to simulate a full disk")
@pytest.mark.parametrize("existing, word, says", [
    (False, "kitap", "cannot write cache"),
    (True, "kitap", "cannot write cache"),
    (True, "kalem", "cannot write cache"),  # even reading needs room (SQLite's -shm file)
])
def test_a_full_disk_is_one_error_line(fake, db, existing, word, says):
    if existing:
        cache.open_cache(db, create=True).close()
    fake.add_fault("kalem", "403", -1)
    result = run_define_on_a_full_disk(db, fake.base, word)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and re.search(says, lines[0])
    assert db.exists() == existing  # nothing half-made left to block the next look-up
    if existing:
        assert reply(db, word) is None


def chattr(flag: str, *paths: Path) -> bool:
    return shutil.which("chattr") is not None and subprocess.run(
        ["chattr", flag, *map(str, paths)], capture_output=True).returncode == 0


@pytest.fixture
def frozen(tmp_path):
    """Caches even root cannot write (`chattr +i`): ``ro/c.sqlite`` in a frozen folder,
    ``rw/c.sqlite`` frozen in a writable one. Skipped where chattr cannot do it."""
    frozen = [tmp_path / "ro" / "c.sqlite", tmp_path / "ro", tmp_path / "rw" / "c.sqlite"]
    for folder in ("ro", "rw"):
        cache.open_cache(tmp_path / folder / "c.sqlite", create=True).close()
    if not chattr("+i", *frozen):
        chattr("-i", *frozen)
        pytest.skip("chattr +i is unavailable here (needs root and a filesystem like ext4)")
    try:
        yield tmp_path
    finally:
        assert chattr("-i", *frozen)


@pytest.mark.parametrize("path, word, says", [
    ("ro/c.sqlite", "kitap", "cannot write cache"),
    ("ro/new.sqlite", "kitap", "cannot write cache"),
    ("ro/sub/c.sqlite", "kitap", "cannot create the folder"),
    ("rw/c.sqlite", "kitap", "cannot write cache"),
    ("rw/c.sqlite", "kalem", "HTTP 403.*the failure was not recorded: cannot write cache"),
])
def test_a_read_only_cache_is_one_error_line(fake, frozen, path, word, says):
    fake.add_fault("kalem", "403", -1)
    result = CliRunner().invoke(cli, ["define", "--base-url", fake.base, "--cache",
                                      str(frozen / path), word])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.output.startswith("Error: ") and re.search(says, result.output)
    assert result.output.count("\n") == 1


def test_the_wait_for_a_turn_is_not_counted_against_the_deadline(fake, db):
    """The deadline bounds the site's reply, not our politeness: the delay after robots.txt
    (1.5 s here) took the whole 1 s deadline of the /gts request, and a quick reply failed
    "did not send its whole reply within 1 s" (under load, its head came or not)."""
    found = lookup(db, "kitap", base_url=fake.base, fetcher=NO_WAIT, delay=1.5,
                   limits=Limits(deadline=1.0))
    assert found["outcome"] == "ok" and found["entries"], found
    assert [r["path"] for r in fake.log][:2] == ["/robots.txt", "/gts?ara=kitap"]
