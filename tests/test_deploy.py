"""The shipped systemd units (deploy/systemd/kelime@.service and kelime@.socket): checked by
`systemd-analyze verify` where it exists, and run without systemd, as systemd would run
them: the service's own ExecStart line, read from the unit, on two listening sockets handed
over as file descriptors 3 and 4 (socket activation, LISTEN_FDS and LISTEN_PID set), then
its ExecReload line and its KillSignal, within its TimeoutStopSec.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from kelime.service.settings import Settings
from tests.servers import kelime_command, listening_socket, port_of, wait_ready
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parent.parent
UNITS = ROOT / "deploy" / "systemd"
SERVICE, SOCKET = UNITS / "kelime@.service", UNITS / "kelime@.socket"
INSTANCE = "8001"  # the instance name: the replica's TCP port


def directives(unit: Path) -> dict[str, list[str]]:
    """`Section.Key` -> its values in order (a key may be given several times), with the
    instance's `%i` expanded; comments and blank lines left out."""
    found: dict[str, list[str]] = {}
    section = ""
    for line in unit.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        found.setdefault(f"{section}.{key.strip()}", []).append(
            value.strip().replace("%i", INSTANCE))
    return found


def seconds(value: str) -> float:
    """A systemd time span of seconds or minutes (`30s`, `2min`, `90`) in seconds."""
    number, unit = re.fullmatch(r"(\d+)\s*(s|min)?", value).groups()  # type: ignore[union-attr]
    return int(number) * (60 if unit == "min" else 1)


def test_systemd_analyze_verifies_the_units(tmp_path):
    """Both units of an instance load with no error and no warning (an unknown key, an
    address that does not parse). verify wants ExecStart's program to exist: the copy
    verified names one made here in place of /opt/kelime/bin/kelime, nothing else changes."""
    analyze = "/usr/bin/systemd-analyze"
    if not os.access(analyze, os.X_OK):
        pytest.skip("systemd-analyze is not installed: apt-get install systemd to verify "
                    "the units in deploy/systemd")
    program = tmp_path / "bin" / "kelime"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n", encoding="utf-8")
    program.chmod(0o755)
    (start,) = directives(SERVICE)["Service.ExecStart"]
    shipped = shlex.split(start)[0]
    units = tmp_path / "units"
    units.mkdir()
    (units / SOCKET.name).write_text(SOCKET.read_text(encoding="utf-8"), encoding="utf-8")
    text = SERVICE.read_text(encoding="utf-8")
    assert text.count(f"ExecStart={shipped} ") == 1
    (units / SERVICE.name).write_text(text.replace(f"ExecStart={shipped} ",
                                                   f"ExecStart={program} "), encoding="utf-8")
    done = subprocess.run([analyze, "verify", "--man=no", f"{units}/kelime@{INSTANCE}.service",
                           f"{units}/kelime@{INSTANCE}.socket"], capture_output=True,
                          text=True, timeout=120, check=False,
                          env={**os.environ, "SYSTEMD_LOG_LEVEL": "warning"})
    assert done.returncode == 0, done.stderr
    about_ours = [line for line in done.stderr.splitlines() if "kelime" in line]
    assert not about_ours, done.stderr


def test_the_units_match_what_kelime_serve_does():
    """Socket activation with two sockets (ExecStart passes --fd 3 --fd 4), the loopback port
    and the unix socket named by the instance; a graceful stop that gunicorn can finish
    (it lets workers finish for twice KELIME_WORKER_TIMEOUT) before systemd kills."""
    service, sock = directives(SERVICE), directives(SOCKET)
    assert sock["Socket.ListenStream"] == [f"127.0.0.1:{INSTANCE}",
                                           f"/run/kelime/kelime-{INSTANCE}.sock"]
    assert shlex.split(service["Service.ExecStart"][0])[1:] == ["serve", "--fd", "3",
                                                                "--fd", "4"]
    assert service["Service.KillSignal"] == ["SIGTERM"]
    assert service["Service.KillMode"] == ["mixed"]  # the workers stop under gunicorn
    graceful = 2 * Settings().worker_timeout
    assert seconds(service["Service.TimeoutStopSec"][0]) > graceful
    assert service["Service.Type"] == ["notify"]  # gunicorn's arbiter says READY=1
    assert service["Service.ExecReload"] == ["/bin/kill -HUP $MAINPID"]


@contextmanager
def activated(data: Path, unix: Path, log: Path, args: list[str] | None = None
              ) -> Iterator[tuple[subprocess.Popen, int]]:
    """The unit's ExecStart (or `kelime ARGS`) run as systemd runs it: its sockets (a TCP port of 127.0.0.1
    and the unix socket `unix`) bound here, in the socket unit's order, as file descriptors
    3 and 4 of the process, with LISTEN_FDS=2 and LISTEN_PID its own pid (a shell that
    `exec`s it keeps the pid); its Environment= with KELIME_DATA pointed at `data`."""
    service = directives(SERVICE)
    argv = shlex.split(service["Service.ExecStart"][0])
    command = kelime_command(*(argv[1:] if args is None else args))  # not /opt/kelime's
    env = dict(os.environ)
    for pair in service.get("Service.Environment", []):
        name, _, value = pair.partition("=")
        env[name] = value
    env["KELIME_DATA"] = str(data)
    tcp = listening_socket()
    stream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stream.bind(str(unix))
    stream.listen(2048)
    listeners, port = [tcp, stream], port_of(tcp)

    def as_systemd() -> None:  # in the child, before exec: the sockets at 3 and 4
        for n, sock in enumerate(listeners):
            os.dup2(sock.fileno(), 100 + n)
        for n in range(len(listeners)):
            os.dup2(100 + n, 3 + n)
            os.close(100 + n)

    with tcp, stream, open(log, "wb") as out:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", f'LISTEN_PID=$$ LISTEN_FDS={len(listeners)} exec "$@"', "sh",
             *command], env=env, stdout=out, stderr=subprocess.STDOUT, close_fds=False,
            preexec_fn=as_systemd, start_new_session=True)
    try:
        yield proc, port
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


@pytest.mark.slow
def test_the_units_command_serves_on_the_sockets_systemd_hands_over(data_dir, tmp_path):
    """Socket activation without systemd: the unit's ExecStart serves on both sockets,
    ExecReload (SIGHUP) reloads in place, KillSignal stops it cleanly (exit 0: no restart
    under Restart=on-failure) within TimeoutStopSec."""
    service = directives(SERVICE)
    unix, log = tmp_path / "kelime.sock", tmp_path / "serve.log"
    with activated(data_dir, unix, log) as (proc, port):
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, proc, output=lambda: log.read_text(errors="replace"))
        with httpx.Client(transport=httpx.HTTPTransport(uds=str(unix)),
                          base_url="http://kelime") as through_unix:
            reply = through_unix.get("/v1/validate", params={"word": "kitap"})
        assert reply.status_code == 200 and reply.json()["all_valid"] is True
        (reload,) = service["Service.ExecReload"]
        subprocess.run(shlex.split(reload.replace("$MAINPID", str(proc.pid))), check=True,
                       timeout=10)
        wait_until(lambda: "reload unchanged" in log.read_text(errors="replace"),
                   "the unit's ExecReload reloads in place (`reload unchanged` logged)")
        assert proc.poll() is None, log.read_text(errors="replace")
        proc.send_signal(getattr(signal, service["Service.KillSignal"][0]))
        code = proc.wait(timeout=seconds(service["Service.TimeoutStopSec"][0]))
        assert code == 0, log.read_text(errors="replace")
    assert unix.is_socket()  # systemd's socket: gunicorn leaves it for the next start



def test_fds_that_are_not_the_ones_systemd_handed_over_stop_the_start(data_dir, tmp_path):
    """A unit whose ExecStart names fewer sockets than its socket unit listens on (a drop-in
    added a ListenStream=) is told so, rather than serving on sockets it was not given."""
    log = tmp_path / "serve.log"
    with activated(data_dir, tmp_path / "kelime.sock", log, ["serve", "--fd", "3"]) as (proc, _):
        assert proc.wait(timeout=60) == 1
    said = log.read_text(errors="replace")
    assert "Traceback" not in said
    assert ("systemd handed over 2 socket(s) (LISTEN_FDS=2: file descriptors 3, 4), and "
            "--fd names 3: pass one --fd for each ListenStream= of the socket unit, from 3 on"
            in " ".join(said.split())), said
