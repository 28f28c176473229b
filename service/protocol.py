"""A guard in front of uvicorn's httptools protocol: what one client can make a worker hold.

Stock uvicorn + httptools reads a request's headers without any bound, waits forever for
heads and bodies that never end, and parses every pipelined request it is sent at once
(100 connections pipelining 256 KiB of GETs took a worker from 66 to 1,383 MiB). The
`Guard` is the asyncio protocol uvicorn builds for each connection (its `http` option); it
owns the socket, frames each request with httptools' own parser, and hands the bytes on to
a plain uvicorn `HttpToolsProtocol` it keeps inside. Per connection it gives:

* a size cap on the request line + headers (`max_header_bytes`): past it the client gets 431
  in kelime's JSON error shape and the connection closes. Neither parser is ever fed more
  than the cap of one head;
* a time limit for a request's head (`header_timeout`), counted from the connection's start
  (a connection that sends nothing is closed) or from the first byte of a later request on a
  keep-alive connection; 408 when part of a head had come;
* a time limit for a request's body (`body_timeout`), counted from the end of its head:
  408 when no reply was started, else the connection is closed;
* a bound on a chunked body's framing: chunk lines and trailers (which httptools buffers
  like headers) may exceed the body they carry by `max_header_bytes` at most (431 past it);
* pipelining without a pile-up: uvicorn is given at most one whole request beyond the one it
  is answering; the rest waits here, and past HOLD bytes waiting (plus one read of READ bytes)
  the guard stops reading the socket until a reply is done. What a worker holds for a
  connection's pipelined or unread requests is therefore at most HOLD + READ = 128 KiB,
  besides the two requests uvicorn has;
* at most `max_connections` connections (`connection_limit`): a new connection closes the
  one that has waited longest with no request under way (silent, half a head, idle
  keep-alive), or else answers 408 to the slowest upload under MIN_RATE bytes/s (after
  SLOW_AFTER s), so that neither silent sockets nor trickled bodies can lock new clients
  out; with every connection busy, a new client gets a JSON 503 `busy` with Retry-After
  (never uvicorn's plain-text one: uvicorn is given no limit_concurrency). Connections past
  the limit (waiting for their head to be answered 503, or closing) are at most EXTRA_MOST.

Idle keep-alive connections are closed by uvicorn's own `timeout_keep_alive`. After a 431,
408, 400 or 503 the connection reads and drops what its client still sends (until it pauses
for LINGER s, LINGER_MOST s at most) before closing, so that the client reads the reply
rather than a reset. A request httptools cannot parse gets a JSON 400 (uvicorn's is text).
Every reply leaves in one write (Corked). Timers are armed only when a head or a body spans
several reads, so a request that arrives in one read costs no timer: benchmarks/servers.py
measures the cost per request, in process and over HTTP.

What this relies on, all public: `uvicorn.Config(http=<protocol factory>)`, which builds
the guard as `factory(config=, server_state=, app_state=, _loop=)`; the class that
`http="httptools"` names (`uvicorn.protocols.http.httptools_impl.HttpToolsProtocol`), built
with those same arguments and driven only through `asyncio.Protocol`'s methods
(connection_made, data_received, eof_received, connection_lost, pause_writing,
resume_writing) and the `asyncio.Transport` it is given (write, close, pause_reading,
resume_reading, get_extra_info); `Config(timeout_keep_alive=)`; httptools'
`HttpRequestParser` and `HttpResponseParser`. No uvicorn class is subclassed and no
attribute of one is read (the `server_state` uvicorn passes is only the key of its
server's Pool). Tested with uvicorn 0.55 and httptools 0.9.
"""

from __future__ import annotations

import asyncio
import functools
import http
import resource
import weakref
from collections import OrderedDict, deque
from dataclasses import dataclass
from email.utils import formatdate

import httptools
import orjson
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .errors import error_body
from .settings import Settings

#: A refused connection keeps reading (and dropping) what its client still sends until the
#: client stops for LINGER s, and for LINGER_MOST s at most.
LINGER = 2.0
LINGER_MOST = 10.0
#: File descriptors kept free of served connections (listening socket, logs, lexicon files).
FD_RESERVE = 64
#: Connections past the limit (waiting to be answered 503, or lingering) kept at most: the
#: oldest is closed beyond.
EXTRA_MOST = FD_RESERVE // 2
#: Bytes of a connection's requests the guard holds beyond what uvicorn was given, and the
#: most one read of the socket brings.
HOLD = 64 * 1024
READ = 64 * 1024
#: At the connection limit, a request whose bytes have come slower than MIN_RATE bytes/s
#: for SLOW_AFTER s or more may be refused (408) to make room for a new client.
MIN_RATE = 1024
SLOW_AFTER = 1.0
BLANK_LINE = b"\r\n\r\n"


@dataclass(frozen=True)
class ConnectionLimits:
    max_header_bytes: int = 64 * 1024
    header_timeout: float = 10.0
    body_timeout: float = 30.0
    max_connections: int = 1000

    @classmethod
    def from_settings(cls, settings: Settings) -> ConnectionLimits:
        return cls(settings.max_header_bytes, settings.header_timeout, settings.body_timeout,
                   connection_limit(settings))


class Pool:
    """One server's connections, as the guards count them."""

    def __init__(self):
        self.served: set[Guard] = set()        # admitted, neither refused nor closed
        self.idle: OrderedDict[Guard, None] = OrderedDict()   # served, nothing under way
        self.extra: OrderedDict[Guard, None] = OrderedDict()  # over the limit or lingering
        self.buffer = memoryview(bytearray(READ))  # every read lands here, then is copied

    def make_room(self, loop) -> bool:
        """Close the connection idle the longest, or refuse the slowest upload."""
        if self.idle:
            guard, _ = self.idle.popitem(last=False)
            guard.close()
            return True
        now = loop.time()
        slow = [(g.rate(now), id(g), g) for g in self.served if g.slow(now)]
        if slow:
            min(slow)[2].refuse_slow(now)
            return True
        return False

    def add_extra(self, guard: Guard) -> None:
        self.extra[guard] = None
        if len(self.extra) > EXTRA_MOST:
            oldest, _ = self.extra.popitem(last=False)
            oldest.close()


_POOLS: weakref.WeakKeyDictionary[object, Pool] = weakref.WeakKeyDictionary()


def pool_of(server_state) -> Pool:
    """The pool of the server whose state uvicorn passes to each protocol it builds."""
    pool = _POOLS.get(server_state)
    if pool is None:
        pool = _POOLS[server_state] = Pool()
    return pool


class Corked:
    """A transport that sends what is written within one turn of the event loop as one
    write: a reply's head and its body leave together, so a worker killed between the two
    never leaves a client (or nginx, which then cannot retry) with headers and no body. One
    syscall instead of two for every small reply, too (writelines: no copy of big bodies)."""

    def __init__(self, transport, loop):
        self._transport, self._loop, self._pending = transport, loop, []

    def write(self, data: bytes) -> None:
        if not self._pending:
            self._loop.call_soon(self.flush)
        self._pending.append(data)

    def flush(self) -> None:
        if self._pending:
            pending, self._pending = self._pending, []
            if not self._transport.is_closing():
                self._transport.writelines(pending)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(map(len, self._pending))

    def __getattr__(self, name):  # everything else is the real transport's
        return getattr(self._transport, name)


class Inside(asyncio.Transport):
    """The transport uvicorn's protocol is given: its writes go out corked (and are counted
    into replies), its pauses hold the guard's bytes back instead of the socket."""

    def __init__(self, guard: Guard):
        super().__init__()
        self.guard = guard
        self.cut = False  # the guard answered the connection itself: drop what comes

    def write(self, data) -> None:
        if not self.cut:
            self.guard.out.write(data)
            self.guard.replies.feed(data)

    def writelines(self, chunks) -> None:
        for data in chunks:
            self.write(data)

    def close(self) -> None:
        if not self.cut:
            self.guard.out.close()

    def abort(self) -> None:
        self.close()

    def is_closing(self) -> bool:
        return self.cut or self.guard.transport.is_closing()

    def get_extra_info(self, name, default=None):
        return self.guard.transport.get_extra_info(name, default)

    def pause_reading(self) -> None:
        self.guard.inner_paused = True

    def resume_reading(self) -> None:
        self.guard.inner_paused = False
        self.guard.soon()

    def is_reading(self) -> bool:
        return not self.guard.inner_paused

    def can_write_eof(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return self.guard.out.get_write_buffer_size()


class Replies:
    """The replies uvicorn writes, framed by httptools' response parser, to know when each
    request is answered. A reply to HEAD ends with its head (found here, not by httptools,
    which would wait for the body its Content-Length announces)."""

    def __init__(self, done):
        self.done = done            # called with nothing when a reply is whole
        self.parser = httptools.HttpResponseParser(self)
        self.parser.set_dangerous_leniencies(lenient_data_after_close=True)
        self.heads: deque[bool] = deque()  # per request given to uvicorn, unanswered: HEAD?
        self.head = b""             # a HEAD reply's head, so far
        self.started = False        # the final reply to the current request has begun
        self.broken = False         # what uvicorn wrote could not be framed

    def feed(self, data: bytes) -> None:
        try:
            while data and self.heads and self.heads[0]:
                data = self.head_only(data)
            if data:
                self.parser.feed_data(data)
        except (httptools.HttpParserError, ValueError):
            self.broken = True
            self.done()

    def head_only(self, data: bytes) -> bytes:
        self.head += data
        end = self.head.find(BLANK_LINE)
        if end < 0:
            return b""
        head, rest, self.head = self.head[:end + 4], self.head[end + 4:], b""
        if int(head[9:12]) >= 200:
            self.whole()
        return rest

    def on_message_begin(self) -> None:
        if self.heads and self.heads[0]:  # a HEAD reply within httptools' reach
            raise ValueError("a reply to HEAD in the middle of a write")

    def on_headers_complete(self) -> None:
        self.started = self.parser.get_status_code() >= 200

    def on_message_complete(self) -> None:
        if self.started:
            self.whole()

    def whole(self) -> None:
        self.started = False
        if self.heads:
            self.heads.popleft()
        self.done()


class Guard(asyncio.BufferedProtocol):
    """One connection: the limits, the framing of its requests, and the uvicorn protocol
    that answers them (`inner`)."""

    transport: asyncio.Transport  # the socket's, set by connection_made before any read
    out: Corked                   # writes to it, corked

    def __init__(self, config, server_state, app_state, _loop=None, *,
                 limits: ConnectionLimits = ConnectionLimits()) -> None:
        self.loop = _loop or asyncio.get_event_loop()
        self.inner = HttpToolsProtocol(config=config, server_state=server_state,
                                       app_state=app_state, _loop=self.loop)
        self.limits = limits
        self.pool = pool_of(server_state)
        self.parser = httptools.HttpRequestParser(self)
        self.parser.set_dangerous_leniencies(lenient_data_after_close=True)  # as uvicorn's
        self.replies = Replies(self.answered_one)
        self.inside = Inside(self)
        self.admitted = False     # counted in the pool's served connections, inner connected
        self.inner_paused = False
        self.reading = True       # the socket is read (not paused for HOLD)
        self.scheduled = False
        # the requests: held[start:] is not yet given to uvicorn, held[:framed] is framed
        self.held = b""
        self.start = self.framed = 0
        self.ends: deque[int] = deque()  # where framed whole requests end, within `held`
        self.tail = b""           # the last 3 bytes handed on (a blank line may span reads)
        self.in_body = False
        self.head_left = limits.max_header_bytes
        self.url = 0              # bytes of the URL of the head being read
        self.length: int | None = None  # Content-Length of the request being read
        self.body_left = 0        # of its body, bytes still to come (with a Content-Length)
        self.body_fed = self.body_seen = 0  # a chunked body: bytes read, and its data
        self.began = 0.0          # when a body began to come in pieces, and its bytes
        self.got = 0
        self.heads = self.wholes = self.answered = 0  # requests: heads, whole, answered
        self.head_done = self.message_done = False
        # the end
        self.refusal: bytes | None = None   # a reply of ours, sent once earlier ones are done
        self.refuse_after = 0
        self.closing = False
        self.head_timer: asyncio.TimerHandle | None = None
        self.body_timer: asyncio.TimerHandle | None = None
        self.linger_timer: asyncio.TimerHandle | None = None
        self.last_read = self.linger_end = 0.0

    # --- the connection -------------------------------------------------------------

    # A stream server's protocol is given a Transport; typeshed types the base's argument
    # as BaseTransport, as uvicorn's own protocols narrow it too.
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self.transport = transport
        self.out = Corked(transport, self.loop)
        pool = self.pool
        if len(pool.served) < self.limits.max_connections or pool.make_room(self.loop):
            self.admit()
        else:
            pool.add_extra(self)  # answered 503 once its head has come, unless room is made
        self.head_timer = self.loop.call_later(self.limits.header_timeout, self.head_timed_out)

    def admit(self) -> None:
        self.admitted = True
        self.pool.extra.pop(self, None)
        self.pool.served.add(self)
        self.pool.idle[self] = None
        self.inner.connection_made(self.inside)

    def connection_lost(self, exc) -> None:
        self.leave_pool()
        self.pool.extra.pop(self, None)
        self.cancel_timers()
        if self.admitted and not self.inside.cut:
            self.inner.connection_lost(exc)

    def leave_pool(self) -> None:
        self.pool.served.discard(self)
        self.pool.idle.pop(self, None)

    def eof_received(self):
        if self.admitted and not self.inside.cut:
            return self.inner.eof_received()
        return None

    def pause_writing(self) -> None:
        if self.admitted and not self.inside.cut:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.admitted and not self.inside.cut:
            self.inner.resume_writing()

    def close(self) -> None:
        """Close now, whatever is under way (uvicorn is told through connection_lost)."""
        self.leave_pool()
        self.pool.extra.pop(self, None)
        self.cancel_timers()
        self.out.close()

    def cancel_timers(self) -> None:
        for name in ("head_timer", "body_timer", "linger_timer"):
            timer = getattr(self, name)
            if timer is not None:
                timer.cancel()
                setattr(self, name, None)

    # --- reading: frame, then hand on -----------------------------------------------

    def get_buffer(self, sizehint: int):
        return self.pool.buffer

    def buffer_updated(self, nbytes: int) -> None:
        self.data_received(bytes(self.pool.buffer[:nbytes]))

    def data_received(self, data: bytes) -> None:
        if self.closing:
            self.last_read = self.loop.time()  # dropped; keeps a lingering connection open
            return
        start = self.start
        if start == len(self.held):
            self.held, self.start, self.framed = data, 0, 0
        else:  # one copy a read, not one a request
            self.held = self.held[start:] + data
            self.start, self.framed = 0, self.framed - start
            for k in range(len(self.ends)):
                self.ends[k] -= start
        self.advance()
        if self.closing:
            return
        self.arm_timers()
        if len(self.held) - self.start > HOLD and self.reading:
            self.reading = False
            self.transport.pause_reading()

    def arm_timers(self) -> None:
        """A head or a body that did not come whole in what was framed has its clock."""
        if self.in_body:
            if self.body_timer is None:
                self.began = self.loop.time()
                self.body_timer = self.loop.call_later(self.limits.body_timeout,
                                                       self.body_timed_out)
        elif self.head_left < self.limits.max_header_bytes and self.head_timer is None:
            self.head_timer = self.loop.call_later(self.limits.header_timeout,
                                                   self.head_timed_out)

    def soon(self) -> None:
        """Frame and hand on what is held, in a later turn of the loop (never from inside
        one of uvicorn's own calls)."""
        if len(self.held) > self.start and not self.scheduled:
            self.scheduled = True
            self.loop.call_soon(self.advance_later)

    def advance_later(self) -> None:
        self.scheduled = False
        if self.inside.cut:
            return
        self.advance()
        if not self.closing:
            self.arm_timers()
        if not self.reading and len(self.held) - self.start <= HOLD and not self.closing:
            self.reading = True
            self.transport.resume_reading()

    def advance(self) -> None:
        """Frame what is held (no further than the end of the request after the one being
        answered), and give uvicorn what it may have."""
        while not self.closing and self.framed < len(self.held) \
                and self.wholes < self.answered + 2:
            self.frame_piece()
        self.hand_on()

    def hand_on(self) -> None:
        """Give uvicorn the framed bytes it may have: never while it paused reading, one
        request per call (it drops what follows a request it cannot upgrade), and never
        the start of what would be its third unanswered request (framing stops before)."""
        while self.framed > self.start and not self.inner_paused and self.admitted \
                and not self.inside.cut:
            end = self.ends.popleft() if self.ends else self.framed
            held = self.held
            data = held if self.start == 0 and end == len(held) else held[self.start:end]
            self.start = end
            self.tail = data[-3:] if len(data) >= 3 else (self.tail + data)[-3:]
            self.inner.data_received(data)

    def frame_piece(self) -> None:
        """Feed httptools the next piece of what is held, cut so that a head or a request
        can only end at the end of a piece."""
        start, held = self.framed, self.held
        if not self.in_body:
            stop = min(len(held), start + self.head_left)
            end = self.blank_line_end(start, stop)
            stop = stop if end < 0 else end
        elif self.length is not None:
            stop = min(len(held), start + self.body_left)
        else:  # a chunked body ends with a blank line too
            end = self.blank_line_end(start, len(held))
            stop = len(held) if end < 0 else end
        piece = held if start == 0 and stop == len(held) else memoryview(held)[start:stop]
        self.head_done = self.message_done = False
        try:
            self.parser.feed_data(piece)
        except httptools.HttpParserUpgrade:
            if self.parser.get_method() == b"CONNECT":  # uvicorn's answer would be text
                self.refuse_invalid()
                return
            self.message_done = True  # uvicorn serves it as a plain request (no WebSocket)
        except httptools.HttpParserError:
            self.refuse_invalid()
            return
        self.framed = stop
        self.got += stop - start
        self.framed_piece(stop - start)

    def blank_line_end(self, start: int, stop: int) -> int:
        """Where the first CRLF CRLF ending within held[start:stop] ends, or -1 (it may
        have begun in the 3 bytes before `start`, which may be gone from `held`)."""
        held = self.held
        if start < 3 and held[start] in b"\r\n" and self.tail:
            before = (self.tail + held[:start])[-3:]
            at = (before + held[start:start + 3]).find(BLANK_LINE)
            if at >= 0 and start < start + at + 4 - len(before) <= stop:
                return start + at + 4 - len(before)
        at = held.find(BLANK_LINE, max(start - 3, 0), stop)
        return -1 if at < 0 else at + 4

    def framed_piece(self, size: int) -> None:
        if not self.in_body:
            self.head_left -= size
            if not self.head_done:
                if self.head_left <= 0:
                    self.refuse_head()
                return
            self.head_complete()
            if not self.message_done or self.closing:
                return
        elif self.length is not None:
            self.body_left -= size
            if self.message_done != (self.body_left == 0):
                self.refuse_invalid()  # httptools and we disagree: stop rather than guess
            if not self.message_done or self.closing:
                return
        else:
            self.body_fed += size
            if self.body_fed - self.body_seen > self.limits.max_header_bytes + self.body_seen:
                self.refuse_framing()
            if not self.message_done or self.closing:
                return
        self.request_complete()

    def head_complete(self) -> None:
        self.heads += 1
        self.in_body = True
        self.pool.idle.pop(self, None)
        self.replies.heads.append(self.parser.get_method() == b"HEAD")
        self.body_left = self.length or 0
        self.body_fed = self.body_seen = self.got = 0
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None
        if self.heads == 1 and not self.admitted:  # over the limit when it came
            if len(self.pool.served) < self.limits.max_connections:
                self.admit()
                self.pool.idle.pop(self, None)
            else:
                self.refuse_busy()

    def request_complete(self) -> None:
        self.wholes += 1
        self.ends.append(self.framed)
        self.in_body = False
        self.head_left = self.limits.max_header_bytes
        self.length = None
        self.url = 0
        if self.body_timer is not None:
            self.body_timer.cancel()
            self.body_timer = None
        if self.answered == self.heads and self.admitted and not self.closing:
            self.pool.idle[self] = None  # answered before its body ended

    # --- httptools' callbacks (the request parser) ----------------------------------

    def on_url(self, url: bytes) -> None:
        self.url += len(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        if len(name) == 14 and not self.in_body and name.lower() == b"content-length":
            self.length = int(value)

    def on_headers_complete(self) -> None:
        self.head_done = True

    def on_body(self, body: bytes) -> None:
        self.body_seen += len(body)

    def on_message_complete(self) -> None:
        self.message_done = True

    # --- the replies ----------------------------------------------------------------

    def answered_one(self) -> None:
        if self.replies.broken:  # should not happen: stop rather than miscount
            self.inside.cut = True
            self.close()
            return
        self.answered += 1
        if self.refusal is not None:
            if self.answered == self.refuse_after:  # not from inside uvicorn's own call
                self.loop.call_soon(self.send_refusal)
            return
        if self.answered == self.heads and not self.in_body and self.admitted:
            self.pool.idle[self] = None
        self.soon()

    # --- the limits -----------------------------------------------------------------

    def rate(self, now: float) -> float:
        return self.got / max(now - self.began, 1e-3)

    def slow(self, now: float) -> bool:
        """A request whose body is coming slower than MIN_RATE, and nothing answered yet."""
        return (self.in_body and self.refusal is None and self.heads == self.answered + 1
                and not self.replies.started and now - self.began >= SLOW_AFTER
                and self.rate(now) < MIN_RATE)

    def refuse_slow(self, now: float) -> None:
        self.abort_request(408, "request_timeout",
                           f"the request's body came too slowly ({self.got:,} bytes in "
                           f"{now - self.began:.0f} s) while the server was at its "
                           "connection limit; send it whole, or try again later",
                           {"min_rate": MIN_RATE})

    def refuse_head(self) -> None:
        limit, url = self.limits.max_header_bytes, self.url
        advice = (f"its URL alone is {url:,} bytes or more: send long word lists in the body "
                  "of a POST" if url > limit // 2 else "send fewer or shorter headers")
        self.refuse(431, "headers_too_large", "the request line and headers are over the "
                    f"limit of {limit:,} bytes; {advice}", {"limit": limit}, self.heads)

    def refuse_invalid(self) -> None:
        self.refuse(400, "invalid_http", "the request is not valid HTTP/1.1 (its request "
                    "line, a header or its body's framing cannot be read); send a "
                    "well-formed request, e.g. with curl", None, self.heads)

    def refuse_framing(self) -> None:
        limit = self.limits.max_header_bytes
        self.abort_request(431, "headers_too_large",
                           "the chunked body's framing and trailers are over the limit of "
                           f"{limit:,} bytes: send larger chunks and no long trailers",
                           {"limit": limit})

    def refuse_busy(self) -> None:
        limit = self.limits.max_connections
        self.refuse(503, "busy", f"this server is answering {limit:,} connections, its "
                    "limit; try again in a moment", {"limit": limit}, 0,
                    retry_after=True)

    def head_timed_out(self) -> None:
        self.head_timer = None
        if self.closing:
            return
        timeout = self.limits.header_timeout
        if self.heads > self.answered or not self.reading:  # waiting on us, not the client
            self.head_timer = self.loop.call_later(timeout, self.head_timed_out)
        elif self.head_left < self.limits.max_header_bytes:
            self.refuse(408, "request_timeout", f"the request's headers did not arrive "
                        f"within {timeout:g} s", {"timeout": timeout}, self.heads)
        else:  # nothing was sent: just close
            self.close()

    def body_timed_out(self) -> None:
        self.body_timer = None
        if self.closing:
            return
        timeout = self.limits.body_timeout
        if not self.reading:  # held back by us: the client is not late
            self.body_timer = self.loop.call_later(timeout, self.body_timed_out)
            return
        self.abort_request(408, "request_timeout",
                           f"the request's body did not arrive within {timeout:g} s",
                           {"timeout": timeout})

    def abort_request(self, status: int, code: str, message: str, details) -> None:
        """Stop reading the request whose body is coming: answer `status` unless it was
        answered already (then close after reading what comes, as after a refusal), or
        its reply is being written (then just close)."""
        if self.answered == self.heads - 1 and self.replies.started:
            self.closing = True
            self.close()
        elif self.answered == self.heads:
            self.refuse(None, "", "", None, self.heads)
        else:
            self.refuse(status, code, message, details, self.heads - 1)

    def refuse(self, status: int | None, code: str, message: str, details, after: int,
               retry_after: bool = False) -> None:
        """Answer this connection ourselves once `after` requests are answered (no answer
        when `status` is None), then close: nothing more is framed or given to uvicorn."""
        self.closing = True
        self.leave_pool()
        self.pool.add_extra(self)
        keep = self.ends[-1] if self.ends else self.start  # whole requests before go on
        self.held, self.framed = self.held[:keep], keep
        self.refuse_after = after
        if status is None:
            self.refusal = b""
            self.send_refusal()
            return
        body = orjson.dumps(error_body(code, message, details))
        self.refusal = b"".join([
            b"HTTP/1.1 %d %s\r\n" % (status, http.HTTPStatus(status).phrase.encode()),
            b"date: %s\r\n" % formatdate(usegmt=True).encode(),
            b"retry-after: 1\r\n" if retry_after else b"",
            b"content-type: application/json\r\ncontent-length: %d\r\n" % len(body),
            b"connection: close\r\n\r\n", body])
        if self.answered >= after:
            self.send_refusal()

    def send_refusal(self) -> None:
        if self.transport.is_closing():
            return
        if self.admitted and not self.inside.cut:
            self.inside.cut = True
            self.inner.connection_lost(None)  # the app reads http.disconnect
        if self.refusal:
            self.out.write(self.refusal)
        self.linger()

    def linger(self) -> None:
        """Close after the reply, first reading and dropping what the client still sends
        (until it pauses for LINGER s, LINGER_MOST s at most): closing with unread data
        sends a reset, which can destroy the reply before the client reads it."""
        self.cancel_timers()
        self.held, self.start, self.framed = b"", 0, 0
        transport = self.transport
        if not transport.can_write_eof():
            self.out.close()
            return
        self.out.write_eof()  # FIN after the reply; the client's own EOF then closes us
        if not self.reading:
            self.reading = True
            transport.resume_reading()
        self.last_read = now = self.loop.time()
        self.linger_end = now + LINGER_MOST
        self.linger_timer = self.loop.call_later(LINGER, self.linger_check)

    def linger_check(self) -> None:
        now = self.loop.time()
        until = min(self.last_read + LINGER, self.linger_end)
        if now >= until:
            self.linger_timer = None
            self.transport.close()
        else:
            self.linger_timer = self.loop.call_later(until - now, self.linger_check)


def protocol_for(settings: Settings):
    """The protocol uvicorn should build, with these settings' limits: a partial of a
    module-level class, so it pickles into the worker processes of `--workers N`."""
    return functools.partial(Guard, limits=ConnectionLimits.from_settings(settings))


def connection_limit(settings: Settings) -> int:
    """`max_connections`, lowered to leave FD_RESERVE of this process's descriptors free."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return settings.max_connections
    return max(1, min(settings.max_connections, soft - FD_RESERVE - EXTRA_MOST))


def uvicorn_options(settings: Settings) -> dict:
    """The keyword arguments of uvicorn.run / uvicorn.Config that kelime serves with. No
    limit_concurrency: the guard counts connections and answers 503 in the JSON shape."""
    return {
        "http": protocol_for(settings),
        "loop": "uvloop",
        "ws": "none",                      # kelime has no WebSocket route
        "timeout_keep_alive": settings.keepalive_timeout,
        "access_log": False,
        "server_header": False,
        "forwarded_allow_ips": settings.trusted_proxies,  # [] (default): believe no proxy
    }
