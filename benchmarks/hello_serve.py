"""A baseline of benchmarks/hello.py served as `kelime serve` serves kelime: gunicorn's
arbiter and kelime's uvicorn worker class with kelime's uvicorn options, so that a figure
against it measures kelime's app, not a difference of servers.

    python benchmarks/hello_serve.py FACTORY PORT WORKERS [UNIX_SOCKET]
"""

from __future__ import annotations

import sys
from pathlib import Path

from gunicorn.app.base import BaseApplication

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hello

from kelime.service.serve import Worker
from kelime.service.settings import Settings, uvicorn_options


class Hello(BaseApplication):
    def __init__(self, factory: str, binds: list[str], workers: int) -> None:
        self.factory, self.binds, self.workers = factory, binds, workers
        super().__init__()

    def load_config(self) -> None:
        worker = type("Worker", (Worker,), {"CONFIG_KWARGS": uvicorn_options(Settings())})
        for name, value in {"bind": self.binds, "workers": self.workers, "worker_class": worker,
                            "control_socket_disable": True, "loglevel": "warning"}.items():
            if name in self.cfg.settings:
                self.cfg.set(name, value)

    def load(self):
        return getattr(hello, self.factory)()


if __name__ == "__main__":
    factory, port, workers, *unix = sys.argv[1:]
    Hello(factory, [f"127.0.0.1:{port}", *(f"unix:{u}" for u in unix)], int(workers)).run()
