"""What the routes share: settings, the loaded lexicons and the metrics, injected per request.

    async def route(kelime: KelimeDep): ...
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Any

import anyio
from fastapi import Depends, FastAPI, Request

from kelime.errors import excerpt
from kelime.games import GAMES, Game, UnknownGame, get_game
from kelime.lexicon import Lexicon
from kelime.lexicon.folder import split_pin
from kelime.lexicon.pins import Pins, next_pins
from kelime.lexicon.reader import LexiconInfo

from .errors import NotFound, Unavailable
from .parse import refuse_query
from .settings import Settings

if TYPE_CHECKING:  # (not at run time: `kelime serve` imports this module, by `reload`,
    from .metrics import Metrics  # before it names prometheus_client's folder)

log = logging.getLogger("uvicorn.error")  # where uvicorn workers log

@dataclass(frozen=True)
class Kelime:
    """The loaded service: built once in the app's lifespan."""

    settings: Settings
    lexicons: dict[str, Lexicon]
    metrics: Metrics
    games: dict[str, Game] = field(default_factory=lambda: dict(GAMES))
    older: dict[str, tuple[Lexicon, ...]] = field(default_factory=dict)  # name → the builds
    #                                         held before the current one, newest first

    def game(self, name: str | None, default: str | None = None) -> Game:
        """The game profile called `name` (or `default`); 404 listing the known games."""
        try:
            return get_game(name or default, self.games)
        except UnknownGame as e:
            raise NotFound("unknown_game", str(e), {"known": list(self.games)}) from None

    def played(self, lexicon: str | None, game: str | None, default_game: str | None = None
               ) -> tuple[Lexicon, Game]:
        """The lexicon and game a question names; without a lexicon, the game's own
        (Kürtçe Kelimatik is played with `ku`), else the settings' default."""
        profile = self.game(game, default_game)
        return self.lexicon(lexicon or profile.lexicon), profile

    def lexicon(self, name: str | None) -> Lexicon:
        """The lexicon called `name` (default: the settings' default), its current build, or
        the build `name@version` names when it is held; 404 names what is held."""
        key, version = split_pin(name or self.settings.default_lexicon)
        lex = self.lexicons.get(key) or self.lexicons.get(key.strip().lower())  # like games
        if lex is not None and version is None:
            return lex
        if lex is not None:
            if (build := self.builds.get((lex.name, version))) is not None:
                return build
            versions = [build.info["version"] for build in self.held(lex.name)]
            raise NotFound("unknown_version", f"version {excerpt(version)} of {lex.name} is "
                           f"not held here; held: {', '.join(versions)} (the first is the "
                           f"current one): pin one of these, or name {lex.name} without "
                           f"@version for the current one",
                           {"lexicon": lex.name, "held": versions})
        if not self.lexicons:
            raise not_ready(self.settings)
        loaded = sorted(self.lexicons)
        raise NotFound("unknown_lexicon", f"no lexicon {excerpt(key)} is loaded; loaded: "
                       f"{', '.join(loaded)}", {"known": loaded})

    @cached_property
    def builds(self) -> dict[tuple[str, str | None], Lexicon]:
        """(name, version) → every build held (made once: a reload makes a new Kelime)."""
        return {(name, build.info["version"]): build for name in self.lexicons
                for build in self.held(name)}

    def held(self, name: str) -> list[Lexicon]:
        """The builds of lexicon `name` held here, the current one first."""
        return [self.lexicons[name], *self.older.get(name, ())]

    def default_info(self) -> LexiconInfo | None:
        lex = self.lexicons.get(self.settings.default_lexicon)
        return lex.info if lex else None

    def validate(self, lex: Lexicon, words: list[str], min_length: int) -> dict:
        """Exactly `Lexicon.validate` (what `kelime check --json` prints), counted in the
        metrics."""
        report = lex.validate(words, min_length)
        self.metrics.count_verdicts(lex.name, report["results"])
        return report

    def check(self, lex: Lexicon, word: str, min_length: int) -> dict:
        """`Lexicon.check` on one word as a dict, counted in the metrics."""
        verdict = lex.check(word, min_length)
        self.metrics.count_tally(lex.name, {verdict.reason: 1})
        return verdict.as_dict()


class Served:
    """The builds an app serves (its pins), switched in place: `app.state.kelime` is one
    reference, replaced whole (each request reads it once). Without a `kelime serve` master
    (tests, `uvicorn --factory`) a reload is this process's own (`reload`); under one, the
    master's (`reload.Reloader`)."""

    def __init__(self, app: FastAPI, settings: Settings, metrics: Metrics, pins: Pins):
        self.app, self.settings, self.metrics, self.pins = app, settings, metrics, pins
        self.lock = anyio.Lock()  # one reload at a time
        metrics.reloads_seen(pins.reloads)

    def swap(self, pins: Pins) -> None:
        if pins.lexicons != self.pins.lexicons or pins.older != self.pins.older:
            self.app.state.kelime = replace(self.app.state.kelime, lexicons=pins.lexicons,
                                            older=pins.older)
            self.metrics.lexicons_loaded(pins.lexicons)
            log.info("worker %d serves %s", os.getpid(), pins.described)
        self.pins = pins
        self.metrics.reloads_seen(pins.reloads)

    async def reload(self) -> dict[str, Any]:
        """POST /v1/admin/reload's outcome, in `reload.reloaded`'s shape: the data folder's
        current builds when they all verify (`next_pins`), else these, refused."""
        async with self.lock:
            pins = await anyio.to_thread.run_sync(next_pins, self.settings.data,
                                                  self.settings.default_lexicon, self.pins,
                                                  self.settings.keep_versions)
            self.swap(pins)
            return {"outcome": pins.outcome, "generation": pins.generation,
                    "versions": pins.versions, "refused": pins.refused}


def not_ready(settings: Settings) -> Unavailable:
    return Unavailable("not_ready", f"no lexicon is loaded from {settings.data}: build one with "
                       f"`kelime build --bootstrap --out {settings.data}` and restart")


async def get_kelime(request: Request) -> Kelime:
    return request.app.state.kelime


async def no_query(request: Request) -> None:
    """A router dependency: its routes read no query parameter (`parse.refuse_query`)."""
    refuse_query(request.scope)


NoQuery = Depends(no_query)


KelimeDep = Annotated[Kelime, Depends(get_kelime)]
