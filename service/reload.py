"""A worker's side of hot reloads: load the pinned builds, and switch to new ones whole.

Each request reads `app.state.kelime` once, so a reply comes from exactly one set of
lexicons; a reload loads the new builds beside the old ones (in a thread, while requests go
on being answered) and then replaces that one reference. Under `kelime serve` the supervisor
decides what to serve and sends it down the worker's channel (see `pins`); the worker
answers with the generation it serves. Without a supervisor (an app made in-process, as
the tests do) `reload_here` reads the data folder.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import signal
from dataclasses import replace
from pathlib import Path

import anyio

from kelime.lexicon import Lexicon, LexiconError, current_builds, load_all

from .errors import ServiceError
from .pins import Channel, Pins, newest

log = logging.getLogger("uvicorn.error")  # where uvicorn workers log
WAIT = 60.0  # seconds a worker waits for its first pins, or for the answer to a reload


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

    def __init__(self, app, settings, metrics, channel: Channel | None = None):
        self.app, self.settings, self.metrics, self.channel = app, settings, metrics, channel
        self.generation = 0
        self.counts: dict[str, int] = {}
        self.pending: Pins | None = None     # newer pins than ours, not loaded yet
        self.following: asyncio.Task | None = None
        self.asked: dict[int, asyncio.Future] = {}
        self.ids = itertools.count(1)
        self.lock = asyncio.Lock()  # one in-process reload at a time

    def initial(self) -> dict[str, Lexicon]:
        """The lexicons to start with: the newest pins in the channel (a reload while they
        load is loaded too, before this worker listens), or every lexicon in the data folder."""
        if self.channel is None:
            return load_all(self.settings.data)
        pins, lexicons = newest(self._receive(WAIT)), {}
        if pins is None:
            raise RuntimeError("the supervisor sent no pins")
        while pins is not None:
            lexicons = load_builds(pins.paths(), lexicons)
            self._seen(pins)
            pins = newest(self._receive(), self.generation)
        return lexicons

    def _receive(self, wait: float = 0.0) -> list[dict]:
        messages = self.channel.receive(wait)
        if messages is None:
            raise RuntimeError("the supervisor has gone")
        return messages

    def _seen(self, pins: Pins) -> None:
        self.generation = pins.generation
        self.metrics.reloads_seen(pins.reloads)

    def listen(self) -> None:
        """Follow the channel from the event loop, and say what this worker serves."""
        if self.channel is not None:
            asyncio.get_running_loop().add_reader(self.channel.fileno(), self._heard)
            self.channel.send(serving=self.generation)

    def _heard(self) -> None:
        messages = self.channel.receive()
        if messages is None:  # the supervisor died (kill -9): never serve on unsupervised
            log.error("worker %d: the supervisor has gone; stopping", os.getpid())
            asyncio.get_running_loop().remove_reader(self.channel.fileno())
            os.kill(os.getpid(), signal.SIGTERM)
            return
        for message in messages:
            future = self.asked.pop(message.get("answer"), None)
            if future is not None and not future.done():
                future.set_result(message)
        pins = newest(messages, max(self.generation, self.pending.generation if self.pending
                                    else 0))
        if pins is not None:
            self.pending = pins
            if self.following is None or self.following.done():
                self.following = asyncio.get_running_loop().create_task(self._follow())

    async def _follow(self) -> None:
        """Switch to the newest pins received, then tell the supervisor."""
        while self.pending is not None:
            pins, self.pending = self.pending, None
            current = self.app.state.kelime.lexicons
            try:
                lexicons = await anyio.to_thread.run_sync(load_builds, pins.paths(), current)
            except LexiconError as e:  # verified by the supervisor, then changed on disk
                log.error("worker %d keeps its lexicons (generation %d): %s", os.getpid(),
                          self.generation, e)
                continue
            if lexicons != current:
                self._swap(lexicons)
                log.info("worker %d serves %s", os.getpid(), _versions(lexicons))
            self._seen(pins)
            self.channel.send(serving=self.generation)

    def _swap(self, lexicons: dict[str, Lexicon]) -> None:
        kelime = self.app.state.kelime
        self.app.state.kelime = replace(kelime, lexicons=lexicons)
        self.metrics.lexicons_loaded(lexicons)

    async def reload(self) -> dict:
        """POST /v1/admin/reload: the supervisor reloads and answers once every worker serves
        the new generation (or names those that did not); 409 when it was refused."""
        if self.channel is None:
            return await self.reload_here()
        ask, future = next(self.ids), asyncio.get_running_loop().create_future()
        self.asked[ask] = future
        try:
            self.channel.send(reload=ask)
            with anyio.fail_after(WAIT):
                answer = await future
        except TimeoutError:
            raise ReloadTimeout("reload_timeout", f"the server did not answer the reload in "
                                f"{WAIT:.0f} s; its log says why") from None
        finally:
            self.asked.pop(ask, None)
        return _reply(Pins(**answer["pins"]), answer["lagging"])

    async def reload_here(self) -> dict:
        """Reload in this process only (an app without a supervisor)."""
        async with self.lock:
            return await self._reload_here()

    async def _reload_here(self) -> dict:
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
                   {n: lex.path for n, lex in lexicons.items()} ==
                   {n: lex.path for n, lex in current.items()} else "reloaded")
        self.counts[outcome] = self.counts.get(outcome, 0) + 1
        self.metrics.reloads_seen(self.counts)
        self.generation += 1
        served = lexicons if outcome == "reloaded" else current
        pins = Pins(self.generation, outcome, {n: str(lex.path) for n, lex in served.items()},
                    {n: lex.info["version"] for n, lex in served.items()}, problems,
                    dict(self.counts))
        if outcome == "reloaded":
            self._swap(lexicons)
        return _reply(pins, {})


def _versions(lexicons: dict[str, Lexicon]) -> str:
    return ", ".join(f"{n} {lex.info['version']}" for n, lex in sorted(lexicons.items()))


def _reply(pins: Pins, lagging: dict[str, int]) -> dict:
    if pins.outcome == "refused":
        raise ReloadRefused("reload_refused", "the current builds cannot be served, so the "
                            "old ones still are: " + "; ".join(pins.refused.values()),
                            {"refused": pins.refused, "serving": pins.versions})
    if lagging:
        raise ReloadTimeout("reload_incomplete", f"generation {pins.generation} was verified "
                            f"and sent to every worker, but worker(s) {', '.join(lagging)} did "
                            f"not switch in time and may still answer from the old builds; "
                            f"the server's log says why",
                            {"lagging": lagging, "generation": pins.generation,
                             "lexicons": pins.versions})
    return {"outcome": pins.outcome, "generation": pins.generation, "lexicons": pins.versions}
