"""What a client reaching a replica directly can make it hold, and for how long: the limits
that are the app's own (a body's deadline and the bodies' shared budget) and uvicorn's public
options (`settings.uvicorn_options`). The connection-level attacks (huge or endless heads,
slow readers, pipelining floods, malformed chunks) are nginx's to stop: tests/test_nginx.py
sends them through the shipped config.

Each server runs in its own process (kelime's app, `uvicorn_options(settings)` with small
timeouts) so that its memory can be read from /proc/PID/status. Every loop is bounded in
count; the only clocks are the server's own timeouts and generous socket timeouts.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import socket
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson
import pytest

from kelime.service.settings import Settings, uvicorn_options
from tests.servers import listening_socket, port_of, stop, wait_ready

MIB = 1024 * 1024
SERVE = """
import json, socket, sys
from pathlib import Path
import uvicorn
from kelime.service.app import create_app
from kelime.service.settings import Settings, uvicorn_options
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
    """Short timeouts: bodies 2 s, idle keep-alive 1 s."""
    log = tmp_path_factory.mktemp("limits") / "server.log"
    with serve(data_dir, log, body_timeout=2, keepalive_timeout=1) as served:
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


# --- the head and the body -----------------------------------------------------------

def chunked(pieces: list[bytes], trailer: bytes = b"") -> bytes:
    return (b"POST /v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
            b"\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            + b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n" + trailer
            + b"\r\n")


def test_chunked_bodies_are_served(server):
    words = orjson.dumps({"words": ["ev", "kitap"] * 500})
    status, body = ask(server.port, chunked([words[k:k + 100] for k in range(0, len(words), 100)]))
    assert status == 200 and len(orjson.loads(body)["results"]) == 1000


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
                return await asyncio.wait_for(reader.read(), 60)
            except ConnectionError:  # refused (408, 413, 503) and closed with its body
                return CUT           # unread: the reset may come before the reply is read
        finally:
            writer.close()

    return await asyncio.gather(*(one() for _ in range(count)))


async def while_stalled(served: Served, count: int) -> tuple[list[bytes], bool]:
    uploads = asyncio.ensure_future(stalled_uploads(served.port, count, 4 * MIB, 200))
    await asyncio.sleep(0.5)
    healthy = await asyncio.to_thread(served.healthy)
    return await uploads, healthy


def dropped(reply: bytes) -> bool:
    """Cut off, timed out (408), or refused because the worker's body budget was spent (503).
    Directly on a replica a client may see the reset of the close rather than the reply;
    behind nginx (which reads whole bodies first) it always gets the reply."""
    return reply == CUT or (reply.startswith(b"HTTP/1.1 408") and b"request_timeout" in reply) \
        or (reply.startswith(b"HTTP/1.1 503") and b'"busy"' in reply)


def test_stalled_uploads_are_dropped_and_memory_stays_bounded(server):
    """100 uploads declaring 4 MiB and stopping 200 bytes short used to take the worker to
    477 MB: now they share one 64 MiB budget (503 beyond it) and time out (408)."""
    before = server.status("VmRSS")
    replies, healthy = asyncio.run(while_stalled(server, 100))
    assert healthy, "a normal request failed while 100 uploads were stalled"
    assert all(map(dropped, replies)), {r[:40] for r in replies}
    assert any(r.startswith(b"HTTP/1.1 503") or r == CUT for r in replies)
    assert server.status("VmHWM") < before + 64 + 150
    replies, healthy = asyncio.run(while_stalled(server, 100))
    assert healthy and all(map(dropped, replies))
    assert server.status("VmHWM") < before + 64 + 150




def test_a_body_that_stops_coming_gets_408(server):
    """A client that sends part of its body and then nothing is answered 408 in the error
    shape once KELIME_BODY_TIMEOUT (2 s here) has passed, and the connection closes."""
    with connect(server.port) as sock:
        sock.sendall(b"POST /v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                     b"application/json\r\nContent-Length: 1000\r\n\r\n{\"words\": [")
        reply = read_all(sock)
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), reply[:200]
    assert orjson.loads(body)["error"]["code"] == "request_timeout"
    assert server.healthy()


def test_uvicorn_options_carry_the_settings():
    settings = Settings(keepalive_timeout=6, max_connections=50, worker_timeout=7)
    options = uvicorn_options(settings)
    assert options["timeout_keep_alive"] == 6 and options["limit_concurrency"] == 50
    assert options["timeout_graceful_shutdown"] == 13
    assert options["proxy_headers"] is False  # X-Forwarded-For: service/trust.py decides
    assert (options["http"], options["loop"]) == ("httptools", "uvloop")
