"""What reading a request body costs: the msgspec models (service/models.py) against the
hand-written parsers they replaced, both measured in the same run.

    .venv/bin/python benchmarks/parse.py            # ~20 seconds
    .venv/bin/python benchmarks/parse.py --quick    # ~5 seconds
    .venv/bin/python benchmarks/parse.py --http --data DATA   # and over HTTP, ~2 minutes

The old parsers are service/parse.py and service/questions.py as of --old (a git revision,
default OLD_PARSE: the commit before the models), loaded from git with their relative
imports made absolute. Each body is parsed in a loop, old and new interleaved, by CPU time
(time.process_time: other load on the machine barely moves it); the figure is the median
of the rounds, µs a body, and new/old as a ratio (below 1: the models are faster). The
bodies: an 8-word and a 1,000-word POST /v1/validate (the hot path), an anagram question
with options, a report; then refused bodies (the error path, where the models read the JSON
a second time to explain the refusal).

With --http, the same before and after over HTTP on 127.0.0.1: two `kelime serve` of one
worker side by side, today's and the --old revision's (exported from git into a temporary
folder), and FastAPI's hello world as the baseline, each run in turn (interleaved, so load
from elsewhere hits them alike): an 8-word and a 1,000-word POST /v1/validate and one
anagram question (a 7-tile rack, 20 words listed). Figures are requests/s and the servers'
CPU µs a request (/proc/PID/stat), the median of the rounds; new/old above 1 in req/s or
below 1 in CPU µs: the models are faster. Load from `wrk` (benchmarks/validate.py's).
`--old HEAD` (a clean tree) runs today's code on both: an A/A run, whose new/old is the
noise of the machine.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
OLD_PARSE = "90b1389"  # the last commit with the hand-written parsers
LETTERS = "abcçdefgğhıijklmnoöprsştuüvyz"


def old_module(name: str, revision: str, path: str, replace: dict[str, str]) -> types.ModuleType:
    """`path` as of `revision`, as a module named `name` (its imports rewritten by
    `replace`)."""
    source = subprocess.run(["git", "-C", str(HERE.parent), "show", f"{revision}:{path}"],
                            capture_output=True, text=True, check=True).stdout
    for old, new in replace.items():
        source = source.replace(old, new)
    module = sys.modules[name] = types.ModuleType(name)
    exec(compile(source, f"{revision}:{path}", "exec"), module.__dict__)
    return module


def parsers(revision: str) -> dict[str, tuple[Callable, Callable]]:
    """kind → (old parser, new parser)."""
    from kelime.service import models, parse

    new = {"validate": parse.parse_body, "anagram": models.parse_anagram,
           "report": models.parse_report}
    if same_code(revision):  # an A/A run
        return {kind: (f, f) for kind, f in new.items()}
    old_parse = old_module("old_parse", revision, "service/parse.py",
                           {"from .": "from kelime.service."})
    old_questions = old_module("old_questions", revision, "service/questions.py",
                               {"from .parse ": "from old_parse ",
                                "from .": "from kelime.service."})
    old = {"validate": old_parse.parse_body, "anagram": old_questions.parse_anagram,
           "report": old_questions.parse_report}
    return {kind: (old[kind], new[kind]) for kind in new}


def words(count: int, seed: int = 42) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choices(LETTERS, k=rng.randint(3, 10))) for _ in range(count)]


BODIES = [
    ("validate", "8 words", orjson.dumps({"words": words(8), "game": "kelimelik"})),
    ("validate", "1,000 words", orjson.dumps({"words": words(1000)})),
    ("anagram", "rack + options", orjson.dumps({"rack": "kale?[lm]", "game": "kelimatik",
                                               "limit": 20, "exclude": ["kale", "elma"],
                                               "sort": "length"})),
    ("report", "word + note", orjson.dumps({"word": "kitapçık", "kind": "missing",
                                            "note": "TDK'de var"})),
    ("validate", "refused: a number among 8 words", orjson.dumps(
        {"words": [*words(7), 5]})),
    ("validate", "refused: unknown field", b'{"words": ["ev"], "wrods": ["b"]}'),
    ("anagram", "refused: limit a string", b'{"rack": "kale", "limit": "5"}'),
]


def per_call(parse: Callable, body: bytes, settings, loops: int) -> float:
    """CPU seconds a call, over `loops` calls (a refusal counts as a call)."""
    from kelime.service.errors import ServiceError

    start = time.process_time()
    for _ in range(loops):
        with contextlib.suppress(ServiceError):  # the refused bodies are meant to raise
            parse(body, settings)
    return (time.process_time() - start) / loops


def with_verdicts(validate: tuple[Callable, Callable], data: Path, settings,
                  rounds: int) -> None:
    """Parse and answer (`validate_json`, the rest of the route's work) 8 and 1,000 words of
    the lexicon under `data`, old parser and new, interleaved: CPU µs a body."""
    from kelime.lexicon import load_lexicon
    from kelime.lexicon.verdicts import validate_json

    sys.path.insert(0, str(HERE))
    from validate import sample_words

    lex = load_lexicon(data, "tr")
    pool, rng = sample_words(lex, 20_000), random.Random(1)
    print(f"\nparse + verdicts (validate_json) of {lex.name} {lex.info['version']}, CPU time, "
          f"median of {rounds} rounds, old and new in turn\n")
    print(f"{'body':<40} {'old µs':>9} {'new µs':>9} {'new/old':>8}")
    for size in (8, 1000):
        bodies = [orjson.dumps({"words": rng.sample(pool, size)}) for _ in range(50)]
        loops = 400 if size == 8 else 8

        def run(parse: Callable, bodies: list[bytes] = bodies, loops: int = loops) -> float:
            start = time.process_time()
            for _ in range(loops):
                for body in bodies:
                    validate_json(lex, parse(body, settings).words, 2)
            return (time.process_time() - start) / (loops * len(bodies))

        times: dict[str, list[float]] = {"old": [], "new": []}
        for r in range(rounds):
            for which in ("old", "new") if r % 2 else ("new", "old"):
                times[which].append(run(validate[which == "new"]))
        o, n = statistics.median(times["old"]), statistics.median(times["new"])
        print(f"{f'validate {size:,} words':<40} {o * 1e6:>9.2f} {n * 1e6:>9.2f} "
              f"{n / o:>7.2f}x")


def old_server(tree: Path, data: Path, logs: Path):
    """`kelime serve` (one worker) of the code in `tree`, on a free port: `tree` first on
    PYTHONPATH, which the server's worker processes inherit."""
    import os

    import validate

    port = validate.free_port()
    log = logs / "kelime-old.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(HERE)])}
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", "from kelime.cli import main; main()",
                                 "serve", "--data", str(data), "--port", str(port),
                                 "--workers", "1"], stdout=out, stderr=subprocess.STDOUT,
                                env=env, cwd=tree)
    server = validate.Server("kelime (old)", port, proc)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if validate.http_get_status(port, "/readyz") == 200:
                return server
        except OSError:
            time.sleep(0.1)
    server.stop()
    raise SystemExit(f"the old kelime did not answer /readyz within 60 s; see {log}")


def http_cases() -> list:
    from anagram import plain_racks
    from validate import Case

    rng = random.Random(7)
    pool = words(20_000)
    out = [Case("hello world (FastAPI)", 0, "GET", ["/hello"], [b""], baseline=True)]
    for size in (8, 1000):
        out.append(Case(f"POST /v1/validate x{size}", size, "POST", ["/v1/validate"] * 50,
                        [orjson.dumps({"words": rng.sample(pool, size)}) for _ in range(50)]))
    racks = plain_racks(50, 5, 2, 3)
    out.append(Case("POST /v1/anagram (7 tiles, 20 words)", 0, "POST", ["/v1/anagram"] * 50,
                    [orjson.dumps({"rack": r, "limit": 20}) for r in racks]))
    return out


def over_http(revision: str, data: Path | None, seconds: float, rounds: int) -> None:
    import tempfile

    from validate import (
        cpu_seconds,
        hello_server,
        kelime_server,
        lexicon_folder,
        process_tree,
        run_wrk,
    )

    with tempfile.TemporaryDirectory(prefix="kelime-parse-") as tmp:
        tmp = Path(tmp)
        tree = tmp / "old"
        tree.mkdir()
        archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", revision],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        data = lexicon_folder(data, tmp / "data")
        servers = {"hello": hello_server(1, tmp), "old": old_server(tree, data, tmp),
                   "new": kelime_server(data, 1, tmp)}
        rates: dict[tuple[str, str], list[float]] = {}
        cpu: dict[tuple[str, str], list[float]] = {}
        try:
            if same_code(revision):
                print("\nboth servers run today's code: new/old is the noise of this machine")
            else:
                check_old_code(servers["old"].port, servers["new"].port)
            all_cases = http_cases()
            for round_ in range(rounds + 1):  # round 0 warms up, unrecorded
                for case in all_cases:
                    order = ("old", "new") if round_ % 2 else ("new", "old")  # neither first
                    for which in (("hello",) if case.baseline else order):
                        server = servers[which]
                        run_for = 1.0 if round_ == 0 else seconds
                        pids = process_tree(server.proc.pid)
                        used = cpu_seconds(pids)
                        rate, bad = run_wrk(server.port, case, run_for, 16, 1, tmp)
                        if bad:
                            raise SystemExit(f"{which} {case.name}: {bad} replies not 2xx")
                        if round_:
                            key = (case.name, which)
                            rates.setdefault(key, []).append(rate)
                            cpu.setdefault(key, []).append(
                                (cpu_seconds(pids) - used) / max(1.0, rate * round(run_for)))
        finally:
            for server in servers.values():
                server.stop()
    med = {key: statistics.median(v) for key, v in rates.items()}
    cpus = {key: statistics.median(v) for key, v in cpu.items()}
    hello = med[(all_cases[0].name, "hello")]
    print(f"\nHTTP, 1 worker, 16 connections (wrk), {seconds:g} s a run, median of {rounds} "
          f"round(s); hello world {hello:,.0f} req/s, "
          f"{cpus[(all_cases[0].name, 'hello')] * 1e6:,.0f} CPU µs/req\n")
    print(f"{'request':<38} {'old req/s':>10} {'new req/s':>10} {'new/old':>8} "
          f"{'old/hello':>9} {'new/hello':>9} {'old CPU µs':>10} {'new CPU µs':>10} "
          f"{'new/old':>8}")
    for case in all_cases[1:]:
        o, n = med[(case.name, "old")], med[(case.name, "new")]
        co, cn = cpus[(case.name, "old")], cpus[(case.name, "new")]
        print(f"{case.name:<38} {o:>10,.0f} {n:>10,.0f} {n / o:>7.2f}x {o / hello:>9.2f} "
              f"{n / hello:>9.2f} {co * 1e6:>10,.0f} {cn * 1e6:>10,.0f} {cn / co:>7.2f}x")


def same_code(revision: str) -> bool:
    """Whether `revision` is HEAD and the work tree clean (an A/A run)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(HERE.parent), *args], capture_output=True,
                              text=True, check=True).stdout.strip()
    return (git("rev-parse", revision) == git("rev-parse", "HEAD")
            and not git("status", "--porcelain", "--", "service", "kelime"))


def check_old_code(old_port: int, new_port: int) -> None:
    """The two servers run different parsers (a refusal each words its own way)."""
    import http.client

    said = []
    for port in (old_port, new_port):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("POST", "/v1/validate", b'{"words": ["ev"], "lexicon": 5}',
                     {"Content-Type": "application/json"})
        said.append(orjson.loads(conn.getresponse().read())["error"]["message"])
        conn.close()
    if said[0] == said[1]:
        raise SystemExit(f"the old and new servers answer alike ({said[0]!r}): is --old right?")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke test)")
    parser.add_argument("--old", default=OLD_PARSE, help=f"git revision of the old parsers "
                        f"[{OLD_PARSE}]")
    parser.add_argument("--http", action="store_true", help="also over HTTP (needs wrk)")
    parser.add_argument("--data", type=Path, help="data folder with the lexicon to serve "
                        "[the offline bootstrap lexicon, built first]")
    parser.add_argument("--seconds", type=float, help="seconds a run [5, quick 2]")
    parser.add_argument("--rounds", type=int, help="rounds [3, quick 1]")
    args = parser.parse_args(argv)
    from kelime.service.settings import Settings

    settings = Settings()
    table = parsers(args.old)
    rounds, budget = (5, 0.05) if args.quick else (11, 0.2)
    print(f"Python {sys.version.split()[0]}; old parsers as of {args.old}; CPU time, median "
          f"of {rounds} rounds\n")
    print(f"{'body':<40} {'old µs':>9} {'new µs':>9} {'new/old':>8}")
    for kind, name, body in BODIES:
        old, new = table[kind]
        loops = max(1, int(budget / max(per_call(old, body, settings, 3), 1e-7)))
        times: dict[str, list[float]] = {"old": [], "new": []}
        for _ in range(rounds):  # interleaved: a burst of load hits both alike
            times["old"].append(per_call(old, body, settings, loops))
            times["new"].append(per_call(new, body, settings, loops))
        o, n = statistics.median(times["old"]), statistics.median(times["new"])
        print(f"{kind + ' ' + name:<40} {o * 1e6:>9.2f} {n * 1e6:>9.2f} {n / o:>7.2f}x")
    if args.data:
        with_verdicts(table["validate"], args.data, settings, rounds)
    if args.http:
        sys.path.insert(0, str(HERE))
        over_http(args.old, args.data, args.seconds or (2 if args.quick else 5),
                  args.rounds or (1 if args.quick else 3))


if __name__ == "__main__":
    main()
