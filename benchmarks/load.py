"""Loopback load on kelime, direct and through the shipped nginx config, against hello world.

    .venv/bin/python benchmarks/load.py            # ~3 minutes
    .venv/bin/python benchmarks/load.py --quick    # under a minute
    .venv/bin/python benchmarks/load.py --json     # the figures as JSON too, after the table

Three ways of serving, each measured against FastAPI's hello world (benchmarks/hello.py)
served the very same way in the same run:

    1 worker     `kelime serve --workers 1`          vs hello world, 1 uvicorn worker
    2 workers    `kelime serve --workers 2`          vs hello world, 2 uvicorn workers
    nginx 2x1    nginx (deploy/nginx/kelime.conf, as shipped, 1 nginx worker) in front of
                 2 `kelime serve --workers 1` replicas on unix sockets  vs  nginx in front
                 of 2 hello replicas the same way

Requests (each run cycles through 50 variants): POST /v1/validate with 8 words and with
1,000 words (benchmarks/validate.py's mix: mostly valid, some upper-case, misspelt or
refused), and POST /v1/anagram with 7 tiles drawn from kelimelik's bag (`{"rack":
"kalemsi"}`-like, different racks); GET /hello for the baseline. Each row: requests/s,
words/s, latency p50/p99 (of every request of the run), and requests/s as a share of hello
world's. Then the RSS (VmRSS) of every serving process: each uvicorn worker, kelime's
supervisor, nginx's.

Load: `wrk --latency` when installed (apt-get install wrk), else an asyncio keep-alive
client in 1 or 2 processes (validate.py's `_load`, timing each request), which shares the
CPUs with the servers: the report says which one ran. Fixed duration and connections (16
for 1 worker, 64 for 2 workers and nginx). Servers come from benchmarks/validate.py
(`kelime_server`, `hello_server`) and nginx from deploy/nginx/standalone.py; everything
listens on 127.0.0.1 and is stopped by its process id.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import re
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "deploy" / "nginx")]

import standalone  # noqa: E402  (deploy/nginx/standalone.py)
import validate  # noqa: E402
from anagram import plain_racks  # noqa: E402
from validate import (  # noqa: E402
    Case,
    Server,
    free_port,
    kelime_server,
    lexicon_folder,
    print_table,
    raw_request,
    sample_words,
)

VARIANTS = 50


# --- the requests ------------------------------------------------------------------------

def the_cases(words: list[str]) -> list[Case]:
    rng = random.Random(11)
    hello = Case("GET /hello (hello world)", 0, "GET", ["/hello"], [b""], baseline=True)
    out = [hello]
    for size in (8, 1000):
        out.append(Case(f"POST /v1/validate x{size}", size, "POST",
                        ["/v1/validate"] * VARIANTS,
                        [orjson.dumps({"words": rng.sample(words, size)})
                         for _ in range(VARIANTS)]))
    racks = plain_racks(VARIANTS, 7, 0, seed=5)
    out.append(Case("POST /v1/anagram 7 tiles", 0, "POST", ["/v1/anagram"] * VARIANTS,
                    [orjson.dumps({"rack": r}) for r in racks]))
    return out


# --- the load ----------------------------------------------------------------------------

@dataclass
class Result:
    rps: float
    bad: int
    p50_ms: float
    p99_ms: float


def _ms(value: str, unit: str) -> float:
    return float(value) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[unit]


def run_wrk(port: int, case: Case, seconds: float, connections: int, threads: int,
            folder: Path) -> Result:
    """validate.wrk with --latency: requests/s, non-2xx and wrk's p50/p99."""
    out, rate, bad = validate.wrk(port, validate.lua_script(case, folder), seconds,
                                  connections, threads, "--latency")
    p50 = re.search(r"^\s+50%\s+([\d.]+)(us|ms|s)\b", out, re.MULTILINE)
    p99 = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)\b", out, re.MULTILINE)
    if not (p50 and p99):
        raise SystemExit(f"could not read wrk's latencies:\n{out}")
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    return Result(rate, bad + (sum(map(int, errors.groups())) if errors else 0),
                  _ms(*p50.groups()), _ms(*p99.groups()))


async def _timed_load(port: int, reqs: list[bytes], connections: int,
                      seconds: float) -> tuple[int, int, list[float]]:
    """validate._load, timing every request and reconnecting when the server says
    `Connection: close` (nginx does after keepalive_requests)."""
    end = time.monotonic() + seconds

    async def one(k: int) -> tuple[int, int, list[float]]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        done = bad = 0
        times: list[float] = []
        while time.monotonic() < end:
            began = time.perf_counter()
            writer.write(reqs[k % len(reqs)])
            k += 1
            head = await reader.readuntil(b"\r\n\r\n")
            length = re.search(rb"(?i)content-length:\s*(\d+)", head)
            await reader.readexactly(int(length.group(1)) if length else 0)
            times.append(time.perf_counter() - began)
            done, bad = done + 1, bad + (head[9:10] != b"2")
            if re.search(rb"(?i)\r\nconnection:\s*close", head):
                writer.close()
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.close()
        return done, bad, times

    results = await asyncio.gather(*(one(k) for k in range(connections)))
    return (sum(r[0] for r in results), sum(r[1] for r in results),
            [t for r in results for t in r[2]])


def _timed_process(args) -> tuple[int, int, list[float]]:
    try:
        import uvloop
        return uvloop.run(_timed_load(*args))
    except ImportError:
        return asyncio.run(_timed_load(*args))


def run_python(port: int, case: Case, seconds: float, connections: int,
               processes: int) -> Result:
    """validate.run_python with latencies: `processes` asyncio clients share `connections`."""
    reqs = [raw_request(case, i) for i in range(len(case.paths))]
    share = max(1, connections // processes)
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        results = pool.map(_timed_process, [(port, reqs, share, seconds)] * processes)
    times = sorted(t for r in results for t in r[2])
    if not times:
        return Result(0.0, 0, float("nan"), float("nan"))
    return Result(sum(r[0] for r in results) / seconds, sum(r[1] for r in results),
                  times[len(times) // 2] * 1e3, times[min(len(times) - 1,
                                                          int(len(times) * 0.99))] * 1e3)


# --- the servers -------------------------------------------------------------------------

@dataclass
class Front:
    """What the load is sent to: one port, and the processes behind it."""
    name: str
    port: int
    pids: list[tuple[str, int]]   # (role, pid) of the top processes, for the RSS report


@contextmanager
def served(kind: str, how: str, data: Path, folder: Path, nginx: str | None,
           nginx_workers: int):
    """kind: hello|kelime; how: "1 worker" | "2 workers" | "nginx 2x1"."""
    folder.mkdir(parents=True, exist_ok=True)

    def one(workers: int, sub: str, unix: Path | None = None) -> Server:
        logs = folder / sub
        logs.mkdir(exist_ok=True)
        if kind == "hello":
            return validate.hello_server(workers, logs, unix=unix)
        return kelime_server(data, workers, logs, ("--socket", str(unix)) if unix else ())

    with ExitStack() as stack:
        if how.startswith("nginx"):
            sockets = [folder / f"{kind}-replica-{i}.sock" for i in range(2)]
            with ThreadPoolExecutor(2) as pool:  # both replicas start at once
                starting = [pool.submit(one, 1, f"{kind}-replica-{i}", sock)
                            for i, sock in enumerate(sockets)]
                replicas = []
                for future in starting:
                    try:
                        replicas.append(future.result())
                    except BaseException:
                        for r in replicas:
                            r.stop()
                        raise
            for r in replicas:
                stack.callback(r.stop)
            port = free_port()
            proc = standalone.start(nginx, folder / f"nginx-{kind}", port, sockets,
                                    worker_processes=nginx_workers)
            stack.callback(standalone.stop, proc)
            yield Front(kind, port, [("nginx", proc.pid)] +
                        [(f"{kind} replica {i}", r.proc.pid) for i, r in enumerate(replicas)])
        else:
            workers = int(how.split()[0])
            server = one(workers, f"{kind}-{workers}")
            stack.callback(server.stop)
            yield Front(kind, server.port, [(kind, server.proc.pid)])


# --- memory ------------------------------------------------------------------------------

def children(pid: int) -> list[int]:
    try:
        found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    return [int(c) for c in found]


def rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(
            errors="replace")
    except OSError:
        return ""


def memory(front: Front) -> list[dict]:
    """RSS of each serving process under the front: uvicorn workers (spawned children, or
    the process itself when it has none), supervisors, nginx master and workers."""
    rows = []
    for role, pid in front.pids:
        kids = [k for k in children(pid) if "resource_tracker" not in cmdline(k)]
        if role == "nginx":
            rows.append({"process": "nginx master", "pid": pid, "rss_mib": rss_mib(pid)})
            rows += [{"process": "nginx worker", "pid": k, "rss_mib": rss_mib(k)} for k in kids]
        elif kids:
            rows.append({"process": f"{role} supervisor", "pid": pid, "rss_mib": rss_mib(pid)})
            rows += [{"process": f"{role} uvicorn worker", "pid": k, "rss_mib": rss_mib(k)}
                     for k in kids]
        else:
            rows.append({"process": f"{role} uvicorn worker", "pid": pid,
                         "rss_mib": rss_mib(pid)})
    return rows


# --- the run -----------------------------------------------------------------------------

def measure(front: Front, cases: list[Case], client: str, seconds: float, rounds: int,
            connections: int, threads: int, tmp: Path, quick: bool) -> dict[str, Result]:
    """Median of `rounds` runs per case, after 1 s of unrecorded warm-up per case (--quick:
    1 s of the first case only)."""
    results: dict[str, list[Result]] = {c.name: [] for c in cases}
    for round_ in range(rounds + 1):  # round 0 warms up (caches, nginx's upstream pool)
        for case in (cases[:1] if round_ == 0 and quick else cases):
            run_for = 1 if round_ == 0 else seconds
            if client == "wrk":
                result = run_wrk(front.port, case, run_for, connections, threads, tmp)
            else:
                result = run_python(front.port, case, run_for, connections, threads)
            if round_:
                results[case.name].append(result)
    return {name: Result(statistics.median(r.rps for r in rs), sum(r.bad for r in rs),
                         statistics.median(r.p50_ms for r in rs),
                         statistics.median(r.p99_ms for r in rs))
            for name, rs in results.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short runs (under a minute)")
    parser.add_argument("--data", type=Path, help="data folder with the lexicon to serve")
    validate.add_http_options(parser)
    parser.add_argument("--nginx-workers", type=int, default=1,
                        help="nginx worker_processes for the nginx runs [1]")
    parser.add_argument("--no-nginx", action="store_true", help="skip the nginx runs")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args(argv)
    seconds, rounds, client = validate.http_options(args)
    nginx = None if args.no_nginx else standalone.find_nginx()
    hows = ["1 worker", "2 workers"] + (["nginx 2x1"] if nginx else [])

    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kelime-load-") as tmp:
        tmp = Path(tmp)
        data = lexicon_folder(args.data, tmp / "data")
        from kelime.lexicon import load_lexicon
        lex = load_lexicon(data, "tr")
        print(f"lexicon {lex.name} {lex.info['version']}: {lex.info['words']:,} words; "
              f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
        load = ("wrk --latency (1 thread for 1 worker, 2 threads otherwise)" if client == "wrk"
                else "the Python asyncio client (1 process for 1 worker, 2 otherwise), not wrk: "
                     "it competes with the servers for the CPUs (apt-get install wrk)")
        print(f"load from {load}; {seconds:g} s a run, median of {rounds} round(s); "
              f"connections: 16 for 1 worker, 64 otherwise")
        if not nginx and not args.no_nginx:
            print("nginx is not installed (apt-get install nginx): the nginx runs are skipped")
        cases = the_cases(sample_words(lex, 20_000))
        report = {"client": client, "seconds": seconds, "rounds": rounds,
                  "cpus": os.cpu_count(), "lexicon": lex.info["version"], "setups": []}
        for how in hows:
            connections, threads = (16, 1) if how == "1 worker" else (64, 2)
            print(f"\n[{how}] measuring ...", flush=True)
            with served("hello", how, data, tmp / how.replace(" ", "-"), nginx,
                        args.nginx_workers) as front:
                hello = measure(front, cases[:1], client, seconds, rounds, connections,
                                threads, tmp, args.quick)
                hello_memory = memory(front)
            with served("kelime", how, data, tmp / how.replace(" ", "-"), nginx,
                        args.nginx_workers) as front:
                ours = measure(front, cases[1:], client, seconds, rounds, connections,
                               threads, tmp, args.quick)
                kelime_memory = memory(front)
            results = {**hello, **ours}
            base = results[cases[0].name].rps
            rows, setup = [], {"setup": how, "connections": connections, "rows": [],
                               "memory": hello_memory + kelime_memory}
            for case in cases:
                r = results[case.name]
                rows.append([case.name, f"{r.rps:,.0f}",
                             f"{r.rps * case.words:,.0f}" if case.words else "",
                             f"{r.p50_ms:.2f}", f"{r.p99_ms:.2f}",
                             f"{r.rps / base:.2f}" if base else "", str(r.bad)])
                setup["rows"].append({"request": case.name, "rps": r.rps,
                                      "words_per_s": r.rps * case.words, "p50_ms": r.p50_ms,
                                      "p99_ms": r.p99_ms,
                                      "vs_hello": r.rps / base if base else None,
                                      "non_2xx": r.bad})
            print_table(f"{how}: {connections} connections", ["request", "req/s", "words/s",
                                                              "p50 ms", "p99 ms",
                                                              "req/s vs hello", "non-2xx"], rows)
            print("  RSS: " + ", ".join(f"{m['process']} {m['rss_mib']:.0f} MiB"
                                        for m in setup["memory"]))
            if any(r.bad for r in results.values()):
                print("  WARNING: some responses were not 2xx (or sockets failed): the "
                      "figures above are not valid")
            report["setups"].append(setup)
        report["elapsed_s"] = time.monotonic() - began
        print(f"\n{time.monotonic() - began:.0f} s in all")
        if args.json:
            print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
