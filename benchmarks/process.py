"""`kelime serve`'s processes under the signals an operator (or a closed terminal) sends:

    .venv/bin/python benchmarks/process.py              # ~2 minutes
    .venv/bin/python benchmarks/process.py --data data --trials 5

- SIGHUP at moments from 0.005 s to 0.4 s after `kelime serve` is started (Popen): how many
  tries end with the server alive and serving, and for how many it died of the signal (the
  first ~30 ms are Python's own start-up, before any line of kelime runs);
- a SIGSTOPped worker: how long until gunicorn's heartbeat (KELIME_WORKER_TIMEOUT) has it
  killed and replaced, and how many validate requests failed meanwhile (none should: the
  other worker serves);
- kill -9 of a worker around reloads: after each admin reload's 200, how many of the
  following requests (new connections, so every worker answers) came from an older build.

Each server is started with the lexicon under --data (built as `make lexicon` does when
missing), on 127.0.0.1, and stopped by its process id. Every loop is bounded.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "benchmark-token-0123456789"


def kelime() -> list[str]:
    script = Path(sys.executable).parent / "kelime"
    return [str(script)] if script.exists() else [sys.executable, "-m", "kelime.cli"]


def listening() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


def start(data: Path, workers: int, log, **env: str) -> tuple[subprocess.Popen, int]:
    with listening() as sock:
        proc = subprocess.Popen([*kelime(), "serve", "--data", str(data), "--workers",
                                 str(workers), "--fd", str(sock.fileno())],
                                pass_fds=[sock.fileno()], stdout=log, stderr=log,
                                env={**os.environ, "KELIME_ADMIN_TOKEN": TOKEN, **env})
        return proc, sock.getsockname()[1]


def ask(port: int, method: str = "GET", path: str = "/readyz", body: bytes | None = None,
        headers: dict | None = None) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        reply = conn.getresponse()
        return reply.status, json.loads(reply.read() or b"{}")
    finally:
        conn.close()


def ready(proc: subprocess.Popen, port: int, timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if ask(port)[0] == 200:
                return True
        except OSError:
            time.sleep(0.05)
    return False


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def workers(proc: subprocess.Popen) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True)
    return [int(pid) for pid in out.stdout.split()]


def version(port: int) -> str:
    status, body = ask(port, "POST", "/v1/validate", b'{"words": ["kitap"]}',
                       {"Content-Type": "application/json"})
    return body["lexicon"]["version"] if status == 200 else f"status {status}"


def sighup_at_start(data: Path, trials: int, folder: Path) -> None:
    print("SIGHUP after `kelime serve` is started (Popen), 1 worker")
    print(f"{'after (s)':>10}  {'alive, serving':>14}  {'died of SIGHUP':>14}")
    for moment in (0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.3, 0.4):
        alive = died = 0
        for _ in range(trials):
            with open(folder / "hup.log", "w") as log:
                proc, port = start(data, 1, log)
            time.sleep(moment)
            proc.send_signal(signal.SIGHUP)
            if ready(proc, port):
                alive += 1
            elif proc.returncode == -signal.SIGHUP:
                died += 1
            stop(proc)
        print(f"{moment:>10.3f}  {alive:>11}/{trials}  {died:>11}/{trials}")


def stopped_worker(data: Path, folder: Path, timeout: int) -> None:
    with open(folder / "stop.log", "w") as log:
        proc, port = start(data, 2, log, KELIME_WORKER_TIMEOUT=str(timeout))
    try:
        assert ready(proc, port), (folder / "stop.log").read_text()
        hung = workers(proc)[0]
        os.kill(hung, signal.SIGSTOP)
        began, failed, answered = time.monotonic(), 0, 0
        while hung in workers(proc) and time.monotonic() - began < 10 * timeout:
            try:
                served = not version(port).startswith("status")
            except OSError:
                served = False
            answered, failed = answered + served, failed + (not served)
        gone = time.monotonic() - began
        while len(workers(proc)) < 2 and time.monotonic() - began < 10 * timeout:
            time.sleep(0.05)
        print(f"\nA SIGSTOPped worker (KELIME_WORKER_TIMEOUT={timeout}): killed after "
              f"{gone:.1f} s, replaced after {time.monotonic() - began:.1f} s; "
              f"{answered} validates answered meanwhile, {failed} failed")
    finally:
        stop(proc)


def kills_during_reloads(data: Path, folder: Path, rounds: int) -> None:
    from kelime.lexicon import Candidate, compile_words, write_lexicon

    source = {"kind": "benchmark", "name": "benchmarks/process.py", "licence": "n/a"}
    own = folder / "data"

    def build(*extra: str) -> str:
        words = [Candidate(w) for w in ("kitap", "kalem", "ev", *extra)]
        return write_lexicon(compile_words(words), own, "tr", source,
                             created="2026-01-01T00:00:00Z").manifest.version

    build()
    with open(folder / "kill.log", "w") as log:
        proc, port = start(own, 2, log)
    older, after, statuses = 0, 0, {}
    try:
        assert ready(proc, port), (folder / "kill.log").read_text()
        for n in range(rounds):
            newest = build(f"kelime{n}")
            os.kill(workers(proc)[n % 2], signal.SIGKILL)
            status, _ = ask(port, "POST", "/v1/admin/reload", b"",
                            {"Authorization": f"Bearer {TOKEN}"})
            statuses[status] = statuses.get(status, 0) + 1
            if status == 200:
                for _ in range(10):
                    after += 1
                    older += version(port) != newest
    finally:
        stop(proc)
    print(f"\nkill -9 of a worker before each of {rounds} admin reloads: reloads answered "
          f"{statuses}; of {after} validates after a 200, {older} from an older build")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT / "data")
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--timeout", type=int, default=3, help="KELIME_WORKER_TIMEOUT")
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="kelime-process-"))
    try:
        sighup_at_start(args.data, args.trials, folder)
        stopped_worker(args.data, folder, args.timeout)
        kills_during_reloads(args.data, folder, args.rounds)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
