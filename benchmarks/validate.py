"""How fast kelime validates words, each figure against a baseline measured in the same run.

    .venv/bin/python benchmarks/validate.py            # ~4 minutes
    .venv/bin/python benchmarks/validate.py --quick    # ~40 seconds

1. In process: words/s of `Lexicon.check` in a loop and of `Lexicon.validate`, against a
   bare Python `set` lookup loop over the same words; the reply the service used to serve
   (`Lexicon.validate` + orjson.dumps) against the fast path (`kelime.lexicon.verdicts`),
   which is also taken apart: memo warm or cold, frozenset or trie, no memo at all. Then
   the memory the fast path holds (its frozenset and its memo), measured by tracemalloc.
2. Over HTTP on 127.0.0.1: requests/s and words/s of POST /v1/validate with batches of
   1, 8 and 1,000 words (and GET with 8), against FastAPI's hello world served the same
   way (same uvicorn options), with 1 and 2 workers, the goals (8 words: 70% of hello
   world's requests/s; 1,000 words: 1.5 M words/s a worker) and each worker's RSS. The load
   comes from `wrk` when installed (apt-get install wrk), else from a multi-process asyncio
   client, which measures itself too: the report says which one ran. The same figures come
   again by the servers' CPU time per request (/proc/PID/stat), which other load on the
   machine barely moves: on a shared machine, compare those.

In-process figures are CPU time (time.process_time) for the same reason.

Serves the lexicon under --data, or builds the offline bootstrap lexicon into a temporary
folder. Every run is bounded in time; servers are stopped by their process id.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import orjson

HERE = Path(__file__).resolve().parent
BATCHES = (1, 8, 1000)
GOAL = 1.30  # the 8-word batch may cost at most 30% more time per request than hello world
EIGHT_GOAL = 0.70  # ... and must answer at least 70% of hello world's requests/s
WORDS_GOAL = 1.5e6  # words/s per worker for the 1,000-word POST


# --- the words ---------------------------------------------------------------------------

def sample_words(lex, count: int, seed: int = 42) -> list[str]:
    """What game servers send: mostly valid words, some capitalised, misspelt or refused."""
    rng = random.Random(seed)
    valid = list(lex.words.keys())
    refused = list(lex.rejected.keys()) or valid
    words = []
    for _ in range(count):
        roll, word = rng.random(), rng.choice(valid)
        if roll < 0.15:
            word = word.upper()
        elif roll < 0.30:
            word = word[::-1] + "q"
        elif roll < 0.40:
            word = rng.choice(refused)
        words.append(word)
    return words


def in_process(lex, words: list[str], repeats: int) -> list[tuple[str, float]]:
    """(name, words/s), medians: the set baseline, Lexicon.check and Lexicon.validate, the
    reply the service served before (validate + orjson.dumps), and the fast path's parts
    (kelime.lexicon.verdicts) one at a time: the memo warm or cold, the frozenset or the trie
    for membership, and no memo at all (judge + one serialised fragment a word + join)."""
    plain = set(lex.words.keys())
    batches = [random.Random(7 + i).sample(words, min(1000, len(words))) for i in range(50)]

    def set_loop():
        for w in words:
            w in plain  # noqa: B015

    def check_loop():
        for w in words:
            lex.check(w, 2)

    def validate():
        lex.validate(words, 2)

    def validate_dumps():
        orjson.dumps(lex.validate(words, 2))

    def validate_dumps_batches():
        for batch in batches:
            orjson.dumps(lex.validate(batch, 2))

    cases = [("set lookup loop", set_loop, len(words)),
             ("Lexicon.check loop", check_loop, len(words)),
             ("Lexicon.validate", validate, len(words)),
             ("Lexicon.validate + orjson.dumps (the old reply)", validate_dumps, len(words)),
             ("  the same, 50 batches of 1,000", validate_dumps_batches, 50_000)]
    try:
        from kelime.lexicon.verdicts import Verdicts, validate_json
    except ImportError:  # a checkout from before the fast path
        Verdicts = validate_json = None
    if Verdicts is not None:
        valid = frozenset(lex.words.keys())

        def warm():
            validate_json(lex, words, 2)

        def warm_batches():
            for batch in batches:
                validate_json(lex, batch, 2)

        def fresh(**options):
            return lambda: Verdicts(lex, **options).reply(words, 2)

        validate_json(lex, words, 2)  # the memo warmed up: the timed runs are all hits
        cases += [("validate_json, memo warm (the new reply)", warm, len(words)),
                  ("  the same, 50 batches of 1,000", warm_batches, 50_000),
                  ("memo cold, frozenset", fresh(valid=valid), len(words)),
                  ("memo cold, trie", fresh(valid=lex.words), len(words)),
                  ("no memo, frozenset (fragments + join)", fresh(budget=0, valid=valid),
                   len(words)),
                  ("no memo, trie (fragments + join)", fresh(budget=0, valid=lex.words),
                   len(words))]
    rows = []
    for name, fn, count in cases:
        times = []
        for _ in range(repeats):
            start = time.process_time()  # CPU time: other load on the machine does not count
            fn()
            times.append(time.process_time() - start)
        rows.append((name, count / statistics.median(times)))
    return rows


def memory(lex, words: list[str]) -> list[list[str]]:
    """What the fast path holds (tracemalloc, so exact): the memo once it holds every
    distinct word of the sample, and what a frozenset of the valid words would add (the fast
    path does not keep one: it makes misses only 10-17% cheaper)."""
    import gc
    import tracemalloc

    try:
        from kelime.lexicon.verdicts import MEMO_BYTES, Verdicts
    except ImportError:
        return []
    start = time.perf_counter()
    frozenset(lex.words.keys())
    took = time.perf_counter() - start  # (tracemalloc slows every allocation down)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        valid = frozenset(lex.words.keys())
        held = tracemalloc.get_traced_memory()[0] - before
        rows = [[f"frozenset of the {len(valid):,} valid words (not kept)",
                 f"{held / 2**20:.1f} MiB", f"{held / len(valid):.0f} B/word",
                 f"built in {took * 1e3:.0f} ms"]]
        memo = Verdicts(lex, budget=1 << 62)  # unbounded, to size it
        copies = [w.encode().decode() for w in words]  # the memo keeps the words it is sent
        distinct = len(set(copies))
        before = tracemalloc.get_traced_memory()[0]
        memo.reply(copies, 2)
        del copies
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
        rows.append([f"memo of the sample's {distinct:,} distinct words", f"{held / 2**20:.1f} MiB",
                     f"{held / distinct:.0f} B/word", f"charged {memo.used / distinct:.0f} B/word"])
        rows.append(["memo bound (MEMO_BYTES, per lexicon)", f"{MEMO_BYTES / 2**20:.0f} MiB",
                     f"~{MEMO_BYTES / (memo.used / distinct):,.0f} words", "two generations"])
        return rows
    finally:
        tracemalloc.stop()


def process_tree(pid: int) -> list[int]:
    """`pid` and all its descendants."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo += children.get(p, [])
    return found


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time the processes have used so far."""
    total = 0
    for p in pids:
        try:
            stat = Path(f"/proc/{p}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def rss_of_workers(pid: int) -> list[int]:
    """VmRSS (bytes) of the server's worker processes: those of its process tree that
    multiprocessing spawned (not its resource tracker), or the server itself if it has none."""
    workers = []
    for p in process_tree(pid)[1:]:
        try:
            if b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes():
                workers.append(p)
        except OSError:
            continue
    sizes = []
    for p in workers or [pid]:
        try:
            status = Path(f"/proc/{p}/status").read_text()
        except OSError:
            continue
        found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
        if found:
            sizes.append(int(found.group(1)) * 1024)
    return sorted(sizes)


# --- servers -----------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    name: str
    port: int
    proc: subprocess.Popen

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


def start(name: str, command: list[str], port: int, ready_path: str, log: Path) -> Server:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parent)])}
    with open(log, "wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    server = Server(name, port, proc)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{name} exited with {proc.returncode}; see {log}:\n{log.read_text()}")
        try:
            if http_get_status(port, ready_path) == 200:
                return server
        except OSError:
            time.sleep(0.1)
    server.stop()
    raise SystemExit(f"{name} did not answer {ready_path} within 60 s; see {log}")


def http_get_status(port: int, path: str) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        return int(s.recv(64)[9:12])


def kelime_server(data: Path, workers: int, logs: Path, extra: tuple[str, ...] = ()) -> Server:
    """`kelime serve` on a free port (`extra`: more of its options, e.g. --reports FILE)."""
    script = Path(sys.executable).parent / "kelime"
    base = [str(script)] if script.exists() else [sys.executable, "-c",
                                                  "from kelime.cli import main; main()"]
    port = free_port()
    return start(f"kelime x{workers}", [*base, "serve", "--data", str(data), "--port", str(port),
                                        "--workers", str(workers), *extra], port, "/readyz",
                 logs / f"kelime-{workers}.log")


def hello_server(workers: int, logs: Path, factory: str = "create_app",
                 ready: str = "/hello", unix: Path | None = None) -> Server:
    """A baseline of benchmarks/hello.py (`factory`) served as `kelime serve` serves kelime
    (benchmarks/hello_serve.py); `unix`: on that unix socket too, as a replica behind nginx."""
    port = free_port()
    return start(f"{factory} x{workers}",
                 [sys.executable, str(HERE / "hello_serve.py"), factory, str(port),
                  str(workers), *([str(unix)] if unix else [])], port, ready,
                 logs / f"{factory}-{workers}.log")


# --- the requests ------------------------------------------------------------------------

@dataclass
class Case:
    name: str
    words: int                  # words per request (0: not a validation)
    method: str
    paths: list[str]            # one per request variant
    bodies: list[bytes]         # same length as paths (b"" for GET)
    baseline: bool = False
    headers: tuple[tuple[str, str], ...] = ()  # more request headers (Accept-Encoding …)


def cases(words: list[str], variants: int) -> list[Case]:
    rng = random.Random(7)
    out = [Case("hello world (FastAPI)", 0, "GET", ["/hello"], [b""], baseline=True),
           Case("kelime GET /healthz", 0, "GET", ["/healthz"], [b""])]
    for size in BATCHES:
        batches = [rng.sample(words, size) for _ in range(variants)]
        out.append(Case(f"POST /v1/validate x{size}", size, "POST", ["/v1/validate"] * variants,
                        [orjson.dumps({"words": b}) for b in batches]))
        if size == 8:
            paths = ["/v1/validate?" + "&".join("word=" + quote(w) for w in b) for b in batches]
            out.append(Case("GET /v1/validate x8", 8, "GET", paths, [b""] * variants))
    return out


def lua_script(case: Case, folder: Path) -> Path:
    """A wrk script that cycles through the case's requests. Each carries a Host header:
    the table is built when the script loads, before wrk knows the host, and nginx answers
    400 to HTTP/1.1 without one (uvicorn lets it pass)."""
    host = ", ".join(f'["{k}"] = "{v}"' for k, v in (("Host", "127.0.0.1"), *case.headers))
    reqs = ",\n".join(
        f'wrk.format("{case.method}", [==[{p}]==], {{["Content-Type"] = "application/json", '
        f'{host}}}, [==[{b.decode()}]==])' if case.method == "POST"
        else f'wrk.format("GET", [==[{p}]==], {{{host}}})'
        for p, b in zip(case.paths, case.bodies))
    path = folder / f"case-{abs(hash(case.name))}.lua"
    path.write_text(f"local reqs = {{\n{reqs}\n}}\nlocal i = 0\n"
                    "request = function()\n  i = i % #reqs + 1\n  return reqs[i]\nend\n",
                    encoding="utf-8")
    return path


def wrk(port: int, script: Path, seconds: float, connections: int, threads: int,
        *extra: str) -> tuple[str, float, int]:
    """(wrk's output, requests/s, non-2xx responses) of one wrk run of `script`."""
    out = subprocess.run(["wrk", *extra, f"-t{threads}", f"-c{connections}",
                          f"-d{max(1, round(seconds))}s", "-s", str(script),
                          f"http://127.0.0.1:{port}"],
                         capture_output=True, text=True, timeout=seconds + 30).stdout
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if not rate:
        raise SystemExit(f"could not read wrk's output:\n{out}")
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return out, float(rate.group(1)), int(bad.group(1)) if bad else 0


def run_wrk(port: int, case: Case, seconds: float, connections: int, threads: int,
            folder: Path) -> tuple[float, int]:
    """(requests/s, non-2xx responses) from one wrk run."""
    _, rate, bad = wrk(port, lua_script(case, folder), seconds, connections, threads)
    return rate, bad


def measure_cases(server: Server, cases: list[Case], seconds: float, rounds: int, client: str,
                  folder: Path) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """({case: requests/s per round}, {case: server CPU seconds a request per round}) for
    each case against one server, 16 connections, after an unrecorded warm-up round."""
    rates: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    for round_ in range(rounds + 1):  # round 0 warms up, unrecorded
        for case in cases:
            run_for = min(1.0, seconds) if round_ == 0 else seconds
            pids = process_tree(server.proc.pid)
            used = cpu_seconds(pids)
            if client == "wrk":
                rate, bad = run_wrk(server.port, case, run_for, 16, 1, folder)
                run_for = max(1, round(run_for))
            else:
                rate, bad = run_python(server.port, case, run_for, 16, 1)
            if bad:
                raise SystemExit(f"{case.name}: {bad} replies were not 2xx")
            if round_:
                rates.setdefault(case.name, []).append(rate)
                cpu.setdefault(case.name, []).append(
                    (cpu_seconds(pids) - used) / max(1.0, rate * run_for))
    return rates, cpu


def worker_options(doc: str, argv: list[str] | None):
    """(args, seconds a run, rounds, client) of a one-worker benchmark: --quick, --data and
    the HTTP load options."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short runs (a smoke test)")
    parser.add_argument("--data", type=Path, help="data folder with the lexicon to serve")
    add_http_options(parser, seconds=3)
    args = parser.parse_args(argv)
    return (args, *http_options(args, seconds=3))


def served_lexicon(data_arg: Path | None, tmp: Path):
    """(data folder, the `tr` lexicon) a benchmark serves: --data's, or the offline one
    built into `tmp`."""
    from kelime.lexicon import load_lexicon

    data = lexicon_folder(data_arg, tmp / "data")
    lex = load_lexicon(data, "tr")
    print(f"lexicon {lex.name} {lex.info['version']}: {lex.info['words']:,} words")
    return data, lex


def add_http_options(parser: argparse.ArgumentParser, seconds: float = 5) -> None:
    """The load options every HTTP benchmark takes."""
    parser.add_argument("--client", choices=("auto", "wrk", "python"), default="auto")
    parser.add_argument("--seconds", type=float, help=f"seconds per run [{seconds:g}, quick 2]")
    parser.add_argument("--rounds", type=int, help="rounds, median kept [3, quick 1]")


def http_options(args, seconds: float = 5) -> tuple[float, int, str]:
    """(seconds a run, rounds, "wrk" or "python") from `add_http_options`' arguments."""
    client = args.client
    if client == "auto":
        client = "wrk" if shutil.which("wrk") else "python"
        if client == "python":
            print("wrk is not installed (apt-get install wrk): falling back to the Python "
                  "asyncio client, which competes with the server for the CPU.")
    elif client == "wrk" and not shutil.which("wrk"):
        raise SystemExit("--client wrk: wrk is not installed (apt-get install wrk)")
    return (args.seconds or (2 if args.quick else seconds),
            args.rounds or (1 if args.quick else 3), client)


def raw_request(case: Case, i: int) -> bytes:
    path, body = case.paths[i], case.bodies[i]
    head = f"{case.method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in case.headers)
    if case.method == "POST":
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + body


async def _load(port: int, reqs: list[bytes], connections: int, seconds: float) -> tuple[int, int]:
    end = time.monotonic() + seconds

    async def one(k: int) -> tuple[int, int]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        done = bad = 0
        while time.monotonic() < end:
            writer.write(reqs[k % len(reqs)])
            k += 1
            head = await reader.readuntil(b"\r\n\r\n")
            length = re.search(rb"(?i)content-length:\s*(\d+)", head)
            await reader.readexactly(int(length.group(1)) if length else 0)
            done, bad = done + 1, bad + (head[9:10] != b"2")
        writer.close()
        return done, bad

    results = await asyncio.gather(*(one(k) for k in range(connections)))
    return sum(r[0] for r in results), sum(r[1] for r in results)


def _load_process(args) -> tuple[int, int]:
    try:
        import uvloop
        return uvloop.run(_load(*args))
    except ImportError:
        return asyncio.run(_load(*args))


def run_python(port: int, case: Case, seconds: float, connections: int,
               processes: int) -> tuple[float, int]:
    """(requests/s, non-2xx) from `processes` asyncio clients sharing `connections`."""
    reqs = [raw_request(case, i) for i in range(len(case.paths))]
    share = max(1, connections // processes)
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        results = pool.map(_load_process, [(port, reqs, share, seconds)] * processes)
    return sum(r[0] for r in results) / seconds, sum(r[1] for r in results)


# --- the report --------------------------------------------------------------------------

def print_table(title: str, header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    print(f"\n{title}")
    line = "  ".join(h.ljust(w) if i == 0 else h.rjust(w)
                     for i, (h, w) in enumerate(zip(header, widths)))
    print(line)
    print("-" * len(line))
    for row in rows:
        print("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                        for i, (c, w) in enumerate(zip(row, widths))))


def lexicon_folder(data: Path | None, keep: Path) -> Path:
    if data is not None:
        return data
    from kelime.lexicon import compile_words, write_lexicon
    from kelime.sources import bootstrap_candidates, bootstrap_source

    print(f"no --data: building the offline bootstrap lexicon into {keep} ...", flush=True)
    source = bootstrap_source()
    write_lexicon(compile_words(bootstrap_candidates()), keep, "tr", source,
                  created=source.get("date", "2026-01-01T00:00:00Z"))
    return keep


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short runs (a smoke test)")
    parser.add_argument("--data", type=Path, help="data folder with the lexicon to serve")
    parser.add_argument("--lexicon", default="tr")
    add_http_options(parser)
    args = parser.parse_args(argv)
    seconds, rounds, client = http_options(args)

    from kelime.lexicon import load_lexicon

    with tempfile.TemporaryDirectory(prefix="kelime-bench-") as tmp:
        tmp = Path(tmp)
        data = lexicon_folder(args.data, tmp / "data")
        lex = load_lexicon(data, args.lexicon)
        print(f"lexicon {lex.name} {lex.info['version']}: {lex.info['words']:,} words, from {data}")
        print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
        words = sample_words(lex, 5_000 if args.quick else 20_000)

        rows = in_process(lex, words, 3 if args.quick else 7)
        base, old = rows[0][1], rows[3][1]
        print_table(f"In process: {len(words):,} words (60% valid as stored, 15% upper-case, "
                    "15% misspelt, 10% refused), median of runs, CPU time",
                    ["what", "words/s", "ns/word", "vs set", "vs old reply"],
                    [[n, f"{r:,.0f}", f"{1e9 / r:,.0f}", f"{r / base:.3f}x", f"{r / old:.2f}x"]
                     for n, r in rows])
        held = memory(lex, words)
        if held:
            print_table("Memory of the fast path (tracemalloc)", ["what", "size", "per word", ""],
                        held)

        load = ("wrk (1 thread for 1 worker, 2 threads for 2)" if client == "wrk" else
                "the Python asyncio client (1 process for 1 worker, 2 for 2), not wrk")
        print(f"\nHTTP on 127.0.0.1, load from {load}; {seconds:g} s a run, median of {rounds} "
              "round(s); 1 worker: 16 connections, 2 workers: 64 connections", flush=True)
        for workers in (1, 2):
            http_report(data, workers, words, client, seconds, rounds, tmp)


def http_report(data: Path, workers: int, words: list[str], client: str, seconds: float,
                rounds: int, tmp: Path) -> None:
    connections, threads = (16, 1) if workers == 1 else (64, 2)
    all_cases = cases(words, variants=50)
    servers = [hello_server(workers, tmp), kelime_server(data, workers, tmp)]
    rates: dict[str, list[float]] = {c.name: [] for c in all_cases}
    cpu: dict[str, list[float]] = {c.name: [] for c in all_cases}  # server CPU s / request
    errors = 0
    try:
        for round_ in range(rounds + 1):  # round 0 warms the servers up, unrecorded
            for case in all_cases:
                server = servers[0] if case.baseline else servers[1]
                run_for = min(1.0, seconds) if round_ == 0 else seconds
                pids = process_tree(server.proc.pid)
                used = cpu_seconds(pids)
                if client == "wrk":
                    rate, bad = run_wrk(server.port, case, run_for, connections, threads, tmp)
                    run_for = max(1, round(run_for))
                else:
                    rate, bad = run_python(server.port, case, run_for, connections, threads)
                if round_:
                    rates[case.name].append(rate)
                    cpu[case.name].append((cpu_seconds(pids) - used) / max(1.0, rate * run_for))
                    errors += bad
        rss = rss_of_workers(servers[1].proc.pid)
    finally:
        for server in servers:
            server.stop()
    hello = statistics.median(rates[all_cases[0].name])
    rows = []
    for case in all_cases:
        rps = statistics.median(rates[case.name])
        rows.append([case.name, f"{rps:,.0f}", f"{rps * case.words:,.0f}" if case.words else "",
                     f"{rps / hello:.2f}", f"{hello / rps:.2f}x"])
    print_table(f"{workers} worker(s)", ["request", "req/s", "words/s", "req/s vs hello",
                                         "time/req vs hello"], rows)
    eight = statistics.median(rates["POST /v1/validate x8"])
    verdict = "met" if hello / eight <= GOAL else "missed"
    print(f"goal: an 8-word POST costs at most {GOAL:.2f}x hello world's time per request: "
          f"{hello / eight:.2f}x, {verdict}")
    print(f"goal: an 8-word POST answers at least {EIGHT_GOAL:.0%} of hello world's requests/s: "
          f"{eight / hello:.0%}, {'met' if eight / hello >= EIGHT_GOAL else 'missed'}")
    big = statistics.median(rates[f"POST /v1/validate x{BATCHES[-1]}"]) * BATCHES[-1] / workers
    print(f"goal: {BATCHES[-1]:,}-word POSTs at {WORDS_GOAL / 1e6:.1f} M words/s per worker: "
          f"{big / 1e6:.2f} M, {'met' if big >= WORDS_GOAL else 'missed'}")
    print("RSS of the kelime worker(s) after the runs: "
          + ", ".join(f"{r / 2**20:.1f} MiB" for r in rss))
    hello_cpu = statistics.median(cpu[all_cases[0].name])
    rows = []
    for case in all_cases:
        each = statistics.median(cpu[case.name])
        rows.append([case.name, f"{each * 1e6:,.0f}", f"{1 / each:,.0f}",
                     f"{case.words / each:,.0f}" if case.words else "",
                     f"{hello_cpu / each:.2f}"])
    print_table(f"{workers} worker(s), by the servers' CPU time (user + system of all their "
                "processes, over the requests answered): what a worker does with a CPU to "
                "itself, whatever else the machine runs",
                ["request", "CPU µs/req", "req/CPU-s", "words/CPU-s", "req/CPU-s vs hello"], rows)
    eight_cpu = hello_cpu / statistics.median(cpu["POST /v1/validate x8"])
    big_cpu = BATCHES[-1] / statistics.median(cpu[f"POST /v1/validate x{BATCHES[-1]}"])
    print(f"goals by CPU time: 8-word POST at {eight_cpu:.0%} of hello world "
          f"({'met' if eight_cpu >= EIGHT_GOAL else 'missed'}); {BATCHES[-1]:,}-word POSTs at "
          f"{big_cpu / 1e6:.2f} M words per CPU-second "
          f"({'met' if big_cpu >= WORDS_GOAL else 'missed'})")
    if errors:
        print(f"WARNING: {errors} responses were not 2xx: the figures above are not valid")


if __name__ == "__main__":
    main()
