"""`kelime serve`: gunicorn's arbiter runs uvicorn workers; kelime adds which builds they
serve (`reload.py`).

- The master (`Serve`) loads, verifies and pins every lexicon of the data folder, and checks
  the games and the report store, before any worker starts (`app.prepare`); workers are
  forked with them, so a replacement serves what the others serve and never reads the disk.
  It holds the pinned build folders (`kelime.lexicon.folder.Holds`): `kelime build` never
  prunes them.
- SIGHUP reloads in place (none restarted), taken from the first lines of `kelime serve` on
  (held back until gunicorn is ready: `kelime.cli`); workers ignore it, so one sent to the
  process group is a reload.
  gunicorn's other signals keep their meaning (TERM, INT, QUIT, TTIN, TTOU); TTIN and TTOU
  sent while it starts are held back too, and are gunicorn's once it is ready.
- gunicorn replaces a worker that exits, and kills and replaces one that misses its
  heartbeat for KELIME_WORKER_TIMEOUT s (hung, SIGSTOPped); a worker whose master died stops.
- The runtime folder (/tmp/kelime-serve-PID-*): the pins, what each worker serves, the
  Prometheus files; made again when removed, removed at exit, and one left by a master
  killed with -9 removed by the next start.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any, ClassVar

import orjson
from gunicorn.app.base import BaseApplication
from uvicorn_worker import UvicornWorker

from kelime.lexicon.folder import Holds
from kelime.lexicon.pins import Pins, next_pins

from .control import PREFIX, register
from .reload import PINS, WORKERS, Master, alive, own_folder, write_whole
from .settings import Settings, uvicorn_options

log = logging.getLogger("kelime.service")
METRICS = "PROMETHEUS_MULTIPROC_DIR"  # prometheus_client's multiprocess folder
HOOKS = ("when_ready", "pre_fork", "post_fork", "child_exit", "on_exit")  # Serve's methods


class Worker(UvicornWorker):
    """A uvicorn worker that ignores SIGHUP and stops when its master dies."""

    SIGNALS: ClassVar = [s for s in UvicornWorker.SIGNALS if s != signal.SIGHUP]  # not SIG_DFL

    def init_signals(self) -> None:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        super().init_signals()

    async def callback_notify(self) -> None:
        if os.getppid() != self.ppid:  # the master died (kill -9): never serve on alone
            self.log.error("worker %d: the master has gone; stopping", os.getpid())
            os.kill(os.getpid(), signal.SIGTERM)
        await super().callback_notify()


class Serve(BaseApplication):
    """gunicorn's arbiter over kelime's app, with the pins as the master's own state."""

    def __init__(self, settings: Settings, binds: list[str], workers: int, pins: Pins,
                 runtime: Path, app: Callable[[Pins, Master], Any]):
        self.settings, self.binds, self.workers, self.pins = settings, binds, workers, pins
        self.runtime, self.app, self.holds = runtime, app, Holds()
        self.master, self.reloading, self.again = os.getpid(), False, False
        self.since = time.monotonic()
        self.arbiter: Any = None  # gunicorn's Arbiter, once it listens
        self.hold(pins)
        publish(runtime, pins, self.since, workers)
        super().__init__()

    def load_config(self) -> None:
        worker = type("Worker", (Worker,), {"CONFIG_KWARGS": uvicorn_options(self.settings)})
        options = {"bind": self.binds, "workers": self.workers, "worker_class": worker,
                   "timeout": self.settings.worker_timeout, "umask": 0o007,
                   "graceful_timeout": 2 * self.settings.worker_timeout,
                   "keepalive": self.settings.keepalive_timeout, "proc_name": "kelime",
                   "control_socket_disable": True, "errorlog": "-", "loglevel": "info",
                   **{hook: getattr(self, hook) for hook in HOOKS}}
        for name, value in options.items():
            if name in self.cfg.settings:  # control_socket_disable: gunicorn 25.1 and later
                self.cfg.set(name, value)

    def load(self):  # in each worker: the app the master prepared (`app.prepare`)
        return self.app(self.pins, Master(self.master, self.runtime, self.settings.worker_timeout))

    def when_ready(self, server) -> None:
        """SIGHUP is kelime's reload from now on (gunicorn's restarts every worker); those,
        TTINs and TTOUs held back while starting (`kelime.cli`) arrive now."""
        self.arbiter = server
        signal.signal(signal.SIGHUP, self.hangup)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGHUP, signal.SIGTTIN,
                                                    signal.SIGTTOU})  # as kelime.cli blocks

    def hangup(self, signum, frame) -> None:
        if os.getpid() != self.master:  # a worker just forked, before its own handlers
            return
        self.again = True
        if self.reloading:  # one more after the one under way
            return
        self.reloading = True
        try:
            while self.again:
                self.again = False
                self.reload()
        except Exception:  # (in a signal handler, in gunicorn's loop): never stop serving
            log.exception("reload failed; still serving %s", self.pins.versions)
        finally:
            self.reloading = False

    def reload(self) -> None:
        since = time.monotonic()
        pins = next_pins(self.settings.data, self.settings.default_lexicon, self.pins,
                         self.settings.keep_versions)
        for name, why in pins.refused.items():
            log.error("reload refused (%s): %s; still serving %s", name, why, pins.described)
        self.hold(self.pins, pins)  # the new builds too, before a worker loads them
        if publish(self.runtime, pins, since, self.arbiter.num_workers):  # else: unchanged
            self.pins, self.since = pins, since
            if pins.outcome != "refused":
                log.info("reload %s: serving %s", pins.outcome, pins.described)
                for why in pins.skipped:
                    log.warning("%s", why)
        self.hold(self.pins)

    def hold(self, *served: Pins) -> None:
        self.holds.keep(path for pins in served for path in pins.loaded())

    def post_fork(self, server, worker: Worker) -> None:  # the master's to hold, not theirs
        for fd in self.holds.fds.values():
            os.close(fd)

    def pre_fork(self, server, worker: Worker) -> None:
        if not (self.runtime / "metrics").is_dir():  # a tmp cleaner removed it: again
            publish(self.runtime, self.pins, self.since, server.num_workers)

    def child_exit(self, server, worker: Worker) -> None:
        with suppress(OSError):  # (only in its own folder: `own_folder`)
            (own_folder(self.runtime) / WORKERS / str(worker.pid)).unlink(missing_ok=True)

    def on_exit(self, server) -> None:  # a SIGHUP now would make the folder again, and
        signal.signal(signal.SIGHUP, signal.SIG_IGN)  # end Python's finalisation (SIG_DFL)
        shutil.rmtree(self.runtime, ignore_errors=True)


def run(settings: Settings, binds: list[str], workers: int) -> None:
    """Serve the data folder's lexicons until SIGTERM/SIGINT; LexiconError (what to run)."""
    if not log.handlers:  # before gunicorn's own logging starts: its style
        logging.basicConfig(format="[%(levelname)s] %(message)s", level=logging.INFO)
    remove_stale()
    runtime = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
    record: Path | None = None
    try:
        os.environ[METRICS] = str(runtime / "metrics")  # before prometheus_client loads
        from .app import prepare  # loaded once, here: the workers fork with it

        pins, app = prepare(settings)  # no build, a broken game or report store: it stops
        server = Serve(settings, binds, workers, pins, runtime, app)
        record = register(settings.data, runtime, binds)  # for `kelime reload`
        server.run()
    finally:
        if record is not None and record.stem == str(os.getpid()):  # not a worker's exit
            record.unlink(missing_ok=True)
        os.environ.pop(METRICS, None)
        shutil.rmtree(runtime, ignore_errors=True)


def publish(runtime: Path, pins: Pins, since: float, workers: int) -> bool:
    """The master's pins, for its workers (`Pins.record`), the runtime folder made again if
    removed; False when the disk refuses."""
    try:
        for folder in ("metrics", WORKERS):
            (own_folder(runtime) / folder).mkdir(mode=0o700, exist_ok=True)
        write_whole(runtime / PINS, orjson.dumps(pins.record(since, workers)))
    except OSError as e:  # a full disk costs reloads and metrics, never a worker
        log.error("cannot write in %s (%s): reloads and metrics wait until it can", runtime, e)
        return False
    return True


def remove_stale() -> None:
    """Remove the runtime folders of masters that died unseen (kill -9), named by the pid."""
    for stale in Path(tempfile.gettempdir()).glob(PREFIX + "*"):
        pid, dash, _ = stale.name.removeprefix(PREFIX).partition("-")
        with suppress(OSError):
            if dash and pid.isdigit() and not alive(int(pid)) \
                    and stale.stat().st_uid == os.getuid():
                shutil.rmtree(stale, ignore_errors=True)
                log.info("removed %s, left by a kelime serve that was killed", stale)
