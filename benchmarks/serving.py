"""The serving layer's cost: `kelime serve` against a bare ASGI app on the same uvicorn.

    .venv/bin/python benchmarks/serving.py            # ~4 minutes
    .venv/bin/python benchmarks/serving.py --quick    # ~1 minute
    .venv/bin/python benchmarks/serving.py --data data --workers 1 2

Two requests, POST /v1/validate with 8 words and with 1,000 (50 variants each,
benchmarks/validate.py's words), go to `kelime serve --workers N` (gunicorn's master, its
uvicorn workers, the whole app) and to a bare ASGI app (benchmarks/hello.py `create_bare`:
reads the body, answers `{"ok":true}`) that uvicorn serves with kelime's very options
(`service.serve.uvicorn_options`, uvicorn's own supervisor), both started at once and loaded in
turn, round after round, so that both see the same machine. Each row, medians of the
rounds after an unrecorded warm-up: with 16 keep-alive connections, requests/s, words/s
a worker and the servers' CPU time a request (/proc); then with one connection (no
queue: the time a request itself takes), requests/s and p50/p99 latency (wrk
--latency). kelime's shares of the bare app's figures are the median of each round's
share, kelime's run beside the bare app's: a shared machine's load moves by the second.
The 1,000-word POSTs are also set against the in-process memo, measured in the same run:
`validate_json` on the same batches, their words fresh from orjson as a request's are.
Load: wrk when installed, else the asyncio client (validate.py; then no latency).

A first table needs no sockets and no load: the CPU time a request costs in process, the
app called with the ASGI messages uvicorn would make of it (no HTTP parser), kelime's and
the bare one, the least of 5 runs. Other load on the
machine only ever adds to it, so it is the steadiest figure on a busy machine. It also
counts the full garbage collections the requests set off (a full collection of a
worker's heap takes ~100 ms; gc.freeze() after loading would matter only if they came).
"""

from __future__ import annotations

import argparse
import gc
import math
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Self

import orjson

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from validate import (  # noqa: E402
    Case,
    Server,
    add_http_options,
    cases,
    cpu_seconds,
    hello_server,
    http_options,
    kelime_server,
    lua_script,
    print_table,
    process_tree,
    run_python,
    sample_words,
    served_lexicon,
    wrk,
)

EIGHT, THOUSAND = "POST /v1/validate x8", "POST /v1/validate x1000"
CONNECTIONS = 16
EIGHT_GOAL = 0.50  # 8-word POST: requests/s as a share of the bare app's (issue 22)
WORDS_GOAL = 1.5e6  # 1,000-word POSTs: words/s a worker


def latency(out: str, percent: str) -> float:
    """Seconds at `percent` ("50%", "99%") in wrk --latency's distribution."""
    found = re.search(rf"^\s+{re.escape(percent)}\s+([\d.]+)(us|ms|s)\s*$", out, re.MULTILINE)
    if not found:
        return float("nan")
    return float(found.group(1)) * {"us": 1e-6, "ms": 1e-3, "s": 1.0}[found.group(2)]


def one_run(server: Server, case: Case, seconds: float, client: str, folder: Path
            ) -> dict[str, float]:
    """requests/s and server CPU seconds a request with CONNECTIONS connections; then
    requests/s, p50 and p99 with one connection (NaN without wrk)."""
    pids = process_tree(server.proc.pid)
    used = cpu_seconds(pids)
    if client == "wrk":
        out, rate, bad = wrk(server.port, lua_script(case, folder), seconds, CONNECTIONS, 1,
                             "--latency")
        seconds = max(1, round(seconds))
        cpu = (cpu_seconds(pids) - used) / max(1.0, rate * seconds)
        out, alone, bad_alone = wrk(server.port, lua_script(case, folder), seconds, 1, 1,
                                    "--latency")  # one connection: no queue, the time itself
        bad += bad_alone
        p50, p99 = latency(out, "50%"), latency(out, "99%")
    else:
        (rate, bad), alone, p50, p99 = run_python(server.port, case, seconds, CONNECTIONS, 1), \
            float("nan"), float("nan"), float("nan")
        cpu = (cpu_seconds(pids) - used) / max(1.0, rate * seconds)
    if bad:
        raise SystemExit(f"{server.name}, {case.name}: {bad} replies were not 2xx")
    return {"rps": rate, "alone": alone, "p50": p50, "p99": p99, "cpu": cpu}


def measure(servers: dict[str, Server], chosen: list[Case], seconds: float, rounds: int,
            client: str, folder: Path) -> dict[tuple[str, str], list[dict[str, float]]]:
    """{(server, case): its runs, one a round}: each round loads every server with every
    case in turn; round 0 warms them up, unrecorded."""
    runs: dict[tuple[str, str], list[dict[str, float]]] = {}
    for round_ in range(rounds + 1):
        for case in chosen:
            for name, server in servers.items():
                run = one_run(server, case, min(1.0, seconds) if round_ == 0 else seconds,
                              client, folder)
                if round_:
                    runs.setdefault((name, case.name), []).append(run)
    return runs


class FullCollections:
    """Counts the garbage collector's full (generation 2) collections while installed: in
    a worker, whose heap holds the app and its lexicons, one pauses it for ~100 ms."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "stop" and info["generation"] == 2:
            self.count += 1

    def __enter__(self) -> Self:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


async def asgi_run(app, case: Case, count: int) -> float:
    """CPU µs a request for `count` requests of `case` (cycling through its variants), each
    the ASGI messages uvicorn would make of it, straight into `app`."""
    async def send(message) -> None:
        pass

    start = time.process_time()
    for k in range(count):
        path, body = case.paths[k % len(case.paths)], case.bodies[k % len(case.bodies)]
        target, _, query = path.partition("?")
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
                 "method": case.method, "scheme": "http", "path": target,
                 "raw_path": target.encode(), "query_string": query.encode(),
                 "root_path": "", "client": ("127.0.0.1", 40000),
                 "server": ("127.0.0.1", 8000), "headers": [
                     (b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
                     (b"content-length", b"%d" % len(body))]}

        async def receive(body=body) -> dict:
            return {"type": "http.request", "body": body, "more_body": False}

        await app(scope, receive, send)
    return (time.process_time() - start) / count * 1e6


def in_process(data: Path, chosen: list[Case], count: int, repeats: int = 5
               ) -> list[list[str]]:
    """Rows: CPU µs a request into kelime's app and into the bare one (the least of
    `repeats`), for each case."""
    import uvloop
    from hello import create_bare

    from kelime.service.app import create_app
    from kelime.service.settings import Settings

    async def measure_all() -> list[list[str]]:
        app, bare = create_app(Settings(data=data)), create_bare()
        rows = []
        async with app.router.lifespan_context(app):
            for case in chosen:
                n = max(200, count // case.words)
                await asgi_run(app, case, n // 4)  # warm: the memo holds every word
                best = {"kelime": float("inf"), "bare": float("inf")}
                with FullCollections() as full:
                    for _ in range(repeats):
                        for name, served in (("kelime", app), ("bare", bare)):
                            best[name] = min(best[name], await asgi_run(served, case, n))
                rows.append([case.name, f"{best['kelime']:,.1f}", f"{best['bare']:,.1f}",
                             f"{best['bare'] / best['kelime']:.2f}",
                             f"{case.words / best['kelime']:,.2f}",
                             f"{full.count} in {repeats * n * 2:,}"])
        return rows

    return uvloop.run(measure_all())


def memo_words_per_second(lex, case: Case, repeats: int = 7) -> float:
    """words/s of the in-process memo on the case's batches (median of `repeats`, CPU time),
    each batch's words fresh from orjson.loads as a request's are (its strings' hashes not
    yet computed); the parse itself is not timed."""
    from kelime.lexicon.verdicts import validate_json

    for body in case.bodies:  # warm: every word in the memo
        validate_json(lex, orjson.loads(body)["words"], 2)
    times = []
    for _ in range(repeats):
        batches = [orjson.loads(body)["words"] for body in case.bodies]
        start = time.process_time()
        for words in batches:
            validate_json(lex, words, 2)
        times.append(time.process_time() - start)
    return case.words * len(case.bodies) / statistics.median(times)


def ms(seconds: float) -> str:
    return "n/a" if math.isnan(seconds) else f"{seconds * 1e3:.2f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short runs (a smoke test)")
    parser.add_argument("--data", type=Path, help="data folder with the lexicon to serve")
    parser.add_argument("--workers", type=int, nargs="+", default=[1])
    add_http_options(parser, seconds=5)
    args = parser.parse_args(argv)
    seconds, rounds, client = http_options(args, seconds=5)
    with tempfile.TemporaryDirectory(prefix="kelime-bench-") as tmp:
        tmp = Path(tmp)
        data, lex = served_lexicon(args.data, tmp)
        chosen = [c for c in cases(sample_words(lex, 5000), variants=50)
                  if c.name in (EIGHT, THOUSAND)]
        memo = memo_words_per_second(lex, chosen[1])
        count = 4_000 if args.quick else 20_000
        print_table(f"In process, no sockets: CPU µs a request into each app, as ASGI messages "
                    f"(the least of 5 runs of {count:,} requests' worth of words)",
                    ["request", "kelime µs", "bare µs", "bare/kelime", "words/µs",
                     "full GCs in requests"],
                    in_process(data, chosen, count))
        for workers in args.workers:
            servers = {"kelime": kelime_server(data, workers, tmp),
                       "bare": hello_server(workers, tmp, "create_bare", "/")}
            try:
                got = measure(servers, chosen, seconds, rounds, client, tmp)
            finally:
                for server in servers.values():
                    server.stop()
            report(got, chosen, workers, memo, client, seconds, rounds)


def shares(runs: list[dict[str, float]], bare: list[dict[str, float]]
           ) -> tuple[float, float, float]:
    """The median over rounds of kelime's requests/s over the bare app's, of the bare app's
    CPU time a request over kelime's, and of kelime's requests/s over the bare app's on one
    connection (each round's runs side by side)."""
    pairs = list(zip(runs, bare))
    return (statistics.median(k["rps"] / b["rps"] for k, b in pairs),
            statistics.median(b["cpu"] / k["cpu"] for k, b in pairs),
            statistics.median(k["alone"] / b["alone"] for k, b in pairs))


def report(runs: dict, chosen: list[Case], workers: int, memo: float, client: str,
           seconds: float, rounds: int) -> None:
    got = {key: {field: statistics.median(r[field] for r in done) for field in done[0]}
           for key, done in runs.items()}
    rows = []
    for case in chosen:
        for name in ("kelime", "bare"):
            m = got[(name, case.name)]
            rps_share, cpu_share, alone_share = shares(runs[(name, case.name)],
                                                       runs[("bare", case.name)])
            rows.append([f"{case.name}, {name}", f"{m['rps']:,.0f}",
                         f"{m['rps'] * case.words / workers:,.0f}", f"{m['cpu'] * 1e6:,.0f}",
                         f"{rps_share:.2f}", f"{cpu_share:.2f}", f"{m['alone']:,.0f}",
                         ms(m["p50"]), ms(m["p99"]), f"{alone_share:.2f}"])
    rows.append(["in-process memo, same 1,000-word batches", "",
                 f"{memo:,.0f}", f"{1000 / memo * 1e6:,.0f}", "", "", "", "", "", ""])
    print_table(f"{workers} worker(s); {client}, {seconds:g} s x {rounds} rounds, medians; "
                f"{CONNECTIONS} connections, then 1",
                ["request, server", "req/s", "words/s/worker", "CPU µs/req", "req/s vs bare",
                 "CPU: bare/kelime", "1 conn req/s", "p50 ms", "p99 ms", "1 conn vs bare"],
                rows)
    eight, eight_cpu, eight_alone = shares(runs[("kelime", EIGHT)], runs[("bare", EIGHT)])
    big = got[("kelime", THOUSAND)]["rps"] * 1000 / workers
    big_cpu = 1000 / got[("kelime", THOUSAND)]["cpu"]
    print(f"goal: 8-word POST at {EIGHT_GOAL:.2f}x or more of the bare app's requests/s: "
          f"{eight:.2f}x, {'met' if eight >= EIGHT_GOAL else 'missed'} (by CPU time a "
          f"request: {eight_cpu:.2f}x, {'met' if eight_cpu >= EIGHT_GOAL else 'missed'}; "
          f"on one connection: {eight_alone:.2f}x, "
          f"{'met' if eight_alone >= EIGHT_GOAL else 'missed'})")
    print(f"goal: 1,000-word POSTs at {WORDS_GOAL / 1e6:.1f} M words/s a worker: {big / 1e6:.2f} "
          f"M, {'met' if big >= WORDS_GOAL else 'missed'} (by CPU time: {big_cpu / 1e6:.2f} "
          f"M words per CPU-second; the in-process memo: {memo / 1e6:.2f} M words/s, "
          f"{big / memo:.2f}x of it)")


if __name__ == "__main__":
    main()
