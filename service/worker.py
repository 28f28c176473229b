"""One worker of `kelime serve`: a `uvicorn.Server` on the socket its supervisor bound.

    python -m kelime.service.worker LISTEN_FD CHANNEL_FD    (started by supervisor.py only)

Settings come from the environment (`Settings.as_env`), the builds to serve from the
channel (`pins`). Exit status 3 when the app did not start (uvicorn's own convention).
"""

from __future__ import annotations

import socket
import sys

import uvicorn

from .app import create_app
from .pins import Channel
from .protocol import uvicorn_options
from .settings import Settings

STARTUP_FAILED = 3


def main(listen_fd: int, channel_fd: int) -> int:
    settings = Settings.from_env()
    app = create_app(settings, channel=Channel(socket.socket(fileno=channel_fd)))
    server = uvicorn.Server(uvicorn.Config(app, **uvicorn_options(settings)))
    server.run(sockets=[socket.socket(fileno=listen_fd)])
    return 0 if server.started else STARTUP_FAILED


if __name__ == "__main__":
    sys.exit(main(*map(int, sys.argv[1:3])))
