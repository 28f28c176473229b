"""How a reload switches every worker in place to the builds the master pins.

The master of `kelime serve` (`serve.py`) pins builds by `kelime.lexicon.pins.next_pins` and
writes them to `pins.json` in its runtime folder (`Pins.record`: generation, the builds'
folders and versions, the refusal, the worker count). Each worker looks at it every FOLLOW
s, loads a newer generation beside the one it serves (requests answered meanwhile), swaps
one reference (each request reads `app.state.kelime` once) and writes the generation it
serves to `workers/PID`; one that cannot load what the master verified stops, and its
replacement is forked with the builds in memory. POST /v1/admin/reload (`routes/admin.py`)
and `kelime reload` send the master a SIGHUP and wait until every worker serves the new
generation (`reloaded`), or name those that do not. An app without the master (tests,
`uvicorn --factory`) reloads in place (`state.Served`).
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import stat
import time
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import orjson

from kelime.lexicon import Lexicon, LexiconError
from kelime.lexicon.pins import Pins, from_record, read_record

from .state import Served

log = logging.getLogger("uvicorn.error")  # where uvicorn workers log
PINS, WORKERS = "pins.json", "workers"  # in the master's runtime folder
FOLLOW = 0.2  # seconds between a worker's looks at the pins
POLL = 0.02   # seconds between an admin reload's looks at the workers


def write_whole(path: Path, data: bytes) -> Path:
    """Write `path` whole (by a rename): a reader never sees half of it."""
    (new := path.with_name(f".{path.name}.new")).write_bytes(data)
    os.replace(new, path)
    return path


def own_folder(path: Path) -> Path:
    """`path`, made (mode 0700) when missing; PermissionError when it is not a folder of this
    user's that no one else may write in. The runtime folder a tmp cleaner removed is made again
    at the same name, in /tmp where anyone may make it first: theirs, its pins would say which
    builds every worker loads, and its metrics files where a worker writes."""
    with suppress(FileExistsError):
        path.mkdir(mode=0o700)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise PermissionError(errno.EACCES, f"not this user's own folder (owner uid "
                              f"{info.st_uid}, {stat.filemode(info.st_mode)}): remove it, or "
                              f"restart kelime serve", str(path))
    return path


def read(path: Path) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None  # not written yet, or its folder removed (made again by the master)


def alive(pid: int) -> bool:
    with suppress(PermissionError):  # another user's: alive
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
    return True


def stopped(pid: int) -> bool:
    """Whether process `pid` is stopped (SIGSTOP, a debugger): it acts on no signal, a
    reload's SIGHUP included, until SIGCONT."""
    with suppress(OSError, ValueError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat[stat.rindex(")") + 2] in "Tt"
    return False


@dataclass(frozen=True)
class Master:
    """The `kelime serve` master that forked this worker."""

    pid: int
    runtime: Path
    wait: float  # seconds an admin reload waits for it and for every worker


class Reloader(Served):
    """What a worker of `kelime serve` serves: it follows its master's pins (`follow`), and a
    reload is the master's (`reload`)."""

    def __init__(self, app, settings, metrics, pins: Pins, master: Master):
        super().__init__(app, settings, metrics, pins)
        self.master, self.foreign = master, False  # foreign: its runtime folder (`trusted`)

    async def follow(self) -> None:
        """Switch to each newer generation the master pins; say which one is served. A
        worker that cannot load what the master verified (changed on disk since), or meets
        any other surprise (out of memory, no thread to load in), stops: its replacement is
        forked with the master's builds, never left behind on old ones."""
        seen, mine = None, self.master.runtime / WORKERS / str(os.getpid())
        found: Any = None  # the master's last record seen
        try:
            while True:
                if self.trusted():
                    with suppress(OSError):
                        if (stamp := os.stat(self.master.runtime / PINS).st_mtime_ns) != seen:
                            seen, found = stamp, read_record(self.master.runtime / PINS)
                            if found and found["generation"] > self.pins.generation:
                                self.swap(await anyio.to_thread.run_sync(
                                    self.load, found, self.pins.loaded()))
                    if read(mine) != self.pins.generation:  # a new one, or the folder removed
                        with suppress(OSError):
                            mine.parent.mkdir(mode=0o700, exist_ok=True)
                            mine.write_bytes(b"%d" % self.pins.generation)
                await anyio.sleep(FOLLOW)
        except LexiconError as e:
            log.error("worker %d cannot switch to generation %d (%s); stopping: its "
                      "replacement gets the builds from the master", os.getpid(),
                      found["generation"], e)
        except Exception:
            log.exception("worker %d cannot follow its master's pins; stopping", os.getpid())
        os.kill(os.getpid(), signal.SIGTERM)

    def trusted(self) -> bool:
        """Whether the runtime folder is the master's own (`own_folder`; made again when a
        cleaner removed it): pins are read, and markers written, only there. One someone
        else made is said once, and followed again once it is gone."""
        try:
            own_folder(self.master.runtime)
        except PermissionError as e:
            if not self.foreign:
                log.error("worker %d follows no pins while %s is not its master's (%s); it "
                          "serves %s", os.getpid(), self.master.runtime, e.strerror,
                          self.pins.described)
            self.foreign = True
            return False
        except OSError:  # (a full disk: looked at again)
            return False
        self.foreign = False
        return True

    def load(self, found: dict[str, Any], keep: dict[Path, Lexicon]) -> Pins:
        """The builds of the master's record `found`, each board lexicon's word graph built
        (`routes.board.warm`) before they are served."""
        from .routes.board import warm

        pins = from_record(found, keep)
        warm(pins, self.app.state.kelime.games.values(), self.settings.default_lexicon)
        return pins

    async def reload(self) -> dict[str, Any]:
        """The master's outcome (`reloaded`), once every worker serves the new builds."""
        if os.getppid() != self.master.pid:  # killed (-9): its pid may be another's now
            return {"outcome": "timeout", "versions": {}, "refused": {},
                    "why": f"the master (pid {self.master.pid}) is gone"}
        return await anyio.to_thread.run_sync(reloaded, self.master.pid, self.master.runtime,
                                              self.master.wait)


def reloaded(pid: int, runtime: Path, wait: float) -> dict[str, Any]:
    """SIGHUP to the master `pid` (its runtime folder `runtime`) and its outcome once every
    worker serves the new generation (`kelime reload`, POST /v1/admin/reload): {"outcome":
    reloaded | unchanged | refused | timeout, "generation", "versions", "refused"}, with
    "why" (and "lagging": worker pid → generation) when it is a timeout."""
    asked = time.monotonic()
    deadline = asked + wait
    os.kill(pid, signal.SIGHUP)
    while (found := read_record(runtime / PINS)) is None or found["since"] < asked:
        if time.monotonic() > deadline or not alive(pid):
            then = (f"it is stopped (SIGSTOP): `kill -CONT {pid}` and it reloads"
                    if stopped(pid) else "its log says why")
            return {"outcome": "timeout", "versions": {}, "refused": {},
                    "why": f"the master (pid {pid}) did not reload within {wait:g} s; {then}"}
        time.sleep(POLL)
    done = {key: found[key] for key in ("outcome", "generation", "versions", "refused")}
    while done["outcome"] != "refused":
        markers: list[Path] = []
        with suppress(OSError):  # (removed meanwhile: the workers make it again)
            markers = list((runtime / WORKERS).iterdir())
        serving = {p.name: read(p) for p in markers if p.name.isdigit() and alive(int(p.name))}
        lagging = {w: g for w, g in serving.items() if not isinstance(g, int)
                   or g < done["generation"]}
        if not lagging and len(serving) >= found["workers"]:
            break
        if time.monotonic() > deadline:
            return {**done, "outcome": "timeout", "lagging": lagging,
                    "why": f"generation {done['generation']} was verified and pinned, but "
                           f"worker(s) {', '.join(lagging) or '(not started yet)'} did not "
                           f"switch within {wait:g} s and may still answer from the old "
                           f"builds; the server's log says why"}
        time.sleep(POLL)
    return done
