"""`kelime serve`: check the data folder, pin its builds, then run uvicorn's workers
(uvloop + httptools) under kelime's supervisor (`supervisor.py`), one worker or many.

Workers are separate processes, so uvicorn gets an import string and a factory; the
settings reach every worker through the environment (`Settings.as_env`), the pinned builds
through the pin file it names.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import tempfile
from dataclasses import replace
from pathlib import Path

from kelime.games import load_games
from kelime.lexicon import LexiconError, current_builds

from .metrics import MULTIPROCESS
from .protocol import uvicorn_options
from .reload import load_builds
from .settings import Settings, SettingsError

APP_FACTORY = f"{__package__}.app:create_app_from_env"
#: uvicorn's options for the default settings (tests and the benchmarks' baselines serve with
#: these); `kelime serve` uses `uvicorn_options(settings)` of its own settings.
UVICORN_OPTIONS = uvicorn_options(Settings())

log = logging.getLogger("kelime.service")


def check_data(settings: Settings) -> tuple[dict[str, Path], dict[str, str]]:
    """The build folder of each lexicon under settings.data, each verified, and its version;
    LexiconError says what to run."""
    data = settings.data
    builds, problems = current_builds(data)
    for why in problems.values():
        log.warning("%s", why)
    if not builds:
        raise LexiconError(f"no lexicon in {data}: build one with `kelime build --bootstrap "
                           f"--out {data}` (or `kelime build --wordlist FILE --out {data}`)")
    lexicons = load_builds(builds, {})  # verifies every file before any worker starts
    if settings.default_lexicon not in builds:
        log.warning("no %r lexicon in %s: /readyz answers 503 and requests must name one of "
                    "%s", settings.default_lexicon, data, ", ".join(builds))
    return builds, {name: lex.info["version"] for name, lex in lexicons.items()}


def run(settings: Settings, host: str = "127.0.0.1", port: int = 8000, workers: int = 1) -> None:
    """Serve every lexicon in `settings.data` until interrupted."""
    builds, versions = check_data(settings)
    load_games(settings.games)  # a broken deployment profile: one error line, before uvicorn
    check_port(host, port)
    runtime = Path(tempfile.mkdtemp(prefix="kelime-serve-"))
    try:
        settings = replace(settings, pins=runtime / "pins.json")
        os.environ.update(settings.as_env())
        (runtime / "metrics").mkdir()  # every worker counts here; any worker's /metrics sums
        os.environ[MULTIPROCESS] = str(runtime / "metrics")
        supervise(settings, builds, versions, host=host, port=port, workers=workers)
    finally:
        shutil.rmtree(runtime, ignore_errors=True)


def check_port(host: str, port: int) -> None:
    """Refuse a port that is taken before uvicorn starts (it would only log a raw OSError)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise SettingsError(f"--host {host!r} is not an address of this machine ({e})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as e:
            raise SettingsError(f"cannot listen on {host}:{port} ({e.strerror}): another "
                                f"server holds it; stop it or pass --port N") from None


def supervise(settings: Settings, builds: dict[str, Path], versions: dict[str, str], *,
              host: str, port: int, workers: int) -> None:
    """uvicorn's workers on the pinned builds, under kelime's supervisor."""
    import uvicorn

    from .supervisor import Supervisor

    config = uvicorn.Config(APP_FACTORY, factory=True, host=host, port=port, workers=workers,
                            **uvicorn_options(settings))
    supervisor = Supervisor(config, [config.bind_socket()], settings)
    supervisor.pin_initial(builds, versions)
    supervisor.run()


def serve(factory: str, *, host: str, port: int, workers: int = 1) -> None:
    """Run any app factory with kelime's uvicorn options, without kelime's supervisor (the
    benchmarks serve their hello-world baseline this way)."""
    import uvicorn

    uvicorn.run(factory, factory=True, host=host, port=port, workers=workers,
                **uvicorn_options(Settings.from_env()))
