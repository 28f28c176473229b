"""GET /v1/lexicons and GET /v1/games: what is loaded, and the game profiles."""

from __future__ import annotations

import hashlib

from fastapi import APIRouter
from starlette.responses import Response

from kelime.games import DEFAULT_GAME
from kelime.lexicon import Lexicon

from ..responses import etag, json_response
from ..state import Kelime, KelimeDep

router = APIRouter(prefix="/v1", tags=["catalog"])
SUMMARY = ("alphabet", "created", "normalization_version", "counts", "source")


def summary(lex: Lexicon) -> dict:
    """A lexicon's identity plus what its manifest says about it (no file list)."""
    manifest = lex.manifest.as_dict()
    return {**lex.info, **{key: manifest[key] for key in SUMMARY}}


def catalog_etag(kelime: Kelime, reply: dict) -> str:
    """Derived from every loaded lexicon's sha256 and the reply (manifests and games can change)."""
    shas = "".join(lex.info["sha256"] for _, lex in sorted(kelime.lexicons.items()))
    return etag(hashlib.sha256(shas.encode()).hexdigest(), reply)


@router.get("/lexicons")
async def lexicons(kelime: KelimeDep) -> Response:
    """Every loaded lexicon (name, version, sha256, words, alphabet, counts, source)."""
    reply = {"lexicon": kelime.default_info(), "default": kelime.settings.default_lexicon,
             "lexicons": [summary(lex) for _, lex in sorted(kelime.lexicons.items())]}
    return json_response(reply, catalog_etag(kelime, reply))


@router.get("/games")
async def games(kelime: KelimeDep) -> Response:
    """The game profiles: minimum word length, rack size, bingo bonus, letter values."""
    reply = {"lexicon": kelime.default_info(), "default": DEFAULT_GAME,
             "games": [g.as_dict() for g in kelime.games.values()]}
    return json_response(reply, catalog_etag(kelime, reply))
