"""Pinned versions: what a second held build of each lexicon costs a replica, in memory and
in speed, against the same server without it, in the same run.

    .venv/bin/python benchmarks/pinned.py            # ~1 minute
    .venv/bin/python benchmarks/pinned.py --quick    # a smoke test
    .venv/bin/python benchmarks/pinned.py --data data

The data folder (default: `make serve`'s data/, else the offline `tr` built here) is copied,
and a second build of `tr` and of `ku` made beside the first (the same words and one more),
so each has a current build and one before it.

Memory: one `kelime serve --workers 1` holding 1 build of each (KELIME_KEEP_VERSIONS=1), then
one holding 2; the worker's VmRSS once loaded, and once warmed with a validation, an
anagram and a split on every build it holds (the lazy caches made); the second builds' cost
against the size of their files on disk (goal: at most 1.5x).

Speed: one server holding 2 builds; POST /v1/validate with 8 words, unpinned (`tr`), pinned
to the current build (`tr@<current>`) and to the one before (`tr@<older>`), each run in
turn, the order rotated each round (after a short unrecorded warm-up), median requests/s;
each as a ratio of the unpinned one (goal: within 5%). wrk when installed, else the Python
client of benchmarks/validate.py.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from load import children, rss_mib  # noqa: E402
from validate import (  # noqa: E402
    Case,
    add_http_options,
    http_options,
    kelime_server,
    measure_cases,
    print_table,
    sample_words,
)

EXTRA = {"tr": "kelimeölçeri", "ku": "pîvanaxebatê"}  # one word more: another build


def next_builds(data: Path) -> dict[str, tuple[str, str, int]]:
    """A second build of each lexicon in `data`, newer than the first: name → (older
    version, current version, bytes of the older build's files)."""
    from kelime.lexicon import Candidate, compile_words, load_lexicon, write_lexicon
    from kelime.normalize import Alphabet

    out = {}
    for name in ("tr", "ku"):
        if not (data / name).exists():
            continue
        old = load_lexicon(data, name)
        alphabet = Alphabet(old.alphabet.letters)
        words = [Candidate(w) for w in [*old.words.keys(), EXTRA[name]]]
        new = write_lexicon(compile_words(words, alphabet), data, name, old.manifest.source,
                            created=old.manifest.created, alphabet=alphabet)
        size = sum(f.stat().st_size for f in Path(old.path).iterdir())
        out[name] = (old.info["version"], new.manifest.version, size)
    return out


def post(port: int, path: str, body: dict) -> dict:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("POST", path, orjson.dumps(body), {"Content-Type": "application/json"})
        reply = conn.getresponse()
        found = json.loads(reply.read())
        assert reply.status == 200, found
        return found
    finally:
        conn.close()


def warm(port: int, builds: dict[str, tuple[str, str, int]], keep: int) -> None:
    """A validation, an anagram and a split on every build the server holds."""
    for name, (older, current, _) in builds.items():
        for version in [current, older][:keep]:
            pin = f"{name}@{version}"
            assert post(port, "/v1/validate", {"words": ["kitap", "ev"], "lexicon": pin}
                        )["lexicon"]["version"] == version
            game = {"game": "kelimatik-ku", "what_if": True} if name == "ku" else {}  # 7 tiles
            post(port, "/v1/anagram", {"rack": "kalemsi" if name == "tr" else "xwendin",
                                       "lexicon": pin, **game})
            if name == "tr":  # (Harfbank, the split's game, is played in Turkish)
                post(port, "/v1/split", {"rack": "kalemsiev", "lexicon": pin, "what_if": True})


def worker_rss(pid: int) -> float:
    workers = children(pid)
    return sum(rss_mib(w) for w in workers)


def memory(data: Path, builds, tmp: Path) -> list[list[str]]:
    """The worker's RSS holding 1 and 2 builds of each lexicon: loaded, then warmed."""
    rss: dict[tuple[int, str], float] = {}
    for keep in (1, 2):
        os.environ["KELIME_KEEP_VERSIONS"] = str(keep)
        server = kelime_server(data, 1, tmp)
        try:
            post(server.port, "/v1/validate", {"words": ["kitap"]})
            time.sleep(0.5)
            rss[keep, "loaded"] = worker_rss(server.proc.pid)
            warm(server.port, builds, keep)
            time.sleep(0.5)
            rss[keep, "warmed"] = worker_rss(server.proc.pid)
        finally:
            server.stop()
    disk = sum(size for *_, size in builds.values()) / 2**20
    rows = []
    for state in ("loaded", "warmed"):
        extra = rss[2, state] - rss[1, state]
        rows.append([state, f"{rss[1, state]:.1f} MiB", f"{rss[2, state]:.1f} MiB",
                     f"+{extra:.1f} MiB", f"{extra / disk:.2f}x"])
    print(f"\nthe second builds' files: {disk:.2f} MiB on disk (tr and ku)")
    return rows


def speed(data: Path, builds, words: list[str], client: str, seconds: float, rounds: int,
          tmp: Path) -> list[list[str]]:
    older, current, _ = builds["tr"]
    rng = random.Random(3)
    batches = [rng.sample(words, 8) for _ in range(50)]
    cases = [Case(f"POST /v1/validate x8 {label}", 8, "POST", ["/v1/validate"] * 50,
                  [orjson.dumps({"words": b, "lexicon": pin}) for b in batches],
                  baseline=label == "unpinned")
             for label, pin in (("unpinned", "tr"), ("pinned current", f"tr@{current}"),
                                ("pinned older", f"tr@{older}"))]
    os.environ["KELIME_KEEP_VERSIONS"] = "2"
    server = kelime_server(data, 1, tmp)
    rates: dict[str, list[float]] = {}
    try:  # each round in another order (the first run of a round was favoured)
        for turn in range(rounds):
            order = cases[turn % len(cases):] + cases[:turn % len(cases)]
            found, _ = measure_cases(server, order, seconds, 1, client, tmp)
            for name, rate in found.items():
                rates.setdefault(name, []).extend(rate)
    finally:
        server.stop()
    base = statistics.median(rates[cases[0].name])
    return [[c.name, f"{statistics.median(rates[c.name]):,.0f}",
             f"{statistics.median(rates[c.name]) / base:.3f}x"] for c in cases]


def in_app(data: Path, builds, words: list[str], rounds: int) -> list[list[str]]:
    """The same questions straight into the app (ASGI, its fast path and middleware, no
    socket): microseconds a request, median of `rounds`, the cases in turn."""
    import asyncio

    from starlette.testclient import TestClient

    from kelime.service.app import create_app
    from kelime.service.settings import Settings

    older, current, _ = builds["tr"]
    app = create_app(Settings(data=data, keep_versions=2))
    pins = {"unpinned": "tr", "pinned current": f"tr@{current}", "pinned older": f"tr@{older}"}
    rng = random.Random(3)
    batches = [rng.sample(words, 8) for _ in range(50)]

    async def run(pin: str, n: int) -> float:
        bodies = [orjson.dumps({"words": b, "lexicon": pin}) for b in batches]

        async def send(message) -> None:
            pass

        start = time.perf_counter()
        for i in range(n):
            body = bodies[i % len(bodies)]

            async def receive(body=body):
                return {"type": "http.request", "body": body, "more_body": False}

            await app({"type": "http", "method": "POST", "path": "/v1/validate",
                       "raw_path": b"/v1/validate", "query_string": b"", "root_path": "",
                       "headers": [(b"content-type", b"application/json"),
                                   (b"content-length", b"%d" % len(body))],
                       "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 8000),
                       "scheme": "http", "http_version": "1.1"}, receive, send)
        return (time.perf_counter() - start) / n * 1e6

    times: dict[str, list[float]] = {label: [] for label in pins}
    with TestClient(app):  # the lifespan: lexicons loaded
        for _ in range(rounds):
            for label, pin in pins.items():
                times[label].append(asyncio.run(run(pin, 5_000)))
    base = statistics.median(times["unpinned"])
    return [[f"POST /v1/validate x8 {label}", f"{statistics.median(t):.1f}",
             f"{statistics.median(t) / base:.3f}x"] for label, t in times.items()]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short runs (a smoke test)")
    parser.add_argument("--data", type=Path, default=HERE.parent / "data",
                        help="the data folder to copy (default: data/, else the offline tr)")
    add_http_options(parser, seconds=3)
    args = parser.parse_args(argv)
    seconds, rounds, client = http_options(args, seconds=3)
    with tempfile.TemporaryDirectory(prefix="kelime-bench-pinned-") as folder:
        tmp = Path(folder)
        data = tmp / "data"
        if (args.data / "tr").exists():
            shutil.copytree(args.data, data, symlinks=True)
        else:
            from validate import lexicon_folder
            lexicon_folder(None, data)
        builds = next_builds(data)
        print("builds: " + "; ".join(f"{n} {o} (older), {c} (current)"
                                     for n, (o, c, _) in builds.items()), flush=True)
        print_table("Memory of one worker (VmRSS): loaded (a validation), then warmed (a "
                    "validation, an anagram and a split on every build held)",
                    ["state", "1 build each", "2 builds each", "extra", "extra vs files"],
                    memory(data, builds, tmp))
        words = sample_words(__import__("kelime.lexicon", fromlist=["load_lexicon"])
                             .load_lexicon(data, "tr"), 5_000)
        print_table(f"In the app (ASGI, no socket): µs a request, median of {rounds} rounds",
                    ["case", "µs", "vs unpinned"], in_app(data, builds, words, rounds))
        print_table(f"Speed: 1 worker, {client}, {seconds:g} s a run, median of {rounds} "
                    "rounds (requests/s, ratio to unpinned)", ["case", "req/s", "vs unpinned"],
                    speed(data, builds, words, client, seconds, rounds, tmp))


if __name__ == "__main__":
    main()
