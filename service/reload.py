"""A worker's side of hot reloads: load the pinned builds, and switch to new ones whole.

Each request reads `app.state.kelime` once, so a reply comes from exactly one set of
lexicons; a reload loads the new builds beside the old ones (in a thread, while requests go
on being answered) and then replaces that one reference. Under `kelime serve` the supervisor
decides what to serve (see `pins` and `supervisor`) and signals the workers with SIGUSR1;
without it (an app made in-process, as the tests do) `reload_here` reads the data folder.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from dataclasses import replace
from pathlib import Path

import anyio

from kelime.lexicon import Lexicon, LexiconError, current_builds, load_all

from .errors import ServiceError
from .pins import Pins, read_pins

log = logging.getLogger("uvicorn.error")  # where uvicorn workers log
RELOAD_SIGNAL = signal.SIGUSR1  # supervisor → worker: "the pin file has a new generation"
WAIT = 60.0                     # seconds the admin route waits for a reload to be applied


class ReloadRefused(ServiceError):
    """The data folder's current builds cannot be served; the old ones still are."""

    status = 409


class ReloadTimeout(ServiceError):
    status = 504


def load_builds(builds: dict[str, Path], keep: dict[str, Lexicon]) -> dict[str, Lexicon]:
    """The lexicons of `builds` (name → build folder), reusing those of `keep` already loaded
    from the same folder; LexiconError when one cannot be loaded or is misnamed."""
    out = {}
    for name, path in builds.items():
        old = keep.get(name)
        if old is not None and old.path == path:
            out[name] = old
            continue
        lex = Lexicon.load(path)
        if lex.name != name:
            raise LexiconError(f"{path} holds a lexicon named {lex.name!r}, not {name!r}")
        out[name] = lex
    return out


class Reloader:
    """What this worker serves (its generation of the pins) and how it switches."""

    def __init__(self, app, settings, metrics):
        self.app, self.settings, self.metrics = app, settings, metrics
        self.generation = 0
        self.lock = asyncio.Lock()
        self.counts: dict[str, int] = {}

    def initial(self) -> dict[str, Lexicon]:
        """The lexicons to start with: the pinned builds, or every lexicon in the data folder."""
        if self.settings.pins is None:
            return load_all(self.settings.data)
        pins = read_pins(self.settings.pins)
        self.generation = pins.generation
        self.metrics.reloads_seen(pins.reloads)
        return load_builds(pins.paths(), {})

    def _swap(self, lexicons: dict[str, Lexicon]) -> None:
        kelime = self.app.state.kelime
        self.app.state.kelime = replace(kelime, lexicons=lexicons)
        self.metrics.lexicons_loaded(lexicons)

    def listen(self) -> None:
        """Follow the supervisor's SIGUSR1 (only under `kelime serve`, in the main thread)."""
        if self.settings.pins is None:
            return
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(RELOAD_SIGNAL, lambda: loop.create_task(self.follow_pins()))

    async def follow_pins(self) -> Pins:
        """Apply the pin file's generation if it is newer than ours."""
        async with self.lock:
            pins = read_pins(self.settings.pins)
            if pins.generation <= self.generation:
                return pins
            self.metrics.reloads_seen(pins.reloads)
            current = self.app.state.kelime.lexicons
            if pins.outcome != "refused" and pins.paths() != {n: l.path for n, l in
                                                             current.items()}:
                try:
                    lexicons = await anyio.to_thread.run_sync(load_builds, pins.paths(), current)
                except LexiconError as e:  # verified by the supervisor, then changed on disk
                    log.error("worker %d keeps its lexicons: %s", os.getpid(), e)
                    return pins
                self._swap(lexicons)
                log.info("worker %d serves %s", os.getpid(), _versions(lexicons))
            self.generation = pins.generation
            return pins

    async def reload(self) -> dict:
        """POST /v1/admin/reload: every worker to the data folder's current builds, or 409."""
        if self.settings.pins is None:
            return await self.reload_here()
        before = read_pins(self.settings.pins)
        os.kill(before.supervisor, signal.SIGHUP)
        with anyio.move_on_after(WAIT):
            while True:
                pins = read_pins(self.settings.pins)
                if pins.generation > before.generation:
                    break
                await anyio.sleep(0.02)
        if pins.generation <= before.generation:
            raise ReloadTimeout("reload_timeout", f"the server did not answer the reload in "
                                f"{WAIT:.0f} s; its log says why")
        await self.follow_pins()
        return _reply(pins)

    async def reload_here(self) -> dict:
        """Reload in this process only (an app without a supervisor)."""
        async with self.lock:
            builds, problems = current_builds(self.settings.data)
            current = self.app.state.kelime.lexicons
            lexicons = {}
            if not problems:
                try:
                    lexicons = await anyio.to_thread.run_sync(load_builds, builds, current)
                except LexiconError as e:
                    problems["data"] = str(e)
            default = self.settings.default_lexicon
            if default in current and default not in builds and not problems:
                problems[default] = f"the default lexicon {default!r} is gone from " \
                                    f"{self.settings.data}"
            outcome = ("refused" if problems else "unchanged" if
                       {n: l.path for n, l in lexicons.items()} ==
                       {n: l.path for n, l in current.items()} else "reloaded")
            self.counts[outcome] = self.counts.get(outcome, 0) + 1
            self.metrics.reloads_seen(self.counts)
            self.generation += 1
            versions = {n: lex.info["version"] for n, lex in (lexicons or current).items()}
            pins = Pins(self.generation, os.getpid(), outcome,
                        {n: str(lex.path) for n, lex in (lexicons or current).items()},
                        versions, problems, dict(self.counts))
            if outcome == "reloaded":
                self._swap(lexicons)
            return _reply(pins)


def _versions(lexicons: dict[str, Lexicon]) -> str:
    return ", ".join(f"{n} {lex.info['version']}" for n, lex in sorted(lexicons.items()))


def _reply(pins: Pins) -> dict:
    if pins.outcome == "refused":
        raise ReloadRefused("reload_refused", "the current builds cannot be served, so the "
                            "old ones still are: " + "; ".join(pins.refused.values()),
                            {"refused": pins.refused, "serving": pins.versions})
    return {"outcome": pins.outcome, "generation": pins.generation, "lexicons": pins.versions}
