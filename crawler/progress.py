"""Live progress for a crawl: a rich bar on a terminal, plain log lines otherwise."""

from __future__ import annotations

import sys
import time

from scrapy import signals
from twisted.internet.task import LoopingCall

COUNTS = ("ok", "not_found", "failed", "retried")


def snapshot(stats: dict, elapsed: float) -> dict:
    """done/total, per-outcome counts, rate (words/s) and ETA (s) from crawler stats."""
    counts = {k: stats.get(f"kelime/{k}", 0) for k in COUNTS}
    done = counts["ok"] + counts["not_found"] + counts["failed"]
    total = max(stats.get("kelime/planned", 0), done)
    rate = done / elapsed if elapsed > 0 else 0.0
    eta = (total - done) / rate if rate > 0 else None
    waiting = stats.get("kelime/waiting_until", 0) - time.time()
    return {"done": done, "total": total, "rate": rate, "eta": eta, **counts,
            "waiting": waiting if waiting > 0 else 0.0, "why": stats.get("kelime/waiting_why")}


def waiting_text(s: dict) -> str:
    """"waiting 37s (HTTP 429; TDK asked for 40 s (Retry-After))", or "" when not waiting."""
    return f"waiting {_duration(s['waiting'])} ({s['why']})" if s.get("waiting") else ""


def plain_line(s: dict) -> str:
    eta = "?" if s["eta"] is None else _duration(s["eta"])
    waiting = waiting_text(s)
    return (f"crawl: {s['done']}/{s['total']} words, ok {s['ok']}, not_found {s['not_found']}, "
            f"failed {s['failed']}, retried {s['retried']}; {s['rate']:.2f}/s, ETA {eta}"
            + (f"; {waiting}" if waiting else ""))


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    h, m, s = seconds // 3600, seconds // 60 % 60, seconds % 60
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s" if m else f"{s}s"


class Progress:
    """Scrapy extension: refreshes the bar every 0.25 s (TTY) or logs every N seconds."""

    def __init__(self, crawler):
        self.crawler = crawler
        self.tty = sys.stderr.isatty()
        self.interval = crawler.settings.getfloat("KELIME_PROGRESS_INTERVAL")
        self.bar = self.task = self.loop = None
        crawler.signals.connect(self._opened, signal=signals.spider_opened)
        crawler.signals.connect(self._closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def _opened(self, spider):
        self.started = time.monotonic()
        if self.tty:
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
            from rich.progress import Progress as Bar

            self.bar = Bar(TextColumn("crawl"), BarColumn(), MofNCompleteColumn(),
                           TextColumn("{task.fields[rate]:.2f}/s"), TimeRemainingColumn(),
                           TextColumn("{task.fields[counts]}"), transient=True)
            self.task = self.bar.add_task("crawl", total=None, rate=0.0, counts="")
            self.bar.start()
        self.loop = LoopingCall(self._tick)
        self.loop.start(0.25 if self.tty else self.interval, now=False)

    def _tick(self):
        s = snapshot(self.crawler.stats.get_stats(), time.monotonic() - self.started)
        if self.bar is None:
            print(plain_line(s), file=sys.stderr, flush=True)
            return
        counts = " ".join(f"{k} {s[k]}" for k in COUNTS)
        if s["waiting"]:
            counts += f" · {waiting_text(s)}"
        self.bar.update(self.task, completed=s["done"], total=s["total"] or None,
                        rate=s["rate"], counts=counts)

    def _closed(self, spider, reason):
        if self.loop is not None and self.loop.running:
            self.loop.stop()
        if self.bar is not None:
            self.bar.stop()
