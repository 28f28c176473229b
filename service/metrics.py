"""Prometheus metrics for all of a server's workers, and the access log.

Counters and histograms (requests, latency, words by verdict, anagram and split searches)
are counted by each worker, summed over WINDOW seconds before they are written (each write
to a multiprocess file takes a lock, a getpid() system call and a memory-mapped store: ~1 µs,
and a request makes five of them); under `kelime serve` they go to prometheus_client's
multiprocess files in the master's runtime folder (`PROMETHEUS_MULTIPROC_DIR`, see
`serve.py`), so any worker's `/metrics` sums every worker, those that have stopped included
(counters never go down; each worker that ever ran keeps its two files, RESERVE bytes each,
until the server stops: prometheus_client's own multiprocess rule). What the
server *is* (the lexicons loaded, their versions, the reloads) is read from the answering
worker's state when scraped: a replaced lexicon's series goes with it, and after a reload
every worker tells the same.

An app made in-process (tests, one process) counts in its own registry instead.

With `KELIME_ACCESS_LOG=json` each request is one JSON line on stderr: time, method, route
template, status, milliseconds, and for the routes that know them the batch size and the
lexicon version. Off by default: it costs a few microseconds a request.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import time
from bisect import bisect_left
from pathlib import Path
from time import perf_counter

import orjson
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, InfoMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
CONTENT_TYPE = CONTENT_TYPE_LATEST
MULTIPROCESS = "PROMETHEUS_MULTIPROC_DIR"
LOG_KEY = "kelime.log"  # routes put {"words": N, "lexicon": version} in the scope under it
#: Seconds of counts a worker sums before writing them: a scrape sees the other workers'
#: counts up to this late, and a worker killed with -9 loses at most this much of its own.
WINDOW = 0.05
#: The request latency histogram is kept as counters (a request in a bucket, and the sum), so
#: that it is summed over WINDOW like the rest (a prometheus_client Histogram writes twice a
#: request), and shown as the histogram it is when scraped (`Shown`).
LATENCY = "kelime_http_request_duration_seconds"
LES = (*(repr(float(b)) for b in BUCKETS), "+Inf")
#: Bytes allocated for each of a worker's multiprocess files before it writes one (see
#: `reserve`): room for thousands of series, far more than kelime's labels make.
RESERVE = 1 << 20


class Live:
    """The collector of what the answering worker serves (read at scrape time)."""

    def __init__(self) -> None:
        self.lexicons: dict = {}
        self.reloads: dict[str, int] = {}

    def collect(self):
        loaded = GaugeMetricFamily("kelime_lexicons_loaded", "Lexicons loaded.")
        loaded.add_metric([], len(self.lexicons))
        words = GaugeMetricFamily("kelime_lexicon_words", "Valid words in each loaded lexicon.",
                                  labels=("lexicon", "version"))
        info = InfoMetricFamily("kelime_lexicon", "The lexicons served: name, version, sha256.",
                                labels=("lexicon",))
        for name, lex in sorted(self.lexicons.items()):
            words.add_metric([name, lex.info["version"]], lex.info["words"])
            info.add_metric([name], {"version": lex.info["version"],
                                     "sha256": lex.info["sha256"]})
        reloads = GaugeMetricFamily("kelime_reloads", "Reloads of the lexicons since the server "
                                    "started, by outcome (reloaded, unchanged, refused).",
                                    labels=("outcome",))
        for outcome, n in sorted(self.reloads.items()):
            reloads.add_metric([outcome], n)
        return [loaded, words, info, reloads]


class Metrics:
    """The service's metrics (so several apps can live in one process, each has its own)."""

    def __init__(self) -> None:
        self.folder = os.environ.get(MULTIPROCESS) or None
        self.registry = CollectorRegistry()
        counted = None if self.folder else self.registry  # multiprocess: the files hold them
        self.requests = Counter("kelime_http_requests", "HTTP requests by route and status.",
                                ("method", "route", "status"), registry=counted)
        self.latency = Counter(LATENCY + "_in", "Requests answered within each bucket's time "
                               "(not cumulative): shown as the histogram " + LATENCY + ".",
                               ("route", "le"), registry=counted)
        self.latency_sum = Counter(LATENCY + "_spent", "Time answering HTTP requests: shown as "
                                   "the sum of the histogram " + LATENCY + ".", ("route",),
                                   registry=counted)
        self.words = Counter("kelime_words_validated", "Words validated, by lexicon and verdict "
                             "(valid, or the reason for refusing).", ("lexicon", "verdict"),
                             registry=counted)
        self.searches = Counter("kelime_searches", "Anagram, split and moves questions answered, "
                                "by kind, and for splits and moves whether the search was "
                                "complete.",
                                ("kind", "complete"), registry=counted)
        self.search_time = Histogram("kelime_search_seconds", "Time spent searching (not "
                                     "waiting), by kind.", ("kind",), buckets=BUCKETS,
                                     registry=counted)
        self.reports = Counter("kelime_reports", "Player word reports stored, by lexicon, "
                               "kind, and whether a new report or one more of an open one.",
                               ("lexicon", "kind", "outcome"), registry=counted)
        self.live = Live()
        self.registry.register(self.live)
        self._children: dict[tuple, object] = {}  # .labels() costs ~1 µs: look each up once
        self._pending: dict[Counter, float] = {}  # counter child -> what it is yet to count
        self._observing: dict[tuple, tuple] = {}  # (method, route, status, le) -> children
        self._loop: asyncio.AbstractEventLoop | None = None  # `batch_on`
        self._loop_thread: int | None = None
        self.lost = False
        self.reserved = True if self.folder is None else None  # its files allocated? `reserve`

    def _child(self, metric, *labels):
        key = (id(metric), *labels)
        child = self._children.get(key)
        if child is None:
            if self.reserved is None and self.folder is not None:  # a folder, not reserved yet
                self.reserved = reserve(self.folder)
            if self.reserved is False:  # no room for them: serve on, counting nothing
                return _UNCOUNTED
            try:  # multiprocess: opens this worker's file in the runtime folder
                child = self._children[key] = metric.labels(*labels)
            except OSError as e:  # the folder is gone (a tmp cleaner): the master makes
                if not self.lost:  # it again; meanwhile the request counts for nothing,
                    log.error("metrics not counted: %s", e)  # but is answered
                self.lost = True
                return _UNCOUNTED
        return child

    def lexicons_loaded(self, lexicons: dict) -> None:
        self.live.lexicons = dict(lexicons)

    def reloads_seen(self, counts: dict[str, int]) -> None:
        self.live.reloads = dict(counts)

    def count_verdicts(self, lexicon: str, results: list[dict]) -> None:
        tally: dict[str | None, int] = {}
        for result in results:
            reason = result["reason"]
            tally[reason] = tally.get(reason, 0) + 1
        self.count_tally(lexicon, tally)

    def count_tally(self, lexicon: str, tally: dict[str | None, int]) -> None:
        """`count_verdicts` from a tally already made: {reason (None: valid): words}."""
        for reason, n in tally.items():
            self._add(self._child(self.words, lexicon, reason or "valid"), n)

    def batch_on(self, loop: asyncio.AbstractEventLoop) -> None:
        """Sum the counts made on `loop` (the app's, from its lifespan) over WINDOW: `_add`."""
        self._loop, self._loop_thread = loop, threading.get_ident()

    def _add(self, child: Counter, amount: float) -> None:
        """Count `amount` on a counter's child within WINDOW seconds.

        Each increment of a multiprocess counter takes a lock, a getpid() system call and a
        write to its memory map (~1 µs); a busy worker answers hundreds of requests in a
        WINDOW, and these are summed into one increment a series. Anywhere but on the loop
        `batch_on` named (a thread, a script, a test) it counts at once, so that what is
        pending is the loop's alone. (The thread is compared, not
        asyncio.get_running_loop() asked: that makes a getpid() call too.)"""
        if threading.get_ident() != self._loop_thread:
            child.inc(amount)
            return
        pending = self._pending
        if not pending:
            self._loop.call_later(WINDOW, self.flush)  # type: ignore[union-attr]
        pending[child] = pending.get(child, 0) + amount

    def flush(self) -> None:
        """Count what `_add` holds (the loop calls it; so does `render`, first)."""
        if threading.get_ident() == self._loop_thread:  # (elsewhere nothing is pending)
            pending, self._pending = self._pending, {}
            for child, amount in pending.items():
                child.inc(amount)

    def count_search(self, kind: str, seconds: float, complete: bool = True) -> None:
        self._child(self.searches, kind, "true" if complete else "false").inc()
        self._child(self.search_time, kind).observe(seconds)

    def count_report(self, lexicon: str, kind: str, duplicate: bool) -> None:
        self._child(self.reports, lexicon, kind, "duplicate" if duplicate else "new").inc()

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        le = LES[bisect_left(BUCKETS, seconds)]
        children = self._observing.get((method, route, status, le))
        if children is None:  # the three series a request counts in, looked up once
            children = (self._child(self.requests, method, route, status),
                        self._child(self.latency, route, le),
                        self._child(self.latency_sum, route))
            if _UNCOUNTED not in children:  # (not yet: tried again, as `_child` does)
                self._observing[(method, route, status, le)] = children
        self._add(children[0], 1)
        self._add(children[1], 1)
        self._add(children[2], seconds)

    def render(self) -> bytes:
        self.flush()
        registry = CollectorRegistry()
        if self.folder is None:
            registry.register(Shown(self.registry))
            return generate_latest(registry)
        from prometheus_client import multiprocess

        sources: list = [self.live]
        if os.path.isdir(self.folder):  # else removed, until the master makes it again
            sources.append(multiprocess.MultiProcessCollector(None, path=self.folder))
        registry.register(Shown(*sources))
        return generate_latest(registry)


class Shown:
    """What a scrape shows: the families of `sources`, the latency counters as the histogram
    LATENCY (cumulative buckets, their count and sum, as a prometheus_client Histogram)."""

    def __init__(self, *sources) -> None:
        self.sources = sources

    def collect(self):
        within: dict[tuple[str, str], float] = {}
        spent: dict[str, float] = {}
        for source in self.sources:
            for family in source.collect():
                if family.name not in (LATENCY + "_in", LATENCY + "_spent"):
                    yield family
                    continue
                for sample in family.samples:
                    if not sample.name.endswith("_total"):
                        continue  # _created, in one process
                    route = sample.labels["route"]
                    if family.name.endswith("_in"):
                        key = (route, sample.labels["le"])
                        within[key] = within.get(key, 0) + sample.value
                    else:
                        spent[route] = spent.get(route, 0) + sample.value
        shown = HistogramMetricFamily(LATENCY, "Time to answer an HTTP request.",
                                      labels=("route",))
        for route in sorted({route for route, _ in within} | set(spent)):
            total, buckets = 0.0, []
            for le in LES:
                total += within.get((route, le), 0)
                buckets.append((le, total))
            shown.add_metric([route], buckets, sum_value=spent.get(route, 0))
        yield shown


def reserve(folder: str) -> bool | None:
    """Allocate this worker's multiprocess files (RESERVE bytes each) before prometheus_client
    maps them. It writes them through a memory map, and a page of a sparse file written on a
    full disk is a SIGBUS: on a full runtime folder every worker died on its first request,
    and each one respawned died the same way. True when allocated (prometheus_client then
    finds a file of that size, empty, and never grows it for kelime's series); False when
    there is no room (logged: the worker serves on, uncounted); None when the folder is gone
    (a tmp cleaner: tried again on the next new series, once the master made it again).
    Never in a folder that is not this user's own (`reload.own_folder`): one made by someone
    else after a cleaner could point a worker's files anywhere."""
    from .reload import own_folder

    try:
        if os.path.lexists(folder):
            own_folder(Path(folder))
    except OSError as e:
        return _unreserved(folder, e)
    for kind in ("counter", "histogram"):
        path = os.path.join(folder, f"{kind}_{os.getpid()}.db")
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except FileNotFoundError:
            return None
        except OSError as e:
            return _unreserved(folder, e)
        try:
            if os.fstat(fd).st_size < RESERVE:
                os.posix_fallocate(fd, 0, RESERVE)
        except OSError as e:
            os.ftruncate(fd, 0)  # a file of size 0 is one prometheus_client would map sparse
            Path(path).unlink(missing_ok=True)  # (gone already when a cleaner took the folder)
            return _unreserved(folder, e)
        finally:
            os.close(fd)
    return True


def _unreserved(folder: str, e: OSError) -> bool:
    log.error("worker %d counts no metrics: it cannot allocate its files in %s (%s); it "
              "serves on", os.getpid(), folder, e.strerror or e)
    return False


class _Uncounted:
    def inc(self, amount: float = 1) -> None:
        pass

    observe = inc


_UNCOUNTED = _Uncounted()
log = logging.getLogger("uvicorn.error")


def route_template(scope, app) -> str:
    """The route template a request matched ("/v1/words/{word:path}"), not its path."""
    route = scope.get("route")
    if route is not None:
        return route.path
    endpoint = scope.get("endpoint")  # plain Starlette routes (/docs, /openapi.json)
    if endpoint is not None:
        for candidate in getattr(app, "routes", ()):
            if getattr(candidate, "endpoint", None) is endpoint:
                return candidate.path
    return "unmatched"


class MetricsMiddleware:
    """Counts every HTTP request by its route template and status, times it, and logs it."""

    def __init__(self, app, metrics: Metrics, access_log: bool = False, router=None) -> None:
        self.app, self.metrics, self.access_log, self.router = app, metrics, access_log, router

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start, status = perf_counter(), [500]

        async def send_status(message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_status)
        finally:
            seconds = perf_counter() - start
            route = route_template(scope, self.router)
            self.metrics.observe(scope["method"], route, status[0], seconds)
            if self.access_log:
                log_line(scope, route, status[0], seconds)


def log_line(scope, route: str, status: int, seconds: float) -> None:
    line = {"ts": round(time.time(), 3), "method": scope["method"], "route": route,
            "status": status, "ms": round(seconds * 1000, 3), **scope.get(LOG_KEY, {})}
    sys.stderr.buffer.write(orjson.dumps(line) + b"\n")
    sys.stderr.flush()
