"""Finding the `kelime serve` masters of a data folder, to reload them (`kelime reload`).

A master records itself (its pid, binds, runtime folder and data folder) in
``<data>/.serve/<pid>.json`` and in its runtime folder once it has pinned its builds, and
removes the record when it stops; a record whose pid is gone (a master killed with -9) is
ignored, and removed by the next start. A reload is a SIGHUP to the master, then a look at
its ``pins.json`` until it says the reload was done after it was asked, and at its workers
until each serves that generation (`reload.reloaded`).
"""

from __future__ import annotations

import logging
import os
import tempfile
from contextlib import suppress
from pathlib import Path
from typing import Any

import orjson

from .reload import alive, read, write_whole

log = logging.getLogger("kelime.service")
RECORDS = ".serve"  # in the data folder
SERVER = "server.json"  # in the master's runtime folder
PREFIX = "kelime-serve-"  # the runtime folders' (serve.py)


def register(data: Path, runtime: Path, binds: list[str]) -> Path | None:
    """Record this master in its runtime folder (SERVER) and in `data`'s RECORDS folder;
    the record in `data`, or None with a warning when the data folder is read-only (then
    `kelime reload` finds it by its runtime folder, from the same temporary folder)."""
    pid = os.getpid()
    record = orjson.dumps({"pid": pid, "binds": binds, "runtime": str(runtime),
                           "data": str(data.resolve())})
    with suppress(OSError):
        write_whole(runtime / SERVER, record)
    folder = data / RECORDS
    try:
        folder.mkdir(exist_ok=True)
        for stale in folder.glob("*.json"):
            if stale.stem.isdigit() and not alive(int(stale.stem)):
                stale.unlink(missing_ok=True)
        return write_whole(folder / f"{pid}.json", record)
    except OSError as e:
        log.warning("cannot record this server in %s (%s): `kelime reload` finds it only "
                    "from this machine's %s; or send SIGHUP to pid %d", folder,
                    e.strerror or e, tempfile.gettempdir(), pid)
        return None


def servers(data: Path) -> list[dict[str, Any]]:
    """The records of the masters serving `data` now (`master`): those in `data`'s RECORDS
    folder, and those of this machine's runtime folders (a data folder copied over by rsync
    --delete, or read-only, has none of its own). Its pins need not be readable: a tmp
    cleaner may have removed them, or the whole runtime folder, and the SIGHUP of the
    reload makes them again (`serve.publish`)."""
    paths = sorted((data / RECORDS).glob("*.json")) if (data / RECORDS).is_dir() else []
    paths += sorted(Path(tempfile.gettempdir()).glob(f"{PREFIX}*/{SERVER}"))
    found: dict[int, dict[str, Any]] = {}
    for path in paths:
        record = read(path)
        if not (isinstance(record, dict) and isinstance(record.get("pid"), int)
                and isinstance(record.get("runtime"), str)
                and isinstance(record.get("data"), str)):
            continue
        with suppress(OSError):
            if Path(record["data"]).resolve() != data.resolve():
                continue
        if master(record, path):
            found.setdefault(record["pid"], record)
    return list(found.values())


def master(record: dict[str, Any], path: Path) -> bool:
    """Whether `record` (read from `path`) was written by the `kelime serve` master that runs
    as its pid now: the process runs as the user who owns the record and the runtime folder
    (which mkdtemp named after the master's pid), and it started before the record was
    written. Anything else — a pid reused after a master killed with -9, a record or folder
    someone else wrote — is never signalled. A runtime folder a tmp cleaner removed is no
    owner to compare (the master makes it again on the SIGHUP)."""
    pid, runtime = record["pid"], Path(record["runtime"])
    try:
        process = os.stat(f"/proc/{pid}")
        owners = {path.stat().st_uid, process.st_uid}
        with suppress(FileNotFoundError):
            owners.add(runtime.stat().st_uid)
        started = _start_time(pid)
        written = path.stat().st_mtime
    except (OSError, ValueError):
        return False
    return (len(owners) == 1 and runtime.name.startswith(f"{PREFIX}{pid}-")
            and started <= written + 1)


def _start_time(pid: int) -> float:
    """When process `pid` started (seconds since the epoch), from /proc."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    ticks = int(stat[stat.rindex(")") + 2:].split()[19])  # field 22: starttime
    boot = next(float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                if line.startswith("btime "))
    return boot + ticks / os.sysconf("SC_CLK_TCK")
