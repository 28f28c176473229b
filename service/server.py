"""`kelime serve`: check the data folder, bind the port, then run uvicorn workers (uvloop +
httptools) under kelime's supervisor (`supervisor.py`), one worker or many.

The settings reach every worker through the environment (`Settings.as_env`), the pinned
builds through its channel to the supervisor.
"""

from __future__ import annotations

import logging
import os
import socket
from pathlib import Path

from kelime.games import load_games
from kelime.lexicon import LexiconError

from .metrics import MULTIPROCESS
from .pins import Pins
from .protocol import uvicorn_options
from .reload import verify
from .runtime import Runtime
from .settings import Settings, SettingsError
from .supervisor import Supervisor

#: uvicorn's options for the default settings (tests and the benchmarks' baselines serve with
#: these); `kelime serve` uses `uvicorn_options(settings)` of its own settings.
UVICORN_OPTIONS = uvicorn_options(Settings())
BACKLOG = 2048  # uvicorn's default

log = logging.getLogger("kelime.service")


def check_data(settings: Settings) -> tuple[dict[str, Path], dict[str, str]]:
    """The build folder of each lexicon under settings.data, each verified, and its version;
    LexiconError says what to run. A build that fails verification stops the start; a link
    to nothing or a folder without a manifest is only not served (a warning)."""
    data = settings.data
    builds, versions, problems = verify(settings)
    for name, why in problems.items():
        if name in builds:
            raise LexiconError(why)
        log.warning("%s", why)
    if not builds:
        raise LexiconError(f"no lexicon in {data}: build one with `kelime build --bootstrap "
                           f"--out {data}` (or `kelime build --wordlist FILE --out {data}`)")
    if settings.default_lexicon not in builds:
        log.warning("no %r lexicon in %s: /readyz answers 503 and requests must name one of "
                    "%s", settings.default_lexicon, data, ", ".join(builds))
    return builds, versions


def run(settings: Settings, host: str = "127.0.0.1", port: int = 8000, workers: int = 1,
        hangups: list | None = None, fd: int | None = None) -> None:
    """Serve every lexicon in `settings.data` until SIGTERM or SIGINT; `hangups` holds the
    SIGHUPs received before the supervisor listens (each a reload once the workers run).
    `fd`: a listening socket bound by whoever started us (instead of binding host:port)."""
    if not log.handlers:  # the supervisor's lines, in the workers' (uvicorn's) style
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s:  %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
    builds, versions = check_data(settings)
    load_games(settings.games)  # a broken deployment profile: one error line, before uvicorn
    with (listen(host, port) if fd is None else inherited(fd)) as sock:
        runtime = Runtime()
        try:
            os.environ.update(settings.as_env())
            os.environ[MULTIPROCESS] = str(runtime.metrics)  # any worker's /metrics sums all
            pins = Pins(1, "started", {n: str(p) for n, p in builds.items()}, versions)
            Supervisor(settings, sock, workers, runtime, pins, hangups).run()
        finally:
            runtime.remove()


def listen(host: str, port: int) -> socket.socket:
    """The listening socket every worker shares; SettingsError when the port is taken."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise SettingsError(f"--host {host!r} is not an address of this machine ({e})") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError as e:
        sock.close()
        raise SettingsError(f"cannot listen on {host}:{port} ({e.strerror}): another "
                            f"server holds it; stop it or pass --port N") from None
    return sock


def inherited(fd: int) -> socket.socket:
    """The listening socket handed over as file descriptor `fd` (systemd's socket
    activation, a test that bound port 0); SettingsError when `fd` is not one."""
    try:
        sock = socket.socket(fileno=fd)
    except (OSError, OverflowError, ValueError) as e:  # the last two: past any descriptor
        why = e.strerror if isinstance(e, OSError) else "no such descriptor"
        raise SettingsError(f"--fd {fd} is not an open socket ({why}): pass the "
                            f"descriptor of a listening socket, or --port N") from None
    if sock.type != socket.SOCK_STREAM:  # UDP cannot listen(): its advice would mislead
        sock.detach()
        raise SettingsError(f"--fd {fd} is a datagram (UDP) socket: HTTP needs a TCP "
                            f"socket (SOCK_STREAM) that listens; pass one, or --port N")
    if not sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
        sock.detach()  # not ours to close
        raise SettingsError(f"--fd {fd} is a socket that is not listening: call listen() on "
                            f"it before handing it over, or pass --port N")
    return sock


def serve(factory: str, *, host: str, port: int, workers: int = 1) -> None:
    """Run any app factory with kelime's uvicorn options, without kelime's supervisor (the
    benchmarks serve their hello-world baseline this way)."""
    import uvicorn

    uvicorn.run(factory, factory=True, host=host, port=port, workers=workers,
                **uvicorn_options(Settings.from_env()))
