"""What the connection limits cost: 8-word POST /v1/validate against hello world, per server.

    .venv/bin/python benchmarks/servers.py               # ~4 minutes
    .venv/bin/python benchmarks/servers.py --quick       # ~1 minute
    .venv/bin/python benchmarks/servers.py --only httptools,old,guard

For each way of serving, FastAPI's hello world (benchmarks/hello.py), a bare ASGI app that
reads the same POST and answers `{}` (bare_app below) and kelime are served the same way
(one worker, 127.0.0.1) and loaded the same way; the figure that matters is the ratio
validate x8 / hello, measured in the same run (goal: 0.70 or more):

    httptools  uvicorn + httptools + uvloop, no limits (kelime before service.protocol)
    old        uvicorn + the protocol that subclassed HttpToolsProtocol (service/protocol.py
               as of commit OLD_PROTOCOL, read from git)
    guard      uvicorn + service.protocol.Guard around HttpToolsProtocol (uvicorn_options)
    h11        uvicorn + h11 (h11_max_incomplete_event_size = max_header_bytes) + uvloop
    hypercorn  hypercorn (asyncio + uvloop, h11_max_incomplete_size, read_timeout)
    granian    granian --interface asgi (Rust HTTP; http1 buffer size, header timeout)

Load: `wrk` when installed (with whole raw requests: see run_wrk), else validate.py's
asyncio client (1 process); 16 keep-alive connections either way. Besides req/s, each row
gives the server's own CPU time per request, which other load on a shared machine disturbs
less; a first table gives each protocol's own cost per request, in process. Every run is
bounded in time and servers are stopped by their process id.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from validate import (  # noqa: E402
    Case,
    Server,
    add_http_options,
    cases,
    free_port,
    http_options,
    lexicon_folder,
    print_table,
    raw_request,
    run_python,
    sample_words,
    start,
    wrk,
)

VARIANTS = ("httptools", "old", "guard", "h11", "hypercorn", "granian")
APPS = ("hello", "bare", "kelime")
#: The last commit whose service/protocol.py subclassed uvicorn's HttpToolsProtocol.
OLD_PROTOCOL = "00579a1"
GOAL = 0.70  # 8-word validate req/s as a share of hello world's
#: How kelime ran uvicorn before service.protocol (server.UVICORN_OPTIONS until then).
PLAIN_UVICORN = {"loop": "uvloop", "http": "httptools", "access_log": False,
                 "server_header": False, "timeout_keep_alive": 5}


# --- the servers (each runs in its own process) -----------------------------------------

async def bare_app(scope, receive, send):
    """The least an ASGI app can do with the validate POST: read it, answer `{}`."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"{}"})


def old_protocol():
    """service/protocol.py as of OLD_PROTOCOL, as a module (its relative imports made
    absolute), to measure what the guard replaced."""
    import subprocess
    import types

    source = subprocess.run(["git", "-C", str(HERE.parent), "show",
                             f"{OLD_PROTOCOL}:service/protocol.py"], capture_output=True,
                            text=True, check=True).stdout
    source = source.replace("from .", "from kelime.service.")
    if "old_protocol" in sys.modules:
        return sys.modules["old_protocol"]
    module = sys.modules["old_protocol"] = types.ModuleType("old_protocol")
    exec(compile(source, f"{OLD_PROTOCOL}:service/protocol.py", "exec"), module.__dict__)
    return module


def load_app(which: str, data: Path):
    if which == "hello":
        from hello import create_app
        return create_app()
    if which == "bare":
        return bare_app
    from kelime.service.app import create_app
    from kelime.service.settings import Settings
    return create_app(Settings(data=data))


def serve(variant: str, which: str, port: int, data: Path) -> None:
    """Serve app `which` (hello or kelime) the `variant` way on 127.0.0.1:port until killed."""
    from kelime.service.settings import Settings

    settings = Settings(data=data)
    app = load_app(which, data)
    if variant == "hypercorn":
        import asyncio

        import uvloop
        from hypercorn.asyncio import serve as hypercorn_serve
        from hypercorn.config import Config

        config = Config()
        config.bind = [f"127.0.0.1:{port}"]
        config.h11_max_incomplete_size = settings.max_header_bytes
        config.keep_alive_timeout = settings.keepalive_timeout
        config.read_timeout = settings.header_timeout
        config.accesslog = None
        config.errorlog = "-"
        config.loglevel = "WARNING"
        uvloop.install()
        asyncio.run(hypercorn_serve(app, config))
        return
    import uvicorn

    if variant == "guard":
        from kelime.service.protocol import uvicorn_options
        options = uvicorn_options(settings)
    elif variant == "old":
        options = old_protocol().uvicorn_options(settings)
    else:
        options = dict(PLAIN_UVICORN)
        if variant == "h11":
            options.update(http="h11", h11_max_incomplete_event_size=settings.max_header_bytes,
                           limit_concurrency=settings.max_connections)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", **options)


def server(variant: str, which: str, data: Path, logs: Path) -> Server:
    port = free_port()
    ready = {"hello": "/hello", "bare": "/"}.get(which, "/readyz")
    log = logs / f"{variant}-{which}.log"
    if variant == "granian":
        from kelime.service.settings import Settings

        settings = Settings(data=data)
        target = {"hello": "hello:create_app", "bare": "servers:bare_app"}.get(
            which, "kelime.service.app:create_app_from_env")
        os.environ["KELIME_DATA"] = str(data.resolve())
        command = [str(Path(sys.executable).parent / "granian"), "--interface", "asgi",
                   "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
                   "--loop", "uvloop", "--http", "1", "--no-ws", "--log-level", "warning",
                   "--http1-buffer-size", str(max(8192, settings.max_header_bytes)),
                   "--http1-header-read-timeout", str(settings.header_timeout * 1000),
                   "--backpressure", str(settings.max_connections),
                   *(["--factory"] if which != "bare" else []), target]
    else:
        command = [sys.executable, str(Path(__file__).resolve()), "--serve", variant,
                   "--app", which, "--port", str(port), "--data", str(data)]
    return start(f"{variant} {which}", command, port, ready, log)


def available(variant: str) -> bool:
    module = {"hypercorn": "hypercorn", "granian": "granian"}.get(variant)
    if module is None:
        return True
    try:
        __import__(module)
    except ImportError:
        return False
    return True


# --- in process: what the protocol itself costs per request ------------------------------

IN_PROCESS_BODY = orjson.dumps({"words": ["kitap", "ev", "abdal", "ilik", "katil", "at",
                                          "iğne", "ılık"]})
IN_PROCESS_HEAD = (b"POST /v1/validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                   b"application/json\r\nContent-Length: %d\r\n\r\n" % len(IN_PROCESS_BODY))


_REPLIES = [0]  # replies the tiny app finished: how the run knows a request was answered


async def _tiny_app(scope, receive, send):
    if scope["type"] == "http":
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"{}"})
        _REPLIES[0] += 1


class NullTransport:
    """Just enough of an asyncio transport for the protocol: writes go nowhere."""

    def __init__(self):
        self.closing = False

    def write(self, data):
        pass

    def writelines(self, chunks):
        pass

    def is_closing(self):
        return self.closing

    def close(self):
        self.closing = True

    def get_extra_info(self, name, default=None):
        return {"sockname": ("127.0.0.1", 1), "peername": ("127.0.0.1", 2)}.get(name, default)

    def pause_reading(self):
        pass

    def resume_reading(self):
        pass

    def can_write_eof(self):
        return True

    def get_write_buffer_size(self):
        return 0


async def _protocol_run(factory, reads: list[bytes], count: int) -> float:
    """CPU µs per request for `count` keep-alive requests fed as `reads`."""
    import asyncio
    import time

    import uvicorn
    from uvicorn.server import ServerState

    config = uvicorn.Config(_tiny_app, log_level="warning", lifespan="off")
    config.load()
    proto = factory(config=config, server_state=ServerState(), app_state={})
    proto.connection_made(NullTransport())
    start = time.process_time()
    for k in range(count):
        goal = _REPLIES[0] + 1
        for data in reads:
            proto.data_received(data)
            await asyncio.sleep(0)
        while _REPLIES[0] < goal:
            await asyncio.sleep(0)
    spent = time.process_time() - start
    proto.connection_lost(None)
    return spent / count * 1e6


def protocol_cost(count: int, repeats: int) -> list[list[str]]:
    """Rows: µs per request of plain HttpToolsProtocol, of the old subclass and of the
    guard around HttpToolsProtocol (the least of `repeats` runs: other load on the machine
    only ever adds), for a request in one read and for a head and body in two reads."""
    import uvloop
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    from kelime.service.protocol import protocol_for
    from kelime.service.settings import Settings

    factories = {"plain": HttpToolsProtocol, "old": old_protocol().protocol_for(Settings()),
                 "guard": protocol_for(Settings())}
    shapes = {"one read": [IN_PROCESS_HEAD + IN_PROCESS_BODY],
              "head, then body": [IN_PROCESS_HEAD, IN_PROCESS_BODY]}

    async def measure_all():
        rows = []
        for shape, reads in shapes.items():
            best = {}
            for _ in range(repeats):
                for name, factory in factories.items():
                    cost = await _protocol_run(factory, reads, count)
                    best[name] = min(best.get(name, cost), cost)
            rows.append([shape, *(f"{best[name]:.2f}" for name in factories),
                         f"{best['old'] - best['plain']:+.2f}",
                         f"{best['guard'] - best['plain']:+.2f}"])
        return rows

    return uvloop.run(measure_all())


# --- the load ----------------------------------------------------------------------------

def lua_string(raw: bytes) -> str:
    """A Lua string literal of `raw` (long brackets would turn its CRLFs into LFs)."""
    return '"' + "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:03d}"
                         for b in raw) + '"'


def run_wrk(port: int, case: Case, seconds: float, connections: int, folder: Path
            ) -> tuple[float, int]:
    """(requests/s, non-2xx) from one wrk run cycling through the case's raw requests.

    The requests are written out whole (with a Host header: h11 and hypercorn refuse
    HTTP/1.1 without one, and wrk.format called at load time leaves it out)."""
    reqs = ",\n".join(lua_string(raw_request(case, i)) for i in range(len(case.paths)))
    script = folder / f"raw-{abs(hash(case.name))}.lua"
    script.write_text(f"local reqs = {{\n{reqs}\n}}\nlocal i = 0\nrequest = function()\n"
                      "  i = i % #reqs + 1\n  return reqs[i]\nend\n", encoding="utf-8")
    _, rate, bad = wrk(port, script, seconds, connections, 1)
    return rate, bad


def tree(pid: int) -> list[int]:
    """`pid` and all its descendants (granian serves from a child process)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of the process tree under `pid` so far."""
    total = 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except OSError:
            pass
    return total / os.sysconf("SC_CLK_TCK")


# --- the measurement --------------------------------------------------------------------

def measure(variant: str, data: Path, pair: tuple[Case, Case], client: str, seconds: float,
            rounds: int, tmp: Path) -> dict:
    """Medians over `rounds` for one variant, per app (hello, bare, kelime): req/s and
    server CPU µs per request (hello world on its GET, the others on validate x8), and the
    count of non-2xx replies."""
    servers = {app: server(variant, app, data, tmp) for app in APPS}
    rates: dict[str, list[float]] = {app: [] for app in APPS}
    costs: dict[str, list[float]] = {app: [] for app in APPS}
    bad = 0
    try:
        for round_ in range(rounds + 1):  # round 0 warms up, unrecorded
            for app, srv in servers.items():
                case = pair[0] if app == "hello" else pair[1]
                run_for = min(1.0, seconds) if round_ == 0 else seconds
                cpu = cpu_seconds(srv.proc.pid)
                if client == "wrk":
                    rate, errors = run_wrk(srv.port, case, run_for, 16, tmp)
                else:
                    rate, errors = run_python(srv.port, case, run_for, 16, 1)
                cpu = cpu_seconds(srv.proc.pid) - cpu
                if round_:
                    rates[app].append(rate)
                    costs[app].append(cpu / (rate * run_for) * 1e6)
                    bad += errors
    finally:
        for srv in servers.values():
            srv.stop()
    med = statistics.median
    return {**{app: med(rates[app]) for app in APPS},
            **{f"{app}_us": med(costs[app]) for app in APPS}, "bad": bad}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short runs (a smoke test)")
    parser.add_argument("--data", type=Path, help="data folder with the lexicon to serve")
    parser.add_argument("--only", help=f"comma-separated subset of {','.join(VARIANTS)}")
    add_http_options(parser, seconds=4)
    parser.add_argument("--serve", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--app", choices=APPS, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve, args.app, args.port, args.data)
        return
    seconds, rounds, client = http_options(args, seconds=4)
    variants = args.only.split(",") if args.only else list(VARIANTS)
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        raise SystemExit(f"--only: unknown {', '.join(sorted(unknown))}")

    from kelime.lexicon import load_lexicon

    with tempfile.TemporaryDirectory(prefix="kelime-servers-") as tmp:
        tmp = Path(tmp)
        data = lexicon_folder(args.data, tmp / "data")
        lex = load_lexicon(data, "tr")
        every = cases(sample_words(lex, 5_000), variants=50)
        pair = (every[0], next(c for c in every if c.name == "POST /v1/validate x8"))
        load = "wrk, 1 thread" if client == "wrk" else "the Python asyncio client, 1 process"
        count = 5_000 if args.quick else 20_000
        print_table(f"In process: CPU µs per request through the protocol alone (a tiny ASGI "
                    f"app, no sockets; the least of 5 runs of {count:,})",
                    ["request", "HttpToolsProtocol", f"old ({OLD_PROTOCOL})", "Guard",
                     "old's cost", "guard's cost"],
                    protocol_cost(count, 5))
        print(f"\n{os.cpu_count()} CPUs, Python {sys.version.split()[0]}; load from {load}, "
              f"16 keep-alive connections; {seconds:g} s a run, median of {rounds}; one "
              f"worker each on 127.0.0.1", flush=True)
        rows = []
        for variant in variants:
            if not available(variant):
                rows.append([variant, "not installed"] + [""] * 9)
                continue
            m = measure(variant, data, pair, client, seconds, rounds, tmp)
            ratio, cpu_ratio = m["kelime"] / m["hello"], m["hello_us"] / m["kelime_us"]
            rows.append([variant, f"{m['hello']:,.0f}", f"{m['bare']:,.0f}",
                         f"{m['kelime']:,.0f}", f"{ratio:.2f}", f"{m['kelime'] / m['bare']:.2f}",
                         f"{m['hello_us']:,.0f}", f"{m['bare_us']:,.0f}",
                         f"{m['kelime_us']:,.0f}", f"{cpu_ratio:.2f}",
                         ("met" if min(ratio, cpu_ratio) >= GOAL else
                          "met on CPU" if cpu_ratio >= GOAL else "missed")
                         + (f" ({m['bad']} non-2xx!)" if m["bad"] else "")])
            print(f"  {variant}: hello {m['hello']:,.0f}/s {m['hello_us']:,.0f} µs, bare x8 "
                  f"{m['bare']:,.0f}/s {m['bare_us']:,.0f} µs, validate x8 "
                  f"{m['kelime']:,.0f}/s {m['kelime_us']:,.0f} µs", flush=True)
        print_table("hello world, a bare ASGI app and kelime (POST /v1/validate x8), one worker",
                    ["server", "hello req/s", "bare x8", "x8 req/s", "x8/hello", "x8/bare",
                     "hello µs", "bare µs", "x8 µs", "hello µs/x8 µs", f"goal {GOAL:.2f}"],
                    rows)
        print("µs: the server's own CPU time per request (user + system, all its processes),"
              " which other load on the machine disturbs less than req/s")


if __name__ == "__main__":
    main()
