"""A real PostgreSQL server for the tests and the benchmarks (Debian's `postgresql`
package: /usr/lib/postgresql/VERSION/bin), in a temporary folder, as an unprivileged user:
`initdb` makes the cluster, `pg_ctl` starts and stops it; it listens on 127.0.0.1 at a free
port and on a unix socket in its folder. PostgreSQL refuses to run as root, so under root
(CI) the cluster belongs to the `postgres` user the package makes (or `nobody`), and its
programs run through `runuser`.

    with postgres_server() as pg:        # skipped (pytest) when PostgreSQL is absent
        url = pg.database("t1")          # postgresql://kelime@127.0.0.1:PORT/t1
        pg.stop(); pg.start()            # a restart, the data kept
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.servers import HOST, unused_port

MISSING = ("PostgreSQL's server programs are not installed (/usr/lib/postgresql/*/bin/"
           "initdb): apt-get install postgresql")


def server_bin() -> Path | None:
    """The newest installed PostgreSQL's bin folder, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name)
                   if Path(p).parent.parent.name.isdigit() else 0)
    return Path(found[-1]).parent if found else None


class Postgres:
    """One cluster in `folder`, owned by `user` (None: this unprivileged process)."""

    def __init__(self, bin: Path, folder: Path, user: str | None, *, durable: bool):
        self.bin, self.folder, self.user, self.durable = bin, folder, user, durable
        self.data, self.log = folder / "data", folder / "postgres.log"
        self.port = 0

    def _run(self, program: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        command = [str(self.bin / program), *args]
        if self.user:
            command = ["runuser", "-u", self.user, "--", *command]
        return subprocess.run(command, capture_output=True, text=True, check=check,
                              cwd=self.folder)

    def init(self) -> None:
        self._run("initdb", "-D", str(self.data), "-U", "kelime", "--auth=trust",
                  "--encoding=UTF8", "--locale=C")

    def start(self) -> None:
        """Start (again, on the same port once it has one); waits until it takes
        connections. A port taken meanwhile by another process: another one is tried."""
        for _ in range(5):
            port = self.port or unused_port()
            options = (f"-p {port} -k {self.folder} -c listen_addresses={HOST} "
                       "-c max_connections=200"
                       + ("" if self.durable else " -c fsync=off -c synchronous_commit=off"))
            done = self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w",
                             "-t", "60", "-o", options, "start", check=False)
            if done.returncode == 0:
                self.port = port
                return
            if self.port:  # its own port: no other to try
                break
        raise RuntimeError(f"PostgreSQL did not start: {done.stdout}{done.stderr}"
                           f"{self.log.read_text() if self.log.exists() else ''}")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://kelime@{HOST}:{self.port}/{database}"

    def database(self, name: str) -> str:
        """A new, empty database `name`; its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


def _owner() -> str | None:
    """The user the cluster runs as: None (this process) unless it is root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise RuntimeError("running as root with neither a `postgres` nor a `nobody` user to "
                       "run PostgreSQL as (it refuses root): useradd postgres")


@contextmanager
def postgres_server(durable: bool = False) -> Iterator[Postgres]:
    """A running PostgreSQL, deleted afterwards. `durable`: commits wait for the disk (the
    default off: fsync=off is quicker, and a clean stop loses nothing). RuntimeError with
    MISSING when PostgreSQL is not installed (the tests skip on it)."""
    bin = server_bin()
    if bin is None:
        raise RuntimeError(MISSING)
    user = _owner()
    # not under pytest's tmp_path: its folders are root's alone (0700)
    folder = Path(tempfile.mkdtemp(prefix="kelime-pg-"))
    if user:
        shutil.chown(folder, user)
    pg = Postgres(bin, folder, user, durable=durable)
    try:
        pg.init()
        pg.start()
        yield pg
    finally:
        if pg.port:
            pg._run("pg_ctl", "-D", str(pg.data), "-m", "immediate", "stop", check=False)
        shutil.rmtree(folder, ignore_errors=True)
