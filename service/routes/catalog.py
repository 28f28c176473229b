"""GET /v1/lexicons and GET /v1/games: what is loaded, and the game profiles."""

from __future__ import annotations

import gzip
import hashlib

import anyio
from fastapi import APIRouter, Request
from starlette.responses import Response

from kelime.games import DEFAULT_GAME
from kelime.lexicon import Lexicon
from kelime.normalize import turkish_sorted

from ..conditional import wants_gzip
from ..responses import cache_control, etag, json_response, pinned
from ..schemas import GamesReply, LexiconsReply
from ..state import Kelime, KelimeDep, NoQuery

router = APIRouter(prefix="/v1", tags=["catalog"], dependencies=[NoQuery])
SUMMARY = ("alphabet", "created", "normalization_version", "counts", "source")


def summary(kelime: Kelime, lex: Lexicon) -> dict:
    """A lexicon's identity plus what its manifest says about it (no file list), and the
    builds of it held."""
    manifest = lex.manifest.as_dict()
    return {**lex.info, **{key: manifest[key] for key in SUMMARY},
            "held": [{**build.info, "created": build.manifest.created, "current": build is lex}
                     for build in kelime.held(lex.name)]}


def served(kelime: Kelime) -> list[Lexicon]:
    """Every build held, each lexicon's current one first."""
    return [build for name in sorted(kelime.lexicons) for build in kelime.held(name)]


def catalog_etag(kelime: Kelime, reply: dict) -> str:
    """Derived from every held build's sha256 and the reply (manifests and games can change)."""
    shas = "".join(lex.info["sha256"] for lex in served(kelime))
    return etag(hashlib.sha256(shas.encode()).hexdigest(), reply)


@router.get("/lexicons", response_model=LexiconsReply)
async def lexicons(kelime: KelimeDep) -> Response:
    """Every loaded lexicon (name, version, sha256, words, alphabet, counts, source) and the
    builds of it held (`held`: `name@version` asks one)."""
    reply = {"lexicon": kelime.default_info(), "default": kelime.settings.default_lexicon,
             "lexicons": [summary(kelime, lex) for _, lex in sorted(kelime.lexicons.items())]}
    return json_response(reply, catalog_etag(kelime, reply))


_DOWNLOADS: dict[str, tuple[bytes, bytes]] = {}  # sha256 → (text, gzip of it)


def download(lex: Lexicon, served: set[str]) -> tuple[bytes, bytes]:
    """The lexicon's valid words, one a line in Turkish order, and its gzip (made once per
    lexicon; those of lexicons no longer `served` (sha256s) are dropped)."""
    found = _DOWNLOADS.get(lex.info["sha256"])
    if found is None:
        if lex.index is not None:  # the index holds the words in Turkish order already
            words = lex.index.words(range(len(lex.index)))
        else:
            words = turkish_sorted(lex.words.keys(), lex.alphabet)
        text = "".join(w + "\n" for w in words).encode("utf-8")
        found = (text, gzip.compress(text, compresslevel=9, mtime=0))
        for sha in [s for s in _DOWNLOADS if s not in served]:
            del _DOWNLOADS[sha]  # a replaced lexicon's download goes with it
        _DOWNLOADS[lex.info["sha256"]] = found
    return found


@router.get("/lexicons/{name}/words", response_class=Response, responses={
    200: {"content": {"text/plain": {"schema": {"type": "string"}}},
          "description": "The valid words, one a line, in Turkish order (UTF-8)."}})
async def lexicon_words(name: str, kelime: KelimeDep, request: Request) -> Response:
    """Every valid word of a lexicon, to check words offline: one a line, Turkish order;
    gzip when asked; a strong ETag from the lexicon's sha256 (304 on If-None-Match)."""
    lex = kelime.lexicon(name)
    shas = {other.info["sha256"] for other in served(kelime)}
    text, packed = await anyio.to_thread.run_sync(download, lex, shas)
    zipped = wants_gzip(request.scope["headers"])  # the weights read as the compressor does
    sha = lex.info["sha256"]
    headers = {"ETag": f'"{sha}{"-gzip" if zipped else ""}"', "Vary": "Accept-Encoding",
               **cache_control(pinned(name), kelime.settings.cache_max_age),
               "Content-Disposition": f'inline; filename="{lex.name}-{lex.info["version"]}.txt"',
               "X-Kelime-Licence": str(lex.manifest.source.get("licence", ""))[:200]}
    if zipped:
        headers["Content-Encoding"] = "gzip"
    return Response(packed if zipped else text, media_type="text/plain; charset=utf-8",
                    headers=headers)


@router.get("/games", response_model=GamesReply)
async def games(kelime: KelimeDep) -> Response:
    """The game profiles: minimum word length, rack size, bingo bonus, letter values."""
    reply = {"lexicon": kelime.default_info(), "default": DEFAULT_GAME,
             "games": [g.as_dict() for g in kelime.games.values()]}
    return json_response(reply, catalog_etag(kelime, reply))
