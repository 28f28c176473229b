"""service.body at the ASGI level: bodies are bounded by Content-Length and while streaming.

The app is called with a `receive` that hands out the body chunk by chunk and counts how
many were taken, so "refused without reading 20 MB" is checked, not assumed.
"""

from __future__ import annotations

import anyio
import orjson

from kelime.service.app import create_app
from kelime.service.settings import Settings

MIB = 1024 * 1024


def call(app, chunks: list[bytes], headers: list[tuple[bytes, bytes]], disconnect_after=None):
    """POST /v1/validate with `chunks`; (chunks taken, status, JSON reply)."""
    taken, sent = 0, []

    async def receive():
        nonlocal taken
        if disconnect_after is not None and taken >= disconnect_after:
            return {"type": "http.disconnect"}
        taken += 1
        return {"type": "http.request", "body": chunks[taken - 1], "more_body": taken < len(chunks)}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
             "scheme": "http", "path": "/v1/validate", "raw_path": b"/v1/validate",
             "query_string": b"", "root_path": "", "headers": [(b"host", b"test"), *headers],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80)}

    async def main():
        async with app.router.lifespan_context(app):
            await app(scope, receive, send)

    anyio.run(main)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return taken, sent[0]["status"], orjson.loads(body)


def test_a_chunked_20_mb_body_is_refused_after_the_limit(data_dir):
    chunks = [b'{"words": ["' + b"k" * (MIB - 12)] + [b"k" * MIB] * 19
    taken, status, reply = call(create_app(Settings(data=data_dir)), chunks, [])
    assert status == 413 and reply["error"]["code"] == "body_too_large"
    assert taken == 5  # 5 MiB read, then refused: the other 15 chunks are never pulled
    assert reply["error"]["details"] == {"size": 5 * MIB, "limit": 4 * MIB}


def test_a_declared_20_mb_body_is_refused_before_reading(data_dir):
    taken, status, reply = call(create_app(Settings(data=data_dir)), [b"{}"],
                                [(b"content-length", str(20 * MIB).encode())])
    assert (taken, status) == (0, 413)
    assert "declares 20,971,520 bytes" in reply["error"]["message"]


def test_the_limit_is_a_setting(data_dir):
    app = create_app(Settings(data=data_dir, max_body_bytes=100))
    body = orjson.dumps({"words": ["kitap"] * 20})
    taken, status, reply = call(app, [body[:60], body[60:]], [])
    assert (taken, status) == (2, 413)
    taken, status, reply = call(app, [body[:60]], [])
    assert status == 422  # what arrived is cut JSON: read whole, then refused as JSON


def test_a_body_in_small_chunks_is_joined(data_dir):
    body = orjson.dumps({"words": ["kitap", "İstanbul", "ev"]})
    chunks = [body[i:i + 3] for i in range(0, len(body), 3)]
    taken, status, reply = call(create_app(Settings(data=data_dir)), chunks, [])
    assert (taken, status) == (len(chunks), 200)
    assert [r["reason"] for r in reply["results"]] == [None, "proper_name", None]


def test_a_bad_content_length_is_422(data_dir):
    taken, status, reply = call(create_app(Settings(data=data_dir)), [b"{}"],
                                [(b"content-length", b"12abc")])
    assert (taken, status) == (0, 422)
    assert "Content-Length '12abc'" in reply["error"]["message"]


def test_a_client_that_leaves_mid_body_is_not_a_server_error(data_dir):
    taken, status, reply = call(create_app(Settings(data=data_dir)), [b'{"words": ', b"[]}"], [],
                                disconnect_after=1)
    assert (taken, status) == (1, 400)
    assert reply["error"]["code"] == "client_disconnected"
