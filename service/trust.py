"""Who the client is: X-Forwarded-For is believed from the balancer only.

nginx reaches each replica through a unix socket (`kelime serve --socket PATH`,
deploy/nginx/kelime.conf) in a folder only nginx and the service's own user can open, and
sets X-Forwarded-For to the client's address alone. So a request that arrives on a unix
socket came through the balancer, and its X-Forwarded-For names the client; one that
arrives over TCP is its connection's peer, whatever it says, unless that peer is a proxy
named in KELIME_FORWARDED_ALLOW_IPS (nginx on another host: any process of that host can
then name a client). A local process can therefore never pick the address the reports'
limit counts, and uvicorn's own `proxy_headers` (which trusts every local process by
default) is off. Both cases are uvicorn's ProxyHeadersMiddleware; `forwarded(scope)` says
whether a request came through a trusted proxy (the admin route refuses those).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

FORWARDED = "kelime.forwarded"  # in the scope: the request came through a trusted proxy
PEER = "kelime.peer"            # in the scope: the connection's own peer


class Trust:
    """`app` with each client as above."""

    def __init__(self, app: ASGIApp, proxies: list[str]) -> None:
        self.app = app
        mark: Any = self.mark  # (uvicorn types ASGI apps its own way, Starlette its own)
        self.balancer: Any = ProxyHeadersMiddleware(mark, "*")
        self.proxies: Any = ProxyHeadersMiddleware(mark, proxies) if proxies else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
        elif scope.get("client") is None:  # a unix socket: the balancer's
            await self.balancer(scope, receive, send)
        elif self.proxies is not None:
            scope[PEER] = scope["client"]
            await self.proxies(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def mark(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope[FORWARDED] = scope.get("client") != scope.get(PEER)
        await self.app(scope, receive, send)


def forwarded(scope: Scope) -> bool:
    """Whether the request came through a trusted proxy naming a client."""
    return bool(scope.get(FORWARDED))
