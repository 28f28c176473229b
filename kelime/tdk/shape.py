"""The shape of the entries TDK sends, checked before anything is stored (pydantic).

Only what kelime reads is constrained, to the types TDK sends (TDK-API: "all numbers and
flags are strings; missing text is null"): ids are strings of ASCII digits that fit SQLite's
INTEGER (TDK's have six; ``"²"`` passed ``str.isdigit``, and a 23-digit id overflowed); every
other field kelime reads is a string or null, never a number or a boolean (an integer
``ozel_mi`` 1 or a boolean ``true`` passed here, and the policy, which compares strings,
took the proper name for a common word); ``ozel_mi`` is ``"0"``, ``"1"``, ``""`` or null;
lists are lists of objects (``"anlamlarListe": "yok"`` and ``[null]`` crashed the save).
Fields kelime does not read pass as they came: the entry is stored exactly as TDK sent it,
not as validated here.

    >>> problem([{"madde_id": "1", "madde": "kitap"}]) is None
    True
    >>> problem([{"madde_id": "²", "madde": "kitap"}])
    "entry 1: madde_id: '²' is not an id (a string of ASCII digits)"
    >>> problem([{"madde_id": "1", "madde": "Ankara", "ozel_mi": 1}])
    "entry 1: ozel_mi: 1 is not one of '0', '1', '' or null (TDK sends flags as strings)"
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, TypeAdapter, ValidationError

_ID = re.compile(r"[0-9]{1,18}")


def _id(value: Any) -> str:
    if not isinstance(value, str) or not _ID.fullmatch(value):
        shown = repr(value[:30]) if isinstance(value, str) else _shown(value)
        raise ValueError(f"{shown} is not an id (a string of ASCII digits)")
    return value


def _text(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{_shown(value)} is not a string or null (TDK sends every field "
                         "as a string)")
    return value


def _flag(value: Any) -> str | None:
    if value not in (None, "", "0", "1") or isinstance(value, bool):
        raise ValueError(f"{_shown(value)} is not one of '0', '1', '' or null (TDK sends "
                         "flags as strings)")
    flag: str | None = value  # one of the four above
    return flag


def _shown(value: Any) -> str:
    """A value as JSON would show it, short: 1, true, {…}."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return "{…}" if isinstance(value, dict) else "[…]"
    return repr(value)[:30]


Id = Annotated[str, BeforeValidator(_id)]
Text = Annotated[str | None, BeforeValidator(_text)]
Flag = Annotated[str | None, BeforeValidator(_flag)]


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
    madde: Annotated[str, BeforeValidator(_text)]
    ozel_mi: Flag = None
    cesit: Text = None
    kelime_no: Text = None
    anlamlarListe: list[Sense] | None = None
    atasozu: list[dict[str, Any]] | None = None


ENTRIES = TypeAdapter(list[Entry])


def problem(data: Any) -> str | None:
    """None when `data` is a list of entries kelime can store, else the first problem."""
    try:
        ENTRIES.validate_python(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = list(first["loc"])
        index = where[0] if where else None
        head = ""
        if isinstance(index, int):
            head = f"entry {index + 1}: "
            del where[0]
        path = ".".join(str(p) for p in where)
        message = first["msg"].removeprefix("Value error, ")
        return f"{head}{path}: {message}" if path else f"{head}{message}"
    return None
