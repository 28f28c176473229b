"""Servers for the tests, each on a port no other test can take: a socket is bound here to
port 0 (the kernel picks a free port) and handed to the server as it is, never closed and
bound again by number (that leaves a moment in which another process may take the port).

- `serve_in_thread`: the app on a real uvicorn in this process (`Server.run(sockets=…)`).
- `start_kelime_serve`: a real `kelime serve --fd N` process on the socket; `kelime_serve`
  the same, ready, as a context manager.
- `wait_ready`, `stop`: for the processes.
- `unused_port`: only for a program that binds its port itself (nginx); see there.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn

from kelime.service.settings import Settings, uvicorn_options

HOST = "127.0.0.1"


def listening_socket(port: int = 0) -> socket.socket:
    """A socket listening on 127.0.0.1:`port` (0: a free port the kernel picks), to hand to
    a server; its port is `port_of(sock)`."""
    sock = socket.socket()
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as `kelime serve` binds
        sock.bind((HOST, port))
        sock.listen(2048)  # gunicorn's backlog
    except OSError:
        sock.close()
        raise
    return sock


def port_of(sock: socket.socket) -> int:
    return int(sock.getsockname()[1])


def unused_port() -> int:
    """A port that was free a moment ago, for a program that cannot be handed a socket and
    binds the port itself (nginx): the caller must retry with another one when the program
    says the address is in use. Everything that can take a socket takes one instead."""
    with listening_socket() as sock:
        return port_of(sock)


def kelime_command(*args: str) -> list[str]:
    """The installed `kelime` script with `args` (or this Python running kelime's CLI)."""
    script = Path(sys.executable).parent / "kelime"
    if script.exists():
        return [str(script), *args]
    return [sys.executable, "-c", "from kelime.cli import main; main()", *args]


def start_kelime_serve(*args: str, sock: socket.socket | None = None,
                       also: tuple[socket.socket, ...] = (),
                       **popen: Any) -> tuple[subprocess.Popen, int]:
    """A `kelime serve ARGS --fd N` process on `sock` (by default a new one on a free port)
    and its port; not waited for (see `wait_ready`). `also`: more listening sockets it
    serves on (a unix socket: the balancer's). `popen`: Popen's keyword arguments (stdout,
    env, start_new_session…). This process's copy of the socket is closed once the server
    holds it, so the port refuses connections as soon as the server is gone."""
    sock = sock or listening_socket()
    with sock:
        fds = [sock.fileno(), *(s.fileno() for s in also)]
        given = [arg for fd in fds for arg in ("--fd", str(fd))]
        proc = subprocess.Popen(kelime_command("serve", *args, *given),
                                pass_fds=(*fds, *popen.pop("pass_fds", ())), **popen)
        return proc, port_of(sock)


@contextmanager
def kelime_serve(*args: str) -> Iterator[str]:
    """A real `kelime serve ARGS` process on a socket handed over, ready; yields its URL."""
    proc, port = start_kelime_serve(*args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True)
    url = f"http://{HOST}:{port}"
    try:
        wait_ready(url, proc, output=lambda: proc.stderr.read() if proc.stderr else "")
        yield url
    finally:
        stop(proc)


@contextmanager
def serve_in_thread(app: Any, timeout: float = 20.0,
                    settings: Settings | None = None) -> Iterator[str]:
    """Run `app` on a real uvicorn (kelime's options, for `settings` when given: e.g. the
    proxies it trusts) on a socket bound to a free port; yield its URL."""
    options = uvicorn_options(settings or Settings())
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", **options))
    with listening_socket() as sock:
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        deadline = time.monotonic() + timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        try:
            yield f"http://{HOST}:{port_of(sock)}"
        finally:
            server.should_exit = True
            thread.join(timeout)


def wait_ready(url: str, proc: subprocess.Popen, timeout: float = 60.0,
               output: Callable[[], str] = lambda: "") -> None:
    """Until `url`/readyz answers 200; an AssertionError with `output()` (the server's log)
    when the process exits first or `timeout` passes."""
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the server exited {proc.returncode}: {output()}")
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"the server was not ready in {timeout:g} s: {output()}")


def stop(proc: subprocess.Popen) -> None:
    """Stop a server process: SIGTERM (it shuts down cleanly), SIGKILL if it lingers."""
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
