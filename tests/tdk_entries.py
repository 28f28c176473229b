"""Synthetic TDK /gts entries, shaped exactly like the real replies in ../shared/tdk-samples
(every value a string or null, ids as strings, empty lists left out).

No public sample carries a `kaba konuşmada` or `hakaret yollu` sense, so those are built
here from TDK's public tag table (ids 36 and 38, tur "4").
"""

from __future__ import annotations

import itertools

_ids = itertools.count(900_000)


def tag(ozellik_id: str, tur: str, tam_adi: str, kisa_adi: str, ekno: str) -> dict:
    return {"ozellik_id": ozellik_id, "tur": tur, "tam_adi": tam_adi, "kisa_adi": kisa_adi,
            "ekno": ekno}


ISIM = tag("19", "3", "isim", "a.", "30")
SIFAT = tag("20", "3", "sıfat", "sf.", "31")
ARGO = tag("30", "4", "argo", "argo", "41")
MECAZ = tag("32", "4", "mecaz", "mec.", "43")
KABA = tag("36", "4", "kaba konuşmada", "kaba", "47")
HAKARET = tag("38", "4", "hakaret yollu", "hkr.", "49")


def sense(anlam: str, *tags: dict, madde_id: str = "0", sira: int = 1) -> dict:
    """One sense; `ozelliklerListe` is absent when it has no tags, as TDK sends it."""
    out = {"anlam_id": str(next(_ids)), "madde_id": madde_id, "anlam_sira": str(sira),
           "fiil": "0", "tipkes": "0", "anlam": anlam, "gos": "0"}
    if tags:
        out["ozelliklerListe"] = [dict(t) for t in tags]
    return out


def entry(madde: str | None, *senses: dict, ozel_mi: str = "0", **fields) -> dict:
    """One entry (`madde`); `anlamlarListe` is absent when there are no senses."""
    madde_id = str(next(_ids))
    out = {"madde_id": madde_id, "kac": "0", "kelime_no": str(next(_ids)), "cesit": "0",
           "anlam_gor": "0", "on_taki": None, "madde": madde, "cesit_say": "0",
           "anlam_say": str(len(senses)), "taki": None, "cogul_mu": "0", "ozel_mi": ozel_mi,
           "egik_mi": "0", "lisan_kodu": "0", "lisan": "", "telaffuz": None,
           "birlesikler": None, "font": None, "madde_duz": madde, "gosterim_tarihi": None}
    if senses:
        out["anlamlarListe"] = [dict(s, madde_id=madde_id, anlam_sira=str(i))
                                for i, s in enumerate(senses, 1)]
    out.update(fields)
    return out


def vulgar(madde: str, n: int = 2, *, tag_: dict = KABA, **fields) -> dict:
    """An entry every sense of which is tagged `tag_` (kaba konuşmada by default)."""
    return entry(madde, *(sense(f"anlam {i}", ISIM, tag_) for i in range(n)), **fields)


def ordinary(madde: str, *extra_tags: dict, **fields) -> dict:
    """An entry with one plain noun sense (plus any `extra_tags` on it)."""
    return entry(madde, sense("anlam", ISIM, *extra_tags), **fields)
