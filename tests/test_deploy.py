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
from tests.waiting import PATIENCE, wait_until

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


DOCS = ROOT / "docs" / "deployment.md"


def drop_in() -> str:
    """The socket drop-in of docs/deployment.md's many-machines layout, as written there."""
    found = re.search(r"kelime@\.socket\.d/private\.conf <<'UNIT'\n(.*?)^UNIT$",
                      DOCS.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL)
    assert found, "docs/deployment.md lost the socket drop-in of the many-machines layout"
    return found.group(1)


def verify(tmp_path: Path, drop_ins: dict[str, str] | None = None) -> None:
    """systemd-analyze verify on both units of an instance (and `drop_ins`: unit -> text):
    no error and no warning (an unknown key, an address that does not parse). verify wants
    ExecStart's program to exist: the copy verified names one made here in place of
    /opt/kelime/bin/kelime, nothing else changes."""
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
    for unit, conf in (drop_ins or {}).items():
        (units / f"{unit}.d").mkdir()
        (units / f"{unit}.d" / "private.conf").write_text(conf, encoding="utf-8")
    done = subprocess.run([analyze, "verify", "--man=no", f"{units}/kelime@{INSTANCE}.service",
                           f"{units}/kelime@{INSTANCE}.socket"], capture_output=True,
                          text=True, timeout=120, check=False,
                          env={**os.environ, "SYSTEMD_LOG_LEVEL": "warning"})
    assert done.returncode == 0, done.stderr
    about_ours = [line for line in done.stderr.splitlines() if "kelime" in line]
    assert not about_ours, done.stderr


def test_systemd_analyze_verifies_the_units(tmp_path):
    verify(tmp_path)


def test_the_documented_drop_in_keeps_two_sockets_and_verifies(tmp_path):
    """The many-machines drop-in replaces the loopback port with the private address and
    keeps the two sockets ExecStart's `--fd 3 --fd 4` names."""
    conf = drop_in()
    lines = [line for line in conf.splitlines() if line.startswith("ListenStream=")]
    assert lines[0] == "ListenStream=" and len(lines[1:]) == 2, conf
    verify(tmp_path, {SOCKET.name: conf})


def test_the_documented_replicas_py_commands_run_as_written(tmp_path):
    """Every `python3 deploy/nginx/replicas.py ...` of docs/deployment.md and kelime.conf,
    run from the checkout as written, but writing in a folder of the test's."""
    site = ROOT / "deploy" / "nginx" / "kelime.conf"
    commands = []
    for text in (DOCS.read_text(encoding="utf-8"),
                 re.sub(r"^#(     )?", "", site.read_text(encoding="utf-8"), flags=re.MULTILINE)):
        for found in re.finditer(r"^python3 deploy/nginx/replicas\.py((?:.*\\\n)*.*)$", text,
                                 re.MULTILINE):
            commands.append(shlex.split(found.group(1).replace("\\\n", " ")))
    assert len(commands) >= 3, commands
    for n, args in enumerate(commands):
        assert args[:2] == ["--out", "/etc/nginx/kelime"], args
        done = replicas_py("--out", str(tmp_path / str(n)), *args[2:])
        assert done.returncode == 0, (args, done.stderr)


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
def activated(data: Path, unix: Path, log: Path, args: list[str] | None = None,
              notify: Path | None = None) -> Iterator[tuple[subprocess.Popen, int]]:
    """The unit's ExecStart (or `kelime ARGS`) run as systemd runs it: its sockets (a TCP port of 127.0.0.1
    and the unix socket `unix`) bound here, in the socket unit's order, as file descriptors
    3 and 4 of the process, with LISTEN_FDS=2 and LISTEN_PID its own pid (a shell that
    `exec`s it keeps the pid); its Environment= with KELIME_DATA pointed at `data`;
    NOTIFY_SOCKET=`notify` when given (Type=notify: where it says READY=1)."""
    service = directives(SERVICE)
    argv = shlex.split(service["Service.ExecStart"][0])
    command = kelime_command(*(argv[1:] if args is None else args))  # not /opt/kelime's
    env = dict(os.environ)
    for pair in service.get("Service.Environment", []):
        name, _, value = pair.partition("=")
        env[name] = value
    env["KELIME_DATA"] = str(data)
    if notify:
        env["NOTIFY_SOCKET"] = str(notify)
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
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notified:
        notified.bind(str(tmp_path / "notify"))
        notified.settimeout(PATIENCE)
        with activated(data_dir, unix, log, notify=tmp_path / "notify") as (proc, port):
            said = notified.recv(4096).decode()  # Type=notify: started once this comes
            assert said.startswith("READY=1"), said
            serve_as_systemd(service, proc, port, unix, log)
    assert unix.is_socket()  # systemd's socket: gunicorn leaves it for the next start


def serve_as_systemd(service: dict[str, list[str]], proc: subprocess.Popen, port: int,
                     unix: Path, log: Path) -> None:
    """Ready, answering on both sockets, reloaded by ExecReload, stopped by KillSignal."""
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


@pytest.mark.parametrize("args, named", [(["--fd", "3"], "3"),
                                         (["--port", "8001"], "none")])
def test_fds_that_are_not_the_ones_systemd_handed_over_stop_the_start(data_dir, tmp_path,
                                                                      args, named):
    """A unit whose ExecStart names fewer sockets than its socket unit listens on (a drop-in
    added a ListenStream=), or binds a port of its own, is told so, rather than serving on
    sockets it was not given (or failing on a port systemd holds)."""
    log = tmp_path / "serve.log"
    with activated(data_dir, tmp_path / "kelime.sock", log, ["serve", *args]) as (proc, _):
        assert proc.wait(timeout=60) == 1
    said = log.read_text(errors="replace")
    assert "Traceback" not in said
    assert ("systemd handed over 2 socket(s) (LISTEN_FDS=2: file descriptors 3, 4), and "
            f"--fd names {named}: pass one --fd for each ListenStream= of the socket unit, "
            "from 3 on" in " ".join(said.split())), said


# --- deploy/nginx/replicas.py: the replica lists of the nginx site ---------------------

REPLICAS_PY = ROOT / "deploy" / "nginx" / "replicas.py"


def replicas_py(*args: str) -> subprocess.CompletedProcess:
    """The command as an operator runs it on the balancer: plain python3, no kelime."""
    return subprocess.run(["python3", str(REPLICAS_PY), *args], capture_output=True,
                          text=True, timeout=30, check=False, env={"PATH": os.environ["PATH"]})


def test_replicas_py_writes_the_lists_the_site_includes(tmp_path):
    done = replicas_py("--out", str(tmp_path / "kelime"),
                       "--replica", "unix:/run/kelime/kelime-8001.sock",
                       "--replica", "10.0.0.2:8001", "--replica", "[2001:db8::3]:8001")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (f"wrote {tmp_path}/kelime/replicas.conf, {tmp_path}/kelime/"
                           f"reports.conf: 3 replica(s); reports to one writer, "
                           f"unix:/run/kelime/kelime-8001.sock. Next: nginx -t && nginx -s "
                           f"reload\n")
    head = "# Written by deploy/nginx/replicas.py; run it again to change the replicas.\n"
    assert (tmp_path / "kelime" / "replicas.conf").read_text(encoding="utf-8") == head + (
        "server unix:/run/kelime/kelime-8001.sock max_fails=2 fail_timeout=10s;\n"
        "server 10.0.0.2:8001 max_fails=2 fail_timeout=10s;\n"
        "server [2001:db8::3]:8001 max_fails=2 fail_timeout=10s;\n")
    reports = (tmp_path / "kelime" / "reports.conf").read_text(encoding="utf-8")
    assert reports.endswith("\nserver unix:/run/kelime/kelime-8001.sock max_fails=2 "
                            "fail_timeout=10s;\n")
    again = replicas_py("--out", str(tmp_path / "kelime"), "--replica", "10.0.0.2:8001",
                        "--replica", "10.0.0.3:8001", "--shared-reports")
    assert again.returncode == 0 and "reports to every replica" in again.stdout
    reports = (tmp_path / "kelime" / "reports.conf").read_text(encoding="utf-8")
    assert re.findall(r"^server (\S+)", reports, re.MULTILINE) == ["10.0.0.2:8001",
                                                                   "10.0.0.3:8001"]
    assert sorted(p.name for p in (tmp_path / "kelime").iterdir()) == ["replicas.conf",
                                                                       "reports.conf"]


@pytest.mark.parametrize("args, said", [
    (["--replica", "/run/kelime/kelime-8001.sock"],
     "/run/kelime/kelime-8001.sock: a unix socket is written unix:/run/kelime/kelime-8001.sock"),
    (["--replica", "10.0.0.2"],
     "10.0.0.2 has no port (nginx would use 80): write 10.0.0.2:8001, the replica's port"),
    (["--replica", "10.0.0.2:80001"], "10.0.0.2:80001: the port must be 1 to 65535"),
    (["--replica", "unix:run/k.sock"], "unix:run/k.sock: a unix socket's path must be absolute"),
    (["--replica", "10.0.0.2:8001", "--replica", "10.0.0.2:8001"],
     "10.0.0.2:8001 given twice: nginx would send it twice the share of requests"),
    ([], "no replica: give one --replica ADDRESS for each"),
    (["--replica", "10.0.0.2:8001", "--writer", "10.0.0.2:8001", "--shared-reports"],
     "--writer and --shared-reports: the reports go to one writer"),
])
def test_replicas_py_refuses_what_nginx_would_misread(tmp_path, args, said):
    """A usage error (exit 2) saying what to write, and nothing written."""
    done = replicas_py("--out", str(tmp_path / "kelime"), *args)
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert not (tmp_path / "kelime").exists()
