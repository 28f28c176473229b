"""`kelime serve`'s parent process: it starts the workers, keeps them alive and tells them
what to serve, on public ground only (subprocess, selectors, signals).

- Each worker is `python -m kelime.service.worker`, a `uvicorn.Server` on the socket this
  process bound, with a channel to it (`pins.Channel`) that carries the pins when it starts
  and after every reload: a respawned worker serves what the others serve, and one that
  starts during a reload cannot miss it. Pinned builds are held (`kelime.lexicon.hold`),
  so `kelime build` does not prune them.
- A reload (SIGHUP, or a worker's POST /v1/admin/reload) verifies every lexicon before any
  worker is told (`reload.next_pins`); a worker's request is answered once every worker
  serves the new generation, or after DEADLINE s naming those that do not.
- A worker that exits before it serves, or within STEADY s of serving, is retried after a
  delay that doubles up to LAST_RETRY s while the others serve on (a crash loop costs one
  start a while, not a core); one that served longer is replaced at once. A reload that
  brings new builds retries a waiting slot at once, its delay forgotten: the new build may
  be what it lacked.
- A step of the loop that fails is logged and the loop goes on; the runtime folder is made
  again when removed; a SIGHUP at any moment is a reload, done once the workers run.
"""

from __future__ import annotations

import logging
import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from kelime.lexicon import hold

from .pins import Channel, Pins
from .reload import next_pins
from .runtime import TICK, Runtime, retire_apart
from .settings import Settings

log = logging.getLogger("kelime.service")
FIRST_RETRY, LAST_RETRY = 0.5, 30.0  # seconds before restarting a worker that failed to start
DEADLINE = 30.0                      # seconds a reload asked by a worker waits for them all
GRACE = 30.0                         # seconds the workers get to finish on SIGTERM
BOOT = 120.0                         # seconds a worker may take to start serving
STEADY = 10.0                        # seconds a worker serves before its death is no crash loop


@dataclass(eq=False)
class Slot:
    """One worker's place: the process in it (None between two), what it was started with
    and says it serves (0: still starting), and when to start the next one."""

    proc: subprocess.Popen[bytes] | None = None
    channel: Channel | None = None
    first: int = 0
    serving: int = 0
    since: float = 0.0   # when it said it serves
    delay: float = 0.0   # the last retry's delay (0: the last worker started fine)
    due: float = 0.0     # when to start the next worker, or to give up on this one's start

    def live(self) -> tuple[subprocess.Popen[bytes], Channel]:
        """The worker's process and channel: `start` sets both, or neither when it fails."""
        if self.proc is None or self.channel is None:
            raise RuntimeError("no worker was started in this slot")
        return self.proc, self.channel


class Supervisor:
    def __init__(self, settings: Settings, sock: socket.socket, workers: int,
                 runtime: Runtime, pins: Pins, hangups: list | None = None):
        self.settings, self.sock, self.runtime, self.pins = settings, sock, runtime, pins
        self.slots = [Slot() for _ in range(workers)]
        self.holds: dict[str, int] = {}        # build folder → descriptor holding it
        self._hold()
        # (the asking worker's channel, its id, pins, deadline): the channel, not the slot,
        # for a worker started in a slot numbers its asks from 1 again
        self.asks: list[tuple[Channel, int, Pins, float]] = []
        self.early = hangups if hangups is not None else []  # SIGHUPs before we listened
        self.hangups, self.stopping = 0, False
        self.selector = selectors.DefaultSelector()

    def _hold(self) -> None:
        wanted = set(self.pins.lexicons.values())
        for path in wanted - set(self.holds):
            self.holds[path] = hold(Path(path))
        for path in set(self.holds) - wanted:
            os.close(self.holds.pop(path))

    def run(self) -> None:
        wake, waker = socket.socketpair()
        waker.setblocking(False)
        self.selector.register(wake, selectors.EVENT_READ, None)
        signal.set_wakeup_fd(waker.fileno())  # a signal wakes the select up
        for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._signal)
        self.hangups += len(self.early)
        try:
            while not self.stopping:
                try:
                    self.step(wake)
                except Exception:  # never stop supervising: say what failed, go on
                    log.exception("kelime serve's supervisor: one step failed; going on")
                    time.sleep(TICK)
        finally:
            self.stop_workers()
            signal.set_wakeup_fd(-1)
            for fd in self.holds.values():
                os.close(fd)
            wake.close()
            waker.close()

    def _signal(self, signum, frame) -> None:
        if signum == signal.SIGHUP:
            self.hangups += 1
        else:
            self.stopping = True

    def step(self, wake: socket.socket) -> None:
        for key, _ in self.selector.select(TICK):
            if key.data is None:
                wake.recv(4096)  # the signals' wake-up bytes
            else:
                self.heard(key.data)
        self.reap()
        self.runtime.keep()
        for slot in self.slots:
            if time.monotonic() < slot.due or self.stopping:
                continue
            if slot.proc is None:
                self.start(slot)
            elif not slot.serving and slot.proc.poll() is None:  # hung while starting
                log.error("worker [%s] did not start in %.0f s; stopping it", slot.proc.pid,
                          BOOT)
                slot.proc.kill()
        if self.hangups and not self.stopping:
            self.hangups = 0
            log.info("Received SIGHUP, reloading the lexicons.")
            self.reload()
        self.answer()

    def start(self, slot: Slot) -> None:
        ours, theirs = socket.socketpair()
        fds = (self.sock.fileno(), theirs.fileno())
        # A worker is born with SIGHUP blocked (the mask outlives exec), so a SIGHUP sent to
        # the whole process group (a closed terminal, `timeout`, `kill -HUP -PGID`) is a
        # reload of ours, never the death of every worker at once. Ours arrives on unblock.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGHUP})
        try:
            slot.proc = subprocess.Popen([sys.executable, "-m", f"{__package__}.worker",
                                          *map(str, fds)], pass_fds=fds)
        except OSError as e:
            ours.close()
            self.retry(slot, f"cannot start a worker ({e})")
            return
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGHUP})
            theirs.close()
        slot.channel, slot.first, slot.serving = Channel(ours), self.pins.generation, 0
        slot.due = time.monotonic() + BOOT
        self.selector.register(ours, selectors.EVENT_READ, slot)
        self.tell(slot)

    def retry(self, slot: Slot, why: str) -> None:
        slot.delay = min(max(FIRST_RETRY, slot.delay * 2), LAST_RETRY)
        slot.due = time.monotonic() + slot.delay
        log.error("%s; retrying in %.1f s while the other workers keep serving", why,
                  slot.delay)

    def tell(self, slot: Slot) -> None:
        proc, channel = slot.live()
        try:
            channel.send(pins=self.pins.as_dict())
        except OSError as e:  # it stopped reading: a worker that cannot follow must go
            log.error("worker [%s] cannot be told the pins (%s); stopping it", proc.pid, e)
            proc.kill()

    def heard(self, slot: Slot) -> None:
        _, channel = slot.live()
        try:
            messages = channel.receive()
        except OSError:
            messages = None
        if messages is None:  # it is exiting: `reap` sees it go
            self.selector.unregister(channel.sock)
            return
        for message in messages:
            if "serving" in message:
                if not slot.serving:
                    slot.since = time.monotonic()
                slot.serving = message["serving"]
            elif "reload" in message:
                self.reload()
                self.asks.append((channel, message["reload"], self.pins,
                                  time.monotonic() + DEADLINE))

    def reap(self) -> None:
        for slot in self.slots:
            if slot.proc is None or slot.proc.poll() is None:
                continue
            proc, channel = slot.live()
            if channel.sock.fileno() in self.selector.get_map():
                self.selector.unregister(channel.sock)
            channel.close()
            slot.proc = slot.channel = None
            if self.stopping:
                continue  # the runtime folder goes with the supervisor
            retire_apart(self.runtime.metrics, proc.pid)
            why = f"worker [{proc.pid}] {ended(proc.returncode)}"
            served = time.monotonic() - slot.since
            if slot.serving and served >= STEADY:
                log.warning("%s; starting another on the pinned lexicons", why)
                slot.delay, slot.due = 0.0, time.monotonic()
            elif slot.serving:
                self.retry(slot, f"{why} {served:.1f} s after it began serving (a crash "
                                 "loop?)")
            else:  # a signal leaves no error of its own to read above
                self.retry(slot, f"{why} before it served" + (
                    ": it failed to start (its error is above)" if proc.returncode > 0
                    else ""))

    def stop_workers(self) -> None:
        self.stopping = True
        procs = [slot.proc for slot in self.slots if slot.proc is not None]
        for proc in procs:
            proc.terminate()
        deadline = time.monotonic() + GRACE
        for proc in procs:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.reap()

    def reload(self) -> None:
        """The next generation, sent to every worker: the data folder's current builds, or a
        refusal keeping the old ones."""
        self.pins = pins = next_pins(self.settings, self.pins)
        served = ", ".join(f"{n} {v}" for n, v in sorted(pins.versions.items()))
        for name, why in pins.refused.items():
            log.error("reload refused (%s): %s; still serving %s", name, why, served)
        if pins.outcome != "refused":
            self._hold()
            log.info("reload %s: serving %s", pins.outcome, served)
        if pins.outcome == "reloaded":
            for slot in self.slots:
                if slot.proc is None and slot.delay:
                    log.info("starting a worker at once on the new builds (it was waiting "
                             "%.1f s after failing)", slot.delay)
                    slot.delay, slot.due = 0.0, time.monotonic()
        for slot in self.slots:
            if slot.proc is not None:
                self.tell(slot)

    def answer(self) -> None:
        """Answer the reloads workers asked for once every worker serves their generation
        (a worker started since serves nothing older), or at their deadline."""
        for ask in list(self.asks):
            asker, ask_id, pins, deadline = ask
            lagging = {str(s.proc.pid): s.serving for s in self.slots if s.proc is not None
                       and max(s.serving, s.first) < pins.generation}
            if lagging and time.monotonic() < deadline and asker.fileno() != -1:
                continue
            self.asks.remove(ask)
            try:
                asker.send(answer=ask_id, pins=pins.as_dict(), lagging=lagging)
            except OSError:
                pass  # it died meanwhile (its channel closed): nobody waits for the answer


def ended(returncode: int) -> str:
    """How a worker ended, in words: "exited (1)", or the signal that killed it ("was
    killed by SIGKILL (the kernel's out-of-memory killer sends it too)")."""
    if returncode >= 0:
        return f"exited ({returncode})"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    oom = " (the kernel's out-of-memory killer sends it too)" if name == "SIGKILL" else ""
    return f"was killed by {name}{oom}"
