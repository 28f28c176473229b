"""Hot reloads: what the next generation of pins is, and how a worker switches to it whole.

Each request reads `app.state.kelime` once, so a reply comes from exactly one set of
lexicons; a reload loads the new builds beside the old ones (in a thread, while requests go
on being answered) and then replaces that one reference. Under `kelime serve` the supervisor
makes the pins (`next_pins`) and sends them down each worker's channel (see `pins`); the
worker answers with the generation it serves. Without a supervisor (an app made
in-process, as the tests do) `reload_here` makes them itself.
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

from kelime.lexicon import Lexicon, LexiconError, current_builds

from .errors import ServiceError
from .pins import Channel, Pins, newest

log = logging.getLogger("uvicorn.error")  # where uvicorn workers log
WAIT = 60.0  # seconds a worker waits for its first pins, or for the answer to a reload


class ReloadRefused(ServiceError):
    """The data folder's current builds cannot be served; the old ones still are."""

    family = 409


class ReloadTimeout(ServiceError):
    family = 504


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


def verify(settings, pinned: Pins | None = None
           ) -> tuple[dict[str, Path], dict[str, str], dict[str, str]]:
    """(builds, versions, problems): the build folder and version of every lexicon in the
    data folder, each loaded once to verify it, and {name: why} for those that cannot be
    served (a link to nothing, half written, corrupt, or the pinned default gone)."""
    builds, problems = current_builds(settings.data)
    versions: dict[str, str] = {}
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


def next_pins(settings, old: Pins) -> Pins:
    """The generation after `old`: the data folder's current builds when every one of them
    verifies, else `old`'s builds with the refusal."""
    builds, versions, problems = verify(settings, old)
    if problems:
        pins = replace(old, outcome="refused", refused=problems)
    else:
        pins = Pins(old.generation, "unchanged" if builds == old.paths() else "reloaded",
                    {n: str(p) for n, p in builds.items()}, versions)
    reloads = {**old.reloads, pins.outcome: old.reloads.get(pins.outcome, 0) + 1}
    return replace(pins, generation=old.generation + 1, reloads=reloads)


class Reloader:
    """What this worker serves (`pins`) and how it switches."""

    def __init__(self, app, settings, metrics, channel: Channel | None = None):
        self.app, self.settings, self.metrics, self.channel = app, settings, metrics, channel
        self.pins: Pins | None = None
        self.pending: Pins | None = None     # newer pins than ours, not loaded yet
        self.following: asyncio.Task | None = None
        self.asked: dict[int, asyncio.Future] = {}
        self.ids = itertools.count(1)
        self.lock = asyncio.Lock()  # one in-process reload at a time

    @property
    def current(self) -> Pins:
        """The pins served: set by `initial`, which runs before this worker serves anything."""
        if self.pins is None:
            raise RuntimeError("the worker serves nothing yet: initial() has not run")
        return self.pins

    @property
    def supervisor(self) -> Channel:
        """The channel to the supervisor, for the methods only a supervised worker runs."""
        if self.channel is None:
            raise RuntimeError("this worker has no supervisor")
        return self.channel

    def initial(self) -> dict[str, Lexicon]:
        """The lexicons to start with: the newest pins in the channel (a reload while they
        load is loaded too, before this worker listens), or every lexicon in the data folder."""
        if self.channel is None:  # what the supervisor would pin, as generation 0
            builds, _ = current_builds(self.settings.data)
            lexicons = load_builds(builds, {})
            self.pins = Pins(0, "started", {n: str(p) for n, p in builds.items()},
                             {n: lex.info["version"] for n, lex in lexicons.items()})
            return lexicons
        pins, lexicons = newest(self._receive(WAIT)), {}
        if pins is None:
            raise RuntimeError("the supervisor sent no pins")
        while pins is not None:
            lexicons = load_builds(pins.paths(), lexicons)
            self._seen(pins)
            pins = newest(self._receive(), pins.generation)
        return lexicons

    def _receive(self, wait: float = 0.0) -> list[dict]:
        messages = self.supervisor.receive(wait)
        if messages is None:
            raise RuntimeError("the supervisor has gone")
        return messages

    def _seen(self, pins: Pins) -> None:
        self.pins = pins
        self.metrics.reloads_seen(pins.reloads)

    def listen(self) -> None:
        """Follow the channel from the event loop, and say what this worker serves."""
        if self.channel is not None:
            asyncio.get_running_loop().add_reader(self.channel.fileno(), self._heard)
            self.channel.send(serving=self.current.generation)

    def _heard(self) -> None:
        channel = self.supervisor
        messages = channel.receive()
        if messages is None:  # the supervisor died (kill -9): never serve on unsupervised
            log.error("worker %d: the supervisor has gone; stopping", os.getpid())
            asyncio.get_running_loop().remove_reader(channel.fileno())
            os.kill(os.getpid(), signal.SIGTERM)
            return
        for message in messages:
            if "answer" not in message:  # pins, not the answer to one of our reloads
                continue
            future = self.asked.pop(message["answer"], None)
            if future is not None and not future.done():
                future.set_result(message)
        pins = newest(messages, (self.pending or self.current).generation)
        if pins is not None:
            self.pending = pins
            if self.following is None or self.following.done():
                self.following = asyncio.get_running_loop().create_task(self._follow())

    async def _follow(self) -> None:
        """Switch to the newest pins received, then tell the supervisor."""
        while self.pending is not None:
            pins, self.pending = self.pending, None
            if await self._apply(pins):
                self.supervisor.send(serving=pins.generation)

    async def _apply(self, pins: Pins) -> bool:
        current = self.app.state.kelime.lexicons
        try:
            lexicons = await anyio.to_thread.run_sync(load_builds, pins.paths(), current)
        except LexiconError as e:  # verified by the supervisor, then changed on disk
            if self.channel is None:
                log.error("keeping generation %d: %s", self.current.generation, e)
                return False
            # Kept, it would serve an older build than the other workers until the next
            # reload. Stopped, it is replaced by a worker on the pinned builds (retried with
            # a backoff while they cannot load) and the others serve one version.
            log.error("worker %d cannot switch to generation %d (%s); stopping, so that it "
                      "never serves an older build than the others", os.getpid(),
                      pins.generation, e)
            os.kill(os.getpid(), signal.SIGTERM)
            return False
        if lexicons != current:
            kelime = self.app.state.kelime
            self.app.state.kelime = replace(kelime, lexicons=lexicons)
            self.metrics.lexicons_loaded(lexicons)
            log.info("worker %d serves %s", os.getpid(), ", ".join(
                f"{n} {v}" for n, v in sorted(pins.versions.items())))
        self._seen(pins)
        return True

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
            pins = await anyio.to_thread.run_sync(next_pins, self.settings, self.current)
            if not await self._apply(pins):
                raise ReloadRefused("reload_refused", "the builds changed while loading")
            return _reply(pins, {})


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
