"""GET /: the page for people (check words, try a rack, find a board's best moves, study
short words, see the lexicon), and its static files.

The page is plain files under `service/static/` (no build step, nothing loaded from outside):
`index.html` renders a usable `<form method=get>` without JavaScript; `page.js` fetches the
answers from the JSON API and keeps the question in the URL (`/?w=kitap+evler`,
`/?rack=kale%3F%5Blm%5D&game=kelimatik`) so that a result can be shared as a link.
`messages.json` holds every sentence it shows, in Turkish and in Kurmanji (spoken when the
lexicon is Kurmanji): the interface, each verdict reason and each error code of `CODES`
(tests/test_page.py holds the codes and reasons equal to the server's).

Every reply here carries a strict Content-Security-Policy (scripts, styles and requests only
from this origin, no inline script) and `X-Content-Type-Options: nosniff`. The files are read
once, on first use, and served with a strong ETag (`Cache-Control: no-cache`: revalidated, so
a new release is picked up at once).
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from fastapi import APIRouter, Request
from starlette.responses import Response

from kelime.errors import excerpt

from ..errors import NotFound, Unavailable

router = APIRouter(tags=["page"], include_in_schema=False)
STATIC = Path(__file__).resolve().parent.parent / "static"
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
    ".json": "application/json",
}
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
       "form-action 'self'; frame-ancestors 'none'")
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


#: The files there are, listed once: a name is looked up in this set before anything else,
#: so no request reaches the file system and the cache holds only these.
FILES = frozenset(p.name for p in STATIC.iterdir() if p.suffix in CONTENT_TYPES
                  and not p.name.startswith(".")) if STATIC.is_dir() else frozenset()
PAGE = "index.html"


def static_file(name: str) -> tuple[bytes, str, str] | None:
    """(body, content type, ETag) of `service/static/<name>` when it is one of `FILES`."""
    return read_static(name) if name in FILES else None


@cache
def read_static(name: str) -> tuple[bytes, str, str]:
    """A shipped file, read once (the cache holds at most `FILES`)."""
    path = STATIC / name
    body = path.read_bytes()
    return body, CONTENT_TYPES[path.suffix], f'"{hashlib.sha256(body).hexdigest()[:32]}"'


def serve(request: Request, name: str) -> Response:
    found = static_file(name)
    if found is None:
        if name == PAGE:
            raise Unavailable("page_missing", f"the page's files are missing from {STATIC}: "
                              "reinstall kelime (its wheel ships service/static/)")
        raise NotFound("not_found", f"no static file {excerpt(name)}; the page is at /")
    body, content_type, tag = found
    headers = {**HEADERS, "ETag": tag}  # If-None-Match → 304: service/conditional.py
    return Response(body, media_type=content_type, headers=headers)


@router.api_route("/", methods=["GET", "HEAD"])
async def page(request: Request) -> Response:
    """The page (its state is in the query: `w`, `rack`, `game`; page.js reads it)."""
    return serve(request, "index.html")


@router.api_route("/static/{name}", methods=["GET", "HEAD"])
async def static(request: Request, name: str) -> Response:
    """One of the page's files: page.js, page.css, messages.json, icon.svg (the page itself
    is at /, where its relative links work)."""
    if name == PAGE:
        raise NotFound("not_found", "the page is at /, not /static/index.html")
    return serve(request, name)
