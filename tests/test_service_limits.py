"""service.protocol on a real uvicorn: what a client can make the server hold, and for how long.

Each server runs in its own process (kelime's app, `uvicorn_options(settings)` with small
timeouts) so that its memory can be read from /proc/PID/status. Every loop is bounded in
count; the only clocks are the server's own timeouts and generous socket timeouts.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import select
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson
import pytest

from kelime.service.protocol import (
    EXTRA_MOST,
    FD_RESERVE,
    ConnectionLimits,
    connection_limit,
    uvicorn_options,
)
from kelime.service.settings import Settings
from tests.servers import listening_socket, port_of, stop, wait_ready

MIB = 1024 * 1024
SERVE = """
import json, socket, sys
from pathlib import Path
import uvicorn
from kelime.service.app import create_app
from kelime.service.protocol import uvicorn_options
from kelime.service.settings import Settings
settings = Settings(data=Path(sys.argv[1]), **json.loads(sys.argv[3]))
config = uvicorn.Config(create_app(settings), log_level="warning", **uvicorn_options(settings))
uvicorn.Server(config).run(sockets=[socket.socket(fileno=int(sys.argv[2]))])
"""


@dataclass
class Served:
    port: int
    proc: subprocess.Popen
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def status(self, field: str) -> int:
        """A /proc/PID/status figure in MB (VmRSS: now, VmHWM: the peak so far)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) // 1024
        raise AssertionError(f"no {field} in /proc/{self.proc.pid}/status")

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def healthy(self) -> bool:
        """A normal request, on a connection of its own, answered 200."""
        return httpx.get(f"{self.url}/healthz", timeout=30).status_code == 200


@contextmanager
def serve(data: Path, log: Path, nofile: int | None = None, **settings):
    """kelime with `Settings(data=data, **settings)` in a process of its own, ready."""
    def limit():
        if nofile:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    with open(log, "wb") as out, listening_socket() as sock:  # handed over (tests/servers.py)
        proc = subprocess.Popen([sys.executable, "-c", SERVE, str(data), str(sock.fileno()),
                                 json.dumps(settings)], stdout=out, stderr=subprocess.STDOUT,
                                preexec_fn=limit, pass_fds=[sock.fileno()])
        port = port_of(sock)
    served = Served(port, proc, log)
    try:
        wait_ready(served.url, proc, output=log.read_text)
        yield served
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def server(data_dir, tmp_path_factory):
    """Short timeouts: headers 1 s, bodies 2 s, idle keep-alive 1 s."""
    log = tmp_path_factory.mktemp("limits") / "server.log"
    with serve(data_dir, log, header_timeout=1, body_timeout=2, keepalive_timeout=1) as served:
        yield served


def connect(port: int, timeout: float = 30) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sock.settimeout(timeout)
    return sock


def read_all(sock: socket.socket) -> bytes:
    """Everything until the server closes (a reset after a reply counts as the close)."""
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    return data


def ask(port: int, request: bytes) -> tuple[int, bytes]:
    """(status, body) of the one reply to `request` on a new connection."""
    with connect(port) as sock:
        sock.sendall(request)
        reply = read_all(sock)
    head, _, body = reply.partition(b"\r\n\r\n")
    return int(head[9:12]), body


def get(path: str, headers: bytes = b"") -> bytes:
    return b"GET " + path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers + b"\r\n"


# --- the head ----------------------------------------------------------------------------

def test_a_1_mib_header_gets_431_and_memory_stays_flat(server):
    before = server.status("VmRSS")
    for _ in range(10):
        status, body = ask(server.port, get("/healthz", b"X-Big: " + b"a" * MIB + b"\r\n"))
        assert status == 431
        error = orjson.loads(body)["error"]
        assert error["code"] == "headers_too_large" and error["details"]["limit"] == 64 * 1024
    # a real client sending 16 MiB of header reads the 431 too (the server lingers)
    reply = httpx.get(f"{server.url}/healthz", headers={"X-Big": "a" * (16 * MIB)}, timeout=30)
    assert reply.status_code == 431 and reply.json()["error"]["code"] == "headers_too_large"
    assert server.status("VmRSS") < before + 50
    assert server.healthy()


def test_200_000_tiny_headers_are_refused(server):
    status, body = ask(server.port, get("/healthz", b"a: b\r\n" * 200_000))
    assert status == 431 and b"headers_too_large" in body
    assert server.healthy()


def test_headers_just_under_the_limit_are_served(server):
    status, _ = ask(server.port, get("/healthz", b"Connection: close\r\nx-pad: " +
                                     b"p" * (63 * 1024) + b"\r\n"))
    assert status == 200
    request = get("/healthz", b"a: b\r\n" * 4000)  # 24 KiB of tiny headers, sent piecewise
    with connect(server.port) as sock:
        for k in range(0, len(request), 1000):
            sock.sendall(request[k:k + 1000])
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")


def test_a_long_url_is_refused_with_advice(server):
    query = "&".join(["word=kitap"] * 6500)  # 71 KB: over the head's 64 KiB
    status, body = ask(server.port, get(f"/v1/validate?{query}"))
    assert status == 431 and "POST" in orjson.loads(body)["error"]["message"]


def chunked(pieces: list[bytes], trailer: bytes = b"") -> bytes:
    return (b"POST /v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
            b"\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            + b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n" + trailer
            + b"\r\n")


def test_chunked_bodies_are_served_and_long_trailers_refused(server):
    words = orjson.dumps({"words": ["ev", "kitap"] * 500})
    status, body = ask(server.port, chunked([words[k:k + 100] for k in range(0, len(words), 100)]))
    assert status == 200 and len(orjson.loads(body)["results"]) == 1000
    before = server.status("VmRSS")
    status, body = ask(server.port, chunked([b'{"words": ["ev"]}'],
                                            b"X-Trailer: " + b"t" * (64 * MIB) + b"\r\n"))
    assert status == 431 and b"trailers" in body
    assert server.status("VmRSS") < before + 50


def test_a_slow_loris_is_closed_after_the_header_timeout(server):
    head = get("/healthz", b"x-slow: " + b"s" * 60 + b"\r\n")  # ~110 bytes: ~55 s at this pace
    sent, reply = 0, b""
    with connect(server.port) as sock:
        for byte in head:  # two bytes a second, faster than the 1 byte/s of a slow loris
            sock.sendall(bytes([byte]))
            sent += 1
            if select.select([sock], [], [], 0.5)[0]:
                reply = read_all(sock)
                break
    assert sent < len(head), "the server waited for the whole head"
    assert reply.startswith(b"HTTP/1.1 408") and b"request_timeout" in reply
    assert server.healthy()


def test_a_silent_connection_is_closed(server):
    with connect(server.port) as sock:
        assert sock.recv(100) == b""  # closed by the server (a timeout would raise)
    assert server.healthy()


def test_an_idle_keep_alive_connection_is_closed(server):
    with connect(server.port) as sock:
        sock.sendall(get("/healthz"))
        reply = read_all(sock)  # the reply, then the close of uvicorn's keep-alive timeout
        assert reply.startswith(b"HTTP/1.1 200") and reply.endswith(b'{"status":"ok"}')


# --- the body ----------------------------------------------------------------------------

CUT = b"<closed while the body was being sent>"


async def stalled_uploads(port: int, count: int, size: int, short: int) -> list[bytes]:
    """`count` POSTs declaring `size` bytes that stop `short` bytes before the end; what
    each connection received before the server closed it."""

    async def one() -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                     b"application/json\r\nContent-Length: %d\r\n\r\n" % size)
        writer.write(b'{"words": ["' + b"k" * (size - short - 12))
        try:
            try:
                await writer.drain()
            except ConnectionError:  # on a busy machine the timeout can come first
                return CUT
            return await asyncio.wait_for(reader.read(), 60)
        finally:
            writer.close()

    return await asyncio.gather(*(one() for _ in range(count)))


async def while_stalled(served: Served, count: int) -> tuple[list[bytes], bool]:
    uploads = asyncio.ensure_future(stalled_uploads(served.port, count, 4 * MIB, 200))
    await asyncio.sleep(0.5)
    healthy = await asyncio.to_thread(served.healthy)
    return await uploads, healthy


def dropped(reply: bytes) -> bool:
    """Cut off, timed out (408), or refused because the worker's body budget was spent (503)."""
    return reply == CUT or (reply.startswith(b"HTTP/1.1 408") and b"request_timeout" in reply) \
        or (reply.startswith(b"HTTP/1.1 503") and b'"busy"' in reply)


def test_stalled_uploads_are_dropped_and_memory_stays_bounded(server):
    """100 uploads declaring 4 MiB and stopping 200 bytes short used to take the worker to
    477 MB: now they share one 64 MiB budget (503 beyond it) and time out (408)."""
    before = server.status("VmRSS")
    replies, healthy = asyncio.run(while_stalled(server, 100))
    assert healthy, "a normal request failed while 100 uploads were stalled"
    assert all(map(dropped, replies)), {r[:40] for r in replies}
    assert any(r.startswith(b"HTTP/1.1 503") for r in replies)  # the budget was reached
    assert server.status("VmHWM") < before + 64 + 150
    replies, healthy = asyncio.run(while_stalled(server, 100))
    assert healthy and all(map(dropped, replies))
    assert server.status("VmHWM") < before + 64 + 150


# --- pipelining ---------------------------------------------------------------------------

WORDS = get("/v1/lexicons/tr/words")


def test_pipelined_requests_that_are_never_read_keep_memory_bounded(server):
    """100 connections pipelining 256 KiB of `GET /v1/lexicons/tr/words` each and never
    reading took a worker from 66 to 1,383 MiB: uvicorn parsed every request at once. Now a
    connection holds at most HOLD + READ bytes of requests (128 KiB) besides the two
    uvicorn has, and the worker answers others meanwhile and afterwards."""
    from kelime.service.protocol import HOLD, READ

    before = server.status("VmRSS")
    blob = WORDS * (256 * 1024 // len(WORDS))
    socks, sent = [], 0
    try:
        for _ in range(40):
            sock = connect(server.port)
            sock.setblocking(False)
            try:
                sent += sock.send(blob)
            except BlockingIOError:
                pass
            socks.append(sock)
        assert sent > 40 * 128 * 1024  # the sockets took more than the guard holds
        peaks = []
        for _ in range(12):  # until the worker stops growing (it took ~3 s before)
            time.sleep(0.25)
            peaks.append(server.status("VmHWM"))
            if len(peaks) > 4 and peaks[-1] == peaks[-5]:
                break
        assert server.healthy()
        ceiling = 40 * (HOLD + READ) // MIB + 40  # was ~11 MiB a connection
        assert peaks[-1] < before + ceiling, (before, peaks)
    finally:
        for sock in socks:
            sock.close()
    assert server.healthy()
    assert server.status("VmHWM") < before + ceiling


def replies(data: bytes, heads: list[bool]) -> list[tuple[int, bytes]]:
    """(status, body) of each reply in `data`, one per request (True: a HEAD, no body)."""
    out = []
    for is_head in heads:
        head, _, data = data.partition(b"\r\n\r\n")
        length = 0 if is_head else int(head.lower().split(b"content-length: ")[1]
                                       .split(b"\r\n")[0])
        out.append((int(head[9:12]), data[:length]))
        data = data[length:]
    assert data == b"", data[:100]
    return out


def test_pipelined_requests_are_all_answered_in_order(server):
    body = orjson.dumps({"words": ["ev", "kitap", "xq"]})
    post = (b"POST /v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
            b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    kinds = [(get("/healthz"), False, b'{"status":"ok"}'), (post, False, None),
             (chunked([body[:7], body[7:]]).replace(b"Connection: close\r\n", b""), False,
              None),
             (b"HEAD /v1/lexicons/tr/words HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", True, b""),
             (WORDS, False, None)]
    sequence = [kinds[k % len(kinds)] for k in range(1000)]
    blob = b"".join(request for request, _, _ in sequence) + get("/healthz", b"Connection: "
                                                                 b"close\r\n")
    with connect(server.port) as sock:
        sender = threading.Thread(target=sock.sendall, args=(blob,))
        sender.start()
        data = read_all(sock)
        sender.join()
    answered = replies(data, [is_head for _, is_head, _ in sequence] + [False])
    assert all(status == 200 for status, _ in answered)
    verdicts = {orjson.dumps(orjson.loads(body_)["results"]) for (request, _, _), (_, body_)
                in zip(sequence, answered) if request.startswith(b"POST")}
    assert len(verdicts) == 1  # the same three verdicts, chunked or not
    for (_, _, expected), (_, got) in zip(sequence, answered):
        assert expected is None or got == expected


def test_pipelined_big_bodies_pass_through_the_held_bytes(server):
    """Bodies bigger than what the guard holds (and than what uvicorn reads ahead), with a
    Content-Length and chunked, pipelined: reading pauses and resumes, every reply comes."""
    body = b'{"words": ["ev"]' + b" " * MIB + b"}"
    post = (b"POST /v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n"
            % len(body) + body)
    pieces = [body[k:k + 70_000] for k in range(0, len(body), 70_000)]
    blob = (post + chunked(pieces).replace(b"Connection: close\r\n", b"")
            + get("/healthz")) * 3 + get("/healthz", b"Connection: close\r\n")
    with connect(server.port) as sock:
        sender = threading.Thread(target=sock.sendall, args=(blob,))
        sender.start()
        data = read_all(sock)
        sender.join()
    assert [status for status, _ in replies(data, [False] * 10)] == [200] * 10


def test_requests_sent_a_byte_at_a_time_are_framed_alike(server):
    """A blank line ending a head or a chunked body may span reads: every cut is the same."""
    body = orjson.dumps({"words": ["ev", "kitap"]})
    blob = (get("/healthz") + b"POST /v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body) + body
            + chunked([body[:5], body[5:]], b"X-Trailer: t\r\n"))
    with connect(server.port) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for k in range(len(blob)):
            sock.sendall(blob[k:k + 1])
        data = read_all(sock)
    answered = replies(data, [False] * 3)
    assert [status for status, _ in answered] == [200, 200, 200]
    assert answered[1][1] == answered[2][1]


def test_a_reply_before_the_body_ends_leaves_the_connection_usable(server):
    """An unknown route answers 404 without reading its body: the rest of the body is read
    and dropped, and the connection serves the next request."""
    body = b" " * (200 * 1024)
    with connect(server.port) as sock:
        sock.sendall(b"POST /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n"
                     b"\r\n" % len(body) + body[:1000])
        assert read_reply(sock).startswith(b"HTTP/1.1 404")
        sock.sendall(body[1000:] + get("/healthz"))
        assert read_reply(sock).endswith(b'{"status":"ok"}')


def test_a_bad_request_behind_good_ones_is_answered_after_them(server):
    blob = get("/healthz") * 3 + b"GET /healthz HTTP/1.1\r\nBad Header\r\n\r\n"
    with connect(server.port) as sock:
        sock.sendall(blob)
        data = read_all(sock)
    *good, bad = replies(data, [False] * 4)
    assert [status for status, _ in good] == [200, 200, 200]
    assert bad[0] == 400 and orjson.loads(bad[1])["error"]["code"] == "invalid_http"


# --- the connections ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def small_server(data_dir, tmp_path_factory):
    """20 connections at most; timeouts long enough not to matter here."""
    log = tmp_path_factory.mktemp("limits") / "small.log"
    with serve(data_dir, log, max_connections=20, header_timeout=30, body_timeout=30,
               keepalive_timeout=30) as served:
        yield served


#: A body of BUSY_BODY bytes whose first half is sent at once: an upload in progress at a
#: good rate (not one to refuse as slow when room is needed), until its end is sent.
BUSY_BODY = b'{"words": ["ev"]' + b" " * (128 * 1024) + b"}"


def busy_post(port: int) -> tuple[socket.socket, bytes]:
    """A POST that sends half its body at once and asks for `100 Continue`: the server's
    first answer is 100 once the app reads the body, or a final status if it refused it."""
    sock = connect(port)
    half = len(BUSY_BODY) // 2
    sock.sendall(b"POST /v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                 b"application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n"
                 % len(BUSY_BODY) + BUSY_BODY[:half])
    return sock, sock.recv(65536)


def json_error(reply: bytes) -> tuple[int, str]:
    """(status, error code) of a whole reply in kelime's error shape (else AssertionError)."""
    head, _, body = reply.partition(b"\r\n\r\n")
    assert b"\r\ncontent-type: application/json" in head.lower(), reply[:200]
    return int(head[9:12]), orjson.loads(body)["error"]["code"]


def test_connections_over_the_limit_are_answered_503(small_server):
    held, refused = [], []
    try:
        for _ in range(26):
            sock, first = busy_post(small_server.port)
            if first.startswith(b"HTTP/1.1 100"):
                assert not refused, "a request was served after one had been refused"
                held.append(sock)
            else:  # kelime's JSON, not uvicorn's plain-text 503
                assert json_error(first) == (503, "busy") and b"retry-after: 1" in first
                refused.append(sock)
        assert 15 <= len(held) <= 20 and len(refused) >= 6
        reply = httpx.get(f"{small_server.url}/healthz", timeout=30)
        assert reply.status_code == 503 and reply.json()["error"]["code"] == "busy"
        for sock in held:  # the held requests finish, and then there is room again
            sock.sendall(BUSY_BODY[len(BUSY_BODY) // 2:])
            assert read_reply(sock).startswith(b"HTTP/1.1 200")
    finally:
        for sock in held + refused:
            sock.close()
    assert small_server.healthy()


def read_reply(sock: socket.socket) -> bytes:
    """The next reply with a Content-Length on `sock`, whole (after any 100 Continue)."""
    data = b""
    while True:
        head, sep, rest = data.partition(b"\r\n\r\n")
        if sep and not head.startswith(b"HTTP/1.1 100"):
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            if len(rest) >= length:
                return head + sep + rest[:length]
        elif sep:
            data = rest
            continue
        chunk = sock.recv(65536)
        assert chunk, f"closed before a whole reply: {data[:100]!r}"
        data += chunk


def test_slow_bodies_over_the_limit_do_not_lock_new_clients_out(small_server):
    """1,100 connections trickling bodies at 1 byte/s (over a limit of 1,000) locked every
    new client out with uvicorn's plain-text 503 for ~28 s a round. Now a slow upload makes
    room for a new client (408), and whoever is refused is refused in JSON."""
    head = (b"POST /v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
            b"\r\nContent-Length: 1000\r\n\r\n{")
    slow = []
    for _ in range(30):  # the limit is 20
        sock = connect(small_server.port)
        sock.sendall(head)
        slow.append(sock)
    answers = []
    try:
        for _ in range(5):  # 1 byte a second on each
            time.sleep(1)
            for sock in slow:
                try:
                    sock.send(b" ")
                except OSError:
                    pass  # refused and closed
            reply = httpx.get(f"{small_server.url}/healthz", timeout=30)
            assert reply.headers["content-type"] == "application/json", reply.text
            answers.append(reply.status_code)
        assert answers[-1] == 200, answers  # a slow upload made room
        assert set(answers) <= {200, 503}
        refused = {}
        for sock in slow:
            if select.select([sock], [], [], 0)[0]:
                reply = read_all(sock)
                if reply:  # else cut (made room before its head came)
                    status, code = json_error(reply)
                    refused[status] = code
        assert refused.get(408) == "request_timeout", refused
        assert set(refused) <= {408, 503} and refused.get(503, "busy") == "busy"
    finally:
        for sock in slow:
            sock.close()
    assert small_server.healthy()


def test_silent_connections_at_the_limit_make_room_for_requests(small_server):
    silent = [connect(small_server.port) for _ in range(40)]
    try:
        for _ in range(5):
            assert small_server.healthy()
        oldest, closed = silent[:20], set()  # the oldest were closed to make room
        for _ in range(20):
            ready = select.select([s for s in oldest if s not in closed], [], [], 0.5)[0]
            closed.update(s for s in ready if s.recv(100) == b"")
            if len(closed) == len(oldest):
                break
        assert len(closed) >= 18
        assert not select.select([silent[-1]], [], [], 0.2)[0]  # the newest is still open
    finally:
        for sock in silent:
            sock.close()


def test_200_silent_sockets_under_a_128_descriptor_limit_do_not_stop_requests(
        data_dir, tmp_path):
    with serve(data_dir, tmp_path / "fds.log", nofile=128, header_timeout=30) as served:
        silent = [connect(served.port) for _ in range(200)]
        try:
            for _ in range(5):
                assert served.healthy()
            assert served.fds() < 128
        finally:
            for sock in silent:
                sock.close()


# --- the options -------------------------------------------------------------------------

def test_uvicorn_options_carry_the_settings():
    settings = Settings(max_header_bytes=5000, max_query_bytes=900, header_timeout=3,
                        body_timeout=4, keepalive_timeout=6, max_connections=50)
    options = uvicorn_options(settings)
    assert options["http"].keywords["limits"] == ConnectionLimits(
        max_header_bytes=5000, header_timeout=3, body_timeout=4, max_connections=50)
    # the guard counts connections: uvicorn's own limit would answer 503 in plain text
    assert "limit_concurrency" not in options and options["timeout_keep_alive"] == 6
    assert options["loop"] == "uvloop" and options["access_log"] is False
    assert options["server_header"] is False
    import pickle  # `--workers N` sends the config to spawned processes
    assert pickle.loads(pickle.dumps(options["http"])).keywords == options["http"].keywords


def test_the_connection_limit_leaves_descriptors_free():
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    many = Settings(max_connections=10 * soft)
    assert connection_limit(many) == soft - FD_RESERVE - EXTRA_MOST
    assert connection_limit(Settings(max_connections=5)) == 5


def test_a_replys_head_and_body_leave_in_one_write():
    """uvicorn writes a reply's head and body separately: a worker killed between the two
    writes left nginx with headers and no body (a torn reply it cannot retry)."""
    from kelime.service.protocol import Corked

    class Transport:
        def __init__(self):
            self.writes, self.events = [], []

        def writelines(self, chunks):  # one writev on uvloop: one syscall, no copy
            self.writes.append(b"".join(chunks))

        def write_eof(self):
            self.events.append(("eof", len(self.writes)))

        def close(self):
            self.events.append(("close", len(self.writes)))

        def is_closing(self):
            return False

        def get_write_buffer_size(self):
            return 0

    async def main():
        loop = asyncio.get_running_loop()
        real = Transport()
        corked = Corked(real, loop)
        corked.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
        corked.write(b"{}")
        assert real.writes == [] and corked.get_write_buffer_size() == 40
        await asyncio.sleep(0)
        assert real.writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"]
        corked.write(b"HTTP/1.1 431 \r\n\r\n")
        corked.write_eof()  # the refusal, then FIN: never FIN first
        corked.write(b"late")
        corked.close()
        assert real.events == [("eof", 2), ("close", 3)]

    asyncio.run(main())
