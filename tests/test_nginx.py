"""The shipped nginx config (deploy/nginx/nginx.conf and kelime.conf) in front of two real
`kelime serve` replicas on unix sockets: failover with no failed request when one is killed,
gzip, nginx's own limits, player reports (POST /v1/reports) going to the one writer replica,
never elsewhere, and the attacks nginx holds for them (slow bodies, slow readers, malformed
chunks, pipelining, one address's flood of connections).

Real processes (tests/servers.py): the bootstrap lexicons built with `kelime build` (the
session's), two `kelime serve` replicas, each on a free TCP port of 127.0.0.1 (its admin,
/metrics, /readyz) and on a unix socket (nginx's way in), and nginx in the foreground with
its own prefix, pid and logs in a temporary folder (deploy/nginx/standalone.py renders the
shipped files for it). Clients come from several loopback addresses (127.x.y.z), which
nginx's per-address limit counts apart. Skips when nginx is not installed: `apt-get install
nginx`.
"""

from __future__ import annotations

import gzip
import http.client
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from kelime.reports import ReportStore
from tests.servers import listening_socket, start_kelime_serve, unused_port

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("kelime_nginx_standalone",
                                               ROOT / "deploy" / "nginx" / "standalone.py")
standalone = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(standalone)

_spec = importlib.util.spec_from_file_location("kelime_flood", ROOT / "benchmarks" / "flood.py")
flood = sys.modules["kelime_flood"] = importlib.util.module_from_spec(_spec)  # (dataclasses)
_spec.loader.exec_module(flood)

_spec = importlib.util.spec_from_file_location("kelime_attacks",
                                               ROOT / "benchmarks" / "attacks.py")
attacks = sys.modules["kelime_attacks"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(attacks)

NGINX = standalone.find_nginx()
if NGINX is None:
    pytest.skip("nginx is not installed (neither on PATH nor /usr/sbin/nginx): "
                "apt-get install nginx to run the load-balancer tests", allow_module_level=True)

pytestmark = pytest.mark.slow  # real nginx and kelime serve processes, every test

RACKS = ["kalemsi", "kitapev", "ardıçlı", "sepetçi"]
BODY_LIMIT = 4 * 1024 * 1024   # the app's KELIME_MAX_BODY_BYTES, client_max_body_size 4m


def shipped(directive: str) -> str:
    """The value of a directive of the shipped site (the first one)."""
    found = re.search(rf"^\s*{directive}\s+([^;]+);", standalone.SITE.read_text(encoding="utf-8"),
                      re.MULTILINE)
    assert found, f"kelime.conf lost `{directive}`"
    return found.group(1)


LIMIT = int(shipped("limit_conn").split()[1])               # requests under way per address
SEND_TIMEOUT = int(shipped("send_timeout").rstrip("s"))
FRESH = "127.0.0.2"   # the address of the fresh clients the attacks must not starve


# --- processes ---------------------------------------------------------------------------

def status_of(port: int, path: str) -> int | None:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        conn.request("GET", path)
        return conn.getresponse().status
    except OSError:
        return None


@dataclass
class Replica:
    port: int            # its own TCP port: /readyz, /metrics, admin
    proc: subprocess.Popen
    log: Path
    sock: Path           # its unix socket: nginx's way in

    @property
    def address(self) -> str:
        """How nginx names it (its access log's upstream addresses)."""
        return f"unix:{self.sock}"


def stop_process(proc: subprocess.Popen) -> None:
    """Stop a replica: SIGTERM to `kelime serve` (its supervisor stops its workers), then
    SIGKILL to whatever is left in the session it was started in (only its own processes)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait(timeout=10)


def crash(replica: Replica, timeout: float = 10) -> None:
    """kill -9 a whole replica, as a crashed machine or container loses it: the `kelime
    serve` supervisor and its worker processes at once (the session it was started in).
    (A worker whose supervisor alone is killed exits too, but gracefully, on SIGTERM: that
    is a shutdown, not a crash.) Returns once the port refuses connections."""
    os.killpg(replica.proc.pid, signal.SIGKILL)
    replica.proc.wait(timeout=timeout)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", replica.port), timeout=1).close()
        except ConnectionRefusedError:
            return
        except OSError:
            pass  # reset or timed out: the listening socket is still going away
        time.sleep(0.01)
    raise AssertionError(f"port {replica.port} still answers after kill -9")


def unix_listener(path: Path) -> socket.socket:
    """A unix socket listening at `path` (one left by a replica killed with -9 is replaced)."""
    path.unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(2048)
    return listener


def start_replica(data: Path, log: Path, sock: Path, port: int | None = None,
                  env: dict[str, str] | None = None) -> Replica:
    """One `kelime serve` process (1 worker) on `port` (a free one by default) and on the
    unix socket `sock`, both bound here and handed over, with `env` added to this
    environment (and no KELIME_REPORTS* or KELIME_FORWARDED_ALLOW_IPS of it: only `env` says
    whether this replica stores reports; nginx comes in on the unix socket, whose
    X-Forwarded-For alone a replica believes). Not waited for: see `wait_ready`."""
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("KELIME_REPORTS", "KELIME_FORWARDED_ALLOW_IPS"))}
    with open(log, "ab") as out, unix_listener(sock) as unix:
        proc, port = start_kelime_serve(
            "--data", str(data), "--workers", "1", sock=listening_socket(port or 0),
            also=(unix,), stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            env={**environ, **(env or {})})
    return Replica(port, proc, log, sock)


def wait_ready(started: list[Replica], timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    for replica in started:
        while status_of(replica.port, "/readyz") != 200:
            if replica.proc.poll() is not None:
                pytest.fail(f"kelime serve exited with {replica.proc.returncode}:\n"
                            f"{replica.log.read_text(errors='replace')}")
            if time.monotonic() > deadline:
                pytest.fail(f"kelime serve on {replica.port} not ready within {timeout:g} s")
            time.sleep(0.05)


@contextmanager
def replicas(data: Path, folder: Path, count: int = 2,
             envs: list[dict[str, str]] | None = None, datas: list[Path] | None = None):
    """`count` `kelime serve` processes (1 worker each), yielded once all answer /readyz;
    `envs[i]`: the environment variables of the i-th (KELIME_REPORTS=... and the like);
    `datas[i]`: its own data folder (one machine each), else all serve `data`.
    Their sockets are in a folder of their own, mode 0750 as shipped, with a short path (a
    unix socket's must be under 108 bytes)."""
    started: list[Replica] = []
    run = Path(tempfile.mkdtemp(prefix="kelime-run-"))
    run.chmod(0o750)
    try:
        for i in range(count):
            started.append(start_replica(datas[i] if datas else data,
                                         folder / f"replica-{i}.log",
                                         run / f"replica-{i}.sock",
                                         env=envs[i] if envs else None))
        wait_ready(started)
        yield started
    finally:
        for replica in started:
            stop_process(replica.proc)
        shutil.rmtree(run, ignore_errors=True)


@dataclass
class Nginx:
    port: int
    prefix: Path
    proc: subprocess.Popen

    @property
    def access_log(self) -> Path:
        return self.prefix / "logs" / "kelime.access.log"

    @property
    def error_log(self) -> str:
        return (self.prefix / "logs" / "kelime.error.log").read_text(errors="replace")

    def records(self) -> dict[str, dict]:
        """request id -> its access-log line: status, bytes (of the body sent), tried (the
        upstream addresses tried, in order), rt and urt (nginx's and the replica's time)."""
        out = {}
        for line in self.access_log.read_text(errors="replace").splitlines():
            m = re.search(r'" (\d{3}) (\d+) rid=(\S+) upstream="([^"]*)" .* rt=(\S+) '
                          r'urt="([^"]*)"', line)
            if m:
                urt = re.findall(r"[\d.]+", m.group(6))
                out[m.group(3)] = {"status": int(m.group(1)), "bytes": int(m.group(2)),
                                   "tried": re.findall(r"unix:[^,\s]+|[\d.]+:\d+", m.group(4)),
                                   "rt": float(m.group(5)), "urt": sum(map(float, urt))}
        return out

    def log_lines(self) -> dict[str, tuple[int, list[str]]]:
        """request id -> (status, the upstream addresses tried, in order)."""
        return {rid: (r["status"], r["tried"]) for rid, r in self.records().items()}


@contextmanager
def nginx_in_front(upstreams: list[Path | str], prefix: Path, tries: int = 5,
                   site: Path = standalone.SITE, shared_reports: bool = False):
    """nginx on a free port in front of the replicas `upstreams` (unix sockets, or host:port
    strings): it binds the port itself (it cannot be handed a socket), so a port another
    process took in the meantime is tried again with another one. `site`: an edited
    kelime.conf; `shared_reports`: every replica takes reports (one shared store)."""
    for _ in range(tries):
        port = unused_port()
        try:
            proc = standalone.start(NGINX, prefix, port, upstreams, site=site,
                                    shared_reports=shared_reports)
            break
        except RuntimeError as e:
            if "Address already in use" not in str(e):
                raise
    else:
        raise AssertionError(f"nginx found no free port in {tries} tries")
    try:
        yield Nginx(port, prefix, proc)
    finally:
        standalone.stop(proc)


@pytest.fixture(scope="module")
def lexicon(offline_lexicons) -> Path:
    """The offline lexicons (`kelime build --bootstrap`), the session's: served, never changed."""
    return offline_lexicons


@pytest.fixture(scope="module")
def stack(lexicon, tmp_path_factory):
    """Two replicas and nginx in front of them, shared by the tests that kill nothing."""
    folder = tmp_path_factory.mktemp("stack")
    with replicas(lexicon, folder) as pair, nginx_in_front([r.sock for r in pair],
                                                            folder / "nginx") as front:
        yield pair, front


# --- requests ----------------------------------------------------------------------------

def request(port: int, method: str, path: str, body: bytes | None = None,
            headers: dict | None = None, conn: http.client.HTTPConnection | None = None,
            source: str | None = None):
    """(status, headers, body bytes) of one request on a fresh (or the given) connection;
    `source`: the address the fresh connection comes from (any 127.x.y.z: to nginx, each is
    another client)."""
    own = conn is None
    conn = conn or http.client.HTTPConnection(
        "127.0.0.1", port, timeout=10, source_address=(source, 0) if source else None)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": "application/json",
                                                       **(headers or {})})
        reply = conn.getresponse()
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read()
    finally:
        if own:
            conn.close()


def raw_exchange(port: int, data: bytes) -> bytes:
    """Send raw bytes (as far as the server lets us), return what it answers."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # nginx answered and closed before taking it all: the answer is still there
        reply = b""
        try:  # up to the end of the reply (nginx keeps the socket open a while: lingering close)
            while chunk := s.recv(65536):
                reply += chunk
                head, _, body = reply.partition(b"\r\n\r\n")
                length = re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", head)
                if _ and length and len(body) >= int(length.group(1)):
                    break
        except ConnectionResetError:
            pass
        return reply


def wait_for_log(front: Nginx, ids: set[str], timeout: float = 10) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        lines = front.log_lines()
        if ids <= lines.keys() or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


# --- the shipped file --------------------------------------------------------------------

SOCKETS = [Path(f"/run/kelime-test/r{i}.sock") for i in (1, 2, 3)]


def test_the_shipped_site_is_what_runs(tmp_path):
    """Only the listen port, the folder of the replica lists and the log folder change;
    nginx -t accepts it."""
    shipped = standalone.SITE.read_text(encoding="utf-8")
    conf = standalone.render(tmp_path, 18080, SOCKETS)
    standalone.check(NGINX, tmp_path, conf)
    site = (tmp_path / "kelime.conf").read_text(encoding="utf-8")

    def normal(text: str) -> str:
        text = re.sub(r"listen [^;]+;", "listen X;", text)
        text = text.replace(f"include {tmp_path.resolve()}/", "include /etc/nginx/kelime/")
        return text.replace(f"{tmp_path.resolve()}/logs/", "/var/log/nginx/")

    assert normal(site) == normal(shipped)
    for group in ("kelime", "kelime_search"):  # every replica in both groups
        block = re.search(rf"^upstream {group} \{{([^}}]*)\}}", shipped, re.MULTILINE)
        assert block, f"kelime.conf lost `upstream {group}`"
        assert "include /etc/nginx/kelime/replicas.conf;" in block.group(1)
    listed = (tmp_path / "replicas.conf").read_text(encoding="utf-8")
    assert re.findall(r"^server\s+(\S+)", listed, re.MULTILINE) == [f"unix:{p}" for p in SOCKETS]
    assert f"server unix:{SOCKETS[2]} max_fails=2 fail_timeout=10s;" in listed
    for directive in ("proxy_http_version 1.1;", 'proxy_set_header Connection "";',
                      "keepalive 32;", "client_max_body_size 4m;",
                      "gzip_types application/json text/plain;",
                      "proxy_next_upstream error timeout http_502 non_idempotent;",
                      # the shield: no slow client holds a replica, nor more than its share
                      "proxy_request_buffering on;", "proxy_buffering on;",
                      "reset_timedout_connection on;", "limit_conn_status 503;",
                      "limit_conn_zone $kelime_client zone=kelime_clients:10m;"):
        pattern = r"\s+".join(map(re.escape, directive.split()))
        assert re.search(pattern, shipped), f"kelime.conf lost `{directive}`"

    # Reports: one writer, the first replica, never sent twice; the client's address only.
    writer = (tmp_path / "reports.conf").read_text(encoding="utf-8")
    assert re.findall(r"^server\s+(\S+)", writer, re.MULTILINE) == [f"unix:{SOCKETS[0]}"]
    code = re.sub(r"#.*", "", shipped)  # the directives, not the comments
    location = re.search(r"location = /v1/reports \{(.*?)\n    \}", code, re.DOTALL)
    assert location, "kelime.conf lost `location = /v1/reports`"
    reports = " ".join(location.group(1).split())
    for directive in ("proxy_pass http://kelime_reports;", "proxy_next_upstream error timeout;",
                      "client_max_body_size 16k;"):
        assert directive in reports, f"location = /v1/reports lost `{directive}`"
    assert "non_idempotent" not in reports
    # Searches never share failure counts with validate: a flood of them cannot take the
    # replicas out of validate's rotation. And their bodies are bounded by what they carry.
    searches = re.search(r"location ~ \^/v1/\(anagram\|split\)\$ \{(.*?)\n    \}", code,
                         re.DOTALL)
    validate = re.search(r"location = /v1/validate \{(.*?)\n    \}", code, re.DOTALL)
    assert searches and validate, "kelime.conf lost the search or validate location"
    assert "proxy_pass http://kelime_search;" in searches.group(1)
    assert "proxy_pass http://kelime;" in validate.group(1)
    assert re.search(r"client_max_body_size\s+400k;", searches.group(1))
    assert not re.search(r"proxy_next_upstream[^;]*timeout", searches.group(1))
    assert "proxy_add_x_forwarded_for" not in code
    assert re.search(r"proxy_set_header\s+X-Forwarded-For\s+\$remote_addr;", code)
    # The per-address limit's 503 has a page of its own in every location that lists pages.
    assert len(re.findall(r"error_page 503\s+/\.kelime-error/too-many-connections;", code)) \
        == len(re.findall(r"error_page 400 ", code)) == 3
    for codes, uri in re.findall(r"error_page ((?:\d{3}\s+)+)(?:=\d+\s+)?(\S+);", code):
        assert ("503" in codes.split()) == (uri == "/.kelime-error/too-many-connections")


def test_the_shipped_main_config_is_what_runs(tmp_path):
    """deploy/nginx/nginx.conf changes only in its user, workers, pid, logs, temporary
    folders and includes; its open files cover its connections twice over and more (a
    passed-on request holds two connections, and up to two temporary files)."""
    shipped = standalone.MAIN.read_text(encoding="utf-8")
    main = standalone.render(tmp_path, 18080, SOCKETS[:2], worker_processes=3).read_text(
        encoding="utf-8")
    changed = {line.strip() for line in set(main.splitlines()) - set(shipped.splitlines())}
    prefix = tmp_path.resolve()
    assert changed == {
        f"# Generated by deploy/nginx/standalone.py from {standalone.MAIN}; do not edit.",
        "user root;" if os.geteuid() == 0 else "# user www-data;  (not root: ignored)",
        "worker_processes 3;   # one a core", f"pid {prefix}/nginx.pid;",
        f"error_log {prefix}/logs/error.log;", f"access_log {prefix}/logs/access.log;",
        *(f"{kind}_temp_path {prefix}/temp/{folder};" for kind, folder in (
            ("client_body", "body"), ("proxy", "proxy"), ("fastcgi", "fastcgi"),
            ("uwsgi", "uwsgi"), ("scgi", "scgi"))),
        "# (the host's conf.d/ is left out)", f"include {prefix}/kelime.conf;"}
    def number(directive: str) -> int:
        return int(re.search(rf"^\s*{directive}\s+(\d+);", shipped, re.MULTILINE).group(1))

    assert number("worker_connections") >= 4096
    assert number("worker_rlimit_nofile") >= 3 * number("worker_connections")
    assert re.search(r"^\s*include /etc/nginx/sites-enabled/\*;", shipped, re.MULTILINE)


def test_an_edit_that_would_escape_the_tests_fails_the_render(tmp_path):
    """Each substitution standalone.py makes must match: an edited main config it could not
    render (another include of the sites, a fixed worker count, a moved temporary folder)
    fails, so it cannot pass the tests unseen."""
    shipped = standalone.MAIN.read_text(encoding="utf-8")
    site = tmp_path / "kelime.conf"
    for old, new in (("include /etc/nginx/sites-enabled/*;", "include /etc/nginx/kelime;"),
                     ("worker_processes auto;", "worker_processes 2;"),
                     ("proxy_temp_path       /var/lib/nginx/proxy;", "")):
        assert old in shipped
        with pytest.raises(ValueError, match="nginx.conf"):
            standalone.render_main(shipped.replace(old, new), tmp_path, site, 1)


def test_an_edit_that_would_let_reports_scatter_fails_the_render():
    """A server line of the site's own in `upstream kelime_reports` (a second writer), the
    include of the list replicas.py writes gone or another one, or no such block: refused by
    standalone.py, so such an edit of kelime.conf cannot pass the tests unseen."""
    shipped = standalone.SITE.read_text(encoding="utf-8")
    one = "upstream kelime_reports {\n    include /etc/nginx/kelime/reports.conf;\n"
    assert one in shipped
    for edited in (shipped.replace(one, one + "    server unix:/run/kelime/kelime-2.sock;\n"),
                   shipped.replace(one, one + "    server 127.0.0.1:8002 backup;\n"),
                   shipped.replace(one, one.replace("reports.conf", "replicas.conf")),
                   shipped.replace(one, "upstream kelime_reports {\n"),
                   shipped.replace("upstream kelime_reports", "upstream kelime_writes")):
        with pytest.raises(ValueError, match="kelime_reports"):
            standalone.render_site(edited, 18080, Path("/tmp/lists"), Path("/tmp/logs"))


# --- through nginx -----------------------------------------------------------------------

def test_requests_go_to_both_replicas(stack):
    pair, front = stack
    ids = {f"spread-{i}" for i in range(10)}
    for rid in sorted(ids):
        status, headers, body = request(front.port, "GET", "/v1/validate?word=kitap",
                                        headers={"X-Request-ID": rid})
        assert status == 200 and json.loads(body)["all_valid"] is True
        assert headers["x-request-id"] == rid
    served = {tried[-1] for _, tried in wait_for_log(front, ids).values() if tried}
    assert served == {r.address for r in pair}


def test_any_list_of_replicas_renders_and_nginx_takes_it(tmp_path):
    """Seven replicas, unix sockets and host:port (IPv4, IPv6, a name) mixed: every one in
    both groups, nginx -t accepts it; with shared reports, every one takes reports too."""
    given: list[Path | str] = [SOCKETS[0], "10.0.0.2:8001", "10.0.0.3:8001", SOCKETS[1],
                               "[2001:db8::4]:8001", "localhost:8005", "10.0.0.6:65535"]
    conf = standalone.render(tmp_path, 18080, given, shared_reports=True)
    standalone.check(NGINX, tmp_path, conf)
    names = [standalone.address(g) for g in given]
    for listed in ("replicas.conf", "reports.conf"):
        text = (tmp_path / listed).read_text(encoding="utf-8")
        assert re.findall(r"^server\s+(\S+) max_fails=2 fail_timeout=10s;$", text,
                          re.MULTILINE) == names


def test_replicas_on_a_unix_socket_and_on_host_port_both_answer(stack, tmp_path):
    """nginx in front of one replica on its unix socket and the other on its TCP port
    (as nginx on another host reaches it): requests go to both."""
    pair, _ = stack
    tcp = f"127.0.0.1:{pair[1].port}"
    with nginx_in_front([pair[0].sock, tcp], tmp_path / "nginx") as front:
        ids = {f"mixed-{i}" for i in range(10)}
        for rid in sorted(ids):
            status, _, body = request(front.port, "GET", "/v1/validate?word=kitap",
                                      headers={"X-Request-ID": rid})
            assert status == 200 and json.loads(body)["all_valid"] is True
        served = {tried[-1] for _, tried in wait_for_log(front, ids).values() if tried}
        assert served == {pair[0].address, tcp}


def test_large_json_replies_are_gzipped_small_ones_not(stack):
    _, front = stack
    words = ["kitap", "KİTAP", "evler", "kalem", "İstanbul"] * 1000
    status, headers, body = request(front.port, "POST", "/v1/validate",
                                    json.dumps({"words": words}).encode(),
                                    {"Accept-Encoding": "gzip"})
    assert status == 200
    assert headers.get("content-encoding") == "gzip"
    assert "Accept-Encoding" in headers.get("vary", "")
    reply = json.loads(gzip.decompress(body))
    assert len(reply["results"]) == 5000 and reply["all_valid"] is False
    assert len(body) * 5 < len(gzip.decompress(body))
    status, headers, _ = request(front.port, "GET", "/v1/validate?word=kitap",
                                 headers={"Accept-Encoding": "gzip"})
    assert status == 200 and "content-encoding" not in headers  # under gzip_min_length


def test_a_one_mebibyte_header_is_refused_by_nginx(stack):
    _, front = stack
    reply = raw_exchange(front.port, b"GET /healthz HTTP/1.1\r\nHost: kelime\r\n"
                         b"X-Request-ID: big-header\r\nX-Big: " + b"a" * (1 << 20) +
                         b"\r\nConnection: close\r\n\r\n")
    status = int(reply[9:12])
    assert status in (400, 431, 494), reply[:300]
    assert b'"code":"over_limit"' in reply


def test_a_body_over_the_limit_gets_413_from_nginx(stack):
    _, front = stack
    reply = raw_exchange(front.port, b"POST /v1/validate HTTP/1.1\r\nHost: kelime\r\n"
                         b"X-Request-ID: big-body\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\nConnection: close\r\n\r\n" % (BODY_LIMIT + 1))
    assert int(reply[9:12]) == 413, reply[:300]
    assert b'"code":"over_limit"' in reply
    status, tried = wait_for_log(front, {"big-body"})["big-body"]
    assert status == 413 and tried == []  # no replica saw it


NGINX_REFUSALS = [  # (what, raw request, status nginx answers, error code)
    ("TRACE", b"TRACE / HTTP/1.1\r\nHost: kelime\r\n\r\n", 405, "method_not_allowed"),
    ("TRACE a search", b"TRACE /v1/split HTTP/1.1\r\nHost: kelime\r\n\r\n", 405,
     "method_not_allowed"),
    ("no request line", b"FOO BAR\r\n\r\n", 400, "invalid_request"),
    ("two Host headers", b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400,
     "invalid_request"),
    ("a Content-Length that is no number", b"POST /v1/validate HTTP/1.1\r\nHost: kelime\r\n"
     b"Content-Length: x\r\n\r\n", 400, "invalid_request"),
    ("a bad chunk", b"POST /v1/split HTTP/1.1\r\nHost: kelime\r\nTransfer-Encoding: "
     b"chunked\r\n\r\nzz\r\n\r\n", 400, "invalid_request"),
    ("a URL over 64 KiB", b"GET /v1/validate?word=" + b"a" * 70_000 + b" HTTP/1.1\r\n"
     b"Host: kelime\r\n\r\n", 414, "over_limit"),
    ("HTTP/2.0 in a request line", b"GET / HTTP/2.0\r\nHost: kelime\r\n\r\n", 505,
     "http_version_not_supported"),
    ("Transfer-Encoding: gzip", b"POST /v1/validate HTTP/1.1\r\nHost: kelime\r\n"
     b"Transfer-Encoding: gzip\r\n\r\n", 501, "not_implemented"),
    ("a bad chunk in a report", b"POST /v1/reports HTTP/1.1\r\nHost: kelime\r\n"
     b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n",
     400, "invalid_request"),
    ("TRACE a report", b"TRACE /v1/reports HTTP/1.1\r\nHost: kelime\r\n\r\n", 405,
     "method_not_allowed"),
    ("a search body over 400 KiB", b"POST /v1/anagram HTTP/1.1\r\nHost: kelime\r\n"
     b"Content-Type: application/json\r\nContent-Length: 4194304\r\n\r\n", 413,
     "over_limit"),
]


@pytest.mark.parametrize("what, raw, status, code", NGINX_REFUSALS,
                         ids=[r[0] for r in NGINX_REFUSALS])
def test_what_nginx_refuses_itself_is_in_the_error_shape(stack, what, raw, status, code):
    """Every error nginx generates (not only 413/414/431/502-504) is the app's JSON shape:
    TRACE and nginx's own 400s were HTML pages."""
    _, front = stack
    reply = raw_exchange(front.port, raw)
    head, _, body = reply.partition(b"\r\n\r\n")
    assert int(head[9:12]) == status, reply[:300]
    assert re.search(rb"(?i)\r\ncontent-type: application/json", head), head
    error = json.loads(body)["error"]
    assert error["code"] == code and error["message"], error
    if status == 405:
        assert re.search(rb"(?i)\r\nallow: GET, HEAD, POST", head), head


def test_a_body_just_under_the_limit_reaches_a_replica(stack):
    _, front = stack
    head = b'{"words": ["kitap"]'
    body = head + b" " * (BODY_LIMIT - len(head) - 1) + b"}"
    assert len(body) == BODY_LIMIT
    status, _, reply = request(front.port, "POST", "/v1/validate", body,
                               {"X-Request-ID": "just-under"})
    assert status == 200, reply[:300]
    assert json.loads(reply)["all_valid"] is True


# --- failover ----------------------------------------------------------------------------

@dataclass
class Outcome:
    rid: str
    started: float
    ok: bool
    detail: str = ""


@dataclass
class Load:
    """A bounded client loop: `threads` keep-alive connections through nginx, `total`
    requests in all (or fewer, if `deadline` seconds pass first: a loaded CI machine),
    cycling GET /v1/validate, POST /v1/validate and POST /v1/anagram."""
    port: int
    expected: dict[tuple[str, str, bytes], object]
    total: int = 2000
    threads: int = 3
    deadline: float = 15.0
    on_count: tuple[int, callable] | None = None
    outcomes: list[Outcome] = field(default_factory=list)

    def run(self) -> None:
        lock, counter = threading.Lock(), [0]
        asks = list(self.expected)
        stop_at = time.monotonic() + self.deadline

        def client(t: int) -> None:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            i = 0
            while time.monotonic() < stop_at:
                with lock:
                    if counter[0] >= self.total:
                        break
                    counter[0] += 1
                    n = counter[0]
                if self.on_count and n == self.on_count[0]:
                    self.on_count[1]()
                method, path, body = asks[(t + i) % len(asks)]
                rid, i = f"load-{t}-{i}", i + 1
                started = time.monotonic()
                try:
                    status, _, reply = request(self.port, method, path, body or None,
                                               {"X-Request-ID": rid}, conn=conn)
                    ok = status == 200 and json.loads(reply) == self.expected[method, path, body]
                    detail = "" if ok else f"{status} {reply[:200]!r}"
                except Exception as e:  # noqa: BLE001 - every failure is counted and shown
                    ok, detail = False, f"{type(e).__name__}: {e}"
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                with lock:
                    self.outcomes.append(Outcome(rid, started, ok, detail))
            conn.close()

        workers = [threading.Thread(target=client, args=(t,)) for t in range(self.threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(self.deadline + 15)


def the_questions(port: int) -> dict:
    """The requests of the load and their replies, asked of one replica directly."""
    asks = [("GET", "/v1/validate?word=kitap", b""),
            ("POST", "/v1/validate", json.dumps({"words": ["kitap", "Kalem", "evler",
                                                           "İstanbul", "ılık", "kâtil",
                                                           "sepet", "e-posta"]}).encode())]
    asks += [("POST", "/v1/anagram", json.dumps({"rack": rack, "limit": 20}).encode())
             for rack in RACKS]
    expected = {}
    for method, path, body in asks:
        status, _, reply = request(port, method, path, body or None)
        assert status == 200, reply
        expected[method, path, body] = json.loads(reply)
    return expected


def test_killing_a_replica_mid_load_fails_no_request(lexicon, tmp_path):
    with ExitStack() as stack_:
        pair = stack_.enter_context(replicas(lexicon, tmp_path))
        front = stack_.enter_context(nginx_in_front([r.sock for r in pair], tmp_path / "nginx"))
        victim, survivor = pair
        killed_at: list[float] = []

        def kill_victim() -> None:
            crash(victim)
            killed_at.append(time.monotonic())

        load = Load(front.port, the_questions(survivor.port), on_count=(600, kill_victim))
        load.run()

        failed = [o for o in load.outcomes if not o.ok]
        assert killed_at, "the load ended before the replica was killed"
        assert not failed, f"{len(failed)} of {len(load.outcomes)} failed: {failed[:5]}"
        assert len(load.outcomes) >= 1000, f"only {len(load.outcomes)} requests in 15 s"

        log = wait_for_log(front, {o.rid for o in load.outcomes})
        before = [o for o in load.outcomes if o.started < killed_at[0]]
        after = [o for o in load.outcomes if o.started > killed_at[0]]
        assert len(after) >= 300
        served_before = {log[o.rid][1][-1] for o in before}
        assert served_before == {victim.address, survivor.address}
        served_after = {log[o.rid][1][-1] for o in after}
        assert served_after == {survivor.address}
        assert all(log[o.rid][0] == 200 for o in load.outcomes)
        retried = [o.rid for o in load.outcomes if len(log[o.rid][1]) > 1]
        assert all(log[rid][1][-1] == survivor.address for rid in retried)
        errors = (front.prefix / "logs" / "kelime.error.log").read_text(errors="replace")
        seconds = max(o.started for o in load.outcomes) - min(o.started for o in load.outcomes)
        print(f"\nfailover: {len(load.outcomes)} requests through nginx in {seconds:.1f} s "
              f"({len(load.outcomes) / seconds:,.0f}/s, {load.threads} threads), 0 failed; "
              f"replica {victim.address} killed (-9) at request 600: {len(before)} before "
              f"(both replicas), {len(after)} after (all from {survivor.address}); nginx "
              f"retried {len(retried)} on the survivor; its error log: "
              f"{errors.count('prematurely closed')} 'upstream prematurely closed', "
              f"{errors.count('Connection refused')} 'Connection refused', "
              f"{errors.count('reset by peer')} 'reset by peer'")

        # With no replica left, nginx answers in the app's error shape, asking for a retry.
        stop_process(survivor.proc)
        status, headers, body = request(front.port, "POST", "/v1/validate",
                                        b'{"words": ["kitap"]}')
        assert status in (502, 503) and headers.get("retry-after") == "1"
        assert json.loads(body)["error"]["code"] == "unavailable"


# --- player reports: one writer -----------------------------------------------------------

PER_HOUR = 3   # the writer's KELIME_REPORTS_PER_HOUR in these tests
ADMIN_TOKEN = "operator-token-0123456789abcdef"   # the writer's KELIME_ADMIN_TOKEN


def report(port: int, word: str, kind: str = "missing", note: str | None = None,
           source: str | None = None, headers: dict | None = None):
    """POST /v1/reports through nginx: (status, headers, parsed JSON body)."""
    body = json.dumps({"word": word, "kind": kind, **({"note": note} if note else {})})
    status, reply_headers, reply = request(port, "POST", "/v1/reports", body.encode(),
                                           headers, source=source)
    return status, reply_headers, json.loads(reply)


def open_counts(path: Path) -> dict[str, int]:
    """word -> open reports of it (all kinds), as a maintainer reads the store."""
    if not path.exists():
        return {}
    with ReportStore(path) as store:
        return {group["word"]: group["count"] for group in store.open_reports()}


def report_envs(folder: Path) -> tuple[Path, Path, list[dict[str, str]]]:
    """The writer's store, the other replica's, and their environments. The other replica
    gets a store of its own (as a replica on another host would): a report sent to it by
    mistake would be stored there, silently, instead of failing."""
    writer, other = folder / "writer.sqlite", folder / "other.sqlite"
    return writer, other, [
        {"KELIME_REPORTS": str(writer), "KELIME_REPORTS_PER_HOUR": str(PER_HOUR),
         "KELIME_ADMIN_TOKEN": ADMIN_TOKEN},
        {"KELIME_REPORTS": str(other), "KELIME_REPORTS_PER_HOUR": str(PER_HOUR)}]


@pytest.fixture(scope="module")
def report_stack(lexicon, tmp_path_factory):
    """Two replicas, the first the report writer, and nginx in front of them."""
    folder = tmp_path_factory.mktemp("reports")
    writer, other, envs = report_envs(folder)
    with replicas(lexicon, folder, envs=envs) as pair, \
            nginx_in_front([r.sock for r in pair], folder / "nginx") as front:
        yield pair, front, writer, other


def test_reports_go_to_the_writer_lookups_to_both(report_stack):
    """10 reports from 10 players all land in the writer's one store, counted together
    (duplicates raise the count), while lookups still go round-robin to both replicas."""
    (writer, other), front, writer_store, other_store = report_stack
    words = ["kitapçık", "kalemsi", "kitapçık", "sepetçi", "kitapçık",
             "kalemsi", "ardıçlı", "kitapçık", "sepetçi", "kitapevi"]
    before = open_counts(writer_store)
    seen: dict[str, int] = {}
    rids = set()
    for i, word in enumerate(words):
        rid = f"report-{i}"
        rids.add(rid)
        status, headers, reply = report(front.port, word, source=f"127.0.1.{i + 1}",
                                        headers={"X-Request-ID": rid})
        assert status == 202, reply
        assert headers["x-request-id"] == rid
        seen[word] = seen.get(word, 0) + 1
        assert reply["duplicate"] is (seen[word] > 1 or word in before)
        assert reply["count"] == before.get(word, 0) + seen[word]
        lookup = f"lookup-{i}"
        rids.add(lookup)
        status, _, _ = request(front.port, "GET", "/v1/validate?word=kitap",
                               headers={"X-Request-ID": lookup})
        assert status == 200

    after = open_counts(writer_store)
    assert {w: after[w] - before.get(w, 0) for w in seen} == seen
    assert sum(after.values()) - sum(before.values()) == len(words)
    assert open_counts(other_store) == {}

    log = wait_for_log(front, rids)
    for i in range(len(words)):
        assert log[f"report-{i}"] == (202, [writer.address])  # one try, the writer's
    lookups = {log[f"lookup-{i}"][1][-1] for i in range(len(words))}
    assert lookups == {writer.address, other.address}


def test_a_forged_x_forwarded_for_does_not_escape_the_rate_limit(report_stack):
    """Through nginx each client is its connection's address ($remote_addr, the one entry
    nginx sends in X-Forwarded-For on the replica's unix socket), whatever X-Forwarded-For
    it sends itself: a new forged one each time does not buy more reports, even from
    127.0.0.1 (nginx's own address), and a client claiming another's address is still
    itself."""
    _, front, writer_store, _ = report_stack
    for source, word in (("127.0.0.1", "yalancı"), ("127.0.2.1", "sahtekar")):
        for i in range(PER_HOUR):
            forged = {"X-Forwarded-For": [f"198.51.100.{i}", "127.0.0.1",
                                          "203.0.113.9, 127.0.0.1"][i % 3]}
            status, _, reply = report(front.port, word, source=source, headers=forged)
            assert status == 202, (source, i, reply)
        for forged in ("192.0.2.77", "127.0.0.1", "192.0.2.78, 127.0.2.2", "unknown", ""):
            status, headers, reply = report(front.port, word, source=source,
                                            headers={"X-Forwarded-For": forged})
            assert status == 429, (source, forged, reply)
            assert reply["error"]["code"] == "too_many_reports"
            assert int(headers["retry-after"]) > 0
    # Another client, even one claiming to be the one over its limit, has its own share.
    for i in range(PER_HOUR):
        status, _, reply = report(front.port, "sahtekar", source="127.0.2.2",
                                  headers={"X-Forwarded-For": "127.0.2.1"})
        assert status == 202, reply
    status, _, reply = report(front.port, "sahtekar", source="127.0.2.2")
    assert status == 429, reply
    assert open_counts(writer_store)["sahtekar"] == 2 * PER_HOUR


def test_a_report_over_16_kib_gets_413_from_nginx(report_stack):
    (writer, _), front, writer_store, _ = report_stack
    limit = 16 * 1024
    reply = raw_exchange(front.port, b"POST /v1/reports HTTP/1.1\r\nHost: kelime\r\n"
                         b"X-Request-ID: big-report\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\nConnection: close\r\n\r\n" % (limit + 1))
    assert int(reply[9:12]) == 413, reply[:300]
    assert b'"code":"over_limit"' in reply and b"16 KiB" in reply
    head = b'{"word": "sayfalik", "kind": "missing"'
    body = head + b" " * (limit - len(head) - 1) + b"}"
    status, _, answer = request(front.port, "POST", "/v1/reports", body,
                                {"X-Request-ID": "report-at-limit"}, source="127.0.3.1")
    assert status == 202, answer[:300]
    log = wait_for_log(front, {"big-report", "report-at-limit"})
    assert log["big-report"] == (413, [])  # no replica saw it
    assert log["report-at-limit"] == (202, [writer.address])
    assert open_counts(writer_store)["sayfalik"] == 1


def test_with_the_writer_down_reports_get_503_and_go_nowhere_else(lexicon, tmp_path):
    """The writer killed: a report is answered 503 (JSON, Retry-After) after one try of the
    writer, never sent to the other replica, which still answers lookups. The first report
    after the writer is back is stored (nginx never marks a group's only server down)."""
    writer_store, other_store, envs = report_envs(tmp_path)
    with ExitStack() as stack_:
        pair = stack_.enter_context(replicas(lexicon, tmp_path, envs=envs))
        front = stack_.enter_context(nginx_in_front([r.sock for r in pair], tmp_path / "nginx"))
        writer, other = pair
        status, _, reply = report(front.port, "kitapçık", source="127.0.4.1")
        assert status == 202, reply

        crash(writer)
        rids = {f"down-{i}" for i in range(5)}
        for i, rid in enumerate(sorted(rids)):
            status, headers, reply = report(front.port, "kalemsi", source=f"127.0.4.{i + 2}",
                                            headers={"X-Request-ID": rid})
            assert status == 503, reply
            assert reply["error"]["code"] == "reports_unavailable"
            assert set(reply["error"]) == {"code", "message"}
            assert headers["retry-after"] == "10"
            assert headers["content-type"].startswith("application/json")
            assert headers["x-request-id"] == rid
        status, _, _ = request(front.port, "GET", "/v1/validate?word=kitap")
        assert status == 200  # lookups fail over to the other replica as before

        log = wait_for_log(front, rids)
        for rid in rids:
            assert log[rid] == (503, [writer.address])  # tried once, the writer only
        assert open_counts(other_store) == {}
        assert open_counts(writer_store) == {"kitapçık": 1}

        # The player sends it again once the writer is back: stored, at the first try.
        again = start_replica(lexicon, writer.log, writer.sock, port=writer.port,
                              env=envs[0])
        stack_.callback(stop_process, again.proc)
        wait_ready([again])
        status, _, reply = report(front.port, "kalemsi", source="127.0.4.2",
                                  headers={"X-Request-ID": "back"})
        assert status == 202, reply
        assert reply["count"] == 1
        assert wait_for_log(front, {"back"})["back"] == (202, [writer.address])
        assert open_counts(writer_store) == {"kitapçık": 1, "kalemsi": 1}
        assert open_counts(other_store) == {}


def test_with_a_shared_store_every_replica_takes_reports_and_one_down_loses_none(lexicon,
                                                                               tmp_path):
    """replicas.py --shared-reports (every replica on one store, as on PostgreSQL; here one
    SQLite file both replicas of this host share): reports go round-robin to both; with one
    killed, every report is still taken (202), by the other, the dead one tried at most
    once a report and never sent a report twice; all land in the one store."""
    store = tmp_path / "shared.sqlite"
    env = {"KELIME_REPORTS": str(store), "KELIME_REPORTS_PER_HOUR": "100"}
    with ExitStack() as stack_:
        pair = stack_.enter_context(replicas(lexicon, tmp_path, envs=[env, env]))
        front = stack_.enter_context(nginx_in_front([r.sock for r in pair], tmp_path / "nginx",
                                                    shared_reports=True))
        before = {f"shared-{i}" for i in range(6)}
        for i, rid in enumerate(sorted(before)):
            status, _, reply = report(front.port, "kitapçık", source=f"127.0.5.{i + 1}",
                                      headers={"X-Request-ID": rid})
            assert status == 202, reply
        log = wait_for_log(front, before)
        assert {log[rid][1][-1] for rid in before} == {r.address for r in pair}

        victim, survivor = pair
        crash(victim)
        after = {f"one-down-{i}" for i in range(6)}
        for i, rid in enumerate(sorted(after)):
            status, _, reply = report(front.port, "kalemsi", source=f"127.0.6.{i + 1}",
                                      headers={"X-Request-ID": rid})
            assert status == 202, reply
        log = wait_for_log(front, after)
        for rid in after:
            status, tried = log[rid]
            assert status == 202 and tried[-1] == survivor.address, log[rid]
            assert tried in ([survivor.address], [victim.address, survivor.address])
        assert open_counts(store) == {"kitapçık": 6, "kalemsi": 6}


def test_x_forwarded_for_straight_to_a_replica_is_ignored(report_stack):
    """A replica believes X-Forwarded-For only on its unix socket (nginx's): a client
    reaching the writer's TCP port directly, a new forged address each time, is still
    itself and meets its rate limit."""
    (writer, _), _, writer_store, _ = report_stack
    source = "127.0.5.1"
    for i in range(PER_HOUR + 2):
        status, _, reply = report(writer.port, "kandırmaca", source=source,
                                  headers={"X-Forwarded-For": f"198.51.100.{i}"})
        assert status == (202 if i < PER_HOUR else 429), (i, reply)
    assert open_counts(writer_store)["kandırmaca"] == PER_HOUR


def test_admin_is_per_replica_never_through_nginx(report_stack):
    """POST /v1/admin/reload through nginx is a 404 (nginx's, in the JSON shape), right
    token or not; on the replica's own TCP port the operator's token reloads it."""
    (writer, _), front, _, _ = report_stack
    auth = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    for source in ("127.0.0.1", "127.0.5.2"):
        status, headers, body = request(front.port, "POST", "/v1/admin/reload", b"", auth,
                                        source=source)
        assert status == 404 and headers["content-type"].startswith("application/json")
        assert "per replica" in json.loads(body)["error"]["message"]
    status, _, body = request(writer.port, "POST", "/v1/admin/reload", b"", auth)
    assert status == 200, body


# --- floods: expensive work never starves cheap work ---------------------------------------

def worker_pids(replica: Replica) -> list[int]:
    """The processes serving a `kelime serve` replica's requests: its supervisor's children
    (uvicorn's workers), or the process itself when it serves them alone."""
    kids = Path(f"/proc/{replica.proc.pid}/task/{replica.proc.pid}/children").read_text()
    pids = [int(k) for k in kids.split()]
    pids = [p for p in pids if b"resource_tracker" not in Path(f"/proc/{p}/cmdline").read_bytes()]
    return pids or [replica.proc.pid]


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for {pid}")


@contextmanager
def peak_rss(pids: list[int]):
    """{pid: highest VmRSS seen} while the block runs (sampled every 20 ms)."""
    peaks = {pid: rss_bytes(pid) for pid in pids}
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            for pid in pids:
                peaks[pid] = max(peaks[pid], rss_bytes(pid))

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        yield peaks
    finally:
        done.set()
        sampler.join()


def busy_or_answered(tally) -> None:
    """Every search got an answer from a replica: 200, or 503 `busy` with Retry-After."""
    assert set(tally.statuses) <= {200, 503}, (dict(tally.statuses), tally.failures)
    assert set(tally.codes) <= {"busy"}, dict(tally.codes)
    assert tally.retry_after == tally.statuses[503]


def test_a_split_flood_through_nginx_fails_no_validate(stack):
    """200 clients looping a ~100 ms split through nginx for 4 s (hundreds queued per
    replica) while 3 clients validate: not one validate fails, and every split is answered
    by a replica, 200 or 503 `busy` at once. (Queued for longer than nginx's 10 s
    proxy_read_timeout, splits made nginx mark both replicas down: every route 502.)"""
    _, front = stack
    players = flood.addresses(4)  # 50 each: under nginx's per-address limit
    checked, searched = flood.run_flood(front.port, [
        flood.validators(3, sources=(FRESH,)), flood.splitters(200, sources=players)],
        seconds=4)
    assert checked.total >= 20 and dict(checked.statuses) == {200: checked.total}, (
        dict(checked.statuses), dict(checked.codes), checked.failures)
    busy_or_answered(searched)
    assert searched.codes["busy"] > 0  # the flood did saturate: the app shed it
    assert searched.statuses[200] > 0
    errors = (front.prefix / "logs" / "kelime.error.log").read_text(errors="replace")
    for sign in ("upstream timed out", "temporarily disabled", "no live upstreams"):
        assert sign not in errors
    status, _, _ = request(front.port, "GET", "/readyz")
    assert status == 200


@pytest.mark.parametrize("through", ["a replica directly", "nginx"])
def test_queued_bodies_keep_a_worker_under_its_memory_ceiling(stack, through):
    """40 slow splits, and behind them 120 clients sending the biggest anagram body a
    replica reads (395 KiB: 80,000 words to exclude), straight to one replica or through
    nginx, while 2 clients validate: each big body is refused 413 before it queues, no
    validate fails, and each worker's RSS stays under its documented ceiling
    (Settings.held_bytes, ~160 MiB over idle). (Such bodies queued unchecked: 120 of 4 MiB
    took a worker to 7 GiB; through nginx, 60 took both replicas out of its rotation.)
    Through nginx a bigger one is refused unread (test_what_nginx_refuses_itself_...)."""
    from kelime.service.settings import Settings

    pair, front = stack
    port = front.port if through == "nginx" else pair[0].port
    settings = Settings()
    words = (settings.search_body_bytes - 64) // 6
    body = json.dumps({"rack": "kale", "exclude": ["aa"] * words}).encode()
    assert len(body) <= settings.search_body_bytes
    players = flood.addresses(4, "127.0.2")  # 40 clients each: under the per-address limit
    big = flood.Clients(flood.http_request("/v1/anagram", body), 120, most=3, sources=players)
    pids = [pid for replica in pair for pid in worker_pids(replica)]
    assert len(pids) == 2
    idle = {pid: rss_bytes(pid) for pid in pids}
    with peak_rss(pids) as peaks:
        checked, searched, refused = flood.run_flood(
            port, [flood.validators(2, sources=(FRESH,)),
                   flood.splitters(40, sources=players), big], seconds=3)
    assert dict(checked.statuses) == {200: checked.total} and checked.total > 0, (
        dict(checked.statuses), checked.failures)
    busy_or_answered(searched)
    assert refused.total > 0 and dict(refused.statuses) == {413: refused.total}, (
        dict(refused.statuses), refused.failures)
    assert dict(refused.codes) == {"over_limit": refused.total}
    for pid in pids:
        grew = peaks[pid] - idle[pid]
        print(f"\n{through}: worker {pid}: {idle[pid] / 2**20:.0f} MiB idle, peak "
              f"{peaks[pid] / 2**20:.0f} MiB during the flood ({refused.total} big bodies, "
              f"{searched.total} splits); ceiling {settings.held_bytes / 2**20:.0f} MiB over idle")
        assert grew < settings.held_bytes


# --- attacks: nginx holds them; no replica sees them, fresh clients are served -------------
# The attackers of benchmarks/attacks.py, at a small scale, on the shared stack. Each comes
# from loopback addresses of its own (127.2x.y.z) and the fresh clients from FRESH, so the
# per-address limit counts them apart; every attacking connection is closed at the end.

MiB = 2**20
RSS_CEILING = 300 * MiB   # a replica worker under attack (80 MiB idle; it reached 749 MiB)


def replica_workers(pair: list[Replica]) -> list[int]:
    return [pid for replica in pair for pid in worker_pids(replica)]


def run_crowds(crowds: list, until, most: float, tick: float = 0.1) -> None:
    """Step every crowd each `tick` until `until()` or `most` seconds."""
    end = time.monotonic() + most
    while time.monotonic() < end and not until():
        for crowd in crowds:
            crowd.step()
        time.sleep(tick)


@contextmanager
def closing(*crowds):
    try:
        yield crowds
    finally:
        for crowd in crowds:
            crowd.close()


def reply_of(raw: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0][9:12]), headers, body


def test_the_per_address_limit_refuses_the_next_and_spares_listed_game_servers(stack,
                                                                              tmp_path):
    """LIMIT + 1 requests under way at once from one address (bodies begun, not finished):
    one is refused at once, 503 `too_many_connections` in the JSON shape with Retry-After,
    before any replica sees it; the others are answered once their bodies are done. An
    address listed as a game server in kelime.conf's `geo` block (an empty key: nginx
    counts nothing) has LIMIT + 10 under way at once, and none is refused; and it is never
    sent gzip, asking or not, where any other client is."""
    pair, _ = stack
    shipped = standalone.SITE.read_text(encoding="utf-8")
    listed = shipped.replace("    default 0;\n", "    default 0;\n    127.0.0.3 1;\n", 1)
    assert listed != shipped, "kelime.conf lost the `geo $kelime_game_server` block"
    site = tmp_path / "kelime.conf"
    site.write_text(listed, encoding="utf-8")
    body = b'{"words": ["kitap"]' + b" " * 100 + b"}"
    head = attacks.http_request("/v1/validate", body[:1], length=len(body))
    with nginx_in_front([r.sock for r in pair], tmp_path / "nginx", site=site) as front:
        player = attacks.Crowd(front.port, ["127.20.0.1"] * (LIMIT + 1), head, again=False)
        server = attacks.Crowd(front.port, ["127.0.0.3"] * (LIMIT + 10), head, again=False)
        with closing(player, server):
            player.open_all()
            server.open_all()
            run_crowds([player, server], lambda: player.got, most=5)
            run_crowds([player, server], lambda: False, most=0.5)  # any other refusal
            assert len(player.got) == 1 and not server.got, (player.replies, server.replies)
            (refused,) = player.got.values()
            status, headers, reply = reply_of(refused)
            assert status == 503 and headers["retry-after"] == "1"
            assert headers["content-type"].startswith("application/json")
            assert json.loads(reply)["error"]["code"] == "too_many_connections"
            for crowd in (player, server):  # the rest of each body: every one answered
                for sock in crowd.socks.values():
                    sock.setblocking(True)
                    sock.sendall(body[1:])
                    sock.setblocking(False)
            run_crowds([player, server], lambda: len(player.got) + len(server.got) ==
                       2 * LIMIT + 11, most=20)
            assert player.replies == {503: 1, 200: LIMIT}, player.replies
            assert server.replies == {200: LIMIT + 10}, server.replies
        big = json.dumps({"words": ["kitap", "evler"] * 1000}).encode()
        for source, packed in (("127.20.0.1", "gzip"), ("127.0.0.3", None)):
            for path, payload in (("/v1/validate", big),
                                  ("/v1/anagram", b'{"rack": "kalem??", "limit": 500}')):
                status, headers, _ = request(front.port, "POST", path, payload,
                                             {"Accept-Encoding": "gzip"}, source=source)
                assert status == 200 and headers.get("content-encoding") == packed, (
                    source, path)  # a listed game server (its LAN) is never sent gzip
        refusals = [line for line in front.access_log.read_text().splitlines()
                    if '" 503 ' in line]
        assert len(refusals) == 1 and 'upstream="-"' in refusals[0]  # no replica saw it


def test_slow_bodies_hold_no_replica_and_fresh_clients_are_served(stack):
    """Bodies announced at 4 MB, sent a byte every 8 s by 60 clients (from 4 addresses) and
    at 1.2 KB/s by LIMIT + 40 connections of one address: nginx drops the first after
    client_body_timeout without a reply (their second byte would come at 8 s), reads LIMIT
    of the others and refuses the 40 beyond at once (503 `too_many_connections`). A fresh
    client is answered every time meanwhile, and the replicas hold nothing of it."""
    pair, front = stack
    head = attacks.http_request("/v1/validate", b"{", length=4_000_000)
    bytewise = attacks.Crowd(front.port, attacks.addresses(60, 15, net=21), head, again=False)
    steady = attacks.Crowd(front.port, ["127.22.0.1"] * (LIMIT + 40), head,
                           drip=b" " * 120, again=False)   # 120 bytes every 0.1 s
    pids = replica_workers(pair)
    idle = {pid: rss_bytes(pid) for pid in pids}
    fresh = attacks.Fresh(front.port, every=0.2)
    with closing(bytewise, steady), peak_rss(pids) as peaks, fresh.asking():
        bytewise.open_all()
        steady.open_all()
        run_crowds([bytewise, steady], lambda: not bytewise.socks, most=8)
        # every one dropped before its second byte would have come
        assert bytewise.closed == bytewise.silent == 60, (bytewise.closed, bytewise.replies)
        assert steady.replies == {503: 40} and steady.codes == {"too_many_connections": 40}
        assert steady.waiting == LIMIT   # still sending, still read, no reply yet
    assert fresh.ok == len(fresh.outcomes) >= 10, Counter(s for s, _ in fresh.outcomes)
    for pid in pids:
        assert peaks[pid] - idle[pid] < 32 * MiB, (pid, idle[pid], peaks[pid])
    assert "worker_connections are not enough" not in front.error_log


def test_slow_readers_hold_no_replica(stack):
    """100 clients send a 1,000-word validation and never read the ~65 KB reply, and 3 send
    one whose reply (5,500 words of 64 control characters, \\u-escaped: 4.6 MB) is more than
    the kernel's socket buffers take. nginx takes each reply from its replica at once
    (proxy_buffering: the replica's part of the request ends in milliseconds), keeps what the
    kernel does not take in its buffers and a temporary file, and resets the connection
    after send_timeout. A fresh client sending the same 1,000-word validation is answered
    every time, and no replica worker grows past RSS_CEILING."""
    pair, front = stack
    words = attacks.http_request("/v1/validate", {"words": attacks.WORDS_1000})
    readers = attacks.Crowd(front.port, attacks.addresses(100, 50, net=23), words,
                            read=False, rcvbuf=4096, again=False)
    big = {"words": ["\u0001" * 64] * 5500}
    whole = len(request(pair[0].port, "POST", "/v1/validate", json.dumps(big).encode())[2])
    hogs = [attacks.Crowd(front.port, [f"127.24.0.{i + 1}"], attacks.http_request(
        "/v1/validate", big, {"X-Request-ID": f"never-read-{i}"}), read=False, rcvbuf=4096,
        again=False) for i in range(3)]
    pids = replica_workers(pair)
    fresh = attacks.Fresh(front.port, body={"words": attacks.WORDS_1000}, every=0.2)
    with closing(readers, *hogs), peak_rss(pids) as peaks, fresh.asking():
        for crowd in (readers, *hogs):
            crowd.open_all()
        run_crowds([readers, *hogs], lambda: not any(h.socks for h in hogs),
                   most=SEND_TIMEOUT + 10)
        assert [h.closed for h in hogs] == [1, 1, 1]   # reset by nginx, reply unread
        assert readers.replies == {200: 100} and not readers.closed
    log = wait_for_records(front, {f"never-read-{i}" for i in range(3)})
    for i in range(3):
        record = log[f"never-read-{i}"]
        assert record["status"] == 200 and record["bytes"] < whole, (record, whole)
        assert record["urt"] < record["rt"] - SEND_TIMEOUT / 2, record  # replica done early
    assert fresh.ok == len(fresh.outcomes) >= 10, Counter(s for s, _ in fresh.outcomes)
    print(f"\nslow readers: replica workers peak {[round(p / MiB) for p in peaks.values()]} "
          f"MiB; the 4.6 MB replies: {[log[f'never-read-{i}'] for i in range(3)]}")
    assert max(peaks.values()) < RSS_CEILING


def wait_for_records(front: Nginx, ids: set[str], timeout: float = 10) -> dict:
    deadline = time.monotonic() + timeout
    while not ids <= (records := front.records()).keys() and time.monotonic() < deadline:
        time.sleep(0.05)
    return records


CHUNK_OUTCOMES = {  # what nginx does with each malformed chunked body (attacks.BAD_CHUNKS)
    "`13 ` and nothing more": "closed",         # a 19-byte chunk that never comes
    "a size and no data": "closed",
    "a bare LF after the size": 200,            # nginx takes a bare LF for CRLF
    "a bare LF after the data": 200,
    "a size that overflows": 400,
    "a negative size": 400,
    "`0x14` as a size": 400,
    "more data than the size": 400,
    "Content-Length in the trailers": 200,      # nginx drops trailers
    "a space after the size": 200,              # an empty chunk extension
}


def test_malformed_chunks_get_a_json_400_an_answer_or_a_close(stack):
    """Each malformed chunked body after a valid head (5 connections each, at once): nginx
    answers 400 in the JSON shape, or reads it its own lenient way and passes the replica a
    plain body with its Content-Length (answered 200), or closes the connection without a
    reply once client_body_timeout passes (the client stopped sending): all within 10 s,
    never the 50 s of silence the replicas' own parser gave."""
    _, front = stack
    assert CHUNK_OUTCOMES.keys() == attacks.BAD_CHUNKS.keys()
    crowds = {what: attacks.Crowd(front.port, attacks.addresses(5, 5, net=25 + k),
                                  attacks.chunked("/v1/validate", rest), again=False)
              for k, (what, rest) in enumerate(attacks.BAD_CHUNKS.items())}
    with closing(*crowds.values()):
        for crowd in crowds.values():
            crowd.open_all()
        run_crowds(list(crowds.values()), lambda: all(
            len(c.got) + c.silent == 5 for c in crowds.values()), most=10)
        for what, crowd in crowds.items():
            expected = CHUNK_OUTCOMES[what]
            if expected == "closed":
                assert crowd.closed == crowd.silent == 5 and not crowd.got, (what, crowd.got)
                continue
            assert crowd.replies == {expected: 5}, (what, crowd.replies)
            for raw in crowd.got.values():
                status, headers, body = reply_of(raw)
                assert headers["content-type"].startswith("application/json"), what
                if expected == 400:
                    assert json.loads(body)["error"]["code"] == "invalid_request", what
                else:  # the replica got the 20-byte body, checked it, answered
                    assert json.loads(body)["all_valid"] is True, what


def pipelined(count: int) -> bytes:
    """`count` requests in one piece, each naming itself: GETs and 8-word POSTs in turn."""
    out = b""
    for i in range(count):
        if i % 2:
            out += attacks.http_request("/v1/validate", attacks.VALIDATE_8,
                                        {"X-Request-ID": f"pipe-{i}"})
        else:
            out += (f"GET /v1/validate?word=kitap HTTP/1.1\r\nHost: kelime\r\n"
                    f"X-Request-ID: pipe-{i}\r\n\r\n").encode()
    return out


def test_pipelined_requests_are_answered_in_order_and_a_flood_holds_no_replica(stack):
    """200 requests written at once on one connection are all answered, in order. Then 10
    connections write 1,000-word validations back to back as fast as the kernel takes them
    and never read: nginx passes on one request of a connection at a time, only while its
    replies can be written, so a fresh client is answered every time and no replica worker
    grows past RSS_CEILING."""
    pair, front = stack
    with socket.create_connection(("127.0.0.1", front.port), timeout=10) as sock:
        sock.sendall(pipelined(200))
        replies, data = [], b""
        while len(replies) < 200:
            chunk = sock.recv(1 << 16)
            assert chunk, f"closed after {len(replies)} replies"
            data += chunk
            while b"\r\n\r\n" in data:
                status, headers, rest = reply_of(data)
                length = int(headers["content-length"])
                if len(rest) < length:
                    break
                replies.append((status, headers["x-request-id"]))
                data = rest[length:]
    assert replies == [(200, f"pipe-{i}") for i in range(200)]

    words = attacks.http_request("/v1/validate", {"words": attacks.WORDS_1000})
    flooders = attacks.Crowd(front.port, attacks.addresses(10, 5, net=40), words,
                             flood=words * 10, read=False, rcvbuf=4096, again=False)
    pids = replica_workers(pair)
    fresh = attacks.Fresh(front.port, every=0.2)
    with closing(flooders), peak_rss(pids) as peaks, fresh.asking():
        flooders.open_all()
        run_crowds([flooders], lambda: False, most=3)
    assert fresh.ok == len(fresh.outcomes) >= 5, Counter(s for s, _ in fresh.outcomes)
    assert flooders.replies == {200: 10}
    assert max(peaks.values()) < RSS_CEILING
