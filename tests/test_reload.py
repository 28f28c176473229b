"""Hot reload of a real `kelime serve` (1 and 2 workers) under a bounded client loop: by
SIGHUP and by POST /v1/admin/reload, with zero failed requests, every reply from exactly
one version, a broken build refused while the old one serves, a respawned worker on the
pinned version (never read from the disk again), and pinned builds never pruned."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from kelime.lexicon import Candidate, compile_words, write_lexicon
from kelime.lexicon.format import WORDS_FILE
from kelime.lexicon.write import BUILDS_DIR, KEEP_BUILDS
from tests.servers import start_kelime_serve, stop

TOKEN = "test-token-0123456789"
SOURCE = {"kind": "test", "name": "tests/test_reload.py", "licence": "n/a"}
BASE = ["kitap", "kalem", "ev"]
BODY = json.dumps({"words": ["kitap", "silgi", "defter"]}).encode()


def build(data: Path, *extra: str, force: bool = False) -> str:
    """Build `tr` from BASE plus `extra`; its version."""
    words = [Candidate(w) for w in [*BASE, *extra]]
    return write_lexicon(compile_words(words), data, "tr", SOURCE, created="2026-01-01T00:00:00Z",
                         force=force).manifest.version


def request(port: int, method: str, path: str, body: bytes | None = None,
            headers: dict | None = None) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)  # a new connection each
    try:                                                              # time: any worker answers
        conn.request(method, path, body=body, headers=headers or {})
        reply = conn.getresponse()
        return reply.status, json.loads(reply.read())
    finally:
        conn.close()


class Server:
    def __init__(self, proc: subprocess.Popen, port: int, log: Path):
        self.proc, self.port, self.log = proc, port, log

    def workers(self) -> list[int]:
        """The worker processes: the master's children (gunicorn forks them), zombies not."""
        out = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True,
                             text=True).stdout.split()
        found = []
        for pid in out:
            try:  # a child listed a moment ago may be gone (a worker replaced): skip it
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (FileNotFoundError, ProcessLookupError):
                continue
            if state != "Z":
                found.append(int(pid))
        return found

    def version(self) -> str:
        status, body = request(self.port, "POST", "/v1/validate", BODY,
                               {"Content-Type": "application/json"})
        assert status == 200, body
        return body["lexicon"]["version"]

    def settle(self, version: str, timeout: float = 15.0) -> None:
        """Wait until 20 replies in a row (new connections: every worker) come from `version`."""
        deadline, streak = time.monotonic() + timeout, 0
        while streak < 20:
            assert time.monotonic() < deadline, f"never settled on {version}: {self.log_text()}"
            streak = streak + 1 if self.version() == version else 0

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


@contextmanager
def serve(data: Path, tmp: Path, workers: int, **env_extra: str):
    log = tmp / f"serve-{workers}.log"
    env = {**os.environ, "KELIME_ADMIN_TOKEN": TOKEN, **env_extra}
    with open(log, "w") as out:
        proc, port = start_kelime_serve("--data", str(data), "--workers", str(workers),
                                        stdout=out, stderr=out, env=env)
    server = Server(proc, port, log)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, server.log_text()
            try:
                started = server.log_text().count("Application startup complete.")
                if started >= workers and request(port, "GET", "/readyz")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        yield server
    finally:
        stop(proc)


class Client(threading.Thread):
    """Two-word-kinds load: every reply's version and whether it knows `silgi`/`defter`."""

    def __init__(self, port: int, seconds: float = 60.0):
        super().__init__(daemon=True)
        self.port, self.until = port, time.monotonic() + seconds
        self.stop, self.replies, self.failures = threading.Event(), [], []

    def run(self) -> None:
        while not self.stop.is_set() and time.monotonic() < self.until:
            try:
                status, body = request(self.port, "POST", "/v1/validate", BODY,
                                       {"Content-Type": "application/json"})
            except OSError as e:
                self.failures.append(repr(e))
                continue
            if status != 200:
                self.failures.append((status, body))
                continue
            valid = tuple(r["valid"] for r in body["results"])
            self.replies.append((body["lexicon"]["version"], valid))


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_reload_by_sighup_and_admin_route_under_load(tmp_path, workers):
    data = tmp_path / "data"
    v1 = build(data)
    with serve(data, tmp_path, workers) as server:
        clients = [Client(server.port) for _ in range(2)]
        for c in clients:
            c.start()
        try:
            v2 = build(data, "silgi")
            os.kill(server.proc.pid, signal.SIGHUP)
            server.settle(v2)

            v3 = build(data, "silgi", "defter")
            status, body = request(server.port, "POST", "/v1/admin/reload", b"",
                                   {"Authorization": f"Bearer {TOKEN}"})
            assert (status, body["outcome"], body["lexicons"]) == (200, "reloaded", {"tr": v3})
            server.settle(v3)

            # A broken build: refused, logged, and the old one goes on serving.
            broken = build(data, "silgi", "defter", "silgiler")
            with open(data / "tr" / WORDS_FILE, "r+b") as f:
                f.write(b"\0" * 16)
            status, body = request(server.port, "POST", "/v1/admin/reload", b"",
                                   {"Authorization": f"Bearer {TOKEN}"})
            assert status == 409 and body["error"]["code"] == "reload_refused", body
            assert "does not match its manifest" in body["error"]["message"]
            assert body["error"]["details"]["serving"] == {"tr": v3}
            os.kill(server.proc.pid, signal.SIGHUP)
            wait_for(lambda: server.log_text().count("reload refused") == 2, 30,
                     server.log_text)
            server.settle(v3)
        finally:
            for c in clients:
                c.stop.set()
            for c in clients:
                c.join(timeout=30)
        want = ('kelime_reloads{outcome="refused"} 2.0', 'kelime_reloads{outcome="reloaded"} 2.0')
        deadline, streak = time.monotonic() + 15, 0
        while streak < 10:  # every worker has counted both refusals (new connections)
            assert time.monotonic() < deadline, request_text(server.port, "/metrics")
            metrics = request_text(server.port, "/metrics")
            streak = streak + 1 if all(w in metrics for w in want) else 0
    replies = [r for c in clients for r in c.replies]
    assert not [f for c in clients for f in c.failures]
    assert len(replies) > 50
    meaning = {v1: (True, False, False), v2: (True, True, False), v3: (True, True, True)}
    assert broken not in {v for v, _ in replies}
    for version, valid in replies:  # every reply from exactly one version, and consistent
        assert meaning[version] == valid
    assert {v for v, _ in replies} >= {v2, v3}


def request_text(port: int, path: str) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        return conn.getresponse().read().decode()
    finally:
        conn.close()


@pytest.mark.slow
def test_a_respawned_worker_serves_the_pinned_version_and_pins_are_never_pruned(tmp_path):
    data = tmp_path / "data"
    v1 = build(data)
    with serve(data, tmp_path, 2) as server:
        newer = [build(data, f"kelime{'x' * i}", force=True) for i in range(KEEP_BUILDS + 2)]
        victim = server.workers()[0]
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while victim in server.workers() or len(server.workers()) < 2:
            assert time.monotonic() < deadline, server.log_text()
            time.sleep(0.1)
        server.settle(v1)  # both workers, the respawned one too, serve the pinned build
        assert (data / BUILDS_DIR / f"tr-{v1}").is_dir()  # not pruned under the server
        os.kill(server.proc.pid, signal.SIGHUP)
        server.settle(newer[-1])
    build(data, "yeni", force=True)  # no server holds it now: pruned by the next build
    assert not (data / BUILDS_DIR / f"tr-{v1}").exists()


def test_without_a_token_there_is_no_admin_route_and_a_wrong_token_is_refused(tmp_path):
    from kelime.service.app import create_app
    from kelime.service.settings import Settings
    from tests.service_helpers import TestClient

    data = tmp_path / "data"
    build(data)
    with TestClient(create_app(Settings(data=data))) as client:
        assert client.post("/v1/admin/reload").status_code == 404
    with TestClient(create_app(Settings(data=data, admin_token=TOKEN))) as client:
        assert client.post("/v1/admin/reload").status_code == 401
        assert client.post("/v1/admin/reload",
                           headers={"Authorization": "Bearer wrong"}).status_code == 403
        v2 = build(data, "silgi")
        reply = client.post("/v1/admin/reload", headers={"Authorization": f"Bearer {TOKEN}"})
        assert reply.json() == {"outcome": "reloaded", "generation": 1, "lexicons": {"tr": v2}}
        assert client.post("/v1/validate", json={"words": ["silgi"]}).json()["all_valid"]
        again = client.post("/v1/admin/reload", headers={"Authorization": f"Bearer {TOKEN}"})
        assert again.json()["outcome"] == "unchanged"


@pytest.mark.slow
def test_a_pinned_build_damaged_on_disk_cannot_stop_a_respawned_worker(tmp_path):
    """Workers are forked with the lexicons the master loaded: a worker killed after its
    build was damaged on disk is replaced by one that serves the pinned build (it used to
    read the disk again, fail, and be retried later and later while the others served)."""
    data = tmp_path / "data"
    v1 = build(data)
    with serve(data, tmp_path, 2) as server:
        with open(data / "tr" / WORDS_FILE, "r+b") as f:
            f.write(b"\0" * 16)
        for victim in server.workers():  # both, one after the other
            os.kill(victim, signal.SIGKILL)
            wait_for(lambda v=victim: v not in server.workers() and len(server.workers()) == 2,
                     30, server.log_text)
        wait_for(lambda: server.log_text().count("Application startup complete.") == 4, 30,
                 server.log_text)
        server.settle(v1)
        assert server.proc.poll() is None


def wait_for(what, timeout: float, log) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, log()
        time.sleep(0.05)


def scrape(port: int, name: str, **labels) -> float:
    from tests.test_service_health import sample
    return sample(request_text(port, "/metrics"), name, **labels)


@pytest.mark.slow
def test_metrics_sum_every_worker_and_follow_reloads(tmp_path):
    data = tmp_path / "data"
    v1 = build(data)
    with serve(data, tmp_path, 2) as server:
        for _ in range(40):  # a new connection each: both workers answer some
            status, _ = request(server.port, "POST", "/v1/validate", BODY,
                                {"Content-Type": "application/json"})
            assert status == 200
        for _ in range(3):
            request_text(server.port, "/docs")
        wait_for(lambda: scrape(server.port, "kelime_http_requests_total", method="GET",
                                route="/docs", status="200") == 3 and
                 scrape(server.port, "kelime_words_validated_total", lexicon="tr",
                        verdict="valid") == 40, 30, server.log_text)  # written: WINDOW
        for _ in range(10):  # whichever worker answers, the sums are the same
            assert scrape(server.port, "kelime_http_requests_total", method="POST",
                          route="/v1/validate", status="200") == 40
            assert scrape(server.port, "kelime_words_validated_total", lexicon="tr",
                          verdict="valid") == 40
            assert scrape(server.port, "kelime_http_requests_total", method="GET",
                          route="/docs", status="200") == 3
            text = request_text(server.port, "/metrics")
            assert 'kelime_lexicon_info{lexicon="tr",sha256="' in text
            assert f'version="{v1}"' in text
        v2 = build(data, "silgi")
        status, _ = request(server.port, "POST", "/v1/admin/reload", b"",
                            {"Authorization": f"Bearer {TOKEN}"})
        assert status == 200  # every worker serves v2 (a SIGHUP says nothing of when)
        for _ in range(10):
            text = request_text(server.port, "/metrics")
            assert f'version="{v2}"' in text and f'version="{v1}"' not in text


@pytest.mark.slow
def test_the_access_log_is_one_json_line_a_request(tmp_path):
    data = tmp_path / "data"
    build(data)
    with serve(data, tmp_path, 1, KELIME_ACCESS_LOG="json") as server:
        assert request(server.port, "POST", "/v1/anagram", b'{"rack": "kalem"}')[0] == 200
        assert request(server.port, "GET", "/v1/words/kitap")[0] == 200

        def logged() -> list[dict]:
            return [json.loads(line) for line in server.log_text().splitlines()
                    if line.startswith("{")]

        wait_for(lambda: any(x["route"] == "/v1/words/{word:path}" for x in logged()), 30,
                 server.log_text)
        lines = logged()
    anagram = next(x for x in lines if x["route"] == "/v1/anagram")
    assert anagram["status"] == 200 and anagram["method"] == "POST" and anagram["ms"] > 0
    assert len(anagram["lexicon"]) == 12
    assert any(x["route"] == "/v1/words/{word:path}" for x in lines)


def test_the_board_word_graph_is_built_before_a_build_is_served(tmp_path):
    """The word graph of the board moves (`Lexicon.board_graph`) is built by the master before
    it forks, and by each worker as it loads a reload's build, before serving it: not in the
    first POST /v1/moves a worker answers for a build (~0.3-1 s inside that question and the
    searches' gate, per worker per build)."""
    data = tmp_path / "data"
    v1 = build(data)
    with serve(data, tmp_path, 1) as server:
        built = f"process {server.proc.pid} built the word graph of tr {v1} for board moves"
        assert built in server.log_text()
        [worker] = server.workers()
        v2 = build(data, "kelime", force=True)
        os.kill(server.proc.pid, signal.SIGHUP)
        server.settle(v2)
        assert f"process {worker} built the word graph of tr {v2} for board moves" \
            in server.log_text()
        status, body = request(server.port, "POST", "/v1/moves", json.dumps(
            {"board": [[""] * 15] * 15, "rack": "kelime"}).encode(),
            {"Content-Type": "application/json"})
        assert status == 200 and body["lexicon"]["version"] == v2, body
        frozen = {int(pid): int(count) for pid, count in re.findall(
            r"process (\d+) froze its (\d+) objects", server.log_text())}
    # each then moved them out of the garbage collector's walks (a full collection walked
    # the graph's ~21,000 nodes of the offline lexicon, ~11 ms, inside a question)
    assert frozen.keys() == {server.proc.pid, worker}, server.log_text()
    assert min(frozen.values()) > 10_000, frozen  # (the app, its modules: ~80,000)
