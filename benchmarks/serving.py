"""The serving layer's cost: `kelime serve` against a bare ASGI app on the same uvicorn.

    .venv/bin/python benchmarks/serving.py            # ~1 minute
    .venv/bin/python benchmarks/serving.py --quick    # ~20 seconds
    .venv/bin/python benchmarks/serving.py --data data --workers 2

The same 8-word POST /v1/validate requests (50 variants, benchmarks/validate.py's words)
go to `kelime serve --workers N` (its supervisor, its workers, the whole app) and to a bare
ASGI app (benchmarks/hello.py `create_bare`: reads the body, answers `{"ok":true}`) that
uvicorn serves with kelime's very options (`service.server.serve`, uvicorn's own
supervisor), one after the other in the same run. Each row: requests/s (median of the
rounds, after an unrecorded warm-up) and server CPU time per request, and kelime's share of
the bare app's figures. Load: wrk when installed, else the asyncio client (validate.py).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from validate import (  # noqa: E402
    add_http_options,
    cases,
    hello_server,
    http_options,
    kelime_server,
    measure_cases,
    print_table,
    sample_words,
    served_lexicon,
)

EIGHT = "POST /v1/validate x8"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short runs (a smoke test)")
    parser.add_argument("--data", type=Path, help="data folder with the lexicon to serve")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    add_http_options(parser, seconds=5)
    args = parser.parse_args(argv)
    seconds, rounds, client = http_options(args, seconds=5)
    with tempfile.TemporaryDirectory(prefix="kelime-bench-") as tmp:
        tmp = Path(tmp)
        data, lex = served_lexicon(args.data, tmp)
        case = next(c for c in cases(sample_words(lex, 5000), variants=50) if c.name == EIGHT)
        rows = []
        for workers in args.workers:
            figures = {}
            for name, make in (("kelime serve",
                                lambda n=workers: kelime_server(data, n, tmp)),
                               ("bare ASGI", lambda n=workers: hello_server(n, tmp, "create_bare",
                                                                            "/"))):
                server = make()
                try:
                    rates, cpu = measure_cases(server, [case], seconds, rounds, client, tmp)
                finally:
                    server.stop()
                figures[name] = (statistics.median(rates[EIGHT]), statistics.median(cpu[EIGHT]))
            (rps, each), (bare_rps, bare_each) = figures["kelime serve"], figures["bare ASGI"]
            rows.append([str(workers), f"{rps:,.0f}", f"{bare_rps:,.0f}", f"{rps / bare_rps:.2f}",
                         f"{each * 1e6:,.0f}", f"{bare_each * 1e6:,.0f}",
                         f"{each / bare_each:.2f}x"])
    print_table(f"{EIGHT}, {client}, 16 connections, {seconds:g} s x {rounds} rounds",
                ["workers", "kelime req/s", "bare req/s", "share", "kelime CPU µs/req",
                 "bare CPU µs/req", "CPU vs bare"], rows)


if __name__ == "__main__":
    main()
