"""Run the shipped deploy/nginx/kelime.conf as a throwaway nginx: own folder, own ports.

kelime.conf is an nginx site for /etc/nginx/sites-available/. The tests
(tests/test_nginx.py) and benchmarks/load.py run that same file, changing only:

* `listen 80 ...;`                 -> `listen 127.0.0.1:<port> ...;`
* the `server 127.0.0.1:800N ...;` lines of `upstream kelime` and of `upstream
  kelime_search` (the same replicas, for searches) -> one per replica given (each keeping
  the parameters, max_fails=... fail_timeout=..., of the block's first line)
* the one `server 127.0.0.1:8001 ...;` line of `upstream kelime_reports` (the replica that
  stores player reports) -> the first replica given (which must be the one started with
  KELIME_REPORTS)
* `/var/log/nginx/`                -> `<prefix>/logs/`

and wrapping it in a minimal main config like Debian's /etc/nginx/nginx.conf, with the pid
file, temp folders and error log under the prefix. Each substitution must match, so an edit
of kelime.conf that would silently escape the tests fails them instead.

    python deploy/nginx/standalone.py --listen 8080 --upstream 8001 --upstream 8002 \\
        --prefix /tmp/kelime-nginx          # writes the config, prints the nginx command
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

SITE = Path(__file__).resolve().parent / "kelime.conf"

_LISTEN = re.compile(r"^([ \t]*)listen\s+80\b([^;]*);", re.MULTILINE)
_UPSTREAMS = ("kelime", "kelime_search")   # every replica, each group
_REPORTS_UPSTREAM = re.compile(r"^upstream\s+kelime_reports\s*\{(.*?)^\}", re.MULTILINE | re.DOTALL)
_SERVER = re.compile(r"^([ \t]*)server\s+127\.0\.0\.1:\d+([^;]*);\n", re.MULTILINE)


def find_nginx() -> str | None:
    """The nginx binary: $KELIME_NGINX when set (only that), else PATH, else /usr/sbin/nginx
    (Debian puts it there, outside an ordinary user's PATH)."""
    if "KELIME_NGINX" in os.environ:
        chosen = os.environ["KELIME_NGINX"]
        return chosen if chosen and os.access(chosen, os.X_OK) else None
    found = shutil.which("nginx")
    if found:
        return found
    return "/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None


def render_site(site: str, listen: int, upstreams: list[int], logs: Path) -> str:
    """kelime.conf with the listen port, the replicas and the log folder replaced; the
    report writer is the first replica."""
    if not upstreams:
        raise ValueError("at least one upstream port is needed")
    site, n = _LISTEN.subn(lambda m: f"{m.group(1)}listen 127.0.0.1:{listen}{m.group(2)};", site)
    if n != 1:
        raise ValueError(f"kelime.conf: expected one `listen 80 ...;` line, found {n}")
    for name in _UPSTREAMS:
        site = _render_replicas(site, name, upstreams)
    site = _render_writer(site, upstreams[0])
    site, n = re.subn(r"/var/log/nginx/", f"{logs}/", site)
    if n == 0:
        raise ValueError("kelime.conf: no /var/log/nginx/ path to move")
    return site


def _render_replicas(site: str, name: str, upstreams: list[int]) -> str:
    """`upstream <name>` with one server line per replica, each with the parameters of the
    block's first server line."""
    block = re.search(rf"^upstream\s+{name}\s*\{{(.*?)^\}}", site, re.MULTILINE | re.DOTALL)
    if not block:
        raise ValueError(f"kelime.conf: no `upstream {name} {{ ... }}` block")
    body = block.group(1)
    servers = list(_SERVER.finditer(body))
    if not servers:
        raise ValueError(f"kelime.conf: `upstream {name}` has no `server 127.0.0.1:PORT` line")
    indent, params = servers[0].group(1), servers[0].group(2)
    lines = "".join(f"{indent}server 127.0.0.1:{port}{params};\n" for port in upstreams)
    body = body[:servers[0].start()] + lines + _SERVER.sub("", body[servers[0].start():])
    return site[:block.start(1)] + body + site[block.end(1):]


def _render_writer(site: str, port: int) -> str:
    """`upstream kelime_reports` pointed at `port`. Exactly one such block with exactly one
    server line: a second server would let reports scatter (or be retried on another
    replica), so it is refused rather than rendered."""
    blocks = list(_REPORTS_UPSTREAM.finditer(site))
    if len(blocks) != 1:
        raise ValueError(f"kelime.conf: expected one `upstream kelime_reports {{ ... }}` "
                         f"block, found {len(blocks)}")
    block = blocks[0]
    servers = len(re.findall(r"^\s*server\s", block.group(1), re.MULTILINE))
    body, n = _SERVER.subn(lambda m: f"{m.group(1)}server 127.0.0.1:{port}{m.group(2)};\n",
                           block.group(1))
    if servers != 1 or n != 1:
        raise ValueError("kelime.conf: `upstream kelime_reports` must hold exactly one "
                         f"`server 127.0.0.1:PORT ...;` line (the report writer), found "
                         f"{servers} server line(s)")
    return site[:block.start(1)] + body + site[block.end(1):]


def render(prefix: Path, listen: int, upstreams: list[int], site: Path = SITE,
           worker_processes: int = 1) -> Path:
    """Write <prefix>/nginx.conf (main config) and <prefix>/kelime.conf (the site); return
    the main config's path."""
    prefix = Path(prefix).resolve()
    logs, temp = prefix / "logs", prefix / "temp"
    for folder in (logs, temp):
        folder.mkdir(parents=True, exist_ok=True)
    (prefix / "kelime.conf").write_text(
        render_site(site.read_text(encoding="utf-8"), listen, upstreams, logs), encoding="utf-8")
    # nginx started as root runs its workers as `nobody`, who cannot enter a private temp
    # folder: keep them as the current user instead.
    user = "user root;\n" if os.geteuid() == 0 else ""
    temps = "".join(f"    {kind}_temp_path {temp}/{kind};\n"
                    for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    main = f"""# Generated by deploy/nginx/standalone.py from {site}; do not edit.
{user}worker_processes {worker_processes};
pid {prefix}/nginx.pid;
error_log {logs}/error.log warn;

events {{
    worker_connections 1024;
}}

http {{
    # What Debian's /etc/nginx/nginx.conf sets around its sites.
    sendfile on;
    tcp_nopush on;
    types_hash_max_size 2048;
    default_type application/octet-stream;
    access_log off;
    gzip on;
{temps}
    include {prefix}/kelime.conf;
}}
"""
    conf = prefix / "nginx.conf"
    conf.write_text(main, encoding="utf-8")
    return conf


def command(nginx: str, prefix: Path, conf: Path) -> list[str]:
    """nginx in the foreground with everything under `prefix` (-e: the log before the config
    is read, which would otherwise be the package's /var/log/nginx/error.log)."""
    prefix = Path(prefix).resolve()
    return [nginx, "-p", f"{prefix}/", "-c", str(conf), "-e", str(prefix / "logs" / "error.log"),
            "-g", "daemon off;"]


def check(nginx: str, prefix: Path, conf: Path) -> None:
    """`nginx -t` on the rendered config; raises with nginx's words when it is refused."""
    out = subprocess.run([*command(nginx, prefix, conf)[:-2], "-t"], capture_output=True,
                         text=True, timeout=30, check=False)
    if out.returncode:
        raise RuntimeError(f"nginx -t refused {conf}:\n{out.stderr}")


def start(nginx: str, prefix: Path, listen: int, upstreams: list[int],
          worker_processes: int = 1, timeout: float = 15) -> subprocess.Popen:
    """Render, check and start nginx; return once it accepts connections on `listen`."""
    conf = render(prefix, listen, upstreams, worker_processes=worker_processes)
    check(nginx, prefix, conf)
    with open(Path(prefix) / "logs" / "stderr.log", "wb") as log:
        proc = subprocess.Popen(command(nginx, prefix, conf), stdout=log,
                                stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            errors = (Path(prefix) / "logs" / "error.log").read_text(errors="replace")
            raise RuntimeError(f"nginx exited with {proc.returncode}:\n{errors}")
        try:
            socket.create_connection(("127.0.0.1", listen), timeout=1).close()
            return proc
        except OSError:
            time.sleep(0.05)
    stop(proc)
    raise RuntimeError(f"nginx did not listen on 127.0.0.1:{listen} within {timeout:g} s")


def stop(proc: subprocess.Popen, timeout: float = 10) -> None:
    """Graceful stop (SIGQUIT: finish the requests in flight, flush the logs), then SIGKILL."""
    if proc.poll() is not None:
        return
    proc.send_signal(3)  # SIGQUIT
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen", type=int, required=True, help="port on 127.0.0.1")
    parser.add_argument("--upstream", type=int, action="append", required=True,
                        help="a replica's port on 127.0.0.1 (repeat; the first is the report "
                             "writer, the one started with KELIME_REPORTS)")
    parser.add_argument("--prefix", type=Path, required=True, help="folder for everything")
    args = parser.parse_args()
    conf = render(args.prefix, args.listen, args.upstream)
    nginx = find_nginx() or "nginx"
    print(f"wrote {conf}; run:\n  " + " ".join(
        repr(a) if " " in a else a for a in command(nginx, args.prefix, conf)))


if __name__ == "__main__":
    main()
