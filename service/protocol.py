"""uvicorn's httptools protocol with limits on what a client can make the server hold.

Stock uvicorn + httptools reads a request's headers without any bound (one 200 MiB header
is buffered whole and answered) and waits forever for heads and bodies that never end.
`LimitedHttpToolsProtocol` adds, per connection:

* a size cap on the request line + headers (`max_header_bytes`): past it the server
  answers 431 in kelime's JSON error shape and closes. The parser is never fed more than
  the cap, so httptools (which buffers a header until it ends) cannot hold more;
* a time limit for a request's head (`header_timeout`), counted from the connection's
  start (a connection that sends nothing is closed) or from the first byte of a later
  request on a keep-alive connection; 408 when part of a head had come;
* a time limit for a request's body (`body_timeout`), counted from the end of its head:
  the connection is closed, with a 408 when no response was started;
* a bound on a chunked body's framing: trailers are buffered by httptools like headers,
  so chunk lines and trailers may exceed the body they carry by `max_header_bytes` at
  most (431 past it);
* at `limit_concurrency` connections, a new connection closes the connection that has
  waited longest without a request under way (silent, half a head, or idle keep-alive),
  so that silent sockets cannot use up the file descriptors: libuv accepts and at once
  drops every new connection while the process is out of them. With every connection
  busy, uvicorn answers 503 as before.

Idle keep-alive connections are closed by uvicorn's own `timeout_keep_alive`. After a 431
or 408 the connection reads and drops what its client still sends (until it pauses for
LINGER s, LINGER_MOST s at most) before closing, so that the client reads the reply
rather than a reset.

Timers are armed only when a head or a body spans several reads, so a request that
arrives in one read (nearly all of them) costs no timer: benchmarks/servers.py measures
the cost per request, in process and against hello world over HTTP.
"""

from __future__ import annotations

import functools
import resource
from collections import OrderedDict
from dataclasses import dataclass

import orjson
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from .errors import error_body
from .settings import Settings

#: A refused connection keeps reading (and dropping) what its client still sends until the
#: client stops for LINGER s, and for LINGER_MOST s at most.
LINGER = 2.0
LINGER_MOST = 10.0
#: File descriptors kept free of connections (listening socket, logs, lexicon files).
FD_RESERVE = 64


@dataclass(frozen=True)
class ConnectionLimits:
    max_header_bytes: int = 32 * 1024
    header_timeout: float = 10.0
    body_timeout: float = 30.0

    @classmethod
    def from_settings(cls, settings: Settings) -> "ConnectionLimits":
        return cls(settings.max_header_bytes, settings.header_timeout, settings.body_timeout)


def idle_connections(server_state) -> OrderedDict:
    """The server's connections with no request under way, longest waiting first."""
    idle = getattr(server_state, "kelime_idle", None)
    if idle is None:
        idle = server_state.kelime_idle = OrderedDict()
    return idle


class Corked:
    """A transport that sends what is written within one turn of the event loop as one
    write: a reply's head and its body leave together, so a worker killed between the two
    never leaves a client (or nginx, which then cannot retry) with headers and no body. One
    syscall instead of two for every small reply, too."""

    def __init__(self, transport, loop):
        self._transport, self._loop, self._pending = transport, loop, []

    def write(self, data: bytes) -> None:
        if not self._pending:
            self._loop.call_soon(self.flush)
        self._pending.append(data)

    def flush(self) -> None:
        if self._pending:
            data = b"".join(self._pending)
            self._pending.clear()
            if not self._transport.is_closing():
                self._transport.write(data)

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


class LimitedHttpToolsProtocol(HttpToolsProtocol):
    """HttpToolsProtocol with a bounded request head, timeouts for heads and bodies, and
    eviction of idle connections at the connection limit."""

    def __init__(self, config, server_state, app_state, _loop=None, *,
                 limits: ConnectionLimits = ConnectionLimits()) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.limits = limits
        self.max_head = limits.max_header_bytes
        self.head_left: int | None = self.max_head  # bytes the head may still take; None: body
        self.head_timer = None
        self.body_timer = None
        self.linger_timer = None
        self.body_fed = 0   # bytes read inside the current body, and the body bytes in them
        self.body_seen = 0
        self.refused = False  # a limit was hit: drop whatever else arrives
        self.idle = idle_connections(server_state)

    # --- the connection -------------------------------------------------------------

    def connection_made(self, transport) -> None:
        super().connection_made(Corked(transport, self.loop))
        if self.limit_concurrency is not None and len(self.connections) >= self.limit_concurrency:
            self.evict_one()
        self.idle[self] = None
        self.head_timer = self.loop.call_later(self.limits.header_timeout, self.head_timed_out)

    def connection_lost(self, exc) -> None:
        self.idle.pop(self, None)
        self.cancel_timers()
        super().connection_lost(exc)

    def evict_one(self) -> None:
        """Close a lingering connection, or the one that has waited longest without a
        request."""
        while self.idle:
            victim, _ = self.idle.popitem(last=False)
            if not victim.transport.is_closing():
                victim.refused = True
                victim.cancel_timers()
                victim.connections.discard(victim)  # counts as gone now, for the 503 check
                victim.transport.close()
                return

    def cancel_timers(self) -> None:
        for name in ("head_timer", "body_timer", "linger_timer"):
            timer = getattr(self, name)
            if timer is not None:
                timer.cancel()
                setattr(self, name, None)

    def data_received(self, data: bytes) -> None:
        if self.refused:
            self.last_read = self.loop.time()  # dropped; keeps a lingering connection open
            return
        left = self.head_left
        if left is None:  # inside a body
            self.body_fed += len(data)
            super().data_received(data)
        elif len(data) <= left:  # a head within its limit
            self.head_left = left - len(data)
            super().data_received(data)
        else:  # feed only what the head may still take
            self.head_left = 0
            if left:
                super().data_received(data[:left])
            if self.transport.is_closing():
                return
            if self.head_left == 0:  # no end of head within the limit
                self.refuse_head()
            else:
                self.data_received(data[left:])
            return
        if self.transport.is_closing():
            return
        left = self.head_left
        if left is None:  # inside a body that did not come whole
            if self.body_fed - self.body_seen > self.max_head + self.body_seen:
                self.refuse_framing()
                return
            if self.body_timer is None:
                self.body_timer = self.loop.call_later(self.limits.body_timeout,
                                                       self.body_timed_out)
        elif left < self.max_head and self.head_timer is None:  # part of a head
            self.head_timer = self.loop.call_later(self.limits.header_timeout,
                                                   self.head_timed_out)

    # --- parser and cycle callbacks -------------------------------------------------

    def on_headers_complete(self) -> None:
        self.head_left = None
        self.body_fed = self.body_seen = 0
        self.idle.pop(self, None)
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        self.body_seen += len(body)
        super().on_body(body)

    def on_message_complete(self) -> None:
        self.head_left = self.max_head
        if self.body_timer is not None:
            self.body_timer.cancel()
            self.body_timer = None
        super().on_message_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.head_left is not None and not self.pipeline and not self.refused \
                and not self.transport.is_closing():
            self.idle[self] = None

    # --- the limits -----------------------------------------------------------------

    def responding(self) -> bool:
        """Whether a response to an earlier request is still being produced."""
        return self.cycle is not None and not self.cycle.response_complete

    def refuse_head(self) -> None:
        self.refused = True
        self.idle.pop(self, None)
        if self.responding():  # a pipelined head: finish the answer under way, then close
            self.cycle.keep_alive = False
            self.flow.pause_reading()
            return
        limit, url = self.max_head, len(getattr(self, "url", b""))
        advice = (f"its URL alone is {url:,} bytes or more: send long word lists in the body "
                  "of a POST" if url > limit // 2 else "send fewer or shorter headers")
        self.reply_and_close(431, "headers_too_large",
                             f"the request line and headers are over the limit of {limit:,} "
                             f"bytes; {advice}", {"limit": limit})

    def head_timed_out(self) -> None:
        self.head_timer = None
        if self.transport.is_closing() or self.responding():
            return  # while the app answers, uvicorn's keep-alive rules apply after it
        self.refused = True
        self.idle.pop(self, None)
        if self.head_left is not None and self.head_left < self.max_head:
            timeout = self.limits.header_timeout
            self.reply_and_close(408, "request_timeout",
                                 f"the request's headers did not arrive within {timeout:g} s",
                                 {"timeout": timeout})
        else:  # nothing was sent: just close
            self.transport.close()

    def refuse_framing(self) -> None:
        """A chunked body whose framing (chunk lines, and trailers, which httptools buffers
        like headers) is over a head's worth more than the body it carries."""
        limit = self.max_head
        self.abort_request(431, "headers_too_large",
                           "the chunked body's framing and trailers are over the limit of "
                           f"{limit:,} bytes: send larger chunks and no long trailers",
                           {"limit": limit})

    def body_timed_out(self) -> None:
        self.body_timer = None
        if self.transport.is_closing():
            return
        timeout = self.limits.body_timeout
        self.abort_request(408, "request_timeout",
                           f"the request's body did not arrive within {timeout:g} s",
                           {"timeout": timeout})

    def abort_request(self, status: int, code: str, message: str, details) -> None:
        """Stop reading a request's body: answer `status` unless the app already started
        its response, and close."""
        self.refused = True
        cycle = self.cycle
        if cycle is None or cycle.response_started:
            self.transport.close()  # uvicorn then tells the app http.disconnect
            return
        cycle.disconnected = True  # the app now reads http.disconnect and cannot send
        cycle.message_event.set()
        self.reply_and_close(status, code, message, details)

    def send_400_response(self, msg: str) -> None:
        """A request httptools cannot parse: the JSON error shape (uvicorn's own is plain
        text), then close. Its log line stays uvicorn's."""
        if self.responding():  # a pipelined request: finish the answer under way, then close
            self.cycle.keep_alive = False
            self.refused = True
            return
        self.refused = True
        self.reply_and_close(400, "invalid_http", "the request is not valid HTTP/1.1 (its "
                             "request line or a header cannot be read); send a well-formed "
                             "request, e.g. with curl")

    def reply_and_close(self, status: int, code: str, message: str, details=None) -> None:
        body = orjson.dumps(error_body(code, message, details))
        head = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers:
            head.extend([name, b": ", value, b"\r\n"])
        head.append(b"content-type: application/json\r\ncontent-length: %d\r\n"
                    b"connection: close\r\n\r\n" % len(body))
        self.transport.write(b"".join(head) + body)
        self.linger()

    def linger(self) -> None:
        """Close after the reply, first reading and dropping what the client still sends
        (until it pauses for LINGER s, LINGER_MOST s at most): closing with unread data
        sends a reset, which can destroy the reply before the client reads it."""
        self.cancel_timers()
        transport = self.transport
        if not transport.can_write_eof():
            transport.close()
            return
        transport.write_eof()  # FIN after the reply; the client's own EOF then closes us
        self.flow.resume_reading()
        self.idle[self] = None  # the first to go if the connections run out
        self.idle.move_to_end(self, last=False)
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
    return functools.partial(LimitedHttpToolsProtocol,
                             limits=ConnectionLimits.from_settings(settings))


def connection_limit(settings: Settings) -> int:
    """`max_connections`, lowered to leave FD_RESERVE of this process's descriptors free."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return settings.max_connections
    return max(1, min(settings.max_connections, soft - FD_RESERVE))


def uvicorn_options(settings: Settings) -> dict:
    """The keyword arguments of uvicorn.run / uvicorn.Config that kelime serves with."""
    return {
        "http": protocol_for(settings),
        "loop": "uvloop",
        "ws": "none",                      # kelime has no WebSocket route
        "limit_concurrency": connection_limit(settings),
        "timeout_keep_alive": settings.keepalive_timeout,
        "access_log": False,
        "server_header": False,
        "forwarded_allow_ips": settings.trusted_proxies,  # [] (default): believe no proxy
    }
