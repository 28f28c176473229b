"""JSON replies (orjson bytes) with ETags derived from the lexicon, and conditional GETs.

    >>> etag("ab" * 32)
    '"abababababababababababababababab"'
    >>> matches('W/"x", "y"', '"y"'), matches("*", '"y"'), matches(None, '"y"')
    (True, True, False)
"""

from __future__ import annotations

import hashlib

import orjson
from starlette.responses import Response

from kelime.lexicon.folder import split_pin

JSON = "application/json"


def json_response(obj, etag_value: str | None = None, headers: dict | None = None,
                  status: int = 200) -> Response:
    """`obj` as JSON bytes (orjson: no pydantic on the way out)."""
    headers = dict(headers or {})
    if etag_value:
        headers["ETag"] = etag_value
    return Response(orjson.dumps(obj), status_code=status, media_type=JSON, headers=headers)


def etag(sha256: str, request_key=None) -> str:
    """A strong ETag: the lexicon's sha256, plus a digest of whatever else shapes the reply."""
    tag = sha256[:32]
    if request_key is not None:
        tag += "-" + hashlib.blake2b(orjson.dumps(request_key), digest_size=10).hexdigest()
    return f'"{tag}"'


def matches(if_none_match: str | None, tag: str) -> bool:
    """Whether an If-None-Match header names `tag` (weak comparison, as RFC 9110 asks)."""
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return True
    tag = tag.removeprefix("W/")
    return any(part.strip().removeprefix("W/") == tag for part in if_none_match.split(","))


IMMUTABLE = "public, max-age=31536000, immutable"


def pinned(lexicon: str | None) -> bool:
    """Whether a question names a build (`tr@d4323d22aa28`), not only a lexicon."""
    return split_pin(lexicon or "")[1] is not None


def cache_control(pinned: bool, max_age: int) -> dict[str, str]:
    """A cacheable GET's Cache-Control: a reply from a pinned build (`name@version`) with
    kelime's own game profiles never changes (profiles from KELIME_GAMES can change at a
    restart: revalidated); one from the current build is revalidated (`max_age` 0) or kept
    `max_age` s."""
    if pinned:
        return {"Cache-Control": IMMUTABLE}
    return {"Cache-Control": f"public, max-age={max_age}" if max_age else "no-cache"}


def not_modified(tag: str, headers: dict) -> Response:
    return Response(status_code=304, headers={"ETag": tag, **headers})
