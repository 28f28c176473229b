"""A flood of expensive searches: does cheap validate traffic keep flowing?

    .venv/bin/python benchmarks/flood.py             # ~1 minute
    .venv/bin/python benchmarks/flood.py --seconds 30 --splits 400     # a longer soak
    .venv/bin/python benchmarks/flood.py --polite    # clients that honour Retry-After

Hundreds of clients send POST /v1/split with a rack that takes a search ~75-150 ms
(`aeiıkltrmnsyzu?`), each one again as soon as it is answered, while a few clients send the
8-word POST /v1/validate. Two setups, each against validate alone in the same setup (the
baseline: the same clients with no flood):

    direct      one `kelime serve --workers 1`, the clients connecting to it
    nginx 2x1   deploy/nginx/kelime.conf as shipped in front of 2 `kelime serve --workers 1`
                on unix sockets

The split clients come from 10 loopback addresses (127.0.1.1-10) and the validate clients
from 127.0.0.2, so nginx's per-address connection limit (128 requests under way) counts
them as the many players they stand for.

Each row: validate requests answered, how many failed (anything but 200), their latency
p50/p99 and its ratio to the baseline's; splits answered 200, refused 503 `busy` by the
app (with Retry-After), and failed otherwise (nginx's own 502/503/504, resets, timeouts). A
flood that takes replicas out of nginx's rotation shows as failed validates.

The client (`run_flood`, also used by tests/test_nginx.py) is asyncio on keep-alive
connections, in this process: it shares the CPUs with the servers, so the latencies are
the ratios' business, not absolute figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent

SLOW_RACK = "aeiıkltrmnsyzu?"   # a Harfbank hand whose split takes ~75-150 ms
VALIDATE_8 = {"words": ["kitap", "Kalem", "evler", "İstanbul", "ılık", "kâtil", "sepet",
                        "e-posta"]}


def http_request(path: str, body: dict | bytes, headers: dict | None = None) -> bytes:
    """One keep-alive POST with a JSON body, as raw bytes."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    head = (f"POST {path} HTTP/1.1\r\nHost: kelime\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(raw)}\r\n")
    head += "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    return head.encode() + b"\r\n" + raw


@dataclass
class Tally:
    """What one kind of request got: statuses, the app's error codes, latencies (s)."""
    statuses: Counter = field(default_factory=Counter)
    codes: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)   # the first few, for the report
    times: list[float] = field(default_factory=list)
    retry_after: int = 0    # 503s that came with a Retry-After

    @property
    def total(self) -> int:
        return sum(self.statuses.values())

    def count(self, status: int | str, head: bytes, body: bytes, seconds: float) -> None:
        self.statuses[status] += 1
        self.times.append(seconds)
        if status == 503 and re.search(rb"(?i)\r\nretry-after:\s*\d+", head):
            self.retry_after += 1
        if isinstance(status, int) and status != 200:
            try:
                self.codes[json.loads(body)["error"]["code"]] += 1
            except (ValueError, KeyError, TypeError):
                self.codes["(not the JSON error shape)"] += 1

    def percentile(self, share: float) -> float:
        times = sorted(self.times)
        return times[min(len(times) - 1, int(len(times) * share))] * 1e3 if times else float("nan")


async def _client(port: int, raw: bytes, tally: Tally, end: float, timeout: float,
                  most: int | None, polite: bool = False, source: str | None = None) -> None:
    """Send `raw` again and again on one keep-alive connection until `end` (or `most`
    requests); a refused, reset or timed-out request is counted and the connection remade.
    `polite`: after a 503 with Retry-After, wait that long before the next one. `source`:
    the address it connects from (any 127.x.y.z; by default the kernel's, 127.0.0.1)."""
    reader = writer = None
    sent = 0
    while time.monotonic() < end and (most is None or sent < most):
        sent += 1
        began = time.perf_counter()
        try:
            if writer is None:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(
                    "127.0.0.1", port, local_addr=(source, 0) if source else None), timeout)
            writer.write(raw)
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
            length = re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", head)
            body = await asyncio.wait_for(
                reader.readexactly(int(length.group(1)) if length else 0), timeout)
            tally.count(int(head[9:12]), head, body, time.perf_counter() - began)
            after = re.search(rb"(?i)\r\nretry-after:\s*(\d+)", head)
            if polite and after:  # idle that long, the server may close the connection
                writer.close()
                writer = None
                await asyncio.sleep(min(int(after.group(1)), max(0.0, end - time.monotonic())))
                continue
            if re.search(rb"(?i)\r\nconnection:\s*close", head):
                writer.close()
                writer = None
        except (TimeoutError, OSError, asyncio.IncompleteReadError) as e:
            tally.count(type(e).__name__, b"", b"", time.perf_counter() - began)
            if len(tally.failures) < 5:
                tally.failures.append(f"{type(e).__name__}: {e}")
            if writer is not None:
                writer.close()
            writer = None
    if writer is not None:
        writer.close()


@dataclass
class Clients:
    """`count` clients each sending `raw` again and again (at most `most` times each), the
    i-th from `sources[i % len(sources)]` (none given: 127.0.0.1)."""
    raw: bytes
    count: int
    most: int | None = None
    polite: bool = False      # honour Retry-After
    sources: tuple[str, ...] = ()
    tally: Tally = field(default_factory=Tally)

    def source(self, i: int) -> str | None:
        return self.sources[i % len(self.sources)] if self.sources else None


def addresses(count: int, net: str = "127.0.1") -> tuple[str, ...]:
    """`count` loopback addresses, `net`.1, `net`.2 …: clients that nginx's per-address
    connection limit (deploy/nginx/kelime.conf) counts apart, as many players would be."""
    return tuple(f"{net}.{i}" for i in range(1, count + 1))


def splitters(count: int, body: dict | None = None, polite: bool = False,
              sources: tuple[str, ...] = ()) -> Clients:
    return Clients(http_request("/v1/split", body or {"rack": SLOW_RACK}), count,
                   polite=polite, sources=sources)


def validators(count: int, most: int | None = None, sources: tuple[str, ...] = ()) -> Clients:
    return Clients(http_request("/v1/validate", VALIDATE_8), count, most, sources=sources)


async def flood(port: int, groups: list[Clients], seconds: float,
                timeout: float = 30.0) -> list[Tally]:
    """Every group's clients at once, for `seconds`; each group's tally. Bounded: every
    client stops at the end (or after its `most` requests) and every request gives up
    after `timeout` seconds."""
    end = time.monotonic() + seconds
    await asyncio.gather(*(_client(port, group.raw, group.tally, end, timeout, group.most,
                                   group.polite, group.source(i))
                           for group in groups for i in range(group.count)))
    return [group.tally for group in groups]


def run_flood(port: int, groups: list[Clients], seconds: float,
              timeout: float = 30.0) -> list[Tally]:
    return asyncio.run(flood(port, groups, seconds, timeout))


# --- the benchmark -----------------------------------------------------------------------

def row(name: str, checked: Tally, searched: Tally, base: Tally | None) -> list[str]:
    failed = checked.total - checked.statuses[200]
    p50, p99 = checked.percentile(0.5), checked.percentile(0.99)
    ratio = f"{p50 / base.percentile(0.5):.1f}x / {p99 / base.percentile(0.99):.1f}x" \
        if base else ""
    busy = searched.codes["busy"]
    other = searched.total - searched.statuses[200] - busy
    return [name, f"{checked.total:,}", str(failed), f"{p50:.1f}", f"{p99:.1f}", ratio,
            f"{searched.statuses[200]:,}" if base else "", f"{busy:,}" if base else "",
            str(other) if base else ""]


def main(argv: list[str] | None = None) -> None:
    sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "deploy" / "nginx")]
    import standalone  # deploy/nginx/standalone.py
    from validate import free_port, kelime_server, lexicon_folder, print_table

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="data folder with the lexicon to serve")
    parser.add_argument("--seconds", type=float, default=12.0,
                        help="length of each flood [12: past nginx's 10 s proxy_read_timeout]")
    parser.add_argument("--splits", type=int, default=300, help="split clients [300]")
    parser.add_argument("--validators", type=int, default=4, help="validate clients [4]")
    parser.add_argument("--no-nginx", action="store_true", help="skip the nginx setup")
    parser.add_argument("--polite", action="store_true",
                        help="the split clients honour Retry-After (default: a hostile flood "
                             "that sends again at once)")
    args = parser.parse_args(argv)
    nginx = None if args.no_nginx else standalone.find_nginx()

    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kelime-flood-") as tmp, ExitStack() as stack:
        tmp = Path(tmp)
        data = lexicon_folder(args.data, tmp / "data")
        replicas, sockets = [], [tmp / f"replica-{i}.sock" for i in range(2 if nginx else 1)]
        for i, sock in enumerate(sockets):
            logs = tmp / f"replica-{i}"
            logs.mkdir()
            replicas.append(kelime_server(data, 1, logs, ("--socket", str(sock))))
            stack.callback(replicas[-1].stop)
        fronts = [("direct, 1 worker", replicas[0].port)]
        if nginx:
            port = free_port()
            proc = standalone.start(nginx, tmp / "nginx", port, sockets)
            stack.callback(standalone.stop, proc)
            fronts.append(("nginx 2x1", port))
        polite = "polite " if args.polite else ""
        print(f"{args.splits} {polite}clients looping POST /v1/split "
              f"{{\"rack\": \"{SLOW_RACK}\"}} "
              f"for {args.seconds:g} s, {args.validators} clients looping the 8-word POST "
              f"/v1/validate; baseline: the validate clients alone for {args.seconds / 3:g} s")
        rows, report = [], []
        fresh, players = ("127.0.0.2",), addresses(10)
        for name, port in fronts:
            base, = run_flood(port, [validators(args.validators, sources=fresh)],
                              args.seconds / 3)
            checked, searched = run_flood(port, [
                validators(args.validators, sources=fresh),
                splitters(args.splits, polite=args.polite, sources=players)], args.seconds)
            rows += [row(f"{name}: validate alone", base, Tally(), None),
                     row(f"{name}: during the flood", checked, searched, base)]
            report.append((name, checked, searched))
        print_table("validate during a split flood", [
            "setup", "validates", "failed", "p50 ms", "p99 ms", "p50/p99 vs alone",
            "splits 200", "splits 503 busy", "splits failed"], rows)
        for name, checked, searched in report:
            for what, tally in (("validate", checked), ("split", searched)):
                odd = {k: v for k, v in tally.statuses.items() if k not in (200,)}
                if odd or tally.failures:
                    print(f"  {name} {what}: {dict(odd)} codes {dict(tally.codes)} "
                          f"{tally.failures[:3]}")
        if nginx:
            errors = (tmp / "nginx" / "logs" / "kelime.error.log").read_text(errors="replace")
            print(f"  nginx error log: {errors.count('upstream timed out')} 'upstream timed "
                  f"out', {errors.count('temporarily disabled')} 'temporarily disabled', "
                  f"{errors.count('no live upstreams')} 'no live upstreams'")
        print(f"\n{time.monotonic() - began:.0f} s in all")


if __name__ == "__main__":
    main()
