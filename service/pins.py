"""What `kelime serve` serves (the pins), and how its processes tell each other (a channel).

The supervisor (`supervisor.py`) verifies the data folder's builds and pins them; a reload
makes the next generation (or a refusal that keeps the old builds)::

    {"generation": 2, "outcome": "reloaded",
     "lexicons": {"tr": "/srv/kelime/data/.builds/tr-3f2a…"}, "versions": {"tr": "3f2a…"},
     "refused": {}, "reloads": {"reloaded": 1, "refused": 0, "unchanged": 0}}

Each worker has a channel to the supervisor: a socket pair, one JSON object a line.

    supervisor → worker   {"pins": PINS}               when it starts, after every reload
                          {"answer": ID, "pins": PINS, "lagging": {PID: GENERATION}}
    worker → supervisor   {"serving": GENERATION}      once it serves (started, switched)
                          {"reload": ID}               POST /v1/admin/reload

Nothing on disk, no signal: a worker that starts during a reload cannot miss it, the
newest pins wait in its channel; and a worker whose channel closes knows its supervisor
has died.
"""

from __future__ import annotations

import socket
from dataclasses import asdict, dataclass, field
from pathlib import Path

import orjson

OUTCOMES = ("reloaded", "unchanged", "refused")


@dataclass(frozen=True)
class Pins:
    generation: int
    outcome: str                       # "started", or one of OUTCOMES for a reload
    lexicons: dict[str, str]           # name → build folder (absolute)
    versions: dict[str, str]           # name → version
    refused: dict[str, str] = field(default_factory=dict)   # name → why (last reload)
    reloads: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))

    def paths(self) -> dict[str, Path]:
        return {name: Path(path) for name, path in self.lexicons.items()}

    def as_dict(self) -> dict:
        return asdict(self)


class Channel:
    """One end of a worker's socket pair: JSON lines out, whole lines in."""

    def __init__(self, sock: socket.socket, timeout: float = 5.0):
        self.sock, self.buffer, self.timeout = sock, b"", timeout
        sock.settimeout(timeout)  # a peer that stops reading cannot block us for ever

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, **message) -> None:
        self.sock.sendall(orjson.dumps(message) + b"\n")

    def receive(self, wait: float = 0.0) -> list[dict] | None:
        """The messages that have arrived, waiting up to `wait` seconds for the first; None
        once the peer has closed its end (it exited)."""
        try:
            while True:
                self.sock.settimeout(wait if wait and b"\n" not in self.buffer else 0.0)
                try:
                    data = self.sock.recv(1 << 16)
                except BlockingIOError:
                    break
                if not data:
                    return None
                self.buffer += data
        finally:
            self.sock.settimeout(self.timeout)
        *lines, self.buffer = self.buffer.split(b"\n")
        return [orjson.loads(line) for line in lines]

    def close(self) -> None:
        self.sock.close()


def newest(messages: list[dict], current: int = 0) -> Pins | None:
    """The newest pins among `messages` if newer than generation `current`."""
    found = [Pins(**m["pins"]) for m in messages if "pins" in m]
    best = max(found, key=lambda p: p.generation, default=None)
    return best if best and best.generation > current else None
