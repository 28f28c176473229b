"""Helpers for the service tests: two small real lexicons and a real uvicorn server in a
thread (like httpx's tests/conftest.py::serve_in_thread). The fixtures built from them
(`data_dir`, `client`) live in tests/conftest.py."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import uvicorn

with warnings.catch_warnings():  # Starlette 1.x asks for `httpx2`; httpx works the same here
    warnings.filterwarnings("ignore", message=".*httpx2")
    from fastapi.testclient import TestClient  # noqa: F401 - for the tests, through here

from kelime.lexicon import Candidate, compile_words, write_lexicon
from kelime.normalize import Alphabet
from kelime.service.app import create_app  # noqa: F401 - for the tests, through here
from kelime.service.protocol import uvicorn_options
from kelime.service.server import UVICORN_OPTIONS
from kelime.service.settings import Settings

KURDISH = Alphabet("abcçdeêfghiîjklmnopqrsştuûvwxyz")
TR_WORDS = [
    Candidate("kitap"), Candidate("ev"), Candidate("abdal"), Candidate("Abdal", "proper_name"),
    Candidate("İstanbul", "proper_name"), Candidate("göt", "obscene"), Candidate("ılık"),
    Candidate("ilik"), Candidate("iğne"), Candidate("katil"), Candidate("at"),
    Candidate("dulda tutmak"),
]
KU_WORDS = [Candidate(w) for w in ("av", "nan", "mêr", "şîr", "xwe", "jin")]
SOURCE = {"kind": "test", "name": "tests/service_helpers.py", "licence": "n/a"}
CREATED = "2026-01-01T00:00:00Z"


def build_data(root: Path) -> Path:
    """A data folder with lexicons `tr` (Turkish) and `ku` (Kurdish, its own alphabet)."""
    write_lexicon(compile_words(TR_WORDS), root, "tr", SOURCE, created=CREATED)
    write_lexicon(compile_words(KU_WORDS, KURDISH), root, "ku", SOURCE, created=CREATED,
                  alphabet=KURDISH)
    return root


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve_in_thread(app, timeout: float = 20.0, settings: Settings | None = None):
    """Run `app` on a real uvicorn (kelime's options, for `settings` when given: e.g. the
    proxies it trusts) on 127.0.0.1:<free port>; yield its URL."""
    options = uvicorn_options(settings) if settings else UVICORN_OPTIONS
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout)


def wait_ready(url: str, proc, timeout: float = 60.0, output=lambda: "") -> None:
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


def stop(proc) -> None:
    """Stop a server process: SIGTERM (it shuts down cleanly), SIGKILL if it lingers."""
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
