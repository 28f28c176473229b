"""What hostile connections make one worker hold: the old protocol against the guard.

    .venv/bin/python benchmarks/connections.py                  # ~1 minute
    .venv/bin/python benchmarks/connections.py --data /path/to/data --only guard

Two attacks from issue 18, each on a fresh worker per variant (servers.py's `old` and
`guard`, one worker on 127.0.0.1, the same lexicon):

    pipelining   100 connections each send 256 KiB of pipelined
                 `GET /v1/lexicons/tr/words` and never read: the worker's RSS before, at its
                 peak and after the clients close, and how long a /healthz takes meanwhile
    slow bodies  1,100 connections (the limit is 1,000) send a POST head and then 1 byte a
                 second for 12 s, while a new client asks /healthz every 0.5 s: what the
                 new clients get (status, JSON or plain text) and what the slow ones get

Every loop is bounded in count and time; servers are stopped by their process id.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import socket
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from servers import server  # noqa: E402
from validate import lexicon_folder, print_table  # noqa: E402

WORDS = b"GET /v1/lexicons/tr/words HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
SLOW_HEAD = (b"POST /v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
             b"\r\nContent-Length: 1000\r\n\r\n{")


def mib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) // 1024
    return -1


def pipelining(port: int, pid: int, connections: int = 100) -> list[str]:
    url = f"http://127.0.0.1:{port}"
    httpx.get(url + "/v1/lexicons/tr/words", timeout=30)
    before = mib(pid, "VmRSS")
    blob = WORDS * (256 * 1024 // len(WORDS))
    socks = []
    for _ in range(connections):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setblocking(False)
        try:
            sock.send(blob)
        except BlockingIOError:
            pass
        socks.append(sock)
    seen = []
    for _ in range(60):  # until the worker stops growing, 30 s at most
        time.sleep(0.5)
        seen.append(mib(pid, "VmRSS"))
        if len(seen) > 6 and seen[-1] == seen[-7]:
            break
    start = time.monotonic()
    status = httpx.get(url + "/healthz", timeout=120).status_code
    took = time.monotonic() - start
    for sock in socks:
        sock.close()
    time.sleep(2)
    return [f"{before}", f"{mib(pid, 'VmHWM')}", f"{mib(pid, 'VmRSS')}",
            f"{status} in {took:.2f} s"]


async def slow_bodies(port: int, connections: int = 1100, seconds: float = 12) -> list[str]:
    url = f"http://127.0.0.1:{port}"
    end = time.monotonic() + seconds
    slow, new = Counter(), Counter()

    async def trickle():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            slow["connect failed"] += 1
            return
        writer.write(SLOW_HEAD)
        reply = b""
        while time.monotonic() < end:
            try:
                reply = await asyncio.wait_for(reader.read(400), 1.0)
                break
            except TimeoutError:
                writer.write(b" ")
            except OSError:
                break
        slow[describe(reply) if reply or time.monotonic() < end else "still sending"] += 1
        writer.close()

    async def newcomers():
        async with httpx.AsyncClient(timeout=30) as client:
            while time.monotonic() < end:
                await asyncio.sleep(0.5)
                try:
                    reply = await client.get(url + "/healthz", headers={"Connection": "close"})
                    kind = reply.headers.get("content-type", "")
                    new[f"{reply.status_code} {'JSON' if 'json' in kind else kind}"] += 1
                except httpx.HTTPError as exc:
                    new[type(exc).__name__] += 1

    await asyncio.gather(newcomers(), *(trickle() for _ in range(connections)))
    return [", ".join(f"{k}: {v}" for k, v in new.most_common()),
            ", ".join(f"{k}: {v}" for k, v in slow.most_common())]


def describe(reply: bytes) -> str:
    if not reply:
        return "closed, no reply"
    return f"{reply[9:12].decode()} {'JSON' if b'application/json' in reply else 'text'}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="data folder with the lexicon to serve")
    parser.add_argument("--only", default="old,guard", help="old, guard or both")
    args = parser.parse_args(argv)
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))  # 1,100 sockets
    with tempfile.TemporaryDirectory(prefix="kelime-connections-") as tmp:
        tmp = Path(tmp)
        data = lexicon_folder(args.data, tmp / "data")
        piped, slow = [], []
        for variant in args.only.split(","):
            srv = server(variant, "kelime", data, tmp)
            try:
                piped.append([variant, *pipelining(srv.port, srv.proc.pid)])
            finally:
                srv.stop()
            srv = server(variant, "kelime", data, tmp)
            try:
                slow.append([variant, *asyncio.run(slow_bodies(srv.port))])
            finally:
                srv.stop()
        print_table("100 connections pipelining 256 KiB of GET /v1/lexicons/tr/words, never "
                    "reading (MiB)", ["protocol", "RSS before", "peak", "after close",
                                      "/healthz meanwhile"], piped)
        print_table("1,100 connections sending bodies at 1 byte/s for 12 s (limit 1,000)",
                    ["protocol", "new clients (every 0.5 s)", "the slow connections"], slow)


if __name__ == "__main__":
    main()
