"""Run the shipped nginx config (deploy/nginx/nginx.conf + kelime.conf) as a throwaway nginx:
own folder, own port, replicas on unix sockets.

nginx.conf is Debian's /etc/nginx/nginx.conf for kelime, kelime.conf an nginx site for
/etc/nginx/sites-available/. The tests (tests/test_nginx.py) and the benchmarks
(benchmarks/load.py, flood.py, attacks.py) run those same files, changing only:

in kelime.conf (the site)
* `listen 80 ...;`                 -> `listen 127.0.0.1:<port> ...;`
* the `server unix:/run/kelime/kelime-N.sock ...;` lines of `upstream kelime` and of
  `upstream kelime_search` (the same replicas, for searches) -> one per replica's socket
  given (each keeping the parameters, max_fails=... fail_timeout=..., of the block's first
  line)
* the one `server unix:...;` line of `upstream kelime_reports` (the replica that stores
  player reports) -> the first socket given (which must be the replica started with
  KELIME_REPORTS)
* `/var/log/nginx/`                -> `<prefix>/logs/`

in nginx.conf (the main config)
* `user www-data;`                 -> `user root;` (as root: the workers must enter the
  private temporary folders) or left out (as anyone else, nginx runs as that user)
* `worker_processes auto;`         -> `worker_processes <n>;`
* `pid /run/nginx.pid;`, `/var/log/nginx/`, the `*_temp_path /var/lib/nginx/...` folders
                                   -> under the prefix
* `include /etc/nginx/sites-enabled/*;` -> the rendered site; `include
  /etc/nginx/conf.d/*.conf;` -> left out (the host's own sites are no part of the test)

Each substitution must match, so an edit of either file that would silently escape the
tests fails them instead.

    python deploy/nginx/standalone.py --listen 8080 --upstream /run/kelime/kelime-1.sock \\
        --upstream /run/kelime/kelime-2.sock --prefix /tmp/kelime-nginx
                                            # writes the config, prints the nginx command
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

HERE = Path(__file__).resolve().parent
SITE = HERE / "kelime.conf"
MAIN = HERE / "nginx.conf"

_LISTEN = re.compile(r"^([ \t]*)listen\s+80\b([^;]*);", re.MULTILINE)
_UPSTREAMS = ("kelime", "kelime_search")   # every replica, each group
_REPORTS_UPSTREAM = re.compile(r"^upstream\s+kelime_reports\s*\{(.*?)^\}", re.MULTILINE | re.DOTALL)
_SERVER = re.compile(r"^([ \t]*)server\s+unix:[^\s;]+([^;]*);\n", re.MULTILINE)


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


def _sub(text: str, pattern: str, repl: str, what: str, count: int | None = 1,
         flags: int = re.MULTILINE) -> str:
    """`text` with `pattern` replaced; ValueError unless it matched `count` times (None:
    at least once)."""
    text, n = re.subn(pattern, lambda m: m.expand(repl), text, flags=flags)
    if (n == 0) if count is None else (n != count):
        raise ValueError(f"{what}: expected {count or 'at least one'} match(es) of "
                         f"{pattern!r}, found {n}")
    return text


def render_site(site: str, listen: int, upstreams: list[str | Path], logs: Path) -> str:
    """kelime.conf with the listen port, the replicas' sockets and the log folder replaced;
    the report writer is the first replica."""
    if not upstreams:
        raise ValueError("at least one upstream socket is needed")
    sockets = [str(path) for path in upstreams]
    site = _sub(site, _LISTEN.pattern, rf"\g<1>listen 127.0.0.1:{listen}\g<2>;",
                "kelime.conf: the `listen 80 ...;` line")
    for name in _UPSTREAMS:
        site = _render_replicas(site, name, sockets)
    site = _render_writer(site, sockets[0])
    return _sub(site, r"/var/log/nginx/", f"{logs}/", "kelime.conf: the log folder", None)


def _render_replicas(site: str, name: str, sockets: list[str]) -> str:
    """`upstream <name>` with one server line per replica, each with the parameters of the
    block's first server line."""
    block = re.search(rf"^upstream\s+{name}\s*\{{(.*?)^\}}", site, re.MULTILINE | re.DOTALL)
    if not block:
        raise ValueError(f"kelime.conf: no `upstream {name} {{ ... }}` block")
    body = block.group(1)
    servers = list(_SERVER.finditer(body))
    if not servers:
        raise ValueError(f"kelime.conf: `upstream {name}` has no `server unix:PATH` line")
    indent, params = servers[0].group(1), servers[0].group(2)
    lines = "".join(f"{indent}server unix:{path}{params};\n" for path in sockets)
    body = body[:servers[0].start()] + lines + _SERVER.sub("", body[servers[0].start():])
    return site[:block.start(1)] + body + site[block.end(1):]


def _render_writer(site: str, path: str) -> str:
    """`upstream kelime_reports` pointed at `path`. Exactly one such block with exactly one
    server line: a second server would let reports scatter (or be retried on another
    replica), so it is refused rather than rendered."""
    blocks = list(_REPORTS_UPSTREAM.finditer(site))
    if len(blocks) != 1:
        raise ValueError(f"kelime.conf: expected one `upstream kelime_reports {{ ... }}` "
                         f"block, found {len(blocks)}")
    block = blocks[0]
    servers = len(re.findall(r"^\s*server\s", block.group(1), re.MULTILINE))
    body, n = _SERVER.subn(lambda m: f"{m.group(1)}server unix:{path}{m.group(2)};\n",
                           block.group(1))
    if servers != 1 or n != 1:
        raise ValueError("kelime.conf: `upstream kelime_reports` must hold exactly one "
                         f"`server unix:PATH ...;` line (the report writer), found "
                         f"{servers} server line(s)")
    return site[:block.start(1)] + body + site[block.end(1):]


def render_main(main: str, prefix: Path, site: Path, worker_processes: int) -> str:
    """nginx.conf with the user, workers, pid, logs, temporary folders and the site's
    include moved under `prefix`."""
    logs, temp = prefix / "logs", prefix / "temp"
    what = "nginx.conf"
    # nginx started as root runs its workers as `user`; www-data cannot enter a private
    # temporary folder: keep them as root. Anyone else: nginx runs as that user anyway.
    user = "user root;" if os.geteuid() == 0 else "# user www-data;  (not root: ignored)"
    main = _sub(main, r"^user\s+www-data;", user, f"{what}: `user www-data;`")
    main = _sub(main, r"^worker_processes\s+auto;", f"worker_processes {worker_processes};",
                f"{what}: `worker_processes auto;`")
    main = _sub(main, r"^pid\s+/run/nginx\.pid;", f"pid {prefix}/nginx.pid;",
                f"{what}: `pid /run/nginx.pid;`")
    main = _sub(main, r"/var/log/nginx/", f"{logs}/", f"{what}: the log folder", None)
    main = _sub(main, r"^([ \t]*)(\w+)_temp_path\s+/var/lib/nginx/(\w+);",
                rf"\g<1>\g<2>_temp_path {temp}/\g<3>;", f"{what}: the temporary folders", 5)
    main = _sub(main, r"^([ \t]*)include\s+/etc/nginx/conf\.d/\*\.conf;",
                r"\g<1># (the host's conf.d/ is left out)", f"{what}: the conf.d include")
    return _sub(main, r"^([ \t]*)include\s+/etc/nginx/sites-enabled/\*;",
                rf"\g<1>include {site};", f"{what}: the sites-enabled include")


def render(prefix: Path, listen: int, upstreams: list[str | Path], site: Path = SITE,
           main: Path = MAIN, worker_processes: int = 1) -> Path:
    """Write <prefix>/nginx.conf (the main config) and <prefix>/kelime.conf (the site);
    return the main config's path."""
    prefix = Path(prefix).resolve()
    for folder in (prefix / "logs", prefix / "temp"):
        folder.mkdir(parents=True, exist_ok=True)
    rendered = prefix / "kelime.conf"
    rendered.write_text(render_site(site.read_text(encoding="utf-8"), listen, upstreams,
                                    prefix / "logs"), encoding="utf-8")
    conf = prefix / "nginx.conf"
    conf.write_text(f"# Generated by deploy/nginx/standalone.py from {main}; do not edit.\n" +
                    render_main(main.read_text(encoding="utf-8"), prefix, rendered,
                                worker_processes), encoding="utf-8")
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


def start(nginx: str, prefix: Path, listen: int, upstreams: list[str | Path],
          worker_processes: int = 1, timeout: float = 15, site: Path = SITE) -> subprocess.Popen:
    """Render, check and start nginx; return once it accepts connections on `listen`."""
    conf = render(prefix, listen, upstreams, site=site, worker_processes=worker_processes)
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
    parser.add_argument("--upstream", type=Path, action="append", required=True,
                        help="a replica's unix socket (repeat; the first is the report writer, "
                             "the one started with KELIME_REPORTS)")
    parser.add_argument("--prefix", type=Path, required=True, help="folder for everything")
    parser.add_argument("--workers", type=int, default=1, help="worker_processes [1]")
    args = parser.parse_args()
    conf = render(args.prefix, args.listen, args.upstream, worker_processes=args.workers)
    nginx = find_nginx() or "nginx"
    print(f"wrote {conf}; run:\n  " + " ".join(
        repr(a) if " " in a else a for a in command(nginx, args.prefix, conf)))


if __name__ == "__main__":
    main()
