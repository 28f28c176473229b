"""Run the shipped nginx config (deploy/nginx/nginx.conf + kelime.conf) as a throwaway nginx:
own folder, own port, replicas on unix sockets.

nginx.conf is Debian's /etc/nginx/nginx.conf for kelime, kelime.conf an nginx site for
/etc/nginx/sites-available/. The tests (tests/test_nginx.py) and the benchmarks
(benchmarks/load.py, flood.py, attacks.py) run those same files, changing only:

in kelime.conf (the site)
* `listen 80 ...;`                 -> `listen 127.0.0.1:<port> ...;`
* `include /etc/nginx/kelime/...;`  -> `include <prefix>/...;`, the replica lists that
  deploy/nginx/replicas.py writes there, as an operator runs it: replicas.conf (every
  replica given, in `upstream kelime` and `upstream kelime_search`) and reports.conf (in
  `upstream kelime_reports`: the first replica, the one started with KELIME_REPORTS, or
  every replica when they share one store)
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

    python deploy/nginx/standalone.py --listen 8080 --upstream /run/kelime/kelime-8001.sock \\
        --upstream 127.0.0.1:8002 --prefix /tmp/kelime-nginx
                                            # writes the config, prints the nginx command
"""

from __future__ import annotations

import argparse
import importlib.util
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

_spec = importlib.util.spec_from_file_location("kelime_nginx_replicas", HERE / "replicas.py")
assert _spec and _spec.loader
replicas = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(replicas)

_LISTEN = re.compile(r"^([ \t]*)listen\s+80\b([^;]*);", re.MULTILINE)
#: Each upstream group and the list it includes, and nothing else: a `server` line of the
#: site's own (a second report writer, say) would escape the replica lists the tests write.
_UPSTREAMS = {"kelime": replicas.REPLICAS, "kelime_search": replicas.REPLICAS,
              "kelime_reports": replicas.REPORTS}


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


def render_site(site: str, listen: int, folder: Path, logs: Path) -> str:
    """kelime.conf with the listen port, the folder of the replica lists it includes and the
    log folder replaced."""
    site = _sub(site, _LISTEN.pattern, rf"\g<1>listen 127.0.0.1:{listen}\g<2>;",
                "kelime.conf: the `listen 80 ...;` line")
    for name, listed in _UPSTREAMS.items():
        blocks = re.findall(rf"^upstream\s+{name}\s*\{{(.*?)^\}}", site, re.MULTILINE | re.DOTALL)
        if len(blocks) != 1:
            raise ValueError(f"kelime.conf: expected one `upstream {name} {{ ... }}` block, "
                             f"found {len(blocks)}")
        code = re.sub(r"#.*", "", blocks[0])
        if re.search(r"^\s*server\s", code, re.MULTILINE) or code.count("include") != 1 or \
                not re.search(rf"^\s*include\s+{re.escape(str(replicas.FOLDER / listed))};",
                              code, re.MULTILINE):
            raise ValueError(f"kelime.conf: `upstream {name}` must hold `include "
                             f"{replicas.FOLDER / listed};` and no server line of its own "
                             f"(deploy/nginx/replicas.py writes the replicas)")
    listed_in = re.escape(str(replicas.FOLDER))
    site = _sub(site, rf"^([ \t]*)include\s+{listed_in}/", rf"\g<1>include {folder}/",
                "kelime.conf: the replica lists' includes", 3)
    return _sub(site, r"/var/log/nginx/", f"{logs}/", "kelime.conf: the log folder", None)


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


def address(upstream: str | Path) -> str:
    """nginx's address of a replica: a Path is its unix socket, a str is as replicas.py
    takes it (unix:/PATH or HOST:PORT)."""
    return f"unix:{upstream}" if isinstance(upstream, Path) else upstream


def render(prefix: Path, listen: int, upstreams: list[str | Path], site: Path = SITE,
           main: Path = MAIN, worker_processes: int = 1, shared_reports: bool = False) -> Path:
    """Write <prefix>/nginx.conf (the main config), <prefix>/kelime.conf (the site) and the
    replica lists it includes, as deploy/nginx/replicas.py writes them for `upstreams` (the
    first the report writer, or every one with `shared_reports`); return the main config's
    path."""
    prefix = Path(prefix).resolve()
    for folder in (prefix / "logs", prefix / "temp"):
        folder.mkdir(parents=True, exist_ok=True)
    replicas.write(prefix, replicas.render([address(u) for u in upstreams],
                                           shared=shared_reports))
    rendered = prefix / "kelime.conf"
    rendered.write_text(render_site(site.read_text(encoding="utf-8"), listen, prefix,
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
          worker_processes: int = 1, timeout: float = 15, site: Path = SITE,
          shared_reports: bool = False) -> subprocess.Popen:
    """Render, check and start nginx; return once it accepts connections on `listen`."""
    conf = render(prefix, listen, upstreams, site=site, worker_processes=worker_processes,
                  shared_reports=shared_reports)
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
    parser.add_argument("--upstream", action="append", required=True,
                        help="a replica: its unix socket's path, or HOST:PORT (repeat; the "
                             "first is the report writer, the one started with KELIME_REPORTS)")
    parser.add_argument("--prefix", type=Path, required=True, help="folder for everything")
    parser.add_argument("--workers", type=int, default=1, help="worker_processes [1]")
    args = parser.parse_args()
    upstreams = [Path(u) if u.startswith("/") else u for u in args.upstream]
    conf = render(args.prefix, args.listen, upstreams, worker_processes=args.workers)
    nginx = find_nginx() or "nginx"
    print(f"wrote {conf}; run:\n  " + " ".join(
        repr(a) if " " in a else a for a in command(nginx, args.prefix, conf)))


if __name__ == "__main__":
    main()
