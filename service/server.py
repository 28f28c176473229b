"""`kelime serve`: check the data folder, then run uvicorn (uvloop + httptools).

Workers are separate processes, so uvicorn gets an import string and a factory; the
settings reach every worker through the environment (`Settings.as_env`).
"""

from __future__ import annotations

import logging
import os
import socket

from kelime.games import load_games
from kelime.lexicon import LexiconError, lexicon_names, load_all

from .settings import Settings, SettingsError

APP_FACTORY = f"{__package__}.app:create_app_from_env"
#: The one place uvicorn is configured (the benchmark serves its baseline with these too).
UVICORN_OPTIONS = {"loop": "uvloop", "http": "httptools", "access_log": False,
                   "server_header": False, "timeout_keep_alive": 5}

log = logging.getLogger("kelime.service")


def check_data(settings: Settings) -> list[str]:
    """Names of the lexicons under settings.data, each verified; LexiconError says what to run."""
    data = settings.data
    names = lexicon_names(data)
    if not names:
        raise LexiconError(f"no lexicon in {data}: build one with `kelime build --bootstrap "
                           f"--out {data}` (or `kelime build --wordlist FILE --out {data}`)")
    load_all(data)  # verifies every file against its manifest before any worker starts
    if settings.default_lexicon not in names:
        log.warning("no %r lexicon in %s: requests must name one of %s",
                    settings.default_lexicon, data, ", ".join(names))
    return names


def run(settings: Settings, host: str = "127.0.0.1", port: int = 8000, workers: int = 1) -> None:
    """Serve every lexicon in `settings.data` until interrupted."""
    check_data(settings)
    load_games(settings.games)  # a broken deployment profile: one error line, before uvicorn
    check_port(host, port)
    os.environ.update(settings.as_env())
    serve(APP_FACTORY, host=host, port=port, workers=workers)


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


def serve(factory: str, *, host: str, port: int, workers: int = 1) -> None:
    """Run the app made by the factory at import string `factory` with kelime's uvicorn settings."""
    import uvicorn

    uvicorn.run(factory, factory=True, host=host, port=port, workers=workers, **UVICORN_OPTIONS)
