"""Write the replicas of the kelime nginx site (deploy/nginx/kelime.conf): the upstream
lists its `include` lines read, for any number of replicas, each a unix socket (nginx on
the replica's own host) or host:port (nginx on another host).

    python3 deploy/nginx/replicas.py --out /etc/nginx/kelime \\
        --replica unix:/run/kelime/kelime-8001.sock --replica 10.0.0.2:8001 \\
        --replica 10.0.0.3:8001
    nginx -t && nginx -s reload

writes, in --out:

* replicas.conf: one `server ADDRESS max_fails=2 fail_timeout=10s;` line per replica,
  included by `upstream kelime` and `upstream kelime_search` (every route, and the
  searches' own group of the same replicas);
* reports.conf: who takes POST /v1/reports, included by `upstream kelime_reports`: the
  one replica started with KELIME_REPORTS=<a SQLite file> (--writer; by default the first
  --replica), or, with --shared-reports, every replica, when they all write to one
  PostgreSQL store (KELIME_REPORTS=postgresql://...).

Each file is replaced whole (written beside it, then renamed), so an nginx reload never
reads half of one. Plain Python 3, no kelime needed: the balancer runs nginx only.
deploy/nginx/standalone.py writes the same files for the tests.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import re
import sys
from pathlib import Path

#: What kelime.conf includes, where an operator's nginx reads it (Debian: /etc/nginx).
FOLDER = Path("/etc/nginx/kelime")
REPLICAS, REPORTS = "replicas.conf", "reports.conf"
#: Passive health checks, each server's: left out for 10 s after 2 failures in 10 s.
PARAMETERS = "max_fails=2 fail_timeout=10s"
_HOST = re.compile(r"^(?:\[(?P<v6>[0-9a-fA-F:.]+)\]|(?P<name>[A-Za-z0-9.-]+)):(?P<port>\d+)$")


class AddressError(ValueError):
    """A replica's address nginx would take for something else, or refuse."""


def address(text: str) -> str:
    """`text` checked as nginx's address of a replica: `unix:/absolute/path` or
    `host:port` (an IPv4 address, a [IPv6] one or a name, and a port)."""
    if text.startswith("unix:"):
        path = text[len("unix:"):]
        if not path.startswith("/"):
            raise AddressError(f"{text}: a unix socket's path must be absolute "
                               f"(unix:/run/kelime/kelime-8001.sock)")
        if len(path.encode()) > 107:
            raise AddressError(f"{text}: a unix socket's path has at most 107 bytes, this "
                               f"one {len(path.encode())}")
        if any(c.isspace() or c in ";{}#'\"" for c in path):
            raise AddressError(f"{text}: a space or one of ; {{ }} # ' \" in the path would "
                               f"end nginx's directive: use a plain path")
        return text
    if text.startswith("/"):
        raise AddressError(f"{text}: a unix socket is written unix:{text}")
    found = _HOST.match(text)
    if not found:
        if re.fullmatch(r"[A-Za-z0-9.-]+|\[[0-9a-fA-F:.]+\]", text):
            raise AddressError(f"{text} has no port (nginx would use 80): write "
                               f"{text}:8001, the replica's port")
        raise AddressError(f"{text} is no replica address: write unix:/PATH (a socket on "
                           f"this host) or HOST:PORT (10.0.0.2:8001, [2001:db8::2]:8001)")
    if not 1 <= int(found["port"]) <= 65535:
        raise AddressError(f"{text}: the port must be 1 to 65535")
    if found["v6"]:
        try:
            ipaddress.IPv6Address(found["v6"])
        except ValueError:
            raise AddressError(f"{text}: [{found['v6']}] is no IPv6 address") from None
    return text


def servers(addresses: list[str]) -> str:
    """The `server` lines of `addresses`, one each, with the health checks' parameters."""
    return "".join(f"server {a} {PARAMETERS};\n" for a in addresses)


def render(replicas: list[str], writer: str | None = None,
           shared: bool = False) -> dict[str, str]:
    """file name -> text of the two files, for `replicas` (checked, at least one, no
    duplicate) and the reports taken by `writer` (default: the first replica) or, `shared`,
    by every replica."""
    if not replicas:
        raise AddressError("no replica: give one --replica ADDRESS for each")
    checked = [address(a) for a in replicas]
    twice = sorted({a for a in checked if checked.count(a) > 1})
    if twice:
        raise AddressError(f"{', '.join(twice)} given twice: nginx would send it twice the "
                           f"share of requests")
    if shared and writer:
        raise AddressError("--writer and --shared-reports: the reports go to one writer "
                           "(a SQLite store) or to every replica (one PostgreSQL store), "
                           "not both")
    head = "# Written by deploy/nginx/replicas.py; run it again to change the replicas.\n"
    if shared:
        reports = ("# Every replica takes reports: they share one PostgreSQL store "
                   "(KELIME_REPORTS=postgresql://...).\n" + servers(checked))
    else:
        one = address(writer) if writer else checked[0]
        reports = ("# The one replica started with KELIME_REPORTS=<a SQLite file>: it alone "
                   "stores reports.\n" + servers([one]))
    return {REPLICAS: head + servers(checked), REPORTS: head + reports}


def write(folder: Path, files: dict[str, str]) -> list[Path]:
    """Each file in `folder` (made if need be), replaced whole: written beside, renamed."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        path = folder / name
        partial = path.with_name(f".{name}.{os.getpid()}")
        partial.write_text(text, encoding="utf-8")
        partial.chmod(0o644)
        os.replace(partial, path)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="example: python3 deploy/nginx/replicas.py --out /etc/nginx/kelime "
               "--replica unix:/run/kelime/kelime-8001.sock --replica 10.0.0.2:8001")
    parser.add_argument("--replica", action="append", default=[], metavar="ADDRESS",
                        help="a replica: unix:/PATH (on this host) or HOST:PORT; repeat")
    parser.add_argument("--writer", metavar="ADDRESS", default=None,
                        help="the replica that stores reports (SQLite KELIME_REPORTS) "
                             "[default: the first --replica]")
    parser.add_argument("--shared-reports", action="store_true",
                        help="every replica takes reports: they share one PostgreSQL store")
    parser.add_argument("--out", type=Path, default=FOLDER,
                        help=f"the folder kelime.conf includes from [{FOLDER}]")
    args = parser.parse_args(argv)
    try:
        files = render(args.replica, args.writer, args.shared_reports)
    except AddressError as e:
        parser.error(str(e))
    try:
        written = write(args.out, files)
    except OSError as e:
        print(f"replicas.py: cannot write in {args.out} ({e.strerror}): run it as the user "
              f"who owns nginx's configuration (root), or pass --out", file=sys.stderr)
        return 1
    count = len(args.replica)
    reports = ("every replica" if args.shared_reports
               else f"one writer, {args.writer or args.replica[0]}")
    print(f"wrote {', '.join(map(str, written))}: {count} replica(s); reports to {reports}. "
          f"Next: nginx -t && nginx -s reload")
    return 0


if __name__ == "__main__":
    sys.exit(main())
