"""What a player's word report costs a kelime worker, against a one-word POST /v1/validate
measured in the same run, and what it costs the report store on disk:

    .venv/bin/python benchmarks/reports.py            # ~1 minute
    .venv/bin/python benchmarks/reports.py --quick    # ~20 seconds

- a report of a word already reported (an open report's count goes up: one UPDATE and one
  submission row, in a write transaction of the SQLite file, which the disk confirms
  before the reply (a rollback journal));
- reports of 5,000 different words (new report rows, until the cycle repeats).

One worker (`kelime serve --reports FILE`, KELIME_REPORTS_PER_HOUR raised so that the load
is not refused), load from wrk (or the Python client); requests/s and the server's CPU time
per request. Then the store's bytes per submission.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from validate import Case, kelime_server, measure_cases, print_table, served_lexicon, worker_options


def the_cases(words: list[str]) -> list[Case]:
    rng = random.Random(5)
    picked = rng.sample(words, 5000)
    one = [orjson.dumps({"words": [w]}) for w in picked[:50]]
    same = [orjson.dumps({"word": picked[0], "kind": "missing", "note": "TDK'de var"})] * 50
    many = [orjson.dumps({"word": w, "kind": "wrong", "note": "bu kelime yanlış"})
            for w in picked]
    return [Case("validate, 1 word (baseline)", 1, "POST", ["/v1/validate"] * 50, one,
                 baseline=True),
            Case("report, the same word", 0, "POST", ["/v1/reports"] * 50, same),
            Case("report, 5,000 different words", 0, "POST", ["/v1/reports"] * len(many), many)]


def main(argv: list[str] | None = None) -> None:
    args, seconds, rounds, client = worker_options(__doc__, argv)
    from kelime.reports import ReportStore

    with tempfile.TemporaryDirectory(prefix="kelime-bench-") as tmp:
        tmp = Path(tmp)
        data, lex = served_lexicon(args.data, tmp)
        cases = the_cases(sorted(lex.words.keys()))  # words a report takes: single words
        store = tmp / "reports.sqlite"
        os.environ["KELIME_REPORTS_PER_HOUR"] = str(10**9)
        server = kelime_server(data, 1, tmp, ("--reports", str(store)))
        try:
            rates, cpu = measure_cases(server, cases, seconds, rounds, client, tmp)
        finally:
            server.stop()
        with ReportStore(store) as reports:
            submissions = reports.db.execute("SELECT count(*) FROM submissions").fetchone()[0]
            counts = reports.counts()
        size = store.stat().st_size
    base = statistics.median(rates[cases[0].name])
    rows = []
    for case in cases:
        rate, each = statistics.median(rates[case.name]), statistics.median(cpu[case.name])
        rows.append([case.name, f"{rate:,.0f}", f"{rate / base:.2f}", f"{each * 1e6:,.0f}"])
    print_table(f"1 worker, 16 connections, load from {client}; {seconds:g} s a run, median of "
                f"{rounds}", ["request", "req/s", "vs baseline", "CPU µs/req"], rows)
    print(f"store: {submissions:,} submissions in {counts['open']:,} open reports, "
          f"{size:,} bytes ({size / max(1, submissions):,.0f} bytes a submission)")


if __name__ == "__main__":
    main()
