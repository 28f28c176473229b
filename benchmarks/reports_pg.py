"""Accepted reports a second with the report store on PostgreSQL against the SQLite file,
in the same run (the ratio), each behind one `kelime serve` worker:

    .venv/bin/python benchmarks/reports_pg.py            # ~1 minute
    .venv/bin/python benchmarks/reports_pg.py --quick    # ~20 seconds

The cases of benchmarks/reports.py (a report of a word already reported; reports of 5,000
different words), 202s only (KELIME_REPORTS_PER_HOUR raised); then the stores alone, without
HTTP: reports of different words submitted one after another in this process (what one
writer at a time, the stores' rule, allows in all, whatever the replicas).

PostgreSQL is a real server started here (tests/postgres.py: initdb + pg_ctl in a temporary
folder; Debian's `postgresql` package) with its commits durable (fsync and
synchronous_commit on), as the SQLite file's are: each report's reply waits for its commit
on disk in both. Over a loopback TCP connection on the same machine: a database on another
host adds its round trips (a report is about ten statements and a commit).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from reports import the_cases  # noqa: E402
from validate import (  # noqa: E402
    kelime_server,
    measure_cases,
    print_table,
    served_lexicon,
    worker_options,
)


def store_alone(store, reports: int) -> float:
    """Reports a second `store.submit` takes, one after another (each committed)."""
    start = time.perf_counter()
    for i in range(reports):
        store.submit(word=f"kelime{i}", sent="x", kind="wrong", lexicon="tr",
                     client=f"10.0.{i // 250}.{i % 250}", version="000000000000")
    return reports / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    args, seconds, rounds, client = worker_options(__doc__, argv)
    from tests.postgres import MISSING, postgres_server, server_bin

    if server_bin() is None:
        raise SystemExit(MISSING)
    with tempfile.TemporaryDirectory(prefix="kelime-bench-") as tmp, \
            postgres_server(durable=True) as pg:
        tmp = Path(tmp)
        data, lex = served_lexicon(args.data, tmp)
        cases = the_cases(sorted(lex.words.keys()))[1:]  # the reports (no validate baseline)
        os.environ["KELIME_REPORTS_PER_HOUR"] = str(10**9)
        stores = {"SQLite": str(tmp / "reports.sqlite"), "PostgreSQL": pg.database("bench")}
        rates: dict[str, dict[str, list[float]]] = {}
        cpu: dict[str, dict[str, list[float]]] = {}
        for name, store in stores.items():
            server = kelime_server(data, 1, tmp, ("--reports", store))
            try:
                rates[name], cpu[name] = measure_cases(server, cases, seconds, rounds, client,
                                                       tmp)
            finally:
                server.stop()
        from kelime.reports import ReportLimits, ReportStore
        from kelime.reports_pg import PgReportStore

        count = 100 if args.quick else 500
        limits = ReportLimits(per_client_hour=10**9)
        alone = []
        for store in (ReportStore(tmp / "alone.sqlite", create=True, limits=limits),
                      PgReportStore(pg.database("alone"), create=True, limits=limits)):
            with store:
                alone.append(statistics.median(store_alone(store, count) for _ in range(rounds)))
    rows = []
    for case in cases:
        lite, pg_rate = (statistics.median(rates[s][case.name]) for s in stores)
        each = [statistics.median(cpu[s][case.name]) * 1e6 for s in stores]
        rows.append([case.name, f"{lite:,.0f}", f"{pg_rate:,.0f}", f"{pg_rate / lite:.2f}",
                     f"{each[0]:,.0f} / {each[1]:,.0f}"])
    print_table(f"accepted reports (202) a second, 1 worker, 16 connections, load from "
                f"{client}; {seconds:g} s a run, median of {rounds}",
                ["report", "SQLite/s", "PostgreSQL/s", "PG ÷ SQLite",
                 "worker CPU µs/report (SQLite / PG)"], rows)
    print_table(f"the stores alone: {count} reports of different words one after another, "
                f"median of {rounds}", ["store", "reports/s", "ms a report"],
                [[name, f"{rate:,.0f}", f"{1000 / rate:.1f}"] for name, rate in
                 zip(("SQLite", "PostgreSQL"), alone)]
                + [["PG ÷ SQLite", f"{alone[1] / alone[0]:.2f}", ""]])


if __name__ == "__main__":
    main()
