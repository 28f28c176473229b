"""`kelime serve`: the HTTP API (kelime.service) on every lexicon in the data folder, run by
gunicorn's arbiter with uvicorn workers (kelime.service.serve)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import click

from .common import StoreAddress, data_option, environment, needs_extra, say


@click.command()
@data_option
@click.option("--cache", type=click.Path(path_type=Path), default=None,
              help="TDK crawl cache for the entries in GET /v1/words [env KELIME_CACHE].")
@click.option("--reports", type=StoreAddress(), default=None,
              help="Take players' word reports (POST /v1/reports) into this SQLite file, or "
                   "the PostgreSQL database of this postgresql:// URL (every replica writes "
                   "to it) [env KELIME_REPORTS; off when unset].")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on: loopback by default. Anything else is exposed "
                   "without nginx's shield (docs/deployment.md).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--socket", "unix", type=click.Path(path_type=Path, dir_okay=False),
              default=None, metavar="PATH",
              help="Also listen on this unix socket: the balancer's way in (nginx), whose "
                   "X-Forwarded-For alone names the client.")
@click.option("--fd", type=click.IntRange(0), multiple=True, metavar="N",
              help="Serve on the listening socket inherited as file descriptor N (bound by "
                   "a process manager, systemd's socket activation) instead of binding "
                   "--host, --port and --socket; repeat for several.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64))
@click.option("--forwarded-allow-ips", "proxies", default=None, metavar="ADDRESSES",
              help="Comma-separated addresses (or networks) of proxies on OTHER hosts whose "
                   "X-Forwarded-For names the client over TCP [env KELIME_FORWARDED_ALLOW_IPS; "
                   "default: none]. nginx on this host comes in through --socket instead.")
def serve(data: Path | None, cache: Path | None, reports: Path | str | None, host: str, port: int,
          unix: Path | None, fd: tuple[int, ...], workers: int, proxies: str | None) -> None:
    """Serve the HTTP API (FastAPI on uvicorn workers under gunicorn) on every lexicon in DATA.

    SIGHUP (or POST /v1/admin/reload) switches every worker to the data folder's current
    builds when they all verify; SIGTERM stops.

    \b
    Example:
      kelime serve --port 8000 &
      curl -s 'localhost:8000/v1/validate?word=kitap&word=%C4%B0stanbul'
      kelime serve --reports reports.sqlite       # and take players' word reports
      kelime serve --reports postgresql://kelime@db.example/kelime   # reports on PostgreSQL
      kelime serve --port 8001 --socket /run/kelime/kelime-1.sock   # behind nginx
    """
    with needs_extra("serve", "kelime serve"):
        from ..service.serve import run
    from ..service.settings import misspelt, retired

    context = click.get_current_context()
    given = [f"--{flag}" for name, flag in (("host", "host"), ("port", "port"), ("unix", "socket"))
             if context.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT]
    if fd and given:
        raise click.UsageError(f"--fd {fd[0]} is a socket already bound: drop "
                               f"{' and '.join(given)}")
    for name, meant in misspelt(os.environ).items():
        say(f"Warning: {name} is no setting (ignored): did you mean {meant}?")
    for name, why in retired(os.environ).items():
        say(f"Warning: {name} is no longer a setting (ignored): {why}")
    settings = environment()
    if data:
        settings = settings.with_data(data)
    if cache:
        settings = settings.with_cache(cache)
    if reports:
        settings = settings.changed(reports=reports)
    if proxies is not None:
        settings = settings.trusting(proxies)
    systemd = handed_over(fd)
    if fd:
        binds = [f"fd://{inherited(n)}" for n in fd]
    else:
        binds = [f"{free(host, port)}"] + ([vacant(unix)] if unix else [])
    if systemd:  # gunicorn takes systemd's sockets itself: not twice
        binds = []
    from ..service.serve import run

    run(settings, binds, workers)


def free(host: str, port: int) -> str:
    """`host:port` for gunicorn to bind, once checked free (gunicorn would retry for 5 s)."""
    from ..service.settings import SettingsError

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port,
                                                             type=socket.SOCK_STREAM)[0]
    except socket.gaierror as e:
        raise SettingsError(f"--host {host!r} is not an address of this machine "
                            f"({e.strerror})") from None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as e:
            raise SettingsError(f"cannot listen on {host}:{port} ({e.strerror}): another "
                                f"server holds it; stop it or pass --port N (the workers of a "
                                f"kelime serve killed with -9 let go of it within half "
                                f"KELIME_WORKER_TIMEOUT)") from None
    return f"[{host}]:{port}" if family == socket.AF_INET6 else f"{host}:{port}"


def vacant(path: Path) -> str:
    """`unix:PATH` for gunicorn to bind, once checked that no server listens there: gunicorn
    removes the socket it finds and binds its own, so a second replica given a live one's
    path took it over silently, and removed it when it stopped (nginx's way in, gone)."""
    from ..service.settings import SettingsError

    if not path.parent.is_dir():
        raise SettingsError(f"--socket {path}: there is no folder {path.parent}: make it "
                            f"(docs/deployment.md: the service's user's, nginx's group)")
    if path.exists() and not path.is_socket():
        raise SettingsError(f"--socket {path} is not a socket: remove the file or pass "
                            f"another path")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:  # none there, or one left by a server that was killed: taken
            return f"unix:{path}"
    raise SettingsError(f"cannot listen on {path}: another server listens on it; stop it or "
                        f"pass another --socket")


def inherited(fd: int) -> int:
    """`fd`, once checked to be a listening stream socket (systemd's socket activation, a
    test that bound port 0)."""
    from ..service.settings import SettingsError

    try:
        sock = socket.socket(fileno=fd)
    except (OSError, OverflowError, ValueError) as e:  # the last two: past any descriptor
        why = e.strerror if isinstance(e, OSError) else "no such descriptor"
        raise SettingsError(f"--fd {fd} is not an open socket ({why}): pass the "
                            f"descriptor of a listening socket, or --port N") from None
    try:
        if sock.type != socket.SOCK_STREAM:
            raise SettingsError(f"--fd {fd} is a datagram (UDP) socket: HTTP needs a TCP "
                                f"or unix stream socket that listens; pass one, or --port N")
        if not sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
            raise SettingsError(f"--fd {fd} is a socket that is not listening: call "
                                f"listen() on it before handing it over, or pass --port N")
    finally:
        sock.detach()  # not ours to close
    return fd


def handed_over(fd: tuple[int, ...]) -> bool:
    """Whether systemd's socket activation handed this process the sockets `fd` names
    (LISTEN_PID its pid, LISTEN_FDS their count, from 3 on). gunicorn serves on those by
    itself, and leaves their unix socket files for systemd when it stops: given them as
    binds too, it took each one twice and stopped at the second (`Bad file descriptor`)."""
    from ..service.settings import SettingsError

    listed = os.environ.get("LISTEN_FDS", "")
    count = int(listed) if listed.isdigit() else 0
    if os.environ.get("LISTEN_PID") != str(os.getpid()) or not count:
        return False
    given, systemd = sorted(set(fd)), list(range(3, 3 + count))
    if given != systemd:
        raise SettingsError(f"systemd handed over {count} socket(s) (LISTEN_FDS={count}: file "
                            f"descriptors {', '.join(map(str, systemd)) or 'none'}), and "
                            f"--fd names {', '.join(map(str, given)) or 'none'}: pass one "
                            f"--fd for each ListenStream= of the socket unit, from 3 on")
    return True
