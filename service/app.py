"""The FastAPI app: `create_app(settings)` loads every lexicon once, in the lifespan (or is
given them, loaded by the `kelime serve` master: see `serve.py`, and `prepare`).

    uvicorn --factory --no-proxy-headers kelime.service.app:create_app_from_env
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware

from kelime.games import Game, load_games
from kelime.lexicon import current_builds
from kelime.lexicon.pins import Pins, first_pins

from .conditional import Conditional
from .errors import ERROR_RESPONSES, HANDLED, handle_error
from .fast import App, FastAnagram, FastValidate
from .metrics import Metrics, MetricsMiddleware
from .openapi import document
from .reload import Master, Reloader
from .routes import admin, anagram, board, catalog, docs, health, page, reports, validate, words
from .settings import Settings
from .state import Kelime, Served

if TYPE_CHECKING:
    from kelime.reports import ReportLimits

log = logging.getLogger("kelime.service")


def create_app(settings: Settings | None = None, pins: Pins | None = None,
               master: Master | None = None, games: dict[str, Game] | None = None) -> FastAPI:
    """The app serving every lexicon under `settings.data` (default: Settings()), or under
    `kelime serve` the `pins` its `master` loaded (see `reload`) with the `games` it read."""
    settings = settings or Settings()
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        # (under `kelime serve` its master checked both before any worker: `prepare`)
        known = games if games is not None else load_games(settings.games)  # a broken
        if settings.reports and master is None:  # profile, or store, stops the start
            await anyio.to_thread.run_sync(open_report_store, settings.reports,
                                           settings.report_limits)
        served = pins if pins is not None else await anyio.to_thread.run_sync(load_here,
                                                                              settings)
        metrics.lexicons_loaded(served.lexicons)
        app.state.kelime = Kelime(settings, served.lexicons, metrics, known, served.older)
        loop = asyncio.get_running_loop()
        metrics.batch_on(loop)
        following = None
        if master:
            app.state.reloader = reloader = Reloader(app, settings, metrics, served, master)
            following = loop.create_task(reloader.follow())
        else:
            app.state.reloader = Served(app, settings, metrics, served)
        yield
        if following:
            following.cancel()
        metrics.flush()  # what the last turn of the loop counted

    app = App(settings.trusted_proxies, title="kelime", version="1", lifespan=lifespan,
              redirect_slashes=False,
              docs_url=None, redoc_url=None,  # /docs is served offline: routes/docs.py
              responses=ERROR_RESPONSES,  # every route can answer these, in one shape
              description="Turkish word-game dictionary: is this word valid, and why not; "
                          "which words these tiles make; can this hand be laid out whole.")
    # plain Starlette routes (see validate.py)
    plain = [*validate.routes, *anagram.routes, *board.routes]
    if settings.reports:  # without a report store the route does not exist
        plain += reports.routes
    app.router.routes.extend(plain)
    routers = [module.router for module in (words, catalog, health, page, docs)]
    if settings.admin_token:  # without a token the route does not exist
        routers.append(admin.router)
        app.state.admin_guard = admin.Guard()
    for router in routers:
        app.include_router(router)
    app.state.allow = allow_table([plain, *(r.routes for r in routers)])
    document(app, settings)  # the exact schema: routes, errors, limits, names (openapi.py)
    for exc_class in HANDLED:
        app.add_exception_handler(exc_class, handle_error)
    origins = [o.strip() for o in settings.cors_origins.split(",") if o.strip()]
    if origins:  # off by default: browsers on other origins may call only when allowed
        app.add_middleware(CORSMiddleware, allow_origins=origins, allow_methods=["GET", "POST"],
                           allow_headers=["Content-Type", "If-None-Match"],
                           expose_headers=["ETag", "Retry-After"], max_age=3600)
    app.add_middleware(Conditional)  # HEAD on every GET, 304 on every matching ETag
    app.add_middleware(MetricsMiddleware, metrics=metrics,
                       access_log=settings.access_log == "json", router=app.router)
    app.serve_fast(*(fast(app, app.stack, settings, metrics, bool(origins))
                     for fast in (FastValidate, FastAnagram)))
    return app


def load_here(settings: Settings) -> Pins:
    """Every lexicon of the data folder (and the builds before each, as `keep_versions`
    says), for an app without the `kelime serve` master; none when there is none."""
    if not current_builds(settings.data)[0]:
        return Pins(0, "started", {})
    pins, _ = first_pins(settings.data, settings.default_lexicon, settings.keep_versions)
    return replace(pins, generation=0)


def prepare(settings: Settings) -> tuple[Pins, Callable[[Pins, Master], FastAPI]]:
    """What the `kelime serve` master checks once, before any worker starts: the builds it
    pins (`first_pins`: LexiconError when there is none to serve), the game profiles and the
    report store (a broken one stops the start, saying why); and the app its workers make,
    given the pins and the games: a worker forked in place of a dead one reads neither again
    (a profile being edited, or the store locked by a maintainer's write, made it fail to
    boot, and gunicorn then stops the whole server)."""
    pins, problems = first_pins(settings.data, settings.default_lexicon, settings.keep_versions)
    for why in [*problems.values(), *pins.skipped]:  # not served (a link to nothing, no
        log.warning("%s", why)  # manifest, an older build damaged), or a damaged current
        #                         build: the last good one served
    if settings.default_lexicon not in pins.lexicons:
        log.warning("no %r lexicon in %s: /readyz answers 503 and requests must name one of "
                    "%s", settings.default_lexicon, settings.data, ", ".join(pins.lexicons))
    games = load_games(settings.games)
    if settings.reports:
        open_report_store(settings.reports, settings.report_limits)
    board.warm(pins, games.values(), settings.default_lexicon)  # the workers fork with it
    return pins, partial(create_app, settings, games=games)


def open_report_store(target: Path | str, limits: ReportLimits) -> None:
    """Create (or check) the report store KELIME_REPORTS names (a SQLite file, or a
    PostgreSQL URL: `reports.open_store`), and write to it once, before serving: a store
    that cannot be used (or reached) stops the start, saying why."""
    with reports.open_store(target, create=True, limits=limits) as store:
        store.check_writable()


def allow_table(route_lists) -> dict[str, str]:
    """Path → "GET, POST": the methods each path answers, for the Allow header of a 405."""
    table: dict[str, set[str]] = {}
    for routes in route_lists:
        for route in routes:
            methods = set(route.methods)
            if "GET" in methods:
                methods.add("HEAD")  # Conditional answers HEAD for every GET
            table.setdefault(route.path, set()).update(methods)
    return {path: ", ".join(sorted(methods)) for path, methods in table.items()}


def create_app_from_env() -> FastAPI:
    """`create_app` with settings from the environment (for `uvicorn --factory`)."""
    return create_app(Settings.from_env())
