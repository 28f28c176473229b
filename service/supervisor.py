"""`kelime serve`'s parent process: uvicorn's worker supervisor, taught three things.

- **Pins.** It resolves the data folder's links to build folders once, verifies them and
  writes them to the pin file (`pins`); workers load exactly those, so a respawned worker
  serves the version the others serve.
- **Reload on SIGHUP** (and on POST /v1/admin/reload, which signals it): it verifies the
  folder's current builds, writes the next generation of pins (or a refusal, keeping the
  old ones) and tells each worker (SIGUSR1), which switches in place; no worker restarts.
  The pinned builds are held (`kelime.lexicon.hold`), so `kelime build` does not prune them.
- **A worker that cannot start does not take the others down**: it is retried with a
  growing delay, where uvicorn would stop every worker.

One worker or many, `kelime serve` always runs under this supervisor.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from dataclasses import replace
from pathlib import Path

from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors.multiprocess import Multiprocess, Process

from kelime.lexicon import LexiconError, current_builds, hold

from .pins import Pins, write_pins
from .reload import RELOAD_SIGNAL, load_builds
from .settings import Settings

log = logging.getLogger("uvicorn.error")
FIRST_RETRY, LAST_RETRY = 0.5, 30.0  # seconds before restarting a worker that failed to start


class Supervisor(Multiprocess):
    def __init__(self, config, sockets, settings: Settings):
        super().__init__(config, sockets)
        self.settings, self.path = settings, Path(settings.pins)
        self.pins: Pins | None = None
        self.holds: dict[str, int] = {}           # build folder → descriptor holding it
        self.retry: dict[int, tuple[float, float]] = {}  # worker slot → (when, next delay)

    # --- pins -------------------------------------------------------------------------------

    def _hold(self, builds: dict[str, Path]) -> None:
        wanted = {str(p) for p in builds.values()}
        for path in wanted - set(self.holds):
            self.holds[path] = hold(Path(path))
        for path in set(self.holds) - wanted:
            os.close(self.holds.pop(path))

    def _check(self, builds: dict[str, Path], problems: dict[str, str]
               ) -> tuple[dict[str, str], dict[str, str]]:
        """(problems with serving `builds`, the version of each): each new build is loaded
        once here to verify it; a pinned one keeps its pinned version."""
        problems, versions = dict(problems), {}
        default = self.settings.default_lexicon
        pinned = self.pins.paths() if self.pins else {}
        if default in pinned and default not in builds and default not in problems:
            problems[default] = (f"the default lexicon {default!r} is gone from "
                                 f"{self.settings.data}")
        for name, path in builds.items():
            if pinned.get(name) == path:
                versions[name] = self.pins.versions[name]
                continue
            try:
                versions[name] = load_builds({name: path}, {})[name].info["version"]
            except LexiconError as e:
                problems[name] = str(e)
        return problems, versions

    def pin_initial(self, builds: dict[str, Path], versions: dict[str, str]) -> None:
        """Pin the builds `kelime serve` verified before starting."""
        self._hold(builds)
        self.pins = Pins(1, os.getpid(), "started", {n: str(p) for n, p in builds.items()},
                         versions)
        write_pins(self.path, self.pins)

    def reload(self) -> Pins:
        """The next generation: the folder's current builds, or a refusal keeping the old."""
        builds, problems = current_builds(self.settings.data)
        problems, versions = self._check(builds, problems)
        old = self.pins
        reloads = dict(old.reloads)
        if problems:
            outcome = "refused"
            for name, why in problems.items():
                log.error("reload refused (%s): %s; still serving %s", name or "data", why,
                          _versions(old.versions))
            pins = replace(old, generation=old.generation + 1, outcome=outcome,
                           refused=problems)
        else:
            outcome = "unchanged" if builds == old.paths() else "reloaded"
            self._hold(builds)
            pins = Pins(old.generation + 1, os.getpid(), outcome,
                        {n: str(p) for n, p in builds.items()}, versions)
            log.info("reload %s: serving %s", outcome, _versions(versions))
        reloads[outcome] = reloads.get(outcome, 0) + 1
        self.pins = replace(pins, reloads=reloads)
        write_pins(self.path, self.pins)
        self.notify()
        return self.pins

    def notify(self) -> None:
        for process in self.processes:
            if process.process.is_alive() and process.pid:
                try:
                    os.kill(process.pid, RELOAD_SIGNAL)
                except ProcessLookupError:
                    pass

    def handle_hup(self) -> None:  # uvicorn would restart every worker
        log.info("Received SIGHUP, reloading the lexicons.")
        self.reload()

    # --- workers ----------------------------------------------------------------------------

    def keep_subprocess_alive(self) -> None:
        if self.should_exit.is_set():
            return
        now = time.monotonic()
        for idx, process in enumerate(self.processes):
            if idx in self.retry:
                when, delay = self.retry[idx]
                if now < when:
                    continue
                self._respawn(idx, delay)
                continue
            if process.is_alive(timeout=self.config.timeout_worker_healthcheck):
                continue
            process.kill()
            process.join()
            if self.should_exit.is_set():
                return
            if process.exitcode == STARTUP_FAILURE:
                log.error("worker [%s] failed to start (its error is above); retrying in "
                          "%.1f s while the other workers keep serving", process.pid,
                          FIRST_RETRY)
                self.retry[idx] = (now + FIRST_RETRY, FIRST_RETRY)
                continue
            log.info("worker [%s] died (exit %s); starting another on the pinned lexicons",
                     process.pid, process.exitcode)
            self._respawn(idx, 0.0)

    def _respawn(self, idx: int, delay: float) -> None:
        process = Process(self.config, self.sockets)
        process.start()
        self.processes[idx] = process
        if delay:  # it failed before: see whether it starts this time before trusting it
            if process.wait_until_ready(self.config.timeout_worker_healthcheck,
                                        self.should_exit):
                self.retry.pop(idx, None)
                return
            process.kill()
            process.join()
            delay = min(delay * 2, LAST_RETRY)
            log.error("worker failed to start again; retrying in %.1f s", delay)
            self.retry[idx] = (time.monotonic() + delay, delay)

    def run(self) -> None:
        try:
            super().run()
        finally:
            for fd in self.holds.values():
                os.close(fd)
            self.holds.clear()


def _versions(versions: dict[str, str]) -> str:
    return ", ".join(f"{n} {v}" for n, v in sorted(versions.items())) or "no lexicon"


def watch_parent(supervisor: int) -> None:
    """In a worker: exit when the supervisor dies (so orphans never keep the port)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != supervisor:  # it died before prctl took effect
        os.kill(os.getpid(), signal.SIGTERM)
