"""Many machines: three real replicas, each with its own data folder, behind the shipped
nginx. A rollout as docs/deployment.md describes it: a game that pinned its lexicon's
version gets identical verdicts on every request while one replica, then all, move to a new
build; a game that did not pin is told which build answered each reply. Reports from every
replica land in one PostgreSQL store, each with the build the player was answered from, and
with a replica killed the others take them. Skips without nginx (`apt-get install nginx`);
the reports test without PostgreSQL (`apt-get install postgresql`)."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path
from urllib.parse import quote

import pytest

from kelime.lexicon import Candidate, compile_words, write_lexicon
from kelime.lexicon.write import BUILDS_DIR
from tests.postgres import MISSING, postgres_server, server_bin
from tests.test_nginx import crash, nginx_in_front, replicas, request, status_of
from tests.waiting import wait_until

pytestmark = pytest.mark.slow

SOURCE = {"kind": "test", "name": "tests/test_rollout.py", "licence": "n/a"}
WORDS = ["kitap", "kalem", "defter", "silgi", "masa"]
ASKED = ["kitap", "dangalak", "masa"]


def build(data: Path, *extra: str) -> str:
    return write_lexicon(compile_words([Candidate(w) for w in [*WORDS, *extra]]), data, "tr",
                         SOURCE, created="2026-01-01T00:00:00Z").manifest.version


def ask(port: int, lexicon: str | None, i: int) -> tuple[str, tuple[bool, ...]]:
    """One question through nginx, GET or POST in turn: (the version that answered, verdicts)."""
    if i % 2:
        query = "&".join(f"word={w}" for w in ASKED)
        path = f"/v1/validate?{query}" + (f"&lexicon={quote(lexicon)}" if lexicon else "")
        status, _, raw = request(port, "GET", path)
    else:
        body = {"words": ASKED, **({"lexicon": lexicon} if lexicon else {})}
        status, _, raw = request(port, "POST", "/v1/validate", json.dumps(body).encode())
    reply = json.loads(raw)
    assert status == 200, reply
    return reply["lexicon"]["version"], tuple(r["valid"] for r in reply["results"])


def reload(replica) -> None:
    """SIGHUP (what `kelime reload` sends) and wait until its /readyz shows new builds."""
    before = replica_ready(replica)
    os.kill(replica.proc.pid, signal.SIGHUP)
    wait_until(lambda: replica_ready(replica) != before, f"replica {replica.port} reloads")


def replica_ready(replica) -> dict:
    status, _, raw = request(replica.port, "GET", "/readyz")
    assert status == 200, raw
    return json.loads(raw)["held"]


def use(data: Path, version: str) -> None:
    """Point data/tr at the build `version`, atomically."""
    link = data / ".tr.new"
    link.unlink(missing_ok=True)
    os.symlink(f"{BUILDS_DIR}/tr-{version}", link)
    os.replace(link, data / "tr")


def test_a_rollout_never_changes_a_pinned_games_verdicts(tmp_path):
    first = tmp_path / "machine-0" / "data"
    v1 = build(first)
    datas = [first] + [shutil.copytree(first, tmp_path / f"machine-{i}" / "data", symlinks=True)
                       for i in (1, 2)]
    meaning = {v1: (True, False, True)}
    with replicas(first, tmp_path, 3, datas=datas) as three, \
            nginx_in_front([r.sock for r in three], tmp_path / "nginx") as front:
        assert all(status_of(r.port, "/readyz") == 200 for r in three)
        # The new build reaches one machine (built there, or copied in) and it reloads.
        v2 = build(datas[0], "dangalak")
        meaning[v2] = (True, True, True)
        reload(three[0])
        assert replica_ready(three[0]) == {"tr": [v2, v1]}

        pinned = [ask(front.port, f"tr@{v1}", i) for i in range(200)]
        assert set(pinned) == {(v1, meaning[v1])}  # 0 flaps in 200
        loose = [ask(front.port, None, i) for i in range(60)]
        assert {v for v, _ in loose} == {v1, v2}  # unpinned: both, each told which
        assert all(meaning[v] == verdicts for v, verdicts in loose)

        # docs/deployment.md's rollout: copy the build to every machine and reload (held,
        # not current: a game that pinned v2 on machine 0 is answered everywhere), then
        # switch each machine's link and reload.
        for data, replica in zip(datas[1:], three[1:], strict=True):
            shutil.copytree(datas[0] / BUILDS_DIR / f"tr-{v2}", data / BUILDS_DIR / f"tr-{v2}")
            reload(replica)
            assert replica_ready(replica) == {"tr": [v1, v2]}
        assert {ask(front.port, f"tr@{v2}", i) for i in range(30)} == {(v2, meaning[v2])}
        for data, replica in zip(datas[1:], three[1:], strict=True):
            use(data, v2)
            reload(replica)
            assert replica_ready(replica) == {"tr": [v2, v1]}
            assert {ask(front.port, f"tr@{v1}", i) for i in range(30)} == {(v1, meaning[v1])}
        assert {ask(front.port, None, i) for i in range(30)} == {(v2, meaning[v2])}


def test_reports_from_every_replica_land_in_one_postgresql_store(tmp_path):
    if server_bin() is None:
        pytest.skip(MISSING)
    psycopg = pytest.importorskip("psycopg", reason="pip install 'kelime[postgres]'")
    first = tmp_path / "machine-0" / "data"
    v1 = build(first)
    datas = [first] + [shutil.copytree(first, tmp_path / f"machine-{i}" / "data", symlinks=True)
                       for i in (1, 2)]
    with postgres_server() as pg:
        url = pg.database("reports")
        env = {"KELIME_REPORTS": url, "KELIME_REPORTS_PER_HOUR": "1000"}
        with replicas(first, tmp_path, 3, envs=[env] * 3, datas=datas) as three, \
                nginx_in_front([r.sock for r in three], tmp_path / "nginx",
                               shared_reports=True) as front:
            v2 = build(datas[0], "dangalak")  # machine 0 is on a new build
            reload(three[0])
            sent = []
            for i in range(30):
                word, pin = (made_up(i), f"tr@{v1}" if i % 2 else "tr")
                body = {"word": word, "kind": "missing", "lexicon": pin}
                status, headers, raw = request(front.port, "POST", "/v1/reports",
                                               json.dumps(body).encode(),
                                               {"X-Request-ID": f"r{i}"})
                assert status == 202, raw
                sent.append((word, json.loads(raw)["lexicon"]["version"]))
            crash(three[1])
            for i in range(30, 40):
                word = made_up(i)
                status, _, raw = request(front.port, "POST", "/v1/reports", json.dumps(
                    {"word": word, "kind": "missing", "lexicon": f"tr@{v1}"}).encode())
                assert status == 202, raw  # the dead replica's share taken by the others
                sent.append((word, v1))
        with psycopg.connect(url) as conn:
            stored = conn.execute("SELECT word, version FROM reports").fetchall()
    assert sorted(stored) == sorted(sent)  # every report, each with the build that answered
    assert {v for _, v in sent} == {v1, v2}


def made_up(i: int) -> str:
    """A word of Turkish letters no lexicon here has, one for each `i` (under 400)."""
    letters = "abcdefghijklmnoprstu"
    return f"kelime{letters[i // 20]}{letters[i % 20]}"
