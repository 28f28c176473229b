"""Prometheus metrics: one registry per app, filled by a pure-ASGI middleware and the routes.

With several workers each process counts its own requests (no multiprocess mode):
scrape each worker, or sum over them.
"""

from __future__ import annotations

from time import perf_counter

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
CONTENT_TYPE = CONTENT_TYPE_LATEST


class Metrics:
    """The service's counters, in their own registry (so several apps can live in one process)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("kelime_http_requests", "HTTP requests by route and status.",
                                ("method", "route", "status"), registry=self.registry)
        self.latency = Histogram("kelime_http_request_duration_seconds",
                                 "Time to answer an HTTP request.", ("route",),
                                 buckets=BUCKETS, registry=self.registry)
        self.words = Counter("kelime_words_validated", "Words validated, by lexicon and verdict "
                             "(valid, or the reason for refusing).", ("lexicon", "verdict"),
                             registry=self.registry)
        self.loaded = Gauge("kelime_lexicons_loaded", "Lexicons loaded.", registry=self.registry)
        self.lexicon_words = Gauge("kelime_lexicon_words", "Valid words in each loaded lexicon.",
                                   ("lexicon", "version"), registry=self.registry)
        self.reloads = Gauge("kelime_reloads", "Reloads of the lexicons since the server started, "
                             "by outcome (reloaded, unchanged, refused).", ("outcome",),
                             registry=self.registry)
        self._children: dict[tuple, object] = {}  # .labels() costs ~1 µs: look each up once

    def _child(self, metric, *labels):
        key = (id(metric), *labels)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*labels)
        return child

    def lexicons_loaded(self, lexicons: dict) -> None:
        self.loaded.set(len(lexicons))
        self.lexicon_words.clear()  # a replaced build's series goes with it
        for lex in lexicons.values():
            self.lexicon_words.labels(lex.name, lex.info["version"]).set(lex.info["words"])

    def reloads_seen(self, counts: dict[str, int]) -> None:
        for outcome, n in counts.items():
            self.reloads.labels(outcome).set(n)

    def count_verdicts(self, lexicon: str, results: list[dict]) -> None:
        tally: dict[str | None, int] = {}
        for result in results:
            reason = result["reason"]
            tally[reason] = tally.get(reason, 0) + 1
        for reason, n in tally.items():
            self._child(self.words, lexicon, reason or "valid").inc(n)

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        self._child(self.requests, method, route, status).inc()
        self._child(self.latency, route).observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)

    def count_tally(self, lexicon: str, tally: dict[str | None, int]) -> None:
        """`count_verdicts` from a tally already made: {reason (None: valid): words}."""
        for reason, n in tally.items():
            self._child(self.words, lexicon, reason or "valid").inc(n)


class MetricsMiddleware:
    """Counts every HTTP request by its route template (not its path) and status, and times it."""

    def __init__(self, app, metrics: Metrics) -> None:
        self.app, self.metrics = app, metrics

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
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            self.metrics.observe(scope["method"], route, status[0], perf_counter() - start)
