"""service.serve and `kelime serve`: a real uvicorn in a thread, and the real command."""

from __future__ import annotations

import socket
import subprocess

import httpx
import orjson
import pytest
from click.testing import CliRunner

from kelime.cli import cli
from kelime.lexicon import LexiconError
from kelime.lexicon.pins import first_pins, from_record, next_pins, read_record
from kelime.service.app import create_app
from kelime.service.settings import Settings
from tests.servers import kelime_command, kelime_serve, serve_in_thread
from tests.service_helpers import build_data

MIB = 1024 * 1024


@pytest.fixture(scope="module")
def server(data_dir):
    with serve_in_thread(create_app(Settings(data=data_dir))) as url:
        with httpx.Client(base_url=url, timeout=20) as http:
            yield http


def test_real_server_validates_and_keeps_the_connection(server):
    for _ in range(3):
        reply = server.get("/v1/validate", params={"word": ["kitap", "İstanbul", "evler"]})
        assert [r["reason"] for r in reply.json()["results"]] == [
            None, "proper_name", "not_in_dictionary"]
    tag = reply.headers["etag"]
    again = server.get("/v1/validate", params={"word": ["kitap", "İstanbul", "evler"]},
                       headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b""
    posted = server.post("/v1/validate", json={"words": ["ev"] * 1000, "game": "kelimatik"})
    assert posted.status_code == 200 and len(posted.json()["results"]) == 1000
    assert "server" not in posted.headers


def test_real_server_refuses_a_chunked_20_mb_upload(server):
    def chunks():
        yield b'{"words": ["'
        for _ in range(20):
            yield b"k" * MIB
        yield b'"]}'

    reply = server.post("/v1/validate", content=chunks())
    assert reply.status_code == 413
    error = reply.json()["error"]
    assert error["code"] == "body_too_large" and 4 * MIB < error["details"]["size"] < 6 * MIB
    assert server.get("/healthz").status_code == 200


def test_real_server_refuses_a_declared_20_mb_body(server):
    reply = server.post("/v1/validate", content=b"k" * (20 * MIB))
    assert reply.status_code == 413 and "declares 20,971,520 bytes" in reply.text


def test_first_pins_refuse_a_folder_without_lexicons(tmp_path):
    with pytest.raises(LexiconError, match="kelime build --bootstrap"):
        first_pins(tmp_path, "tr")


def test_first_pins_refuse_a_corrupt_lexicon(tmp_path):
    build_data(tmp_path)
    with open(tmp_path / "tr" / "words.marisa", "ab") as f:
        f.write(b"\0")
    with pytest.raises(LexiconError, match="does not match its manifest"):
        first_pins(tmp_path, "tr")


def test_the_pins_a_master_records_are_what_its_workers_load(tmp_path):
    """The master writes its pins for its workers as a record (`Pins.record`); a worker reads
    it back (`read_record`) and loads the same builds, reusing those it holds already."""
    build_data(tmp_path)
    pins, _ = first_pins(tmp_path, "tr")
    pins = next_pins(tmp_path, "tr", pins)
    (tmp_path / "pins.json").write_bytes(orjson.dumps(pins.record(12.5, 2)))
    found = read_record(tmp_path / "pins.json")
    assert found is not None and (found["since"], found["workers"]) == (12.5, 2)
    loaded = from_record(found, {})
    assert (loaded.generation, loaded.outcome, loaded.versions, loaded.held, loaded.reloads) == (
        pins.generation, "unchanged", pins.versions, pins.held, pins.reloads)
    assert loaded.described == pins.described == ", ".join(
        f"{name} {version}" for name, version in pins.versions.items())
    kept = from_record(found, loaded.loaded())
    assert all(kept.lexicons[name] is loaded.lexicons[name] for name in loaded.lexicons)
    (tmp_path / "other.json").write_text('{"generation": 1}')  # not pins: someone else's
    assert read_record(tmp_path / "other.json") is None
    assert read_record(tmp_path / "missing.json") is None


def test_kelime_serve_says_how_to_build_a_lexicon(tmp_path):
    run = CliRunner().invoke(cli, ["serve", "--data", str(tmp_path / "none"), "--port", "1"])
    assert run.exit_code == 2  # the lexicon is missing: nothing can be asked (kelime check too)
    assert "Error: no lexicon in" in run.output and "kelime build --bootstrap" in run.output
    assert "Traceback" not in run.output


def test_kelime_serve_refuses_a_bad_setting(data_dir):
    run = CliRunner(env={"KELIME_MAX_WORDS": "many"}).invoke(cli, ["serve", "--data", str(data_dir)])
    assert run.exit_code == 1
    assert "Error: KELIME_MAX_WORDS='many' is not a whole number" in run.output


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_kelime_serve_end_to_end(data_dir, workers):
    with kelime_serve("--data", str(data_dir), "--workers", str(workers)) as url:
        reply = httpx.get(f"{url}/v1/validate?word=kitap&word=%C4%B0stanbul&word=evler", timeout=10)
        assert reply.status_code == 200
        assert [(r["valid"], r["reason"]) for r in reply.json()["results"]] == [
            (True, None), (False, "proper_name"), (False, "not_in_dictionary")]
        assert httpx.get(f"{url}/readyz", timeout=10).json()["lexicons"] == ["ku", "tr"]


def test_kelime_serve_refuses_a_port_out_of_range(data_dir):
    run = CliRunner().invoke(cli, ["serve", "--data", str(data_dir), "--port", "70000"])
    assert run.exit_code == 2 and "70000 is not in the range 1<=x<=65535" in run.output


def test_kelime_serve_says_when_the_port_is_taken(data_dir):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([*kelime_command(), "serve", "--data", str(data_dir), "--port",
                               str(port)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"Error: cannot listen on 127.0.0.1:{port}")
    assert "pass --port N" in done.stderr


def test_kelime_serve_refuses_an_fd_that_is_no_listening_socket(data_dir, tmp_path):
    """--fd N names a socket someone else bound (the tests hand theirs over this way): a
    socket that does not listen, or no socket at all, stops the start with what to do."""
    command = kelime_command("serve", "--data", str(data_dir), "--fd")
    with socket.socket() as bound, open(tmp_path / "file", "w") as file, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        bound.bind(("127.0.0.1", 0))
        udp.bind(("127.0.0.1", 0))
        for fd, said in [(bound.fileno(), "is a socket that is not listening"),
                         (file.fileno(), "is not an open socket"),
                         (udp.fileno(), "is a datagram (UDP) socket: HTTP needs a TCP"),
                         (2**31, "is not an open socket (no such descriptor)"),
                         (10**20, "is not an open socket (no such descriptor)")]:
            kept = [fd] if fd < 2**31 else []
            done = subprocess.run([*command, str(fd)], capture_output=True, text=True,
                                  timeout=60, pass_fds=kept)
            assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
            assert done.stderr.startswith(f"Error: --fd {fd} {said}"), done.stderr
    both = CliRunner().invoke(cli, ["serve", "--data", str(data_dir), "--fd", "3", "--port", "1"])
    assert both.exit_code == 2 and "--fd 3 is a socket already bound: drop --port" in both.output


def test_kelime_serve_warns_of_a_misspelt_setting(data_dir):
    """KELIME_MAX_WORD=5 (for KELIME_MAX_WORDS) was ignored in silence, the limit left at
    10,000; kelime's other variables are no typo of a setting."""
    env = {"KELIME_MAX_WORD": "5", "KELIME_ADMINTOKEN": "x" * 20,
           "KELIME_TDK_BASE_URL": "http://127.0.0.1:1"}
    run = CliRunner(env=env).invoke(cli, ["serve", "--data", str(data_dir), "--fd", "99999"])
    assert run.exit_code == 1 and "--fd 99999 is not an open socket" in run.output  # stops
    assert "Warning: KELIME_MAX_WORD is no setting (ignored): did you mean " \
           "KELIME_MAX_WORDS?" in run.output
    assert "did you mean KELIME_ADMIN_TOKEN?" in run.output
    assert "KELIME_TDK_BASE_URL" not in run.output


@pytest.mark.slow
def test_kelime_serve_passes_its_cache_to_the_service(data_dir, tmp_path):
    from kelime.tdk import store

    cache = tmp_path / "tdk.sqlite"
    db = store.open_cache(cache, create=True)
    store.save_reply(db, {"query": "kitap", "url": "u", "status": 200, "outcome": "ok",
                          "body": "[]", "error": None, "attempts": 1},
                     [{"madde_id": "1", "madde": "kitap", "anlamlarListe": []}])
    db.close()
    with kelime_serve("--data", str(data_dir), "--cache", str(cache)) as url:
        reply = httpx.get(f"{url}/v1/words/kitap", timeout=10).json()
    assert [e["madde"] for e in reply["entries"]] == ["kitap"]
    assert reply["cache"]["name"] == "tdk.sqlite"
