"""`kelime serve`'s supervisor on its worst day, with real processes and real signals: its
runtime folder removed, workers killed while reloads land, SIGHUP while it starts, a
half-written or edited build, the admin reload answering only once every worker switched,
and its own death (kill -9) cleaned up by the next start."""

from __future__ import annotations

import http.client
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from kelime.lexicon import compile_words, write_lexicon
from kelime.lexicon.format import MANIFEST_FILE, WORDS_FILE
from tests.servers import kelime_command, listening_socket, start_kelime_serve, stop
from tests.service_helpers import KU_WORDS, KURDISH
from tests.test_reload import BODY, SOURCE, TOKEN, Server, build, request, serve

AUTH = {"Authorization": f"Bearer {TOKEN}"}
JSON = {"Content-Type": "application/json"}


def admin_reload(server: Server) -> tuple[int, dict]:
    return request(server.port, "POST", "/v1/admin/reload", b"", AUTH)


def wait_for(what, timeout: float, log) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, log()
        time.sleep(0.05)


def runtime_folder(server: Server) -> Path:
    """The supervisor's runtime folder, as its workers were told it."""
    environ = Path(f"/proc/{server.workers()[0]}/environ").read_bytes().split(b"\0")
    found = next(v for v in environ if v.startswith(b"PROMETHEUS_MULTIPROC_DIR="))
    return Path(found.split(b"=", 1)[1].decode()).parent


def replace_worker(server: Server, workers: int = 2) -> int:
    """kill -9 one worker; wait until another took its place. The victim's pid."""
    victim = server.workers()[0]
    os.kill(victim, signal.SIGKILL)
    wait_for(lambda: victim not in server.workers() and len(server.workers()) == workers, 30,
             server.log_text)
    return victim


def validate_ku(server: Server) -> tuple[int, dict]:
    return request(server.port, "POST", "/v1/validate",
                   json.dumps({"words": ["av"], "lexicon": "ku"}).encode(), JSON)


@pytest.mark.slow
def test_runtime_folder_removed_then_sighup(tmp_path):
    """A tmp cleaner removes the runtime folder: the supervisor makes it again, a SIGHUP
    still reloads, a killed worker is replaced and answers (no 500), SIGTERM still stops it
    all and removes the folder."""
    data = tmp_path / "data"
    build(data)
    with serve(data, tmp_path, 2) as server:
        runtime = runtime_folder(server)
        shutil.rmtree(runtime)
        for path in ("/v1/lexicons", "/v1/validate?word=ev", "/nowhere"):  # new metric labels
            assert request(server.port, "GET", path)[0] != 500  # before it is made again too
        v2 = build(data, "silgi")
        os.kill(server.proc.pid, signal.SIGHUP)
        server.settle(v2)
        replace_worker(server)
        for _ in range(20):  # new connections: both workers, the respawned one too
            assert server.version() == v2
            status, _ = request(server.port, "GET", "/v1/validate?word=kitap")
            assert status == 200
        assert (runtime / "metrics").is_dir()
        assert "was removed: made it again" in server.log_text()
        metrics = request(server.port, "GET", "/healthz")
        assert metrics[0] == 200
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=60) == 0, server.log_text()
        assert not server.workers()
    assert not runtime.exists()


@pytest.mark.slow
def test_kill_and_reload_races_leave_one_version(tmp_path):
    """18 trials of a worker killed around a reload (before it, after it, while its
    replacement boots), each order 6 times at random moments: afterwards every worker
    serves the newest build, and the admin reload (which answers once every worker serves
    the pinned generation) says so."""
    data = tmp_path / "data"
    build(data)
    rng = random.Random(18)
    with serve(data, tmp_path, 2) as server:
        for trial in range(18):
            newest = build(data, f"kelime{trial}")
            order = ["kill-hup", "hup-kill", "kill-wait-hup"][trial % 3]
            victim = server.workers()[0]
            if order == "hup-kill":
                os.kill(server.proc.pid, signal.SIGHUP)
                time.sleep(rng.uniform(0, 0.3))
            os.kill(victim, signal.SIGKILL)
            if order == "kill-wait-hup":  # the replacement is booting when the reload lands
                time.sleep(rng.uniform(0.2, 1.0))
            if order != "hup-kill":
                os.kill(server.proc.pid, signal.SIGHUP)
            wait_for(lambda v=victim: v not in server.workers() and len(server.workers()) == 2,
                     30, server.log_text)
            status, body = admin_reload(server)
            assert status == 200 and body["lexicons"] == {"tr": newest}, (trial, order, body)
            for _ in range(6):
                assert server.version() == newest, (trial, order, server.log_text())
        assert server.proc.poll() is None
        assert "failed to start" not in server.log_text()


@pytest.mark.slow
@pytest.mark.parametrize("to", ["supervisor", "group"])
def test_sighup_at_every_moment_of_start_up(tmp_path, to):
    """SIGHUPs from the moment `kelime serve` takes them (its first lines) until its workers
    run, and once they do: each is a reload, none kills the server or a worker. Sent to the
    supervisor (`kill -HUP PID`), or to its whole process group, as a closed terminal,
    `timeout` or `kill -HUP -PGID` do (workers once died of it, all at once)."""
    data = tmp_path / "data"
    v1 = build(data)
    log = tmp_path / "serve.log"
    with open(log, "w") as out:
        proc, port = start_kelime_serve("--data", str(data), "--workers", "2", stdout=out,
                                        stderr=out, start_new_session=True,
                                        env={**os.environ, "KELIME_ADMIN_TOKEN": TOKEN})
    server = Server(proc, port, log)
    hangup = (lambda: proc.send_signal(signal.SIGHUP)) if to == "supervisor" else (
        lambda: os.killpg(proc.pid, signal.SIGHUP))
    try:
        wait_for(lambda: catches_sighup(proc.pid), 30, server.log_text)
        start = time.monotonic()
        for moment in (0.0, 0.05, 0.15, 0.3, 0.5, 0.8, 1.2, 1.6, 2.2, 3.0):
            time.sleep(max(0.0, start + moment - time.monotonic()))
            assert proc.poll() is None, (moment, server.log_text())
            hangup()
        wait_for(lambda: server.log_text().count("Application startup complete.") >= 2, 60,
                 server.log_text)
        server.settle(v1)
        workers = sorted(server.workers())
        hangup()  # once they serve
        wait_for(lambda: server.log_text().count("Received SIGHUP") >= 2, 30, server.log_text)
        server.settle(v1)
        assert proc.poll() is None and sorted(server.workers()) == workers
        text = server.log_text()
        assert "reload unchanged" in text, text
        assert text.count("Started server process") == 2, text  # no worker killed, replaced
    finally:
        stop(proc)


def catches_sighup(pid: int) -> bool:
    """Whether the process has a handler for SIGHUP (/proc/PID/status, SigCgt bit 0)."""
    status = Path(f"/proc/{pid}/status").read_text()
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & (1 << (signal.SIGHUP - 1)))


@pytest.mark.slow
def test_admin_reload_answers_once_every_worker_switched(tmp_path):
    """Keep-alive connections opened before the reload (so held by both workers) each ask
    at once after the 200: none may answer from the old build."""
    data = tmp_path / "data"
    build(data)
    with serve(data, tmp_path, 2) as server:
        held = [http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
                for _ in range(12)]
        try:
            for n in range(10):
                for conn in held:  # (re)connected now, before the reload
                    ask(conn)
                newest = build(data, f"yeni{n}")
                status, body = admin_reload(server)
                assert status == 200 and body["lexicons"] == {"tr": newest}, body
                assert [ask(conn)["lexicon"]["version"] for conn in held] == [newest] * 12, n
        finally:
            for conn in held:
                conn.close()


@pytest.mark.slow
def test_a_reload_answer_goes_to_the_worker_that_asked(tmp_path):
    """A worker asks for a reload and is killed before the answer (a stopped worker makes
    the answer wait); the worker started in its place asks for its own. Each worker numbers
    its asks from 1: the answer to the dead one's went to the newcomer, whose client got
    the older generation as the answer to its reload."""
    import threading

    data = tmp_path / "data"
    build(data)
    with serve(data, tmp_path, 2) as server:
        asker, stopped = server.workers()
        os.kill(stopped, signal.SIGSTOP)  # it switches to nothing, and accepts nothing
        try:
            replies = []

            def reload_in_background() -> threading.Thread:
                def run():
                    try:
                        replies.append(admin_reload(server))
                    except OSError as e:  # the asker was killed: no reply
                        replies.append(repr(e))
                thread = threading.Thread(target=run, daemon=True)
                thread.start()
                return thread

            build(data, "eski")
            first = reload_in_background()
            wait_for(lambda: server.log_text().count("reload reloaded") == 1, 30,
                     server.log_text)
            os.kill(asker, signal.SIGKILL)
            first.join(30)
            wait_for(lambda: server.log_text().count("Application startup complete.") == 3,
                     60, server.log_text)
            newest = build(data, "yeni")
            second = reload_in_background()
            wait_for(lambda: server.log_text().count("reload reloaded") == 2, 30,
                     server.log_text)
        finally:
            os.kill(stopped, signal.SIGCONT)
        second.join(60)
        status, body = replies[-1]
        assert status == 200 and body["lexicons"]["tr"] == newest, (replies, server.log_text())


def ask(conn: http.client.HTTPConnection) -> dict:
    conn.request("POST", "/v1/validate", body=BODY, headers=JSON)
    reply = conn.getresponse()
    return json.loads(reply.read())


@pytest.mark.slow
def test_a_worker_that_cannot_switch_never_serves_the_old_build_beside_the_new(tmp_path):
    """The new build is verified by the supervisor and then damaged before one worker (held
    stopped meanwhile) loads it. That worker used to keep the old build while the other
    served the new one: two versions until the next reload. It now stops, its replacement
    cannot load the damaged build either (retried with a backoff), and only the new version
    is served."""
    data = tmp_path / "data"
    build(data)
    with serve(data, tmp_path, 2) as server:
        slow, other = server.workers()
        os.kill(slow, signal.SIGSTOP)
        try:
            newest = build(data, "silgi")
            os.kill(server.proc.pid, signal.SIGHUP)
            wait_for(lambda: "reload reloaded" in server.log_text(), 30, server.log_text)
            wait_for(lambda: f"worker {other} serves" in server.log_text(), 30,
                     server.log_text)
            with open(data / "tr" / WORDS_FILE, "r+b") as damaged:  # in place, after the check
                damaged.seek(64)
                damaged.write(b"\xff" * 8)
        finally:
            os.kill(slow, signal.SIGCONT)
        # the stopped worker tried the damaged build; (before) it kept the old one and served
        # on, (now) it stopped and its replacement failed to start
        wait_for(lambda: "does not match its manifest" in server.log_text(), 30,
                 server.log_text)
        wait_for(lambda: "before it served" in server.log_text(), 60, server.log_text)
        for _ in range(20):  # new connections: whichever worker is up
            assert server.version() == newest, server.log_text()
        assert server.proc.poll() is None


@pytest.mark.slow
def test_a_half_written_lexicon_is_refused_and_the_old_one_serves_on(tmp_path):
    data = tmp_path / "data"
    tr = build(data)
    ku = write_lexicon(compile_words(KU_WORDS, KURDISH), data, "ku", SOURCE,
                       created="2026-01-01T00:00:00Z", alphabet=KURDISH).manifest.version
    with serve(data, tmp_path, 2) as server:
        half = data / ".builds" / "ku-half"
        half.mkdir()
        (half / "words.marisa").write_bytes(b"")  # the rest, manifest.json last, never came
        (data / "ku").unlink()
        (data / "ku").symlink_to(half)
        build(data, "silgi")
        status, body = admin_reload(server)
        assert status == 409 and body["error"]["code"] == "reload_refused", body
        assert "ku" in body["error"]["details"]["refused"]
        assert "has no manifest.json" in body["error"]["message"]
        assert body["error"]["details"]["serving"] == {"tr": tr, "ku": ku}
        for _ in range(10):
            assert server.version() == tr  # nothing switched, tr neither
            status, reply = validate_ku(server)
            assert status == 200 and reply["lexicon"]["version"] == ku, reply


@pytest.mark.slow
def test_an_edited_alphabet_is_refused_on_reload(tmp_path):
    """The alphabet judges words but is not hashed itself: a manifest whose alphabet does
    not match its (versioned) anagram index is refused, and the old build serves on."""
    data = tmp_path / "data"
    v1 = build(data)
    with serve(data, tmp_path, 2) as server:
        v2 = build(data, "silgi")
        manifest = data / "tr" / MANIFEST_FILE
        raw = json.loads(manifest.read_text())
        raw["alphabet"] = raw["alphabet"].replace("q", "") + "q"  # add a letter, same version
        manifest.write_text(json.dumps(raw))
        status, body = admin_reload(server)
        assert status == 409, body
        assert "says the alphabet is" in body["error"]["message"]
        assert f"its version ({v2})" in body["error"]["message"]
        assert server.version() == v1


@pytest.mark.slow
def test_a_killed_supervisor_takes_its_workers_and_the_next_start_cleans_up(tmp_path):
    """(In a temporary folder of its own: any other `kelime serve` starting on this machine,
    another test's, would clean the killed one's folder up before the test looks.)"""
    data, temp = tmp_path / "data", tmp_path / "tmp"
    build(data)
    temp.mkdir()
    with serve(data, tmp_path, 2, TMPDIR=str(temp)) as server:
        stale = Path(tempfile.mkdtemp(prefix="kelime-serve-", dir=temp))  # an older crash's
        (stale / "supervisor").write_text("4242\n")
        unmarked = Path(tempfile.mkdtemp(prefix="kelime-serve-", dir=temp))  # older kelime's
        runtime, workers = runtime_folder(server), server.workers()
        server.proc.kill()
        server.proc.wait(timeout=10)
        wait_for(lambda: not any(Path(f"/proc/{pid}").exists() for pid in workers), 30,
                 server.log_text)  # they saw their channel close
        assert runtime.exists() and stale.exists()
    with serve(data, tmp_path, 1, TMPDIR=str(temp)) as again:
        assert not runtime.exists() and not stale.exists()
        assert runtime_folder(again).exists()
    assert unmarked.exists()  # not ours to judge
    unmarked.rmdir()


@pytest.mark.parametrize("token", ["short", "x" * 15])
def test_a_short_admin_token_stops_the_start(tmp_path, token):
    data = tmp_path / "data"
    build(data)
    with listening_socket() as sock:
        done = subprocess.run(kelime_command("serve", "--data", str(data), "--fd",
                                             str(sock.fileno())), pass_fds=[sock.fileno()],
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, "KELIME_ADMIN_TOKEN": token})
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"KELIME_ADMIN_TOKEN has {len(token)} characters: use 16 or more" in done.stderr


def test_wrong_admin_tokens_are_limited(tmp_path):
    from kelime.service.app import create_app
    from kelime.service.routes.admin import TRIES
    from kelime.service.settings import Settings
    from tests.service_helpers import TestClient

    data = tmp_path / "data"
    build(data)
    with TestClient(create_app(Settings(data=data, admin_token=TOKEN))) as client:
        for _ in range(TRIES):
            wrong = client.post("/v1/admin/reload", headers={"Authorization": "Bearer guess"})
            assert wrong.status_code == 403
        for headers in ({"Authorization": "Bearer guess"}, AUTH):  # the right one too now
            limited = client.post("/v1/admin/reload", headers=headers)
            assert limited.status_code == 429, limited.text
            assert limited.json()["error"]["code"] == "too_many_tries"
            assert 0 < int(limited.headers["Retry-After"]) <= 60
    with TestClient(create_app(Settings(data=data, admin_token=TOKEN))) as client:
        assert client.post("/v1/admin/reload", headers=AUTH).status_code == 200


def test_forged_forwarded_addresses_buy_no_more_wrong_tokens(tmp_path):
    """With loopback trusted as a proxy (what deploy/nginx/kelime.conf tells replicas), a
    caller on the replica's port wrote a new X-Forwarded-For with each wrong token and was
    never limited. They now all count as one client; the peer without the header keeps its
    own count."""
    from kelime.service.routes.admin import TRIES

    data = tmp_path / "data"
    build(data)
    wrong = {"Authorization": "Bearer wrong-token-0123456789"}
    with serve(data, tmp_path, 1, KELIME_FORWARDED_ALLOW_IPS="127.0.0.1") as server:
        statuses = [request(server.port, "POST", "/v1/admin/reload", b"",
                            {**wrong, "X-Forwarded-For": f"10.0.{n // 250}.{n % 250 + 1}"})[0]
                    for n in range(TRIES + 3)]
        assert statuses == [403] * TRIES + [429] * 3, statuses
        assert request(server.port, "POST", "/v1/admin/reload", b"", wrong)[0] == 403
        assert admin_reload(server)[0] == 200


@contextmanager
def small_tmpfs(path: Path, size: str = "4m"):
    """A tmpfs of `size` mounted at `path` (skips unless this process may mount one)."""
    path.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                             capture_output=True, text=True)
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(folder: Path) -> None:
    """Write into `folder` until its file system is full."""
    with open(folder / "filler", "wb", buffering=0) as out:
        try:
            while True:
                out.write(b"\0" * (1 << 16))
        except OSError:
            pass


@pytest.mark.slow
def test_a_full_runtime_folder_costs_metrics_not_workers(tmp_path):
    """Once the disk of the runtime folder is full, workers serve on: each new series used to
    be a page of a sparse memory-mapped file written on a full disk, a SIGBUS that killed
    the worker on its first request (and each one respawned the same way)."""
    data = tmp_path / "data"
    build(data)
    with small_tmpfs(tmp_path / "small") as small, \
            serve(data, tmp_path, 2, TMPDIR=str(small)) as server:
        assert runtime_folder(server).parent == small
        fill(small)
        paths = ["/v1/lexicons", "/v1/games", "/nowhere", "/healthz", "/v1/validate?word=ev"]
        for path in paths * 4:  # new series, on new connections: both workers
            assert request(server.port, "GET", path)[0] in (200, 404), server.log_text()
        replace_worker(server)  # its metrics cannot be added to the dead's: logged
        wait_for(lambda: server.log_text().count("Application startup complete.") == 3, 60,
                 server.log_text)
        for path in paths * 4:  # the new worker cannot allocate its files: it serves on
            assert request(server.port, "GET", path)[0] in (200, 404), server.log_text()
        assert server.proc.poll() is None and len(server.workers()) == 2
        text = server.log_text()
        # a worker that reserved before the disk filled counts on; one that could not says so
        # (and the supervisor says so of the dead's file it cannot grow)
        assert "counts no metrics" in text or "could not be added" in text, text
        assert "Traceback" not in text, text


@pytest.mark.slow
def test_a_dead_workers_metrics_are_added_into_one_file(tmp_path):
    from tests.test_reload import scrape

    data = tmp_path / "data"
    build(data)
    with serve(data, tmp_path, 2) as server:
        folder, total, dead = runtime_folder(server) / "metrics", 0, []
        for _ in range(3):
            for _ in range(15):
                assert request(server.port, "POST", "/v1/validate", BODY, JSON)[0] == 200
            total += 15
            dead.append(replace_worker(server))
        for _ in range(5):  # whichever worker answers, nothing a dead one counted is lost
            assert scrape(server.port, "kelime_http_requests_total", method="POST",
                          route="/v1/validate", status="200") == total
        files = {p.name for p in folder.iterdir()}
        assert {"counter_dead.db", "histogram_dead.db"} <= files
        assert not [name for name in files for pid in dead if f"_{pid}.db" in name], files


def test_metrics_that_cannot_be_added_up_are_logged_not_fatal(tmp_path, caplog):
    """`retire_apart` runs in a child process: whatever kills it (a SIGBUS on a full disk,
    here a damaged file) leaves the supervisor running and says so."""
    from kelime.service.runtime import retire_apart

    damaged = struct.pack("i", 64) + bytes(4) + struct.pack("i", 40) + b"\xff" * 52
    (tmp_path / "counter_4242.db").write_bytes(damaged)  # a 40-byte key past its end
    retire_apart(tmp_path, 4242)
    assert "the metrics of worker [4242] could not be added" in caplog.text
    assert (tmp_path / "counter_4242.db").exists()  # kept: nothing counted twice or lost


def test_an_app_without_supervisor_reloads_by_the_same_rule(tmp_path):
    """create_app alone (uvicorn --factory): unchanged when nothing changed, a half-written
    lexicon refused with the old one serving, the new build once it is whole."""
    from kelime.service.app import create_app
    from kelime.service.settings import Settings
    from tests.service_helpers import TestClient

    data = tmp_path / "data"
    v1 = build(data)
    with TestClient(create_app(Settings(data=data, admin_token=TOKEN))) as client:
        assert client.post("/v1/admin/reload", headers=AUTH).json()["outcome"] == "unchanged"
        (data / "ku").mkdir()
        refused = client.post("/v1/admin/reload", headers=AUTH)
        assert refused.status_code == 409, refused.text
        assert "ku" in refused.json()["error"]["details"]["refused"]
        (data / "ku").rmdir()
        v2 = build(data, "silgi")
        reply = client.post("/v1/admin/reload", headers=AUTH).json()
        assert (reply["outcome"], reply["lexicons"], reply["generation"]) == ("reloaded",
                                                                            {"tr": v2}, 3)
        assert client.post("/v1/validate", json={"words": ["silgi"]}).json()["all_valid"]
    assert v1 != v2
