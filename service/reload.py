"""How a reload switches every worker in place to the builds the master pins.

The master of `kelime serve` (`serve.py`) pins builds by `kelime.lexicon.pins.next_pins` and
writes them to `pins.json` in its runtime folder (KEYS: generation, the builds' folders and
versions, the refusal, the worker count). Each worker looks at it every FOLLOW s, loads a
newer generation beside the one it serves (requests answered meanwhile), swaps one reference
(each request reads `app.state.kelime` once) and writes the generation it serves to
`workers/PID`; one that cannot load what the master verified stops, and its replacement is
forked with the builds in memory. POST /v1/admin/reload sends the master a SIGHUP and
answers once every worker serves the new generation, or names those that do not. An app
without the master (tests, `uvicorn --factory`) reloads in place (`reload_here`).
"""

from __future__ import annotations

import logging
import os
import signal
import time
from contextlib import suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio
import orjson

from kelime.lexicon import LexiconError
from kelime.lexicon.pins import Pins, load_pins, next_pins

from .errors import ServiceError

log = logging.getLogger("uvicorn.error")  # where uvicorn workers log
PINS, WORKERS = "pins.json", "workers"  # in the master's runtime folder
KEYS = {"generation", "since", "outcome", "workers", "lexicons", "versions", "refused",
        "reloads", "older", "held"}
FOLLOW = 0.2  # seconds between a worker's looks at the pins
POLL = 0.02   # seconds between an admin reload's looks at the workers


class ReloadRefused(ServiceError):
    """The data folder's current builds cannot be served; the old ones still are."""

    family = 409


class ReloadTimeout(ServiceError):
    family = 504


def write_pins(runtime: Path, pins: Pins, since: float, workers: int) -> None:
    """The master's pins, for its workers (written whole: a reader never sees half)."""
    (runtime / WORKERS).mkdir(mode=0o700, parents=True, exist_ok=True)
    (runtime / f"{PINS}.new").write_bytes(orjson.dumps({
        "generation": pins.generation, "since": since, "outcome": pins.outcome,
        "workers": workers, "lexicons": {n: str(p) for n, p in pins.paths().items()},
        "versions": pins.versions, "refused": pins.refused, "reloads": pins.reloads,
        "older": {n: [str(p) for p in paths] for n, paths in pins.older_paths().items()},
        "held": pins.held}))
    os.replace(runtime / f"{PINS}.new", runtime / PINS)


def read(path: Path) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None  # not written yet, or its folder removed (made again by the master)


def pinned(runtime: Path) -> dict | None:
    """The master's pins, None while missing (or not pins: written by someone else)."""
    found = read(runtime / PINS)
    ok = isinstance(found, dict) and KEYS <= found.keys() and isinstance(found["generation"], int)
    return found if ok else None


def alive(pid: int) -> bool:
    with suppress(PermissionError):  # another user's: alive
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
    return True


@dataclass(frozen=True)
class Master:
    """The `kelime serve` master that forked this worker."""

    pid: int
    runtime: Path
    wait: float  # seconds an admin reload waits for it and for every worker


class Reloader:
    """What this worker (or in-process app) serves, and how it switches."""

    def __init__(self, app, settings, metrics, pins: Pins, master: Master | None = None):
        self.app, self.settings, self.metrics, self.master = app, settings, metrics, master
        self.pins, self.lock = pins, anyio.Lock()  # one switch at a time
        metrics.reloads_seen(pins.reloads)

    async def follow(self, master: Master) -> None:
        """Switch to each newer generation the master pins; say which one is served. On any
        surprise (out of memory, no thread to load in) this worker stops: its replacement is
        forked with the master's builds, never left behind on old ones."""
        seen, mine = None, master.runtime / WORKERS / str(os.getpid())
        try:
            while True:
                with suppress(OSError):
                    if (stamp := os.stat(master.runtime / PINS).st_mtime_ns) != seen:
                        seen, found = stamp, pinned(master.runtime)
                        if found and found["generation"] > self.pins.generation:
                            await self.switch(found)
                if read(mine) != self.pins.generation:  # a new one, or the folder removed
                    with suppress(OSError):
                        mine.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                        mine.write_bytes(b"%d" % self.pins.generation)
                await anyio.sleep(FOLLOW)
        except Exception:
            log.exception("worker %d cannot follow its master's pins; stopping", os.getpid())
            os.kill(os.getpid(), signal.SIGTERM)

    async def switch(self, found: dict) -> None:
        builds = {name: Path(path) for name, path in found["lexicons"].items()}
        older = {name: [Path(p) for p in paths] for name, paths in found["older"].items()}
        try:
            lexicons, held = await anyio.to_thread.run_sync(load_pins, builds, older,
                                                            self.pins.loaded())
        except LexiconError as e:  # verified by the master, then changed on disk
            log.error("worker %d cannot switch to generation %d (%s); stopping: its "
                      "replacement gets the builds from the master", os.getpid(),
                      found["generation"], e)
            os.kill(os.getpid(), signal.SIGTERM)
            await anyio.sleep_forever()
        self.swap(Pins(found["generation"], found["outcome"], lexicons, found["refused"],
                       found["reloads"], held))

    def swap(self, pins: Pins) -> None:
        if pins.lexicons != self.pins.lexicons or pins.older != self.pins.older:
            self.app.state.kelime = replace(self.app.state.kelime, lexicons=pins.lexicons,
                                            older=pins.older)
            self.metrics.lexicons_loaded(pins.lexicons)
            log.info("worker %d serves %s", os.getpid(), described(pins))
        self.pins = pins
        self.metrics.reloads_seen(pins.reloads)

    async def reload(self) -> dict:
        """POST /v1/admin/reload: 200 once every worker serves the data folder's current
        builds (504 naming those that do not); 409 when they were refused."""
        return await (self.reload_here() if self.master is None else
                      self.ask_master(self.master))

    async def ask_master(self, master: Master) -> dict:
        if os.getppid() != master.pid:  # killed (-9): its pid may be another process's now
            raise ReloadTimeout("reload_timeout", f"the master (pid {master.pid}) is gone")
        done = await anyio.to_thread.run_sync(reloaded, master.pid, master.runtime,
                                              master.wait)
        if done["outcome"] == "refused":
            raise refusal(done["refused"], done["versions"])
        if done["outcome"] == "timeout":
            raise ReloadTimeout("reload_incomplete", done["why"], {
                "lagging": done["lagging"], "generation": done["generation"],
                "lexicons": done["versions"]}) if "lagging" in done else ReloadTimeout(
                "reload_timeout", done["why"])
        return {"outcome": done["outcome"], "generation": done["generation"],
                "lexicons": done["versions"]}

    async def reload_here(self) -> dict:
        """Reload in this process only (an app without the master)."""
        async with self.lock:
            pins = await anyio.to_thread.run_sync(next_pins, self.settings.data,
                                                  self.settings.default_lexicon, self.pins,
                                                  self.settings.keep_versions)
            self.swap(pins)
            if pins.outcome == "refused":
                raise refusal(pins.refused, pins.versions)
            return {"outcome": pins.outcome, "generation": pins.generation,
                    "lexicons": pins.versions}


def reloaded(pid: int, runtime: Path, wait: float) -> dict[str, Any]:
    """SIGHUP to the master `pid` (its runtime folder `runtime`) and its outcome once every
    worker serves the new generation (`kelime reload`, POST /v1/admin/reload): {"outcome":
    reloaded | unchanged | refused | timeout, "generation", "versions", "refused"}, with
    "why" (and "lagging": worker pid → generation) when it is a timeout."""
    asked = time.monotonic()
    deadline = asked + wait
    os.kill(pid, signal.SIGHUP)
    while (found := pinned(runtime)) is None or found["since"] < asked:
        if time.monotonic() > deadline or not alive(pid):
            return {"outcome": "timeout", "versions": {}, "refused": {},
                    "why": f"the master (pid {pid}) did not reload within {wait:g} s; its "
                           f"log says why"}
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


def described(pins: Pins) -> str:
    """`tr d4323d22aa28 (also 1a2b3c4d5e6f), ku a35dcf4a8b47`: what a server serves."""
    return ", ".join(f"{name} {versions[0]}" + (f" (also {', '.join(versions[1:])})"
                                                if versions[1:] else "")
                     for name, versions in pins.held.items())


def refusal(refused: dict[str, str], serving: dict[str, str]) -> ReloadRefused:
    return ReloadRefused("reload_refused", "the current builds cannot be served, so the old "
                         "ones still are: " + "; ".join(refused.values()),
                         {"refused": refused, "serving": serving})
