"""One process at a time: an exclusive `flock` on a lock file that names its holder.

The kernel drops the lock when its holder exits, however it exits (kill -9 included), so a
stale lock file never blocks anyone; the text in it only says who holds the lock now.

    with exclusive(Path("data/.build.lock"), timeout=600, busy=lambda who: BuildError(...)):
        ...
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def exclusive(path: Path, timeout: float, busy: Callable[[str], Exception],
              waiting: Callable[[str], None] = lambda holder: None) -> Iterator[None]:
    """Hold the lock at `path`; wait up to `timeout` seconds (0: not at all) for its holder,
    calling `waiting(holder)` once, then raise `busy(holder)`. `holder` reads like
    "pid 1234, started 2026-12-01 16:00:00"."""
    with open(path, "a+") as f:
        deadline, told = time.monotonic() + timeout, False
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                f.seek(0)
                holder = f.read().strip() or "another process"
                if time.monotonic() >= deadline:
                    raise busy(holder) from None
                if not told:
                    waiting(holder)
                    told = True
                time.sleep(0.05)
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()}, started {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        f.flush()
        try:
            yield
        finally:
            f.seek(0)
            f.truncate()
            fcntl.flock(f, fcntl.LOCK_UN)
