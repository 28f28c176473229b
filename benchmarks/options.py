"""What the API's options cost a kelime worker, each against the same request without it,
measured in the same run:

    .venv/bin/python benchmarks/options.py            # ~1 minute
    .venv/bin/python benchmarks/options.py --quick    # ~20 seconds

- gzip: an 8-word and a 1,000-word POST /v1/validate asking `Accept-Encoding: gzip`, with
  the bytes on the wire each way (a replica never compresses, so asking should cost
  nothing; nginx compresses at the edge: benchmarks/compression.py);
- "did you mean": 8 words that are not valid, with `"suggest": true` and without.

One worker (`kelime serve`), load from wrk (or the Python client), the figures by
requests/s and by the server's CPU time per request, which other load on the machine
barely moves. Serves the lexicon under --data, or builds the offline bootstrap lexicon.
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from validate import (
    Case,
    kelime_server,
    measure_cases,
    print_table,
    sample_words,
    served_lexicon,
    worker_options,
)

GZIP = (("Accept-Encoding", "gzip"),)


def the_cases(lex, words: list[str], variants: int = 50) -> list[tuple[Case, Case]]:
    """(baseline, with the option) pairs."""
    rng = random.Random(11)
    small = [orjson.dumps({"words": rng.sample(words, 8)}) for _ in range(variants)]
    big = [orjson.dumps({"words": rng.sample(words, 1000)}) for _ in range(variants)]
    misspelt = [w for w in words if not lex.check(w).valid]
    wrong = [rng.sample(misspelt, 8) for _ in range(variants)]
    post = ["/v1/validate"] * variants

    def case(name: str, bodies: list[bytes], headers=()) -> Case:
        return Case(name, len(orjson.loads(bodies[0])["words"]), "POST", post, bodies,
                    headers=headers)

    return [
        (case("8 words", small), case("8 words, Accept-Encoding: gzip", small, GZIP)),
        (case("1,000 words", big), case("1,000 words, Accept-Encoding: gzip", big, GZIP)),
        (case("8 invalid words", [orjson.dumps({"words": w}) for w in wrong]),
         case("8 invalid words, suggest: true",
              [orjson.dumps({"words": w, "suggest": True}) for w in wrong])),
    ]


def wire_bytes(port: int, case: Case) -> int:
    """The reply body's size on the wire for the case's first request."""
    import httpx

    headers = {"Accept-Encoding": "identity", "Content-Type": "application/json",
               **dict(case.headers)}
    with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
        reply = client.post(case.paths[0], content=case.bodies[0], headers=headers)
        reply.raise_for_status()
        return reply.num_bytes_downloaded  # before httpx decodes the gzip


def main(argv: list[str] | None = None) -> None:
    args, seconds, rounds, client = worker_options(__doc__, argv)

    with tempfile.TemporaryDirectory(prefix="kelime-bench-") as tmp:
        tmp = Path(tmp)
        data, lex = served_lexicon(args.data, tmp)
        pairs = the_cases(lex, sample_words(lex, 20_000))
        server = kelime_server(data, 1, tmp)
        try:
            sizes = {c.name: wire_bytes(server.port, c) for pair in pairs for c in pair}
            rates, cpu = measure_cases(server, [c for pair in pairs for c in pair], seconds,
                                       rounds, client, tmp)
        finally:
            server.stop()
    rows = []
    for base, option in pairs:
        b_rate, o_rate = (statistics.median(rates[c.name]) for c in (base, option))
        b_cpu, o_cpu = (statistics.median(cpu[c.name]) for c in (base, option))
        for case, rate, each, ratio, cost in (
                (base, b_rate, b_cpu, "1.00", "baseline"),
                (option, o_rate, o_cpu, f"{o_rate / b_rate:.2f}",
                 f"{(o_cpu - b_cpu) * 1e6:+,.0f} µs")):
            rows.append([case.name, f"{rate:,.0f}", f"{ratio}", f"{each * 1e6:,.0f}", cost,
                         f"{sizes[case.name]:,}"])
    print_table(f"1 worker, 16 connections, load from {client}; {seconds:g} s a run, median of "
                f"{rounds}", ["request (POST /v1/validate)", "req/s", "vs baseline",
                              "CPU µs/req", "option's CPU", "reply bytes"], rows)


if __name__ == "__main__":
    main()
