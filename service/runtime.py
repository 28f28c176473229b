"""`kelime serve`'s runtime folder in /tmp: the workers' Prometheus multiprocess files.

Locked (a shared flock) and marked while its supervisor lives: the next `kelime serve`
removes the marked folders nobody holds, those of supervisors that were killed (kill -9).
Made again when a tmp cleaner removes it. A dead worker's counters and histograms are added into one
`<kind>_dead.db` (`retire`), so the files do not grow with every worker that ever died
while the sums stay whole.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import signal
import tempfile
from pathlib import Path

from kelime.lexicon import hold

log = logging.getLogger("kelime.service")
PREFIX = "kelime-serve-"
MARK = "supervisor"  # the supervisor's pid: written once the folder is locked
TICK = 0.5  # seconds between two looks (the supervisor's)


class Runtime:
    """The folder (made after removing stale ones), held locked until `remove`."""

    def __init__(self) -> None:
        remove_stale()
        self.path = Path(tempfile.mkdtemp(prefix=PREFIX))
        self.metrics = self.path / "metrics"
        self.lock: int | None = None  # the held folder's descriptor
        self.problem: str | None = None  # what last kept the folder from being made
        self.keep()

    def keep(self) -> None:
        """Make the folder again if something removed it (a tmp cleaner); log what fails."""
        try:
            if not (self.metrics.is_dir() and (self.path / MARK).is_file()):
                self.path.mkdir(mode=0o700, exist_ok=True)
                if self.lock is not None:
                    os.close(self.lock)
                    log.warning("%s was removed: made it again (what the workers counted "
                                "before is no longer summed)", self.path)
                self.lock = hold(self.path)  # locked before it is marked: never stale
                (self.path / MARK).write_text(f"{os.getpid()}\n")
                self.metrics.mkdir(exist_ok=True)
            self.problem = None
        except OSError as e:
            if str(e) != self.problem:
                log.error("cannot keep %s (%s): a worker started now cannot count its "
                          "metrics; retrying every %.1f s", self.path, e, TICK)
            self.problem = str(e)

    def remove(self) -> None:
        if self.lock is not None:
            os.close(self.lock)
        shutil.rmtree(self.path, ignore_errors=True)


def remove_stale() -> None:
    """Remove the runtime folders of supervisors that died unseen (kill -9): marked, and
    unlocked. (An unmarked one may be a live server's of an older kelime, which locked
    nothing.)"""
    for path in Path(tempfile.gettempdir()).glob(PREFIX + "*"):
        if not (path / MARK).is_file():
            continue
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            continue
        try:
            if os.fstat(fd).st_uid == os.getuid():
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(path, ignore_errors=True)
                log.info("removed %s, left by a kelime serve that was killed", path)
        except BlockingIOError:
            pass  # a live server's
        finally:
            os.close(fd)


def retire_apart(folder: Path, pid: int) -> None:
    """`retire` in a child process: a write into a memory-mapped file on a full disk
    is a SIGBUS, which must not kill the supervisor."""
    child = os.fork()
    if child == 0:
        code = 1
        try:
            retire(str(folder), pid)
            code = 0
        finally:
            os._exit(code)
    status = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
    if status:
        log.error("the metrics of worker [%s] could not be added to those of the dead (%s; "
                  "is %s full?)", pid, f"exit {status}" if status > 0 else
                  signal.Signals(-status).name, folder)


def retire(folder: str, pid: int) -> None:
    """A dead worker's multiprocess files: its live gauges go (`mark_process_dead`), and its
    counters and histograms are added into one `<kind>_dead.db` and removed, so that the
    files do not grow with every worker that ever died while the sums stay whole."""
    from prometheus_client import multiprocess
    from prometheus_client.mmap_dict import MmapedDict

    multiprocess.mark_process_dead(pid, folder)
    for kind in ("counter", "histogram"):
        dead = os.path.join(folder, f"{kind}_{pid}.db")
        if not os.path.exists(dead):
            continue
        into = MmapedDict(os.path.join(folder, f"{kind}_dead.db"))
        try:
            for key, value, timestamp, _ in MmapedDict.read_all_values_from_file(dead):
                into.write_value(key, into.read_value(key)[0] + value, timestamp)
        finally:
            into.close()
        os.remove(dead)
