"""The attacks nginx must hold for kelime, at full scale, through the shipped config.

    .venv/bin/python benchmarks/attacks.py --data data     # ~5 minutes (`make lexicon`)
    .venv/bin/python benchmarks/attacks.py --quick         # ~1 minute, a quarter the scale

deploy/nginx/nginx.conf and kelime.conf as shipped (deploy/nginx/standalone.py; one nginx
worker a core, as `worker_processes auto`), in front of two `kelime serve --workers 1`
replicas on unix sockets, all on this machine. Each attack runs for --seconds while a fresh
client (127.0.0.2) sends a POST /v1/validate every 0.1 s on a new connection:

    slow readers     400 connections each send a 1,000-word POST /v1/validate (~65 KB
                     reply) and never read the reply
    slow uploads     1,100 connections announce `Content-Length: 4000000` and send
                     1.2 KB/s, just fast enough for nginx's 5 s client_body_timeout
    slow bodies      2,300 connections announce the same and send a byte every 8 s
    bad chunks       2,000 connections, 200 of each malformed chunked body (a chunk size
                     `13 ` then nothing, a bare LF, an overflowing size, Content-Length in
                     the trailers, ...)
    pipelining       200 connections each writing 1,000-word validations back to back
                     (10 KB each) as fast as the kernel takes them, never reading

Every connection the server closes is opened again, so each attack keeps its count up for
the whole run. Each runs twice: from one address (nginx's per-address limit holds it to
128 requests under way; the rest are refused 503 at once) and from many, 100 connections
an address (the limit never bites: what holds is nginx's connections, timeouts and
buffers). Figures: the fresh client's answers and latency p50/p99 during the attack, and as
a ratio to the same client alone just before; what the attackers got (replies by status,
connections closed on them); the replicas' uvicorn workers' RSS (the largest) and nginx's
(its workers together), before / peak / after; the kernel's TCP buffers (/proc/net/sockstat,
the whole machine's); and the lines nginx logged (kelime.error.log, at `warn`).

The attackers are plain sockets in this process (the test, tests/test_nginx.py, runs the
same ones at a small scale); they share the CPUs with the servers, so the ratios matter,
not the milliseconds. Bounded: each attack stops after --seconds, every socket is closed,
every server is stopped by its process id.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import resource
import socket
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
FRESH = "127.0.0.2"
WORDS_1000 = ["kitap", "KİTAP", "evler", "kalem", "İstanbul", "xqzt", "ılık", "kâtil"] * 125
VALIDATE_8 = {"words": WORDS_1000[:8]}


def http_request(path: str, body: dict | bytes, headers: dict | None = None,
                 length: int | None = None) -> bytes:
    """A POST with a JSON body as raw bytes; `length`: the Content-Length to announce (a
    body that will not all come), else the body's own."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    head = (f"POST {path} HTTP/1.1\r\nHost: kelime\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(raw) if length is None else length}\r\n")
    head += "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    return head.encode() + b"\r\n" + raw


def chunked(path: str, rest: bytes) -> bytes:
    """A chunked POST's head, then `rest` as its body, as sent."""
    return (f"POST {path} HTTP/1.1\r\nHost: kelime\r\nContent-Type: application/json\r\n"
            f"Transfer-Encoding: chunked\r\n\r\n").encode() + rest


BODY = b'{"words": ["kitap"]}'   # 20 bytes: chunk size 14
BAD_CHUNKS = {  # what: the body after a valid chunked head
    "`13 ` and nothing more": b"13 \r\n",
    "a size and no data": b"14\r\n" + BODY[:5],
    "a bare LF after the size": b"14\n" + BODY + b"\r\n0\r\n\r\n",
    "a bare LF after the data": b"14\r\n" + BODY + b"\n0\r\n\r\n",
    "a size that overflows": b"f" * 21 + b"\r\n" + BODY,
    "a negative size": b"-14\r\n" + BODY,
    "`0x14` as a size": b"0x14\r\n" + BODY + b"\r\n0\r\n\r\n",
    "more data than the size": b"10\r\n" + BODY + b"\r\n0\r\n\r\n",
    "Content-Length in the trailers": b"14\r\n" + BODY + b"\r\n0\r\nContent-Length: 5\r\n\r\n",
    "a space after the size": b"14 \r\n" + BODY + b"\r\n0\r\n\r\n",
}


def addresses(count: int, per: int, net: int = 1) -> list[str]:
    """The source address of each of `count` connections, `per` an address: 127.<net>.x.y."""
    return [f"127.{net}.{k // 250}.{k % 250 + 1}" for k in (i // per for i in range(count))]


def connect(port: int, source: str | None, first: bytes = b"", rcvbuf: int | None = None,
            timeout: float = 5) -> socket.socket:
    """A connection to 127.0.0.1:`port` from `source` that has sent `first`, non-blocking
    from then on; `rcvbuf`: a small receive buffer (set before connecting, so the window
    stays small), as a client that reads slowly has."""
    sock = socket.socket()
    try:
        if rcvbuf:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        if source:
            sock.bind((source, 0))
        sock.settimeout(timeout)
        sock.connect(("127.0.0.1", port))
        sock.sendall(first)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


def send_some(sock: socket.socket, data: bytes) -> int:
    """Send what the kernel takes of `data` now; the bytes sent (0 on a closed connection)."""
    try:
        return sock.send(data)
    except (BlockingIOError, InterruptedError):
        return 0
    except OSError:
        return 0


def gone(sock: socket.socket) -> bool:
    """Whether the server closed or reset the connection, read or not (Linux's TCP_INFO:
    its state is TCP_CLOSE after a reset, TCP_CLOSE_WAIT after the server's FIN)."""
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] in (7, 8)


def status_of(reply: bytes) -> int | str:
    head = reply[:12]
    return int(head[9:12]) if head.startswith(b"HTTP/1.") and head[9:12].isdigit() else "?"


@dataclass
class Crowd:
    """`count` attacking connections, the i-th from `sources[i]`. Each sends `first` when it
    opens, then `drip` (or more of `flood`, when given: as much as the kernel takes, never
    reading) every `tick`; a reply is counted by status (`read`: else never read), and a
    connection the server closes (or resets) is counted and opened again (`again`)."""
    port: int
    sources: list[str]
    first: bytes
    drip: bytes = b""
    flood: bytes = b""
    read: bool = True
    again: bool = True
    rcvbuf: int | None = None
    socks: dict[int, socket.socket] = field(default_factory=dict)   # the open ones
    got: dict[int, bytes] = field(default_factory=dict)    # what each got (its last opening)
    replies: Counter = field(default_factory=Counter)      # status -> replies seen
    codes: Counter = field(default_factory=Counter)        # JSON error code -> replies
    closed: int = 0        # connections the server closed or reset
    silent: int = 0        # ... of those, without a byte of reply first
    refused: int = 0       # connections that could not be opened

    def open(self, i: int) -> None:
        try:
            self.socks[i] = connect(self.port, self.sources[i], self.first, self.rcvbuf)
            self.got.pop(i, None)
        except OSError:
            self.refused += 1

    def open_all(self) -> None:
        for i in range(len(self.sources)):
            self.open(i)

    def step(self) -> None:
        """One tick: read what came (when reading), send the drip, reopen the closed."""
        for i in range(len(self.sources)):
            sock = self.socks.get(i)
            if sock is None:
                if self.again:
                    self.open(i)
                continue
            self.take(i, sock)
            if i in self.socks:
                if self.flood:  # as much as the kernel takes (at most 64 at a tick)
                    for _ in range(64):
                        if not send_some(sock, self.flood):
                            break
                elif self.drip:
                    send_some(sock, self.drip)

    def take(self, i: int, sock: socket.socket) -> None:
        """Read what came; when not reading, only peek at it, and see a close in the
        connection's state (a reset leaves the unread reply readable first)."""
        try:
            if self.read:
                data = sock.recv(65536)
            elif gone(sock):
                data = b""
            else:
                data = sock.recv(512, socket.MSG_PEEK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self.silent += i not in self.got
            self.closed += 1
            sock.close()
            del self.socks[i]
        elif i not in self.got:  # the first bytes of a reply
            self.got[i] = data
            self.replies[status_of(data)] += 1
            code = re.search(rb'"code":"(\w+)"', data)
            if code:
                self.codes[code.group(1).decode()] += 1
        elif self.read:
            self.got[i] += data

    def run(self, seconds: float, tick: float = 0.25) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            began = time.monotonic()
            self.step()
            time.sleep(max(0.0, tick - (time.monotonic() - began)))

    def close(self) -> None:
        for sock in self.socks.values():
            sock.close()
        self.socks.clear()

    @property
    def waiting(self) -> int:
        """Open connections without a byte of reply."""
        return sum(1 for i in self.socks if i not in self.got)


@dataclass
class Fresh:
    """A client from `source` sending `body` to POST /v1/validate every `every` s, each on a
    new connection (the per-address limit never counts it with the attackers'), in a
    thread; each request's status (or error) and seconds."""
    port: int
    body: dict = field(default_factory=lambda: VALIDATE_8)
    source: str = FRESH
    every: float = 0.1
    outcomes: list[tuple[int | str, float]] = field(default_factory=list)

    def ask(self) -> tuple[int | str, float]:
        began = time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10,
                                          source_address=(self.source, 0))
        try:
            conn.request("POST", "/v1/validate", body=json.dumps(self.body),
                         headers={"Content-Type": "application/json"})
            reply = conn.getresponse()
            reply.read()
            return reply.status, time.perf_counter() - began
        except OSError as e:
            return type(e).__name__, time.perf_counter() - began
        finally:
            conn.close()

    @contextmanager
    def asking(self):
        """Ask every `every` s while the block runs; yields the outcomes so far."""
        done = threading.Event()

        def loop() -> None:
            while not done.wait(self.every):
                self.outcomes.append(self.ask())

        thread = threading.Thread(target=loop)
        thread.start()
        try:
            yield self.outcomes
        finally:
            done.set()
            thread.join(15)

    @property
    def ok(self) -> int:
        return sum(1 for status, _ in self.outcomes if status == 200)

    def percentile(self, share: float) -> float:
        times = sorted(t for _, t in self.outcomes)
        return times[min(len(times) - 1, int(len(times) * share))] * 1e3 if times else float("nan")


# --- what the processes hold -------------------------------------------------------------

def children(pid: int) -> list[int]:
    try:
        found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    return [int(k) for k in found if b"resource_tracker" not in _cmdline(int(k))]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def rss(pid: int) -> int:
    """VmRSS in bytes (0 once the process is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def kernel_tcp() -> int:
    """The bytes the kernel holds in TCP socket buffers, machine-wide (/proc/net/sockstat)."""
    text = Path("/proc/net/sockstat").read_text()
    pages = re.search(r"^TCP:.* mem (\d+)", text, re.MULTILINE)
    return int(pages.group(1)) * resource.getpagesize() if pages else 0


@dataclass
class Memory:
    """The largest replica worker's RSS, nginx's workers' together, the kernel's TCP
    buffers: `before`, the peak while sampling, `after`."""
    replicas: list[int]    # the `kelime serve` pids
    nginx: int             # nginx's master pid
    before: tuple[int, int, int] = (0, 0, 0)
    peak: tuple[int, int, int] = (0, 0, 0)
    after: tuple[int, int, int] = (0, 0, 0)

    def now(self) -> tuple[int, int, int]:
        workers = [w for pid in self.replicas for w in children(pid)]
        return (max(map(rss, workers), default=0), sum(map(rss, children(self.nginx))),
                kernel_tcp())

    @contextmanager
    def sampling(self, every: float = 0.2):
        self.before = self.peak = self.now()
        done = threading.Event()

        def loop() -> None:
            while not done.wait(every):
                self.peak = tuple(map(max, self.peak, self.now()))  # type: ignore[assignment]

        thread = threading.Thread(target=loop)
        thread.start()
        try:
            yield self
        finally:
            done.set()
            thread.join(5)

    def row(self, k: int) -> str:
        return "/".join(f"{v[k] / 2**20:.0f}" for v in (self.before, self.peak, self.after))


# --- the attacks -------------------------------------------------------------------------

def the_attacks(port: int, scale: float) -> dict[str, list[Crowd]]:
    """name -> its crowds of attackers (not yet opened), `per` connections an address."""
    big = http_request("/v1/validate", {"words": WORDS_1000})
    head = http_request("/v1/validate", b"{", length=4_000_000)

    def n(count: int) -> int:
        return max(1, int(count * scale))

    def crowds(per: int) -> dict[str, list[Crowd]]:
        def at(count: int, net: int) -> list[str]:
            return addresses(n(count), per, net)

        return {
            "slow readers": [Crowd(port, at(400, 1), big, read=False, rcvbuf=4096)],
            "slow uploads": [Crowd(port, at(1100, 2), head, drip=b" " * 300)],  # 1.2 KB/s
            "slow bodies": [Crowd(port, at(2300, 3), head)],   # next byte at 8 s: never
            "bad chunks": [Crowd(port, at(200, 10 + k), chunked("/v1/validate", rest))
                           for k, rest in enumerate(BAD_CHUNKS.values())],
            "pipelining": [Crowd(port, at(200, 4), big, flood=big * 10, read=False,
                                 rcvbuf=4096)],
        }

    return {"one": crowds(10**9), "many": crowds(100)}


def run_attack(crowds: list[Crowd], fresh: Fresh, memory: Memory, seconds: float) -> int:
    """Run the crowds for `seconds` while `fresh` asks; the attackers' connections open
    without a byte of reply at the end."""
    with memory.sampling(), fresh.asking():
        for crowd in crowds:
            crowd.open_all()
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            began = time.monotonic()
            for crowd in crowds:
                crowd.step()
            time.sleep(max(0.0, 0.25 - (time.monotonic() - began)))
        waiting = sum(crowd.waiting for crowd in crowds)
        for crowd in crowds:
            crowd.close()
    time.sleep(2)  # nginx lets go of what the attackers held
    memory.after = memory.now()
    return waiting


LOGGED = {"limit": "limiting connections", "no connections": "worker_connections are not",
          "open files": "Too many open files", "bad chunk": "invalid chunked body",
          "temp file": "buffered to a temporary file", "upstream": "upstream"}


def logged(text: str) -> str:
    counts = {name: text.count(sign) for name, sign in LOGGED.items()}
    return ", ".join(f"{v:,} {k}" for k, v in counts.items() if v) or "-"


def main(argv: list[str] | None = None) -> None:
    sys.path[:0] = [str(HERE), str(HERE.parent / "deploy" / "nginx")]
    import standalone  # deploy/nginx/standalone.py
    from validate import free_port, kelime_server, lexicon_folder, print_table

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="data folder with the lexicon to serve")
    parser.add_argument("--seconds", type=float, help="length of each attack [20, quick 8]")
    parser.add_argument("--quick", action="store_true", help="a quarter the scale, 8 s each")
    parser.add_argument("--only", action="append", help="run only this attack (repeat)")
    args = parser.parse_args(argv)
    seconds = args.seconds or (8.0 if args.quick else 20.0)
    scale = 0.25 if args.quick else 1.0
    nginx = standalone.find_nginx()
    if nginx is None:
        raise SystemExit("nginx is not installed: apt-get install nginx")
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # thousands of sockets here

    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kelime-attacks-") as tmp, ExitStack() as stack:
        tmp = Path(tmp)
        data = lexicon_folder(args.data, tmp / "data")
        sockets = [tmp / f"replica-{i}.sock" for i in range(2)]
        for i in range(2):
            (tmp / f"replica-{i}").mkdir()
        with ThreadPoolExecutor(2) as pool:
            started = [pool.submit(kelime_server, data, 1, tmp / f"replica-{i}",
                                   ("--socket", str(s))) for i, s in enumerate(sockets)]
            replicas = [future.result() for future in started]
        for replica in replicas:
            stack.callback(replica.stop)
        port, workers = free_port(), len(os.sched_getaffinity(0))
        proc = standalone.start(nginx, tmp / "nginx", port, sockets, worker_processes=workers)
        stack.callback(standalone.stop, proc)
        errors = tmp / "nginx" / "logs" / "kelime.error.log"
        print(f"nginx ({workers} workers, deploy/nginx/nginx.conf + kelime.conf as shipped) in "
              f"front of 2 `kelime serve --workers 1` on unix sockets; {seconds:g} s an attack"
              f"{', a quarter the scale' if args.quick else ''}; the fresh client (127.0.0.2) "
              f"sends an 8-word POST /v1/validate every 0.1 s")

        rows, details = [], []
        for name in the_attacks(port, scale)["one"]:
            if args.only and name not in args.only:
                continue
            for mode in ("one", "many"):
                crowds = the_attacks(port, scale)[mode][name]
                alone = Fresh(port)
                with alone.asking():
                    time.sleep(3)
                fresh = Fresh(port)
                memory = Memory([r.proc.pid for r in replicas], proc.pid)
                mark = errors.stat().st_size if errors.exists() else 0
                waiting = run_attack(crowds, fresh, memory, seconds)
                text = errors.read_text(errors="replace")[mark:] if errors.exists() else ""
                count = sum(len(c.sources) for c in crowds)
                addrs = len({a for c in crowds for a in c.sources})
                replies = sum((c.replies for c in crowds), Counter())
                codes = sum((c.codes for c in crowds), Counter())
                p50, p99 = fresh.percentile(0.5), fresh.percentile(0.99)
                rows.append([
                    name, f"{count:,} from {addrs:,}", f"{fresh.ok}/{len(fresh.outcomes)}",
                    f"{p50:.1f} ({p50 / alone.percentile(0.5):.1f}x)",
                    f"{p99:.1f} ({p99 / alone.percentile(0.99):.1f}x)",
                    memory.row(0), memory.row(1), memory.row(2)])
                others = Counter(s for s, _ in fresh.outcomes if s != 200)
                details.append(
                    f"  {name}, {count:,} connections from {addrs:,} address(es): attackers "
                    f"got {dict(replies) or 'no reply'} {dict(codes) or ''}, "
                    f"{sum(c.closed for c in crowds):,} closed on them "
                    f"({sum(c.silent for c in crowds):,} without a reply), "
                    f"{sum(c.refused for c in crowds):,} not accepted, "
                    f"{waiting:,} open unanswered at the end; fresh "
                    f"failures {dict(others) or 'none'}; nginx logged: {logged(text)}")
        print_table("the fresh client during each attack (its latency: ms, and x its own "
                    "alone just before); memory: MiB before/peak/after", [
                        "attack", "connections", "fresh ok", "p50 ms", "p99 ms",
                        "replica worker", "nginx workers", "kernel TCP"], rows)
        print("\n".join(details))
    print(f"\n{time.monotonic() - began:.0f} s in all")


if __name__ == "__main__":
    main()
