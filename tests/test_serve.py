"""`kelime serve` (gunicorn's arbiter, uvicorn workers, kelime's pins) on its worst day, with
real processes and real signals: its runtime folder removed, workers killed while reloads
land, SIGHUP while it starts, a hung (SIGSTOPped) worker, a half-written or edited build, the
admin reload answering only once every worker switched, and the master's own death (kill -9)
cleaned up by the next start."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from unittest.mock import ANY

import pytest

from kelime.lexicon import compile_words, write_lexicon
from kelime.lexicon.format import MANIFEST_FILE, WORDS_FILE
from service.metrics import RESERVE
from tests.servers import kelime_command, listening_socket, start_kelime_serve, stop, unused_port
from tests.service_helpers import KU_WORDS, KURDISH
from tests.test_reload import BODY, SOURCE, TOKEN, Server, build, request, serve, wait_for

AUTH = {"Authorization": f"Bearer {TOKEN}"}
JSON = {"Content-Type": "application/json"}


def admin_reload(server: Server) -> tuple[int, dict]:
    return request(server.port, "POST", "/v1/admin/reload", b"", AUTH)


def runtime_folder(server: Server, tmp: Path | None = None) -> Path:
    """The master's runtime folder (named by its pid) in `tmp` (default: this machine's)."""
    found = list((tmp or Path(tempfile.gettempdir())).glob(f"kelime-serve-{server.proc.pid}-*"))
    assert len(found) == 1, found
    return found[0]


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
    """A tmp cleaner removes the runtime folder: requests are still answered (no 500), a
    SIGHUP still reloads every worker, a killed worker is replaced and serves, the master
    makes the folder again, and SIGTERM stops it all and removes the folder."""
    data = tmp_path / "data"
    build(data)
    with serve(data, tmp_path, 2) as server:
        runtime = runtime_folder(server)
        wait_for(lambda: shutil.rmtree(runtime, ignore_errors=True) or not runtime.exists(), 10,
                 server.log_text)  # (the workers write in it meanwhile, as under a cleaner)
        for path in ("/v1/lexicons", "/v1/validate?word=ev", "/nowhere"):  # new metric labels
            assert request(server.port, "GET", path)[0] != 500
        v2 = build(data, "silgi")
        os.kill(server.proc.pid, signal.SIGHUP)
        server.settle(v2)
        assert admin_reload(server) == (200, {"outcome": "unchanged", "generation": 3,
                                              "lexicons": {"tr": v2}})  # every worker on v2
        replace_worker(server)
        for _ in range(20):  # new connections: both workers, the respawned one too
            assert server.version() == v2
        assert (runtime / "metrics").is_dir()
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=60) == 0, server.log_text()
        assert not server.workers()
    assert not runtime.exists()


@pytest.mark.slow
def test_a_runtime_folder_someone_else_made_again_is_never_followed(tmp_path):
    """A tmp cleaner removes the runtime folder and another user makes it again first (its
    name is in /tmp for all to see), with pins naming a build of theirs at a higher
    generation: every worker loaded it and served its words. Now a worker follows no pins
    from a folder that is not its user's own (and says so), the master writes none there,
    and once that folder is gone they follow the master again."""
    data, theirs = tmp_path / "data", tmp_path / "theirs"
    v1, stranger = build(data), build(theirs, "sahte")
    with serve(data, tmp_path, 2) as server:
        runtime = runtime_folder(server)
        record = json.loads((runtime / "pins.json").read_text())
        record.update(generation=10**9, lexicons={"tr": str((theirs / "tr").resolve())},
                      older={})
        made, elsewhere = tmp_path / "made", tmp_path / "elsewhere"
        made.mkdir()
        (made / "pins.json").write_text(json.dumps(record))
        elsewhere.mkdir()  # files named as the workers, that the master must not remove
        for pid in server.workers():
            (elsewhere / str(pid)).write_text("theirs")
        (made / "workers").symlink_to(elsewhere)
        made.chmod(0o777)  # anyone's to write in; and, when the test may, nobody's own
        if os.getuid() == 0:
            os.chown(made, 65534, 65534)

        def taken() -> bool:  # (the workers make it again meanwhile: take it before them)
            shutil.rmtree(runtime, ignore_errors=True)
            with contextlib.suppress(OSError):
                made.rename(runtime)
            return not made.exists()

        wait_for(taken, 10, server.log_text)
        wait_for(lambda: server.log_text().count("follows no pins while") >= 2, 30,
                 server.log_text)
        os.kill(server.proc.pid, signal.SIGHUP)
        wait_for(lambda: "not this user's own folder" in server.log_text().split(
            "follows no pins while")[-1], 30, server.log_text)
        victim = replace_worker(server)  # its replacement follows no pins there either
        wait_for(lambda: server.log_text().count("follows no pins while") >= 3, 30,
                 server.log_text)
        for _ in range(20):  # new connections: both workers
            assert server.version() == v1 != stranger
        assert json.loads((runtime / "pins.json").read_text())["generation"] == 10**9
        assert (elsewhere / str(victim)).read_text() == "theirs"
        shutil.rmtree(runtime)  # gone: the master's own again on the next reload
        v2 = build(data, "silgi")
        os.kill(server.proc.pid, signal.SIGHUP)
        server.settle(v2)
    assert stranger not in server.log_text()


def test_a_worker_allocates_no_metrics_file_in_a_folder_others_may_write_in(tmp_path):
    """The metrics folder of a runtime folder someone else made again: a worker allocated its
    files there, through a link of theirs to a file of the server's user if they wished."""
    from service.metrics import reserve

    folder, victim = tmp_path / "metrics", tmp_path / "precious"
    folder.mkdir()
    folder.chmod(0o777)
    victim.write_bytes(b"keep")
    (folder / f"counter_{os.getpid()}.db").symlink_to(victim)
    assert reserve(str(folder)) is False
    assert victim.read_bytes() == b"keep" and len(list(folder.iterdir())) == 1
    folder.chmod(0o700)  # its own: still never through a link
    assert reserve(str(folder)) is False and victim.read_bytes() == b"keep"
    (folder / f"counter_{os.getpid()}.db").unlink()
    assert reserve(str(folder)) is True


@pytest.mark.slow
def test_kill_and_reload_races_leave_one_version(tmp_path):
    """18 trials of a worker killed around a reload (before it, after it, while its
    replacement boots), each order 6 times at random moments: afterwards every worker
    serves the newest build, and the admin reload (which answers once every worker serves
    the pinned generation) says so, and no request after its 200 meets an older build."""
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
                time.sleep(rng.uniform(0.05, 0.5))
            if order != "hup-kill":
                os.kill(server.proc.pid, signal.SIGHUP)
            status, body = admin_reload(server)
            assert status == 200 and body["lexicons"] == {"tr": newest}, (trial, order, body)
            for _ in range(6):
                assert server.version() == newest, (trial, order, server.log_text())
            wait_for(lambda v=victim: v not in server.workers() and len(server.workers()) == 2,
                     30, server.log_text)
        assert server.proc.poll() is None


@pytest.mark.slow
@pytest.mark.parametrize("to", ["master", "group"])
def test_sighup_at_every_moment_of_start_up(tmp_path, to):
    """SIGHUPs from the moment `kelime serve` takes them (its first lines) until its workers
    run, and once they do: each is a reload, none kills the server or a worker, and no
    worker is restarted for it. Sent to the master (`kill -HUP PID`), or to its whole
    process group, as a closed terminal, `timeout` or `kill -HUP -PGID` do."""
    data = tmp_path / "data"
    v1 = build(data)
    log = tmp_path / "serve.log"
    with open(log, "w") as out:
        proc, port = start_kelime_serve("--data", str(data), "--workers", "2", stdout=out,
                                        stderr=out, start_new_session=True,
                                        env={**os.environ, "KELIME_ADMIN_TOKEN": TOKEN})
    server = Server(proc, port, log)
    hangup = (lambda: proc.send_signal(signal.SIGHUP)) if to == "master" else (
        lambda: os.killpg(proc.pid, signal.SIGHUP))
    try:
        wait_for(lambda: takes_sighup(proc.pid), 30, server.log_text)
        start = time.monotonic()  # one every 2 ms: none between gunicorn taking the signal
        while time.monotonic() < start + 3.0:  # and its workers' start is missed (each came
            assert proc.poll() is None, server.log_text()  # to gunicorn's own reload once)
            hangup()
            time.sleep(0.002)
        wait_for(lambda: server.log_text().count("Application startup complete.") >= 2, 60,
                 server.log_text)
        server.settle(v1)
        workers = sorted(server.workers())
        reloads = server.log_text().count("reload unchanged")
        assert reloads >= 1, server.log_text()
        hangup()  # once they serve
        wait_for(lambda: server.log_text().count("reload unchanged") > reloads, 30,
                 server.log_text)
        server.settle(v1)
        assert proc.poll() is None and sorted(server.workers()) == workers
        text = server.log_text()
        assert text.count("Started server process") == 2, text  # no worker killed, replaced
        assert "SIGHUP" not in text, text
    finally:
        stop(proc)


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "workers", "then"), [(signal.SIGTTIN, 1, 2),
                                                      (signal.SIGTTOU, 2, 1)])
def test_ttin_or_ttou_while_starting_is_a_worker_more_or_fewer_once_it_serves(tmp_path, sig,
                                                                            workers, then):
    """TTIN (a worker more) or TTOU (one fewer) sent while `kelime serve` starts, in a
    process group of the sender's session (`make serve` in a terminal, a script; not
    systemd's, whose own session the kernel spares these): they stopped the master, the
    default action, and it never listened. They are held back as SIGHUP is, and are
    gunicorn's once it is ready."""
    data = tmp_path / "data"
    build(data)
    log = tmp_path / "serve.log"
    with open(log, "w") as out:
        proc, port = start_kelime_serve("--data", str(data), "--workers", str(workers),
                                        stdout=out, stderr=out, process_group=0,
                                        env={**os.environ, "KELIME_ADMIN_TOKEN": TOKEN})
    server = Server(proc, port, log)
    try:
        wait_for(lambda: takes_sighup(proc.pid), 30, server.log_text)  # its first lines
        proc.send_signal(sig)
        wait_for(lambda: state(proc.pid) == "T" or (
            len(server.workers()) == then
            and f"Handling signal: {sig.name[3:].lower()}" in server.log_text()), 60,
            server.log_text)
        assert state(proc.pid) != "T", f"{sig.name} stopped the master: {server.log_text()}"
        assert request(port, "GET", "/readyz")[0] == 200, server.log_text()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGCONT)
        stop(proc)


def state(pid: int) -> str:
    """The process's state letter (/proc/PID/stat): R, S, T (stopped), Z…"""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def takes_sighup(pid: int) -> bool:
    """Whether the process holds SIGHUP back or has a handler for it (/proc/PID/status,
    SigBlk or SigCgt bit 0)."""
    status = Path(f"/proc/{pid}/status").read_text()
    masks = [line for line in status.splitlines() if line.startswith(("SigBlk:", "SigCgt:"))]
    return any(int(mask.split()[1], 16) & (1 << (signal.SIGHUP - 1)) for mask in masks)


@pytest.mark.slow
def test_admin_reload_answers_once_every_worker_switched(tmp_path):
    """Keep-alive connections opened before the reload (so held by both workers) each ask
    at once after the 200: none may answer from the old build, and none is dropped (the
    workers switch in place)."""
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
def test_a_hung_worker_is_named_by_the_reload_then_replaced(tmp_path):
    """A SIGSTOPped worker switches to nothing and accepts nothing: the admin reload answers
    504 naming it once KELIME_WORKER_TIMEOUT has passed, gunicorn kills it for its missed
    heartbeat and forks a replacement on the new builds, and the next reload is a 200. The
    other worker served on throughout."""
    data = tmp_path / "data"
    build(data)
    with serve(data, tmp_path, 2, KELIME_WORKER_TIMEOUT="4") as server:
        hung, other = server.workers()
        os.kill(hung, signal.SIGSTOP)
        try:
            newest = build(data, "silgi")
            status, body = admin_reload(server)
            assert status == 504 and body["error"]["code"] == "reload_incomplete", body
            assert list(body["error"]["details"]["lagging"]) == [str(hung)], body
            assert server.version() == newest  # the other worker switched
            wait_for(lambda: hung not in server.workers() and len(server.workers()) == 2, 30,
                     server.log_text)
        finally:
            if hung in server.workers():
                os.kill(hung, signal.SIGCONT)
        assert f"WORKER TIMEOUT (pid:{hung})" in server.log_text()
        assert admin_reload(server) == (200, {"outcome": "unchanged", "generation": 3,
                                              "lexicons": {"tr": newest}})
        server.settle(newest)
        assert other in server.workers()


def ask(conn: http.client.HTTPConnection) -> dict:
    conn.request("POST", "/v1/validate", body=BODY, headers=JSON)
    reply = conn.getresponse()
    return json.loads(reply.read())


@pytest.mark.slow
def test_a_worker_that_cannot_switch_is_replaced_on_the_new_build(tmp_path):
    """The new build is verified by the master and then damaged before one worker (held
    stopped meanwhile) loads it. That worker must not keep the old build beside the other's
    new one: it stops, and gunicorn forks its replacement from the master, whose memory
    holds the new build as verified."""
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
        wait_for(lambda: f"worker {slow} cannot switch" in server.log_text(), 30,
                 server.log_text)
        wait_for(lambda: slow not in server.workers() and len(server.workers()) == 2, 30,
                 server.log_text)
        for _ in range(20):  # new connections: both workers
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
        assert body["error"]["details"]["serving"] == {"ku": ku, "tr": tr}
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
def test_a_killed_master_takes_its_workers_and_the_next_start_cleans_up(tmp_path):
    """(In a temporary folder of its own: any other `kelime serve` starting on this machine,
    another test's, would clean the killed one's folder up before the test looks.)"""
    data, temp = tmp_path / "data", tmp_path / "tmp"
    build(data)
    temp.mkdir()
    with serve(data, tmp_path, 2, TMPDIR=str(temp), KELIME_WORKER_TIMEOUT="2") as server:
        dead = subprocess.Popen(["true"])
        dead.wait()
        stale = Path(tempfile.mkdtemp(prefix=f"kelime-serve-{dead.pid}-", dir=temp))
        unmarked = Path(tempfile.mkdtemp(prefix="kelime-serve-", dir=temp))  # older kelime's
        runtime, workers = runtime_folder(server, temp), server.workers()
        server.proc.kill()
        server.proc.wait(timeout=10)
        wait_for(lambda: not any(Path(f"/proc/{pid}").exists() for pid in workers), 30,
                 server.log_text)  # they saw their master go
        assert runtime.exists() and stale.exists()
    with serve(data, tmp_path, 1, TMPDIR=str(temp)) as again:
        assert not runtime.exists() and not stale.exists()
        assert runtime_folder(again, temp).exists()
    assert unmarked.exists()  # not ours to judge
    unmarked.rmdir()


@pytest.mark.slow
def test_an_admin_reload_on_a_worker_whose_master_died_signals_nobody(tmp_path):
    """kill -9 of the master: its workers serve on until they notice (within half of
    KELIME_WORKER_TIMEOUT). An admin reload meanwhile was a 500 (the master's pid was gone),
    and would have sent SIGHUP to whatever process had taken that pid since."""
    data, temp = tmp_path / "data", tmp_path / "tmp"
    build(data)
    temp.mkdir()
    with serve(data, tmp_path, 1, TMPDIR=str(temp)) as server:
        workers = server.workers()
        server.proc.kill()
        server.proc.wait(timeout=10)
        status, body = admin_reload(server)
        assert status == 504 and body["error"]["code"] == "reload_timeout", body
        assert f"the master (pid {server.proc.pid}) is gone" in body["error"]["message"]
        wait_for(lambda: not any(Path(f"/proc/{pid}").exists() for pid in workers), 30,
                 server.log_text)


@pytest.mark.slow
def test_sigterm_in_a_sighup_storm_exits_0_and_leaves_nothing(tmp_path):
    """SIGHUPs that keep coming while the server stops: each was a reload, which made the
    runtime folder again once it was removed, and one that came while Python finalised the
    master (which gives every signal it handled its default action back) killed it: exit
    -1 (SIGHUP), the folder left behind."""
    data, temp = tmp_path / "data", tmp_path / "tmp"
    build(data)
    temp.mkdir()
    with serve(data, tmp_path, 2, TMPDIR=str(temp)) as server:
        runtime = runtime_folder(server, temp)
        stopped = threading.Event()

        def storm() -> None:
            deadline = time.monotonic() + 60
            while not stopped.is_set() and time.monotonic() < deadline:
                try:
                    os.kill(server.proc.pid, signal.SIGHUP)  # (a zombie takes them too)
                except ProcessLookupError:  # reaped
                    return
                time.sleep(0.0002)

        hangups = threading.Thread(target=storm)
        hangups.start()
        try:
            wait_for(lambda: "reload unchanged" in server.log_text(), 30, server.log_text)
            server.proc.send_signal(signal.SIGTERM)
            assert server.proc.wait(timeout=60) == 0, server.log_text()
        finally:
            stopped.set()
            hangups.join()
    assert not runtime.exists()


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


@pytest.mark.parametrize("taken", ["a live server's", "a file", "no folder"])
def test_a_socket_path_that_cannot_be_ours_stops_the_start(tmp_path, taken):
    """gunicorn removes whatever socket is at --socket and binds its own: a second replica
    given a live one's path took it over silently, and removed it when it stopped, leaving
    the first one out of nginx's reach for good (and its SIGTERM a traceback)."""
    data, path = tmp_path / "data", tmp_path / "run" / "kelime.sock"
    build(data)
    if taken != "no folder":
        path.parent.mkdir()
    live = unix_listener(path) if taken == "a live server's" else None
    if taken == "a file":
        path.write_text("")
    proc = subprocess.Popen(kelime_command("serve", "--data", str(data), "--port",
                                           str(unused_port()), "--socket", str(path)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        stop(proc)
        raise AssertionError(f"it serves on {taken} {path}") from None
    finally:
        if live is not None:
            live.close()
    assert proc.returncode == 1 and "Traceback" not in err, err
    said = {"a live server's": f"cannot listen on {path}: another server listens on it",
            "a file": f"--socket {path} is not a socket",
            "no folder": f"--socket {path}: there is no folder {path.parent}"}[taken]
    assert f"Error: {said}" in err, err


@pytest.mark.slow
def test_the_socket_a_killed_server_left_is_taken(tmp_path):
    data, path = tmp_path / "data", tmp_path / "run" / "kelime.sock"
    build(data)
    path.parent.mkdir()
    unix_listener(path).close()  # the file stays; nobody listens (kill -9)
    log = tmp_path / "serve.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(kelime_command("serve", "--data", str(data), "--port",
                                               str(unused_port()), "--socket", str(path)),
                                stdout=out, stderr=out)
    try:
        wait_for(lambda: unix_ok(path), 60, log.read_text)
    finally:
        stop(proc)


def unix_ok(path: Path) -> bool:
    try:
        return unix_request(path, "GET", "/readyz", b"", {})[0] == 200
    except OSError:
        return False


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


@pytest.mark.slow
def test_only_the_balancer_names_clients_and_it_cannot_lock_the_operator_out(tmp_path):
    """A local process on the replica's TCP port cannot pick its address with
    X-Forwarded-For (the reports' and the admin's limits count its connection's), even with
    a proxy trusted on another address; a request through the balancer's unix socket names
    its client, but may not call the admin route, so no wrong token sent through the
    balancer counts against anyone; and the operator on the unix socket is not the TCP
    peers' client: their wrong tokens never lock it out."""
    from kelime.service.routes.admin import TRIES

    data, sock = tmp_path / "data", tmp_path / "run" / "kelime.sock"
    sock.parent.mkdir(mode=0o750)
    build(data)
    wrong = {"Authorization": "Bearer wrong-token-0123456789"}
    log = tmp_path / "serve.log"
    with listening_socket() as tcp, open(log, "w") as out:
        unix = unix_listener(sock)
        proc, port = start_kelime_serve(
            "--data", str(data), "--workers", "1", sock=tcp, also=(unix,), stdout=out,
            stderr=out,
            env={**os.environ, "KELIME_ADMIN_TOKEN": TOKEN, "KELIME_REPORTS":
                 str(tmp_path / "reports.sqlite"), "KELIME_REPORTS_PER_HOUR": "3",
                 "KELIME_FORWARDED_ALLOW_IPS": "10.9.9.9"})
        unix.close()
    server = Server(proc, port, log)
    try:
        wait_for(lambda: request_ok(port), 60, server.log_text)
        # TCP: forged addresses buy nothing
        statuses = [request(port, "POST", "/v1/admin/reload", b"",
                            {**wrong, "X-Forwarded-For": f"10.0.0.{n}"})[0]
                    for n in range(TRIES + 2)]
        assert statuses == [403] * TRIES + [429] * 2, statuses
        reports = [request(port, "POST", "/v1/reports", json.dumps(
            {"word": f"kelimeee{'e' * n}", "kind": "missing"}).encode(),
            {**JSON, "X-Forwarded-For": f"10.1.0.{n}"})[0] for n in range(5)]
        assert reports == [202] * 3 + [429] * 2, reports
        # the balancer's socket: each forwarded client is its own, and admin is not there
        via = [unix_request(sock, "POST", "/v1/reports", json.dumps(
            {"word": "kalemler", "kind": "missing"}).encode(),
            {**JSON, "X-Forwarded-For": f"203.0.113.{n}"})[0] for n in range(5)]
        assert via == [202] * 5, via
        for _ in range(TRIES + 2):
            status, body = unix_request(sock, "POST", "/v1/admin/reload", b"",
                                        {**wrong, "X-Forwarded-For": "203.0.113.9"})
            assert status == 404 and "not through the balancer" in body["error"]["message"]
        # the operator on the socket, without X-Forwarded-For: not locked out by the above
        assert unix_request(sock, "POST", "/v1/admin/reload", b"", AUTH)[0] == 200
    finally:
        stop(proc)


def unix_listener(path: Path):
    import socket

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(128)
    return listener


def request_ok(port: int) -> bool:
    try:
        return request(port, "GET", "/readyz")[0] == 200
    except OSError:
        return False


def unix_request(path: Path, method: str, target: str, body: bytes,
                 headers: dict) -> tuple[int, dict]:
    import socket

    conn = http.client.HTTPConnection("localhost", timeout=10)
    conn.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.sock.settimeout(10)
    conn.sock.connect(str(path))
    try:
        conn.request(method, target, body=body, headers=headers)
        reply = conn.getresponse()
        return reply.status, json.loads(reply.read())
    finally:
        conn.close()


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


def reserved(server: Server, runtime: Path) -> None:
    """Wait until every worker has allocated its metrics files (`metrics.reserve`): one that
    allocates while `fill` writes fails, and gives back what it had, room for what `fill`
    meant to refuse. A worker reserves after its first reply, on the next metrics flush."""
    def done() -> bool:
        request(server.port, "GET", "/healthz")  # a new connection: either worker
        files = [runtime / "metrics" / f"{kind}_{pid}.db"
                 for pid in server.workers() for kind in ("counter", "histogram")]
        return all(file.exists() and file.stat().st_size >= RESERVE for file in files)
    wait_for(done, 30, server.log_text)


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
        assert runtime_folder(server, small).parent == small
        fill(small)
        paths = ["/v1/lexicons", "/v1/games", "/nowhere", "/healthz", "/v1/validate?word=ev"]
        for path in paths * 4:  # new series, on new connections: both workers
            assert request(server.port, "GET", path)[0] in (200, 404), server.log_text()
        replace_worker(server)
        wait_for(lambda: server.log_text().count("Application startup complete.") == 3, 60,
                 server.log_text)
        for path in paths * 4:  # the new worker cannot allocate its files: it serves on
            assert request(server.port, "GET", path)[0] in (200, 404), server.log_text()
        assert server.proc.poll() is None and len(server.workers()) == 2
        text = server.log_text()
        assert "counts no metrics" in text, text
        assert "Traceback" not in text, text


@pytest.mark.slow
def test_a_full_runtime_disk_costs_reloads_and_metrics_never_the_server(tmp_path):
    """On a full disk, a reload whose pins cannot be written changes nothing: the master
    kept the new builds while the workers kept the old ones, so a worker forked in place of
    a dead one answered from the new build beside the other's old one. And a worker forked
    after a tmp cleaner removed the folder, on a disk full again, stopped the master
    (pre_fork's write raised in gunicorn's loop). Once there is room, the reload lands."""
    data = tmp_path / "data"
    v1 = build(data)
    with small_tmpfs(tmp_path / "small", "8m") as small, \
            serve(data, tmp_path, 2, TMPDIR=str(small), KELIME_WORKER_TIMEOUT="3") as server:
        runtime = runtime_folder(server, small)
        reserved(server, runtime)
        fill(small)
        v2 = build(data, "silgi")
        status, body = admin_reload(server)
        assert status == 504 and body["error"]["code"] == "reload_timeout", body
        replace_worker(server)
        server.settle(v1)  # every worker, the new one too: one version
        shutil.rmtree(runtime)  # a tmp cleaner; the disk fills again
        fill(small)
        replace_worker(server)
        assert server.proc.poll() is None, server.log_text()
        server.settle(v1)
        assert "cannot write" in server.log_text()
        (small / "filler").unlink()
        assert admin_reload(server) == (200, {"outcome": "reloaded", "generation": 2,
                                              "lexicons": {"tr": v2}})
        server.settle(v2)


@pytest.mark.slow
def test_a_replacement_worker_reads_neither_the_games_nor_the_report_store(tmp_path):
    """A worker forked in place of a dead one gets from the master what the master checked
    at start. It used to load the game profiles and write to the report store again, and a
    profile being edited, or the store locked by a maintainer's write, made it fail to boot:
    gunicorn then stopped the whole server ("Worker failed to boot"), validate included."""
    data, games, store = tmp_path / "data", tmp_path / "games", tmp_path / "reports.sqlite"
    build(data)
    games.mkdir()
    profile = (Path(__file__).parent.parent / "kelime" / "games" / "profiles" / "kelimatik.toml")
    (games / "ozel.toml").write_text(profile.read_text().replace('name = "kelimatik"',
                                                                 'name = "ozel"'))
    ozel = json.dumps({"words": ["kitap"], "game": "ozel"}).encode()
    with serve(data, tmp_path, 2, KELIME_GAMES=str(games), KELIME_REPORTS=str(store)) as server:
        (games / "ozel.toml").write_text("name = ")  # an edit half saved
        maintainer = sqlite3.connect(store, isolation_level=None)
        maintainer.execute("BEGIN IMMEDIATE")  # a write that takes its time
        try:
            replace_worker(server)
            wait_for(lambda: server.log_text().count("Application startup complete.") == 3,
                     60, server.log_text)
            for _ in range(10):  # new connections: both workers
                assert request(server.port, "POST", "/v1/validate", ozel, JSON)[0] == 200
        finally:
            maintainer.execute("ROLLBACK")
            maintainer.close()
        assert server.proc.poll() is None, server.log_text()


def test_a_broken_game_profile_stops_the_start_saying_which(tmp_path):
    data, games = tmp_path / "data", tmp_path / "games"
    build(data)
    games.mkdir()
    (games / "ozel.toml").write_text("name = ")
    with listening_socket() as sock:
        done = subprocess.run(kelime_command("serve", "--data", str(data), "--fd",
                                             str(sock.fileno())), pass_fds=[sock.fileno()],
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, "KELIME_GAMES": str(games)})
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"Error: {games / 'ozel.toml'}: not valid TOML" in done.stderr


@pytest.mark.slow
def test_the_metrics_of_workers_that_died_still_count(tmp_path):
    from tests.test_reload import scrape

    data = tmp_path / "data"
    build(data)
    with serve(data, tmp_path, 2) as server:
        total = 0
        for _ in range(3):
            for _ in range(15):
                assert request(server.port, "POST", "/v1/validate", BODY, JSON)[0] == 200
            total += 15
            wait_for(lambda t=total: scrape(server.port, "kelime_http_requests_total",
                                            method="POST", route="/v1/validate",
                                            status="200") == t, 30, server.log_text)
            replace_worker(server)  # once written (a kill -9 loses what is not: WINDOW)
        for _ in range(5):  # whichever worker answers, nothing a dead one counted is lost
            assert scrape(server.port, "kelime_http_requests_total", method="POST",
                          route="/v1/validate", status="200") == total


def test_an_app_without_the_master_reloads_by_the_same_rule(tmp_path):
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


@pytest.mark.slow
def test_pins_that_are_not_pins_are_ignored_and_a_cleaner_costs_no_500(tmp_path):
    """pins.json garbled (by someone else: the master writes it whole) left every worker
    behind for good, its follower dead; and an admin reload whose runtime folder a cleaner
    removed while it looked at the workers was a 500. Now the garbled file is ignored, the
    next reload rewrites it, and a reload answers 200 or 504, never 500."""
    import threading

    data = tmp_path / "data"
    build(data)
    with serve(data, tmp_path, 2, KELIME_WORKER_TIMEOUT="4") as server:  # (a 504 in 4 s)
        runtime = runtime_folder(server)
        for n, garbage in enumerate((b'{"generation": "9"}', b"[]", b"{}", b"\xff")):
            (runtime / "pins.json").write_bytes(garbage)
            newest = build(data, f"yeni{n}")
            assert admin_reload(server) == (200, {"outcome": "reloaded", "generation": ANY,
                                                  "lexicons": {"tr": newest}})
            server.settle(newest)
        assert len(server.workers()) == 2 and "cannot follow" not in server.log_text()
        stop_cleaning = threading.Event()

        def cleaner() -> None:
            while not stop_cleaning.is_set():
                shutil.rmtree(runtime, ignore_errors=True)
                stop_cleaning.wait(0.01)

        thread = threading.Thread(target=cleaner, daemon=True)
        thread.start()
        try:
            statuses = [admin_reload(server)[0] for _ in range(4)]
        finally:
            stop_cleaning.set()
            thread.join(10)
        assert set(statuses) <= {200, 504}, statuses
        assert "Exception in ASGI application" not in server.log_text()
        assert admin_reload(server)[0] == 200  # the folder made again, the workers seen
