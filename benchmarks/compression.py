"""Where gzip pays: replies compressed or not, in process, on a replica and through nginx.

    .venv/bin/python benchmarks/compression.py --data data          # ~2 minutes
    .venv/bin/python benchmarks/compression.py --quick --levels 1,4

First, in process, no sockets: a 1,000-word anagram reply (a 5-letter + `??` kelimelik
rack) and a 1,000-word validation, compressed by zlib at each level (as nginx's gzip and
Starlette's GZipMiddleware do) and inflated again (as the client must): the bytes, the
milliseconds, and the link speed under which compressing pays (the bytes saved over the
time spent: on a faster link, loopback or a LAN, it costs more than it saves).

Then over HTTP, one keep-alive connection, the same anagram question asked in turns with
`Accept-Encoding: gzip` and without, the client inflating what comes compressed: straight
to one replica (`kelime serve`, 1 worker: replicas never compress) and through the shipped
nginx (deploy/nginx/standalone.py) at each `gzip_comp_level` of --levels, GET /healthz
through each as the baseline. The figure: p50 (and p99) of gzip over the same without it,
measured in the same run.
"""

from __future__ import annotations

import argparse
import http.client
import socket
import statistics
import sys
import tempfile
import time
import zlib
from contextlib import ExitStack
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "deploy" / "nginx")]

import standalone  # noqa: E402  (deploy/nginx/standalone.py)
from validate import free_port, kelime_server, print_table, served_lexicon  # noqa: E402

RACK = {"rack": "kalem??", "limit": 1000}


def replies(data: Path) -> dict[str, bytes]:
    """The two replies, as a replica sends them."""
    import random

    from starlette.testclient import TestClient

    from kelime.service.app import create_app
    from kelime.service.settings import Settings

    with TestClient(create_app(Settings(data=data))) as client:
        words = client.get("/v1/lexicons/tr/words").text.split()
        batch = random.Random(7).sample(words, 1000)
        return {"anagram, 1,000 words": client.post("/v1/anagram", json=RACK).content,
                "validate, 1,000 words": client.post("/v1/validate",
                                                     json={"words": batch}).content}


def in_process(bodies: dict[str, bytes], levels: list[int], repeats: int) -> list[list[str]]:
    rows = []
    for name, body in bodies.items():
        for level in levels:
            packs, inflates = [], []
            for _ in range(repeats):
                start = time.process_time()
                packer = zlib.compressobj(level, zlib.DEFLATED, 31)
                packed = packer.compress(body) + packer.flush()
                middle = time.process_time()
                zlib.decompress(packed, 47)
                packs.append(middle - start)
                inflates.append(time.process_time() - middle)
            spent = statistics.median(packs) + statistics.median(inflates)
            pays = (len(body) - len(packed)) * 8 / spent / 1e6  # Mbit/s
            rows.append([name, str(level), f"{len(body):,}", f"{len(packed):,}",
                         f"{statistics.median(packs) * 1e3:.3f}",
                         f"{statistics.median(inflates) * 1e3:.3f}", f"{pays:,.0f}"])
    return rows


def timed(conn: http.client.HTTPConnection, method: str, path: str, body: bytes | None,
          gzip: bool) -> float:
    headers = {"Accept-Encoding": "gzip" if gzip else "identity",
               "Content-Type": "application/json"}
    start = time.perf_counter()
    conn.request(method, path, body=body, headers=headers)
    reply = conn.getresponse()
    data = reply.read()
    if reply.getheader("Content-Encoding") == "gzip":
        data = zlib.decompress(data, 47)
    seconds = time.perf_counter() - start
    assert reply.status == 200 and data, (reply.status, data[:200])
    return seconds


def over_http(targets: dict[str, tuple[str, int]], count: int) -> list[list[str]]:
    """Each target asked in turn: the anagram with and without gzip, and /healthz."""
    body = orjson.dumps(RACK)
    conns = {name: http.client.HTTPConnection(host, port, timeout=30)
             for name, (host, port) in targets.items()}
    times: dict[tuple[str, str], list[float]] = {}
    for k in range(count + count // 10):  # the first tenth warms up, unrecorded
        for name, conn in conns.items():
            for kind, method, path, payload, gzip in (
                    ("healthz", "GET", "/healthz", None, False),
                    ("identity", "POST", "/v1/anagram", body, False),
                    ("gzip", "POST", "/v1/anagram", body, True)):
                seconds = timed(conn, method, path, payload, gzip)
                if k >= count // 10:
                    times.setdefault((name, kind), []).append(seconds)
    rows = []
    for name in conns:
        p50 = {kind: statistics.median(times[(name, kind)]) for kind in
               ("healthz", "identity", "gzip")}
        p99 = {kind: statistics.quantiles(times[(name, kind)], n=100)[98] for kind in
               ("identity", "gzip")}
        rows.append([name, f"{p50['healthz'] * 1e3:.2f}", f"{p50['identity'] * 1e3:.2f}",
                     f"{p50['gzip'] * 1e3:.2f}", f"{p50['gzip'] / p50['identity']:.2f}x",
                     f"{p99['identity'] * 1e3:.2f}", f"{p99['gzip'] * 1e3:.2f}",
                     f"{p50['identity'] / p50['healthz']:.2f}x"])
    for conn in conns.values():
        conn.close()
    return rows


def nginx_with_level(stack: ExitStack, nginx: str, folder: Path, sock: Path,
                     level: int) -> int:
    """The shipped nginx with its gzip_comp_level set to `level`, in front of `sock`."""
    site = standalone.SITE.read_text(encoding="utf-8")
    marked = f"gzip_comp_level   {level};"
    edited = __import__("re").sub(r"gzip_comp_level\s+\d+;", marked, site)
    assert marked in edited, "kelime.conf has no gzip_comp_level line"
    copy = folder / f"kelime-{level}.conf"
    copy.write_text(edited, encoding="utf-8")
    for _ in range(5):
        port = free_port()
        try:
            proc = standalone.start(nginx, folder / f"nginx-{level}", port, [sock], site=copy)
        except RuntimeError as e:
            if "Address already in use" in str(e):
                continue
            raise
        stack.callback(standalone.stop, proc)
        return port
    raise RuntimeError("no free port for nginx in 5 tries")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--levels", default="1,4",
                        help="nginx gzip_comp_level values to try (comma-separated)")
    args = parser.parse_args()
    count = 200 if args.quick else 1000
    with tempfile.TemporaryDirectory(prefix="kelime-bench-") as tmp, ExitStack() as stack:
        tmp = Path(tmp)
        data, _ = served_lexicon(args.data, tmp)
        print_table("In process: zlib on a reply and back (ms: medians); pays under (Mbit/s): "
                    "the link speed below which the bytes saved outweigh the time",
                    ["reply", "level", "bytes", "gzipped", "compress ms", "inflate ms",
                     "pays under Mbit/s"],
                    in_process(replies(data), [1, 4, 6, 9], 20 if args.quick else 100))
        sock = tmp / "replica.sock"
        replica = kelime_server(data, 1, tmp, extra=("--socket", str(sock)))
        stack.callback(replica.stop)
        targets = {"replica (never compresses)": ("127.0.0.1", replica.port)}
        nginx = standalone.find_nginx()
        if nginx is None:
            print("nginx is not installed (apt-get install nginx): the replica alone")
        else:
            for level in (int(x) for x in args.levels.split(",")):
                port = nginx_with_level(stack, nginx, tmp, sock, level)
                targets[f"nginx, gzip_comp_level {level}"] = ("127.0.0.1", port)
        print_table(f"Over HTTP, one keep-alive connection each, {count:,} turns: the anagram "
                    f"{orjson.dumps(RACK).decode()} with and without Accept-Encoding: gzip "
                    f"(ms)",
                    ["served by", "healthz p50", "plain p50", "gzip p50", "gzip/plain",
                     "plain p99", "gzip p99", "plain/healthz"],
                    over_http(targets, count))


if __name__ == "__main__":
    socket.setdefaulttimeout(30)
    main()
