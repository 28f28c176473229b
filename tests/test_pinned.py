"""Pinned versions: a replica holds the current build of each lexicon and the ones before it
(KELIME_KEEP_VERSIONS), and a question naming `name@version` is answered by that build on
every route, through reloads, by a real `kelime serve`; caches keep pinned replies and
revalidate the others."""

from __future__ import annotations

import json
import os
import shutil
import signal

import pytest

from kelime.lexicon.format import WORDS_FILE
from kelime.lexicon.write import BUILDS_DIR
from tests.test_reload import TOKEN, Client, build, request, serve, wait_for

JSON = {"Content-Type": "application/json"}


def validate(port: int, lexicon: str | None, *words: str) -> tuple[int, dict]:
    body = {"words": list(words or ["kitap", "silgi", "defter"])}
    if lexicon is not None:
        body["lexicon"] = lexicon
    return request(port, "POST", "/v1/validate", json.dumps(body).encode(), JSON)


def get(port: int, path: str, headers: dict | None = None):
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        reply = conn.getresponse()
        return reply.status, reply.headers, reply.read()
    finally:
        conn.close()


@pytest.mark.slow
def test_a_pinned_version_answers_on_every_route_and_is_listed(tmp_path):
    data = tmp_path / "data"
    v1 = build(data)
    v2 = build(data, "silgi")
    with serve(data, tmp_path, 1) as server:
        port = server.port
        status, ready = request(port, "GET", "/readyz")
        assert ready["versions"] == {"tr": v2} and ready["held"] == {"tr": [v2, v1]}
        status, listed = request(port, "GET", "/v1/lexicons")
        (tr,) = listed["lexicons"]
        assert [(b["version"], b["current"]) for b in tr["held"]] == [(v2, True), (v1, False)]

        # POST: the pinned build's verdicts, and the reply names it.
        for pin, version, silgi in [(None, v2, True), ("tr", v2, True), (f"tr@{v1}", v1, False),
                                    (f"TR@{v1.upper()}", v1, False), (f"tr@{v2}", v2, True)]:
            status, body = validate(port, pin, "silgi")
            assert (status, body["lexicon"]["version"], body["all_valid"]) == (200, version,
                                                                               silgi), pin
        # A game's own lexicon can be pinned too, and the other routes take the pin.
        status, body = request(port, "POST", "/v1/anagram", json.dumps(
            {"rack": "silgi", "lexicon": f"tr@{v1}"}).encode(), JSON)
        assert status == 200 and body["lexicon"]["version"] == v1, body
        assert "silgi" not in [w["word"] for w in body["words"]]
        status, body = request(port, "POST", "/v1/anagram", json.dumps(
            {"rack": "silgi", "lexicon": f"tr@{v2}"}).encode(), JSON)
        assert "silgi" in [w["word"] for w in body["words"]]
        status, body = request(port, "POST", "/v1/split", json.dumps(
            {"rack": "silgi", "lexicon": f"tr@{v1}", "what_if": True}).encode(), JSON)
        assert status == 200 and body["lexicon"]["version"] == v1, body
        status, body = request(port, "GET", f"/v1/words/silgi?lexicon=tr@{v1}")
        assert (status, body["lexicon"]["version"], body["valid"]) == (200, v1, False)
        status, headers, text = get(port, f"/v1/lexicons/tr@{v1}/words")
        assert status == 200 and b"silgi" not in text and headers["Cache-Control"].endswith(
            "immutable")

        # GET: a pinned reply is immutable; an unpinned one is revalidated (ETag → 304).
        status, headers, raw = get(port, f"/v1/validate?word=silgi&lexicon=tr@{v1}")
        assert status == 200 and json.loads(raw)["lexicon"]["version"] == v1
        assert headers["Cache-Control"] == "public, max-age=31536000, immutable"
        status, headers, raw = get(port, "/v1/validate?word=silgi")
        assert headers["Cache-Control"] == "no-cache"
        status, _, _ = get(port, "/v1/validate?word=silgi", {"If-None-Match": headers["ETag"]})
        assert status == 304

        # A version not held: 404 naming those that are.
        status, body = validate(port, "tr@0123456789ab", "kitap")
        assert status == 404 and body["error"]["code"] == "unknown_version", body
        assert body["error"]["details"] == {"lexicon": "tr", "held": [v2, v1]}
        assert f"held: {v2}, {v1}" in body["error"]["message"]
        status, body = validate(port, f"xx@{v1}", "kitap")
        assert status == 404 and body["error"]["code"] == "unknown_lexicon", body


@pytest.mark.slow
def test_a_game_pinned_before_a_rollout_keeps_its_verdicts_through_reloads(tmp_path):
    """Two workers under load while two builds are rolled out and a third refused: every
    reply of the pinned client comes from its build, with its verdicts; the unpinned client
    is told which build answered each time."""
    data = tmp_path / "data"
    v1 = build(data)
    with serve(data, tmp_path, 2, KELIME_ADMIN_TOKEN=TOKEN) as server:
        pinned = PinnedClient(server.port, f"tr@{v1}")
        loose = Client(server.port)
        for c in (pinned, loose):
            c.start()
        try:
            v2 = build(data, "silgi")
            os.kill(server.proc.pid, signal.SIGHUP)
            server.settle(v2)
            wait_for(lambda: len(pinned.replies) > 20, 30, server.log_text)
            v3 = build(data, "silgi", "defter")
            status, body = request(server.port, "POST", "/v1/admin/reload", b"",
                                   {"Authorization": f"Bearer {TOKEN}"})
            assert status == 200, body
            server.settle(v3)
            status, ready = request(server.port, "GET", "/readyz")
            assert ready["held"] == {"tr": [v3, v2]}  # v1 is two builds back: let go
            seen = len(pinned.replies)
            wait_for(lambda: len(pinned.replies) > seen + 20, 30, server.log_text)
        finally:
            for c in (pinned, loose):
                c.stop.set()
                c.join(timeout=30)
    assert not loose.failures
    answered = [r for r in pinned.replies if r[0] == 200]
    assert len(answered) > 20 and {r[1:] for r in answered} == {(v1, (True, False, False))}
    gone = [r for r in pinned.replies if r[0] != 200]  # once v1 was let go: told so, never
    assert {r[1] for r in gone} <= {"unknown_version"}  # another build's verdicts
    assert {v for v, _ in loose.replies} >= {v2, v3}


class PinnedClient(Client):
    """A game that pinned `lexicon`: (status, version or error code, verdicts) per reply."""

    def __init__(self, port: int, lexicon: str):
        super().__init__(port)
        self.lexicon = lexicon

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                status, body = validate(self.port, self.lexicon)
            except OSError as e:
                self.failures.append(repr(e))
                continue
            if status == 200:
                self.replies.append((200, body["lexicon"]["version"],
                                     tuple(r["valid"] for r in body["results"])))
            else:
                self.replies.append((status, body["error"]["code"], ()))


@pytest.mark.slow
def test_held_builds_follow_the_setting_and_a_damaged_older_one_is_left_out(tmp_path):
    data = tmp_path / "data"
    v1 = build(data)
    v2 = build(data, "silgi")
    v3 = build(data, "silgi", "defter")
    with serve(data, tmp_path, 1, KELIME_KEEP_VERSIONS="1") as server:
        assert request(server.port, "GET", "/readyz")[1]["held"] == {"tr": [v3]}
    with serve(data, tmp_path, 1, KELIME_KEEP_VERSIONS="3") as server:
        assert request(server.port, "GET", "/readyz")[1]["held"] == {"tr": [v3, v2, v1]}
    with open(data / BUILDS_DIR / f"tr-{v2}" / WORDS_FILE, "r+b") as f:
        f.write(b"\0" * 16)
    shutil.copytree(data / BUILDS_DIR / f"tr-{v3}", data / BUILDS_DIR / f"tr-{v3}-2")
    with serve(data, tmp_path, 1, KELIME_KEEP_VERSIONS="3") as server:
        # v2 damaged: left out, with a warning; v3's copy: the same version, held once.
        assert request(server.port, "GET", "/readyz")[1]["held"] == {"tr": [v3, v1]}
        assert f"an older build of 'tr' is not held: {data / BUILDS_DIR / f'tr-{v2}'}" \
            in server.log_text()


def test_the_cli_answers_from_a_named_build(tmp_path):
    from click.testing import CliRunner

    from kelime.cli import cli

    data = tmp_path / "data"
    v1 = build(data)
    v2 = build(data, "silgi")
    runner = CliRunner()
    for lexicon, valid in [("tr", True), (f"tr@{v2}", True), (f"tr@{v1}", False),
                           (f" TR@{v1.upper()} ", False)]:  # as the API reads it
        run = runner.invoke(cli, ["check", "silgi", "--json", "--lexicon", lexicon,
                                  "--data", str(data)])
        reply = json.loads(run.output)
        assert reply["all_valid"] is valid and reply["lexicon"]["version"] in (v1, v2), lexicon
    run = runner.invoke(cli, ["check", "silgi", "--lexicon", "tr@0123456789ab", "--data",
                              str(data)])
    assert run.exit_code == 2
    assert f"no build '0123456789ab' of 'tr' in {data / BUILDS_DIR} (have: {v2}, {v1})" \
        in run.output


def test_a_report_records_the_pinned_build_it_was_answered_from(tmp_path):
    from click.testing import CliRunner

    from kelime.cli import cli
    from kelime.service.app import create_app
    from kelime.service.settings import Settings
    from tests.service_helpers import TestClient

    data = tmp_path / "data"
    v1 = build(data)
    v2 = build(data, "silgi")
    store = tmp_path / "reports.sqlite"
    with TestClient(create_app(Settings(data=data, reports=store))) as api:
        reply = api.post("/v1/reports", json={"word": "silgi", "kind": "missing",
                                              "lexicon": f"tr@{v1}"})
        assert reply.status_code == 202, reply.text
        assert reply.json()["lexicon"]["version"] == v1
        assert reply.json()["verdict"]["valid"] is False  # in the build the player had
    listed = CliRunner().invoke(cli, ["reports", "--reports", str(store), "--json"])
    assert listed.exit_code == 0, listed.output
    (report,) = json.loads(listed.output)["open"]
    assert report["versions"] == [v1] and v2 not in listed.output


def test_pinned_replies_are_immutable_only_with_kelimes_own_games(tmp_path):
    """A pinned reply depends on the build and the game's profile: profiles from
    KELIME_GAMES can change at a restart (a minimum length), so with them a pinned reply is
    revalidated, never kept a year."""
    from pathlib import Path

    import kelime.games
    from kelime.service.app import create_app
    from kelime.service.settings import Settings
    from tests.service_helpers import TestClient

    data = tmp_path / "data"
    v1 = build(data)
    games = Path(kelime.games.__file__).parent / "profiles"
    for settings, cache in ((Settings(data=data), "public, max-age=31536000, immutable"),
                            (Settings(data=data, games=games), "no-cache")):
        with TestClient(create_app(settings)) as api:
            reply = api.get(f"/v1/validate?word=kitap&lexicon=tr@{v1}")
            assert reply.status_code == 200 and reply.headers["cache-control"] == cache


def test_no_more_builds_are_held_than_kelime_build_keeps():
    """KELIME_KEEP_VERSIONS took up to 10 while `kelime build` keeps 3 builds: a replica
    started later held 3 where the others held 5, and a game pinned to the 4th flapped."""
    from kelime.lexicon.write import KEEP_BUILDS
    from kelime.service.settings import Settings, SettingsError

    assert Settings(keep_versions=KEEP_BUILDS).keep_versions == KEEP_BUILDS
    with pytest.raises(SettingsError, match="must be 3 or less .`kelime build` keeps the last"):
        Settings.from_env({"KELIME_KEEP_VERSIONS": str(KEEP_BUILDS + 1)})


def test_a_damaged_current_build_gives_way_to_a_copy_of_its_own_version(tmp_path):
    """`tr-<v>-2` damaged, `tr-<v>` (the same words) intact: the newest other build (with
    other words) was served instead, so that replica's verdicts differed from its peers'."""
    from kelime.lexicon.pins import first_pins

    data = tmp_path / "data"
    build(data)
    same = build(data, "silgi")
    shutil.copytree(data / BUILDS_DIR / f"tr-{same}", data / BUILDS_DIR / f"tr-{same}-2")
    newer = build(data, "silgi", "defter")  # newest of all, other words
    link = data / ".tr.new"
    os.symlink(f"{BUILDS_DIR}/tr-{same}-2", link)
    os.replace(link, data / "tr")
    with open(data / "tr" / WORDS_FILE, "r+b") as f:
        f.write(b"\0" * 16)
    pins, problems = first_pins(data, "tr")
    assert pins.versions == {"tr": same} and newer in pins.held["tr"]
    assert f"serving {same} ({data / BUILDS_DIR / f'tr-{same}'})" in problems["tr"]
