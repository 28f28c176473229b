"""A bounded waiting room for one kind of slow work run in threads (anagram and split
searches, reads of the TDK cache).

Three promises, whatever clients send:

* **Its own threads.** The work runs on a thread limiter of its own, so it never takes the
  threads other routes need (anyio's default pool: 40), nor waits for theirs.
* **A short wait or an answer at once.** A request that would wait longer than `most_wait`
  seconds (those ahead of it times the recent time of one, shared among the threads) is
  refused at once with 503 `busy` and Retry-After; one that was let in but still has not
  started after `most_wait` seconds (the estimate was wrong) is refused then. So every
  request is answered within `most_wait` plus the time of one piece of work, well inside a
  balancer's timeout (nginx's proxy_read_timeout, 10 s in deploy/nginx/kelime.conf), and a
  flood never makes a replica look dead.
* **Bounded memory.** At most `most_waiting` requests wait, each holding only what was
  checked before it came in (a parsed question, never a raw body).

Work its caller knows to be quick (a plain anagram question: a few ms at most) skips the
hop to a thread when nothing else runs or waits, and runs on the event loop in its turn
(`Gate.run`, ``quick=True``, or `Gate.now` when the caller has somewhere else to
send it); otherwise it waits like the rest.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from time import perf_counter

import anyio

from .errors import Unavailable

#: How much the newest duration weighs in the recent time of one piece of work.
WEIGHT = 0.2


class Gate:
    """`threads` at a time of one kind of work; a bounded wait for the others (see above)."""

    def __init__(self, what: str, *, threads: int, most_waiting: int, most_wait: float,
                 guess: float):
        self.what, self.most_waiting, self.most_wait = what, most_waiting, most_wait
        self.turns = anyio.CapacityLimiter(threads)     # who may run now
        self.threads = anyio.CapacityLimiter(threads)   # the threads they run in, theirs alone
        self.recent = guess    # seconds one piece of work took lately (a moving average)
        self.waiting = 0

    def expected_wait(self) -> float:
        """Seconds a request arriving now would wait for its turn."""
        ahead = self.waiting + self.turns.borrowed_tokens - self.turns.total_tokens + 1
        return max(0, ahead) * self.recent / self.turns.total_tokens

    def full(self, wait: float) -> bool:
        """Whether a request expecting to wait `wait` seconds is refused."""
        return self.waiting >= self.most_waiting or wait > self.most_wait

    def busy(self, wait: float) -> Unavailable:
        return Unavailable(
            "busy", f"{self.waiting} {self.what} are already waiting here, about {wait:.1f} s "
            f"of work, and none waits more than {self.most_wait:g} s; try again in a moment",
            {"waiting": self.waiting, "wait_limit_ms": round(self.most_wait * 1000)},
            headers={"Retry-After": str(max(1, math.ceil(wait)))})

    async def run(self, work: Callable[[], object],
                  ready: Callable[[], Awaitable[None]] | None = None, *, quick: bool = False):
        """`work()` in one of the gate's threads once it is this request's turn (after
        `ready()`, which may raise to give the turn up), or Unavailable `busy`.

        `quick` work (known to take a few milliseconds at most) runs on the event loop
        itself when no other work runs or waits: handing it to a thread and back costs more
        than the work (two wake-ups, each a wait for a core on a busy machine), and a thread
        holding the GIL would keep the loop waiting for up to the switch interval (5 ms)
        anyway. It is still one piece of work at a time (it holds a turn, and the loop runs
        nothing else meanwhile), and it never waits.
        """
        wait = self.expected_wait()
        if self.full(wait):
            raise self.busy(wait)
        if quick and not self.waiting:
            try:
                return self.now(work)
            except anyio.WouldBlock:
                pass  # another runs: wait for a turn like the rest
        self.waiting += 1
        try:
            with anyio.move_on_after(self.most_wait) as waited:
                await self.turns.acquire()
        finally:
            self.waiting -= 1
        if waited.cancelled_caught:
            raise self.busy(self.expected_wait())
        try:
            if ready is not None:
                await ready()
            began = perf_counter()
            try:
                return await anyio.to_thread.run_sync(work, limiter=self.threads)
            finally:
                self._took(began)
        finally:
            self.turns.release()

    def now(self, work: Callable[[], object]):
        """`work()` on the event loop in a turn taken at once, timed like the rest, when no
        other work runs or waits and `run` would not refuse it (quick work only: see
        `run`); anyio.WouldBlock otherwise, having done nothing."""
        if self.waiting or self.full(self.expected_wait()):
            raise anyio.WouldBlock
        self.turns.acquire_nowait()
        began = perf_counter()
        try:
            return work()
        finally:
            self._took(began)
            self.turns.release()

    def _took(self, began: float) -> None:
        """Count a piece of work that began at `began` in the recent time of one."""
        self.recent += WEIGHT * (perf_counter() - began - self.recent)
