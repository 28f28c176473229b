"""The shape of the entries TDK sends, checked before anything is stored (pydantic).

Only what kelime reads is constrained, and only as far as the store needs it: ids are
strings of ASCII digits that fit SQLite's INTEGER (TDK's have six; ``"²"`` passed
``str.isdigit``, and a 23-digit id overflowed), lists are lists of objects (``"anlamlarListe":
"yok"`` and ``[null]`` crashed the save). Every other field passes as it came: the entry is
stored exactly as TDK sent it, not as validated here.

    >>> problem([{"madde_id": "1", "madde": "kitap"}]) is None
    True
    >>> problem([{"madde_id": "²", "madde": "kitap"}])
    "entry 1: madde_id: '²' is not an entry number (ASCII digits)"
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, TypeAdapter, ValidationError

_ID = re.compile(r"[0-9]{1,18}")


def _id(value: Any) -> str:
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(text, str) or not _ID.fullmatch(text):
        raise ValueError(f"{str(value)[:30]!r} is not an entry number (ASCII digits)")
    return text


Id = Annotated[str, BeforeValidator(_id)]
Text = str | int | float | None  # TDK's scalars are strings; numbers pass, objects do not


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Author(_Open):
    tam_adi: Text = None


class Example(_Open):
    ornek_id: Id | None = None
    ornek_sira: Text = None
    ornek: Text = None
    yazar: list[Author] | None = None


class Tag(_Open):
    ozellik_id: Id | None = None
    tur: Text = None
    tam_adi: Text = None
    kisa_adi: Text = None


class Sense(_Open):
    anlam_id: Id | None = None
    anlam_sira: Text = None
    anlam: Text = None
    fiil: Text = None
    ozelliklerListe: list[Tag] | None = None
    orneklerListe: list[Example] | None = None


class Entry(_Open):
    madde_id: Id
    madde: str
    ozel_mi: Text = None
    cesit: Text = None
    kelime_no: Text = None
    anlamlarListe: list[Sense] | None = None
    atasozu: list[dict] | None = None


ENTRIES = TypeAdapter(list[Entry])


def problem(data: Any) -> str | None:
    """None when `data` is a list of entries kelime can store, else the first problem."""
    try:
        ENTRIES.validate_python(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = list(first["loc"])
        head = f"entry {where.pop(0) + 1}: " if where and isinstance(where[0], int) else ""
        path = ".".join(str(p) for p in where)
        message = first["msg"].removeprefix("Value error, ")
        return f"{head}{path}: {message}" if path else f"{head}{message}"
    return None
