"""`kelime serve`'s parent process: it starts the workers, keeps them alive and tells them
what to serve. Its own code on public ground: subprocess, selectors, signals.

- **Workers** are `python -m kelime.service.worker` processes, each a `uvicorn.Server` on
  the socket this process bound, with a channel to it (`pins.Channel`).
- **Pins.** It resolves the data folder's links to build folders, verifies them and sends
  them to every worker it starts, so a respawned worker serves what the others serve. The
  pinned builds are held (`kelime.lexicon.hold`), so `kelime build` does not prune them.
- **Reload** on SIGHUP, or when a worker asks (POST /v1/admin/reload): it verifies every
  lexicon of the data folder, then sends the next generation of pins (or a refusal that
  keeps the old builds) to every worker; a worker's request is answered once every worker
  serves that generation, or after DEADLINE s naming those that do not.
- **A worker that cannot start** (it exits before it serves) is retried after a delay that
  doubles up to LAST_RETRY s; the others go on serving. One that dies later is replaced
  at once.
- **Its own bad day**: one step of its loop that fails is logged and the loop goes on; its
  runtime folder (Prometheus' files) is made again when something removes it; a SIGHUP at
  any moment is a reload, done once the workers are started.
"""

from __future__ import annotations

import fcntl
import logging
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from kelime.lexicon import LexiconError, current_builds, hold

from .metrics import retire
from .pins import Channel, Pins
from .reload import load_builds
from .settings import Settings

log = logging.getLogger("kelime.service")
WORKER = f"{__package__}.worker"
FIRST_RETRY, LAST_RETRY = 0.5, 30.0  # seconds before restarting a worker that failed to start
TICK = 0.5                           # seconds between two looks at the workers and the folder
DEADLINE = 30.0                      # seconds a reload asked by a worker waits for them all
GRACE = 30.0                         # seconds the workers get to finish on SIGTERM
PREFIX = "kelime-serve-"


def verify(settings: Settings, pinned: Pins | None = None
           ) -> tuple[dict[str, Path], dict[str, str], dict[str, str]]:
    """(builds, versions, problems): the build folder and version of every lexicon in the
    data folder, each loaded once to verify it, and {name: why} for those that cannot be
    served (missing, half written, corrupt, or the pinned default lexicon gone)."""
    builds, problems = current_builds(settings.data)
    versions = {}
    for name, path in builds.items():
        try:
            versions[name] = load_builds({name: path}, {})[name].info["version"]
        except LexiconError as e:
            problems[name] = str(e)
    default = settings.default_lexicon
    if pinned and default in pinned.lexicons and default not in builds:
        problems.setdefault(default, f"the default lexicon {default!r} is gone from "
                                     f"{settings.data}")
    return builds, versions, problems


class Runtime:
    """The supervisor's folder in /tmp (Prometheus' multiprocess files), locked while it
    lives so that the next `kelime serve` removes those of supervisors that were killed."""

    def __init__(self) -> None:
        remove_stale()
        self.path = Path(tempfile.mkdtemp(prefix=PREFIX))
        self.metrics = self.path / "metrics"
        self.lock, self.problem = None, None
        self.keep()

    def keep(self) -> None:
        """Make the folder again if something removed it (a tmp cleaner); log what fails."""
        try:
            made = not self.metrics.is_dir()
            self.metrics.mkdir(mode=0o700, parents=True, exist_ok=True)
            if made or self.lock is None:
                if self.lock is not None:
                    os.close(self.lock)
                    log.warning("%s was removed: made it again (what the workers started "
                                "before it was removed have counted is no longer summed)",
                                self.path)
                self.lock = hold(self.path)
            self.problem = None
        except OSError as e:
            if str(e) != self.problem:
                log.error("cannot keep %s (%s): workers started now cannot count their "
                          "metrics; retrying every %.1f s", self.path, e, TICK)
            self.problem = str(e)

    def remove(self) -> None:
        if self.lock is not None:
            os.close(self.lock)
        shutil.rmtree(self.path, ignore_errors=True)


def remove_stale() -> None:
    """Remove the runtime folders of supervisors that died unseen (kill -9): no lock held."""
    for path in Path(tempfile.gettempdir()).glob(PREFIX + "*"):
        try:
            if path.stat().st_uid != os.getuid():
                continue
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            shutil.rmtree(path, ignore_errors=True)
            log.info("removed %s, left by a kelime serve that was killed", path)
        except BlockingIOError:
            pass  # a live server's
        finally:
            os.close(fd)


@dataclass(eq=False)
class Worker:
    proc: subprocess.Popen
    channel: Channel
    first: int          # the generation it was started with
    serving: int = 0    # the generation it says it serves (0: still starting)


@dataclass(eq=False)
class Slot:
    worker: Worker | None = None
    delay: float = 0.0   # the last retry's delay (0: the last worker started fine)
    due: float = 0.0     # when to start the next worker


@dataclass(eq=False)
class Ask:
    worker: Worker
    id: int
    pins: Pins
    deadline: float


class Supervisor:
    def __init__(self, settings: Settings, sock: socket.socket, workers: int,
                 runtime: Runtime, builds: dict[str, Path], versions: dict[str, str],
                 hangups: list | None = None):
        self.settings, self.sock, self.runtime = settings, sock, runtime
        self.slots = [Slot() for _ in range(workers)]
        self.pins = Pins(1, "started", {n: str(p) for n, p in builds.items()}, versions)
        self.holds: dict[str, int] = {}        # build folder → descriptor holding it
        self._hold(builds)
        self.asks: list[Ask] = []
        self.early = hangups if hangups is not None else []  # SIGHUPs before we listened
        self.hangups, self.stopping = 0, False
        self.selector = selectors.DefaultSelector()

    def _hold(self, builds: dict[str, Path]) -> None:
        wanted = {str(p) for p in builds.values()}
        for path in wanted - set(self.holds):
            self.holds[path] = hold(Path(path))
        for path in set(self.holds) - wanted:
            os.close(self.holds.pop(path))

    # --- the loop ---------------------------------------------------------------------------

    def run(self) -> None:
        wake, waker = socket.socketpair()
        waker.setblocking(False)
        self.selector.register(wake, selectors.EVENT_READ, None)
        signal.set_wakeup_fd(waker.fileno())
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
                while wake.recv(64) == 64:  # the signals' wake-up bytes
                    pass
            else:
                self.heard(*key.data)
        self.reap()
        self.runtime.keep()
        now = time.monotonic()
        for slot in self.slots:
            if slot.worker is None and now >= slot.due and not self.stopping:
                self.start(slot)
        if self.hangups and not self.stopping:
            self.hangups = 0
            log.info("Received SIGHUP, reloading the lexicons.")
            self.reload()
        self.answer()

    # --- workers ----------------------------------------------------------------------------

    def workers(self) -> list[Worker]:
        return [s.worker for s in self.slots if s.worker is not None]

    def start(self, slot: Slot) -> None:
        ours, theirs = socket.socketpair()
        fds = (self.sock.fileno(), theirs.fileno())
        try:
            proc = subprocess.Popen([sys.executable, "-m", WORKER, *map(str, fds)],
                                    pass_fds=fds, start_new_session=True)
        except OSError as e:
            ours.close()
            self.retry(slot, f"cannot start a worker ({e})")
            return
        finally:
            theirs.close()
        slot.worker = Worker(proc, Channel(ours), self.pins.generation)
        self.selector.register(ours, selectors.EVENT_READ, (slot, slot.worker))
        self.tell(slot.worker)

    def retry(self, slot: Slot, why: str) -> None:
        slot.delay = min(max(FIRST_RETRY, slot.delay * 2), LAST_RETRY)
        slot.due = time.monotonic() + slot.delay
        log.error("%s; retrying in %.1f s while the other workers keep serving", why,
                  slot.delay)

    def tell(self, worker: Worker) -> None:
        try:
            worker.channel.send(pins=self.pins.as_dict())
        except OSError as e:  # it stopped reading: a worker that cannot follow must go
            log.error("worker [%s] cannot be told the pins (%s); stopping it",
                      worker.proc.pid, e)
            worker.proc.kill()

    def heard(self, slot: Slot, worker: Worker) -> None:
        try:
            messages = worker.channel.receive()
        except OSError:
            messages = None
        if messages is None:  # it is exiting: `reap` sees it go
            self.selector.unregister(worker.channel.sock)
            return
        for message in messages:
            if "serving" in message:
                if not worker.serving:
                    slot.delay = 0.0
                worker.serving = message["serving"]
            elif "reload" in message:
                self.reload()
                self.asks.append(Ask(worker, message["reload"], self.pins,
                                     time.monotonic() + DEADLINE))

    def reap(self) -> None:
        for slot in self.slots:
            worker = slot.worker
            if worker is None or worker.proc.poll() is None:
                continue
            slot.worker = None
            if worker.channel.sock.fileno() in self.selector.get_map():
                self.selector.unregister(worker.channel.sock)
            worker.channel.close()
            try:
                retire(str(self.runtime.metrics), worker.proc.pid)
            except OSError as e:
                log.error("the metrics of worker [%s] could not be kept: %s",
                          worker.proc.pid, e)
            if self.stopping:
                continue
            why = f"worker [{worker.proc.pid}] exited ({worker.proc.returncode})"
            if worker.serving:
                log.warning("%s; starting another on the pinned lexicons", why)
                slot.due = time.monotonic()
            else:
                self.retry(slot, f"{why} before it served: it failed to start (its error is "
                                 f"above)")

    def stop_workers(self) -> None:
        self.stopping = True
        workers = self.workers()
        for worker in workers:
            worker.proc.terminate()
        deadline = time.monotonic() + GRACE
        for worker in workers:
            try:
                worker.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                worker.proc.kill()
                worker.proc.wait()
        self.reap()

    # --- reloads ----------------------------------------------------------------------------

    def reload(self) -> None:
        """The next generation, sent to every worker: the data folder's current builds, or a
        refusal keeping the old ones."""
        old = self.pins
        builds, versions, problems = verify(self.settings, old)
        if problems:
            outcome = "refused"
            pins = replace(old, outcome=outcome, refused=problems)
            for name, why in problems.items():
                log.error("reload refused (%s): %s; still serving %s", name or "data", why,
                          _versions(old.versions))
        else:
            outcome = "unchanged" if builds == old.paths() else "reloaded"
            self._hold(builds)
            pins = Pins(old.generation, outcome, {n: str(p) for n, p in builds.items()},
                        versions)
            log.info("reload %s: serving %s", outcome, _versions(versions))
        reloads = {**old.reloads, outcome: old.reloads.get(outcome, 0) + 1}
        self.pins = replace(pins, generation=old.generation + 1, reloads=reloads)
        for worker in self.workers():
            self.tell(worker)

    def answer(self) -> None:
        """Answer the reloads workers asked for once every worker serves their generation
        (a worker started since serves nothing older), or at their deadline."""
        now = time.monotonic()
        for ask in list(self.asks):
            lagging = {str(w.proc.pid): w.serving for w in self.workers()
                       if max(w.serving, w.first) < ask.pins.generation}
            if lagging and now < ask.deadline and ask.worker.proc.poll() is None:
                continue
            self.asks.remove(ask)
            try:
                ask.worker.channel.send(answer=ask.id, pins=ask.pins.as_dict(),
                                        lagging=lagging)
            except OSError:
                pass  # it died meanwhile: nobody waits for the answer


def _versions(versions: dict[str, str]) -> str:
    return ", ".join(f"{n} {v}" for n, v in sorted(versions.items())) or "no lexicon"
