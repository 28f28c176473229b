"""A fake sozluk.gov.tr for tests and benchmarks: a real HTTP server on 127.0.0.1.

Run it as a subprocess; it prints its URL on the first line of stdout:

    $ python tests/fake_tdk.py --crawl-delay 0.2 --fault kitap=429:1:1
    http://127.0.0.1:38467

Routes, shaped like the real site after its 2026 redesign :
``/robots.txt`` (a Disallow on ``/gts?ara=gizli`` and ``/yonetim/``, more with
``--disallow PREFIX``, optional Crawl-delay,
a Sitemap line) → ``/sitemap.xml`` (index) → ``/sitemap-1.xml``, ``/sitemap-2.xml``
(``/kelime/<slug>`` URLs); ``/autocomplete.json`` and every unknown path answer the SPA's
HTML with status 200; ``/gts?ara=`` answers JSON entries as ``text/html``, all values
strings or null, empty lists absent, matching case- and circumflex-insensitively after a
naive ``str.lower()`` (so ``IĞDIR`` is not found, as on the real site).

Faults (``--fault WORD=KIND[:TIMES[:ARG]]`` or ``POST /_fake/faults``; WORD ``*`` = every
query, or a path: ``/robots.txt``, ``/sitemap.xml``, ``/sitemap-1.xml``, ``/sitemap-2.xml``;
TIMES -1 = forever): ``429`` (ARG = Retry-After seconds, or its text), ``503``, ``403``, ``404``, ``slow``
(ARG = seconds), ``lag`` (the good reply after ARG seconds, 0.05), ``close`` (connection closed, no reply), ``html``, ``broken`` (cut JSON),
``empty``, ``not_found`` (TDK's not-found reply for a word it has), ``unexpected`` (JSON
of another shape), ``no_words`` (an empty sitemap),
``latin`` (the body in ISO-8859-9), ``bom`` (a UTF-8 BOM first), ``deep`` (200,000 ``[``),
``typed`` (``ozel_mi`` an integer), ``renumber`` (the word's entries under madde_id ARG),
``escaped`` (the same reply with non-ASCII as ``\\u`` escapes), ``offsite`` (a redirect to another host), ``huge`` /
``chunked`` (ARG MiB of body, with or without Content-Length), ``bomb`` (ARG MiB gzipped);
replies not about the word asked: ``madde`` (one entry whose headword is ARG, a string),
``many`` (the word's entries and ARG invented ones), ``reword`` (a redirect to
``/gts?ara=ARG`` on this host), ``notfound_extra`` (TDK's not-found object with one more field).
``--tls CERT_AND_KEY.pem`` serves HTTPS with that certificate (tests make one with trustme).
Every request except ``/_fake/*`` is logged with start and end times: ``GET /_fake/log``.
The data set is synthetic (written here), never copied from TDK.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, urlsplit

SPA_HTML = ('<!doctype html><html lang="tr"><head><meta charset="UTF-8"><title>Türk Dil '
            'Kurumu Sözlükleri</title><script type="module" src="/assets/index-f4k3.js">'
            '</script></head><body><div id="root"></div></body></html>')
DISALLOWED_WORD = "gizli"
SLOW_START = 0.6  # seconds a chunked reply or a bomb takes to start: its end is telling
FAULTABLE_PATHS = ("/robots.txt", "/sitemap.xml", "/sitemap-1.xml", "/sitemap-2.xml")

# --- the data set: synthetic entries in TDK's exact shape ------------------------------------

TAGS = {  # id: (tur, kisa_adi, tam_adi, ekno) — the public tag enum
    "19": ("3", "a.", "isim", "30"), "20": ("3", "sf.", "sıfat", "31"),
    "22": ("3", "-i", "-i", "33"), "23": ("3", "nsz.", "nesnesiz", "34"),
    "30": ("4", "argo", "argo", "41"), "31": ("4", "esk.", "eskimiş", "42"),
    "32": ("4", "mec.", "mecaz", "43"), "36": ("4", "kaba", "kaba konuşmada", "47"),
    "38": ("4", "hkr.", "hakaret yollu", "49"), "43": ("1", "tar.", "tarih", "92"),
    "45": ("1", "coğ.", "coğrafya", "94"), "98": ("1", "bl.", "bilişim", "368"),
}
def _tag(tag_id: str) -> dict:
    tur, kisa, tam, ekno = TAGS[tag_id]
    return {"ozellik_id": tag_id, "tur": tur, "tam_adi": tam, "kisa_adi": kisa, "ekno": ekno}


def sense(text: str, tags=("19",), examples=(), fiil: str = "0") -> dict:
    """A sense (anlam); examples are (text, author or None)."""
    s = {"anlam_id": None, "madde_id": None, "anlam_sira": None, "fiil": fiil,
         "tipkes": "0", "anlam": text, "gos": "0"}
    if examples:
        s["orneklerListe"] = [_example(i, t, a) for i, (t, a) in enumerate(examples, 1)]
    if tags:
        s["ozelliklerListe"] = [_tag(t) for t in tags]
    return s


def _example(order: int, text: str, author: str | None) -> dict:
    x = {"ornek_id": None, "anlam_id": None, "ornek_sira": str(order),
         "ornek": text, "kac": "1", "yazar_id": "0"}
    if author:
        x["yazar_id"] = str(100 + len(author))
        x["yazar"] = [{"yazar_id": x["yazar_id"], "tam_adi": author + " ",
                       "kisa_adi": author.split()[-1], "ekno": "173"}]
    return x


def entry(madde_id: int, madde: str, senses: list[dict], *, kelime_no: int | None = None,
          cesit: str = "0", ozel_mi: str = "0", taki: str | None = None, lisan: str = "",
          lisan_kodu: str = "0", telaffuz: str | None = None, atasozu=()) -> dict:
    """An entry (madde) with TDK's key order; empty lists are left out, as TDK does."""
    e = {"madde_id": str(madde_id), "kac": "0", "kelime_no": str(kelime_no or madde_id + 3000),
         "cesit": cesit, "anlam_gor": "0", "on_taki": None, "madde": madde,
         "cesit_say": str(len(atasozu)), "anlam_say": str(len(senses)), "taki": taki,
         "cogul_mu": "0", "ozel_mi": ozel_mi, "lisan_kodu": lisan_kodu, "lisan": lisan,
         "telaffuz": telaffuz, "birlesikler": None, "font": None,
         "madde_duz": madde.replace("â", "a"), "gosterim_tarihi": None}
    for i, s in enumerate(senses, 1):  # ids derived from madde_id: deterministic, unique
        s["anlam_id"], s["madde_id"], s["anlam_sira"] = str(madde_id * 100 + i), e["madde_id"], str(i)
        for j, x in enumerate(s.get("orneklerListe", []), 1):
            x["ornek_id"], x["anlam_id"] = str((madde_id * 100 + i) * 10 + j), s["anlam_id"]
    if senses:
        e["anlamlarListe"] = senses
    if atasozu:
        e["atasozu"] = [{"madde_id": str(i), "madde": m, "on_taki": None} for i, m in atasozu]
    return e


def builtin_entries() -> list[dict]:
    """The hand-written table: homonyms, case and circumflex twins, tags, a phrase, junk."""
    return [
        entry(10, "abdal", [sense("Gezgin derviş, kalender", examples=[
            ("Abdallar gibi diyar diyar dolaştı.", "Yakup Kadri Karaosmanoğlu")]),
            sense("Saf, bön kimse", ("20", "32"))], lisan="Arapça abdāl", lisan_kodu="11"),
        entry(11, "Abdal", [sense("Anadolu'da yaşayan bir Türkmen oymağı")], ozel_mi="1"),
        entry(20, "âdet", [sense("Gelenek, alışkanlık, töre", examples=[
            ("Bayramda büyükleri ziyaret etmek âdettir.", None)]),
            sense("Aybaşı", ("19", "32"))], lisan="Arapça ʿādet", lisan_kodu="11",
            telaffuz="a:det"),
        entry(21, "adet", [sense("Sayı", examples=[("Üç adet kalem aldı.", None)])],
              lisan="Arapça ʿaded", lisan_kodu="11"),
        entry(30, "kitap", [
            sense("Ciltli veya ciltsiz olarak bir araya getirilmiş basılı veya yazılı kâğıt "
                  "yaprakların bütünü", examples=[
                      ("Bir kitabı kendim okurum.", "Nurullah Ataç")]),
            sense("Kutsal kitap"), sense("Kitap biçiminde olan", ("20",))],
            taki="bı", lisan="Arapça kitāb", lisan_kodu="11",
            atasozu=[(31, "kitaba el basmak"), (32, "kitabına uydurmak")]),
        entry(40, "inek", [sense("Sığır türünün dişisi"),
                           sense("Çok ders çalışan öğrenci", ("19", "30")),
                           sense("Aptal, anlayışsız kimse", ("20", "36"))]),
        entry(50, "deyyus", [sense("Karısının başkalarıyla ilişkisine göz yuman erkek",
                                   ("19", "36")),
                             sense("Alçak, namussuz kimse", ("20", "38"))],
              lisan="Arapça dayyūs", lisan_kodu="11"),
        entry(60, "dulda", [sense("Kuytu, korunaklı yer")], kelime_no=14801),
        entry(61, "dulda tutmak", [sense("Korumak, kollamak", ())], kelime_no=14801, cesit="1"),
        entry(70, "e-posta", [sense("Elektronik ortamda gönderilen ileti", ("19", "98"))]),
        entry(80, "İstanbul", [sense("Türkiye'nin Marmara Bölgesi'nde bir il", ("19", "45"))],
              ozel_mi="1", telaffuz="ista'nbul"),
        entry(90, "Iğdır", [sense("Türkiye'nin Doğu Anadolu Bölgesi'nde bir il")],
              ozel_mi="1"),
        entry(100, "kalem", [sense("Yazı yazmaya yarayan araç", examples=[
            ("Kalemini açtı.", None)]), sense("Tür, çeşit", ("19", "32"))],
            lisan="Arapça ḳalem", lisan_kodu="11"),
        entry(110, "gizli", [sense("Saklı, görünmeyen", ("20",))]),
    ]


def unlisted_entries() -> list[dict]:
    """Entries /gts answers that the sitemaps do not list (so crawls never meet them): the
    words players report in tests/test_reports.py and in the README's report session: a
    verbal noun the offline lexicon lacks, an insult it accepts, a word it rightly has."""
    return [
        entry(120, "yağış", [sense("Yağmur, kar, dolu vb.nin yere düşmesi", examples=[
            ("Gece boyunca yağış sürdü.", None)])]),
        entry(130, "dangalak", [sense("Aptal, kaba, anlayışsız kimse", ("20", "38"))]),
        entry(140, "ev", [sense("Barınılacak, içinde oturulacak yer", examples=[
            ("Ev alma, komşu al.", None)])]),
    ]


#: Words the sitemap lists (URL slugs are lower-cased words): `massa` is not in GTS.
SITEMAP_WORDS = ["abdal", "adet", "âdet", "kitap", "inek", "deyyus", "dulda", "dulda tutmak",
                 "e-posta", "istanbul", "ığdır", "kalem", "massa", DISALLOWED_WORD]

_SYLLABLES = ["ba", "ca", "ça", "da", "fe", "ge", "ğı", "ha", "kı", "ji", "ke", "la", "me",
              "na", "ol", "ö", "pa", "ra", "sa", "şe", "ta", "tu", "ü", "ve", "ya", "ze"]


def synthetic_words(n: int) -> list[str]:
    """`n` distinct made-up Turkish-looking words (3 syllables), deterministic."""
    k = len(_SYLLABLES)
    words = (_SYLLABLES[i // (k * k) % k] + _SYLLABLES[i // k % k] + _SYLLABLES[i % k]
             for i in range(7, 7 + 3 * n))
    return list(dict.fromkeys(w for w in words))[:n]


def synthetic_entries(n: int, first_id: int = 200000) -> list[dict]:
    """One realistic entry per synthetic word: one to three senses, some tagged or exemplified."""
    out = []
    for i, word in enumerate(synthetic_words(n)):
        senses = [sense(f"{word} ile ilgili birinci anlam", ("19",),
                        [(f"Bir {word} gördüm.", "Ömer Seyfettin")] if i % 3 == 0 else ())]
        if i % 2:
            senses.append(sense(f"{word} gibi olan", ("20", "32")))
        if i % 5 == 0:
            senses.append(sense(f"Eskiden {word} denilen şey", ("19", "31")))
        out.append(entry(first_id + i, word, senses))
    return out


# --- the server --------------------------------------------------------------------------------

def fold(text: str) -> str:
    """The fake's match key: naive str.lower() (like TDK), circumflexes folded."""
    return text.lower().translate(str.maketrans("âîû", "aiu"))


def gzip_zeros(size: int) -> bytes:
    """`size` zero bytes, gzipped (a decompression bomb), made once per size."""
    import zlib

    if size not in _BOMBS:
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)
        block, parts = bytes(2**20), []
        for _ in range(size // len(block)):
            parts.append(packer.compress(block))
        _BOMBS[size] = b"".join(parts) + packer.flush()
    return _BOMBS[size]


_BOMBS: dict[int, bytes] = {}


class FakeTDK:
    """State shared by the handler threads: data, faults, request log."""

    def __init__(self, entries: list[dict], words: list[str], crawl_delay: float | None = None):
        self.by_key: dict[str, list[dict]] = {}
        for e in entries:
            key = fold(e["madde"].replace("İ", "i").replace("I", "ı"))
            self.by_key.setdefault(key, []).append(e)
        self.words, self.crawl_delay = words, crawl_delay
        self.faults: dict[str, list[dict]] = {}
        self.log: list[dict] = []
        self.lock = threading.Lock()
        self.base = ""

    def add_fault(self, word: str, kind: str, times: int = -1, arg: float | str | None = None):
        with self.lock:
            self.faults.setdefault(word, []).append({"kind": kind, "times": times, "arg": arg})

    def take_fault(self, query: str) -> dict | None:
        """The first active fault for this query (or for every query; a path: its own only),
        used up once."""
        with self.lock:
            for key in (query,) if query.startswith("/") else (query, "*"):
                for f in self.faults.get(key, []):
                    if f["times"] != 0:
                        f["times"] -= 1 if f["times"] > 0 else 0
                        return dict(f)
        return None

    def gts_body(self, query: str) -> bytes:
        found = self.by_key.get(fold(query))
        data = found if found else {"error": "Sonuç bulunamadı"}
        # PHP json_encode style: literal UTF-8, "/" escaped as "\/"
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace(
            "/", "\\/").encode()

    def robots(self) -> bytes:
        lines = ["User-agent: *", f"Disallow: /gts?ara={DISALLOWED_WORD}", "Disallow: /yonetim/"]
        if getattr(self, "disallow_gts", False):
            lines.append("Disallow: /gts")
        lines += [f"Disallow: {path}" for path in getattr(self, "disallow", ())]
        if self.crawl_delay:
            lines.append(f"Crawl-delay: {self.crawl_delay}")
        lines += ["", f"Sitemap: {self.base}/sitemap.xml", ""]
        return "\n".join(lines).encode()

    def sitemap(self, part: int) -> bytes:
        half = (len(self.words) + 1) // 2
        chunk = self.words[:half] if part == 1 else self.words[half:]
        urls = [f"{self.base}/kelime/{quote(w)}" for w in chunk]
        if part == 1:
            urls.insert(0, f"{self.base}/hakkimizda")  # not a word page: ignored
        items = "".join(f"<url><loc>{u}</loc><changefreq>monthly</changefreq></url>"
                        for u in urls)
        return ('<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/'
                f'schemas/sitemap/0.9">{items}</urlset>').encode()

    def sitemap_index(self) -> bytes:
        items = "".join(f"<sitemap><loc>{self.base}/sitemap-{i}.xml</loc></sitemap>"
                        for i in (1, 2))
        return ('<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.'
                f'sitemaps.org/schemas/sitemap/0.9">{items}</sitemapindex>').encode()


class Handler(BaseHTTPRequestHandler):
    server_version = "nginx"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    wbufsize = 1 << 16  # headers and body leave in one segment (no Nagle/delayed-ACK stall)

    def log_message(self, *args):  # quiet
        pass

    @property
    def fake(self) -> FakeTDK:
        return self.server.fake

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path.startswith("/_fake/"):
            return self._control("GET", url.path)
        record = {"start": time.time(), "method": "GET", "path": self.path,
                  "user_agent": self.headers.get("User-Agent"),
                  "accept": self.headers.get("Accept"), "fault": None}
        try:
            record["status"] = self._route(url, record)
        finally:
            record["end"] = record["start"] if record["fault"] == "slow-abandoned" else time.time()
            with self.fake.lock:
                self.fake.log.append(record)

    def do_POST(self):
        self._control("POST", urlsplit(self.path).path)

    def do_DELETE(self):
        self._control("DELETE", urlsplit(self.path).path)

    def _route(self, url, record) -> int | None:
        fake = self.fake
        if url.path in FAULTABLE_PATHS:  # e.g. --fault /robots.txt=503, /sitemap.xml=html
            fault = fake.take_fault(url.path)
            if fault and fault["kind"] == "cut" and url.path.startswith("/sitemap-"):
                record["fault"] = "cut"  # the transfer ends half way, as a dropped one does
                whole = fake.sitemap(int(url.path[9]))
                return self._send(200, whole[:len(whole) // 2], "application/xml")
            if fault:
                record["fault"] = fault["kind"]
                return self._fault(fault, "", record)
        if url.path == "/robots.txt":
            return self._send(200, fake.robots(), "text/plain; charset=utf-8")
        if url.path == "/sitemap.xml":
            return self._send(200, fake.sitemap_index(), "application/xml")
        if url.path in ("/sitemap-1.xml", "/sitemap-2.xml"):
            return self._send(200, fake.sitemap(int(url.path[9])), "application/xml")
        if url.path == "/gts":
            query = parse_qs(url.query).get("ara", [""])[0]
            record["query"] = query
            fault = fake.take_fault(query)
            if fault:
                record["fault"] = fault["kind"]
                return self._fault(fault, query, record)
            return self._send(200, fake.gts_body(query), "text/html; charset=utf-8")
        return self._send(200, SPA_HTML.encode(), "text/html; charset=utf-8")

    def _fault(self, fault: dict, query: str, record: dict) -> int | None:
        kind, arg = fault["kind"], fault["arg"]
        html = "text/html; charset=utf-8"
        if kind == "429":
            return self._send(429, b'{"error":"Too Many Requests"}', "application/json",
                              {"Retry-After": arg if isinstance(arg, str)  # sent as given
                               else str(int(arg if arg is not None else 1))})
        if kind in ("503", "403", "404"):
            return self._send(int(kind), f"<html><body>{kind}</body></html>".encode(), html)
        if kind == "slow":
            time.sleep(arg or 2.0)
            record["fault"] = "slow-abandoned"  # the client gave up (timeout) or not: not in flight
            return self._send(200, self.fake.gts_body(query), html)
        if kind == "lag":  # a good reply, late: logged with its real end (in flight till then)
            time.sleep(arg or 0.05)
            return self._send(200, self.fake.gts_body(query), html)
        if kind == "close":
            self.close_connection = True
            return None
        if kind == "html":
            return self._send(200, SPA_HTML.encode(), html)
        if kind == "broken":
            return self._send(200, self.fake.gts_body(query)[:25], html)
        if kind == "empty":
            return self._send(200, b"", html)
        if kind == "not_found":  # TDK's own not-found reply, for a word it does have
            return self._send(200, '{"error":"Sonuç bulunamadı"}'.encode(), html)
        if kind == "unexpected":
            return self._send(200, b'{"durum":"bakim"}', html)
        if kind == "shape":  # entries, but with an id that is no number
            return self._send(200, '[{"madde_id":"²","madde":"kitap"}]'.encode(), html)
        if kind == "latin":  # the body in ISO-8859-9, the charset declared: not UTF-8
            body = self.fake.gts_body(query).decode("utf-8").encode("iso-8859-9", "replace")
            return self._send(200, body, "text/html; charset=iso-8859-9")
        if kind == "bom":  # a UTF-8 byte order mark before the JSON
            return self._send(200, b"\xef\xbb\xbf" + self.fake.gts_body(query), html)
        if kind == "deep":  # 200,000 `[`: Python's json raised RecursionError
            return self._send(200, b"[" * 200_000, html)
        if kind == "typed":  # numbers and booleans where TDK sends strings
            data = json.loads(self.fake.gts_body(query).decode().replace("\\/", "/"))
            for e in data if isinstance(data, list) else []:
                e["ozel_mi"] = 1
            return self._send(200, json.dumps(data, ensure_ascii=False).encode(), html)
        if kind == "renumber":  # the word's entries under madde_id ARG (TDK renumbered them)
            data = json.loads(self.fake.gts_body(query).decode().replace("\\/", "/"))
            for e in data if isinstance(data, list) else []:
                e["madde_id"] = str(int(arg))
            return self._send(200, json.dumps(data, ensure_ascii=False).encode(), html)
        if kind == "escaped":  # the same reply, written as the samples of TDK's are (\u00e2)
            data = json.loads(self.fake.gts_body(query).decode().replace("\\/", "/"))
            return self._send(200, json.dumps(data).encode(), html)
        if kind == "madde":  # one entry, headed ARG: another word, or this one in odd letters
            data = [entry(990001, str(arg), [sense("Zehirli bir anlam")])]
            return self._send(200, json.dumps(data, ensure_ascii=False).encode(), html)
        if kind == "many":  # the word's own entries and ARG invented ones (1.2 MB at 1,920)
            own = json.loads(self.fake.gts_body(query).decode().replace("\\/", "/"))
            skip = 5000  # past the words --synthetic lists
            data = (own if isinstance(own, list) else []) + synthetic_entries(
                skip + int(arg or 1920), first_id=900000)[skip:]
            return self._send(200, json.dumps(data, ensure_ascii=False).encode(), html)
        if kind == "reword":  # a redirect on this host, to another word's reply
            return self._send(302, b"", html, {"Location": f"/gts?ara={quote(str(arg))}"})
        if kind == "notfound_extra":
            return self._send(200, '{"error":"Sonuç bulunamadı","kod":404}'.encode(), html)
        if kind == "offsite":  # a redirect to another host
            return self._send(302, b"", html, {"Location": "http://evil.example" + self.path})
        if kind == "charset":  # the right body under a wrong charset
            return self._send(200, self.fake.gts_body(query), "text/html; charset=iso-8859-9")
        if kind == "huge":  # a body of `arg` MiB (default 20): no dictionary reply is
            size = int((arg or 20) * 2**20)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            try:
                chunk = b" " * 2**20
                for _ in range(size // len(chunk)):
                    self.wfile.write(chunk)
            except OSError:  # the client gave up on it, as it should
                pass
            return 200
        if kind == "chunked":  # `arg` MiB (default 20), chunked: no Content-Length to refuse
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            time.sleep(SLOW_START)
            try:
                chunk = b" " * 2**20
                for _ in range(int(arg or 20)):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.write(b"0\r\n\r\n")
            except OSError:  # the client gave up on it, as it should
                pass
            return 200
        if kind == "bomb":  # `arg` MiB (default 200) of zeros, gzipped to a few hundred KB
            time.sleep(SLOW_START)
            return self._send(200, gzip_zeros(int((arg or 200) * 2**20)), "application/json",
                              {"Content-Encoding": "gzip"})
        if kind == "no_words":  # a well-formed sitemap listing no page
            return self._send(200, b'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http:'
                              b'//www.sitemaps.org/schemas/sitemap/0.9"></urlset>',
                              "application/xml")
        raise ValueError(f"unknown fault {kind}")

    def _send(self, status: int, body: bytes, ctype: str, headers: dict | None = None) -> int:
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            # No flush here: the handler logs the request, then BaseHTTPRequestHandler
            # flushes, so a client that has its reply always finds it in the log.
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout)
        return status

    def _control(self, method: str, path: str) -> None:
        fake = self.fake
        if path == "/_fake/log" and method == "GET":
            with fake.lock:  # in arrival order (a slow reply is logged when it ends)
                body = json.dumps(sorted(fake.log, key=lambda r: r["start"]),
                                  ensure_ascii=False).encode()
            return self._send(200, body, "application/json")
        if path == "/_fake/log" and method == "DELETE":
            with fake.lock:
                fake.log.clear()
            return self._send(200, b"{}", "application/json")
        if path == "/_fake/faults" and method == "POST":
            spec = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            fake.add_fault(spec["word"], spec["kind"], spec.get("times", -1), spec.get("arg"))
            return self._send(200, b"{}", "application/json")
        if path == "/_fake/faults" and method == "DELETE":
            with fake.lock:
                fake.faults.clear()
            return self._send(200, b"{}", "application/json")
        self._send(404, b'{"error":"no such control"}', "application/json")


def parse_fault(text: str) -> tuple[str, str, int, float | str | None]:
    """`kitap=429:2:1` → ('kitap', '429', 2, 1.0); `*=403` → ('*', '403', -1, None);
    `kitap=reword:-1:inek` → ('kitap', 'reword', -1, 'inek')."""
    word, _, spec = text.partition("=")
    kind, times, arg = (spec.split(":") + [None, None])[:3]
    return word, kind, int(times) if times else -1, _arg(arg)


def _arg(text: str | None) -> float | str | None:
    try:
        return float(text) if text else None
    except ValueError:
        return text


class TLSServer(ThreadingHTTPServer):
    """HTTPS: the handshake runs in the request's thread (a client that refuses our
    certificate fails its own handshake, not the server's accept loop)."""

    context = None

    def finish_request(self, request, client_address):
        import ssl

        try:
            request = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            return  # the client refused the certificate (as it should) or went away
        super().finish_request(request, client_address)


def make_server(*, crawl_delay: float | None = None, synthetic: int = 0, port: int = 0,
                faults=(), without=0, disallow_gts=False, tls: str | None = None,
                disallow=()) -> ThreadingHTTPServer:
    entries = builtin_entries() + unlisted_entries() + synthetic_entries(synthetic)
    words = SITEMAP_WORDS + synthetic_words(synthetic)[without:]  # the first ones: gone
    server = (TLSServer if tls else ThreadingHTTPServer)(("127.0.0.1", port), Handler)
    if tls:
        import ssl

        server.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server.context.load_cert_chain(tls)
    server.daemon_threads = True
    server.fake = FakeTDK(entries, words, crawl_delay)
    server.fake.disallow_gts, server.fake.disallow = disallow_gts, disallow
    scheme = "https" if tls else "http"
    server.fake.base = f"{scheme}://127.0.0.1:{server.server_address[1]}"
    for f in faults:
        server.fake.add_fault(*parse_fault(f) if isinstance(f, str) else f)
    return server


def serve_in_thread(**kwargs) -> ThreadingHTTPServer:
    """Start the fake in a daemon thread (for in-process tests); `.fake.base` is its URL."""
    server = make_server(**kwargs)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    return server


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--crawl-delay", type=float, default=None)
    p.add_argument("--synthetic", type=int, default=0, help="extra made-up words")
    p.add_argument("--fault", action="append", default=[], help="WORD=KIND[:TIMES[:ARG]]")
    p.add_argument("--without", type=int, default=0,
                   help="leave the first N synthetic words out of the sitemaps (gone)")
    p.add_argument("--disallow-gts", action="store_true", help="robots.txt: Disallow: /gts")
    p.add_argument("--disallow", action="append", default=[], help="robots.txt: Disallow: PATH")
    p.add_argument("--tls", default=None, help="serve HTTPS with this PEM (certificate + key)")
    args = p.parse_args(argv)
    server = make_server(crawl_delay=args.crawl_delay, synthetic=args.synthetic,
                         port=args.port, faults=args.fault, without=args.without,
                         disallow_gts=args.disallow_gts, tls=args.tls, disallow=args.disallow)
    print(server.fake.base, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())


def _control_tls():
    """The test's own control calls trust the fake whatever its certificate (they write
    nothing to a cache: kelime's clients are the ones whose checks are tested)."""
    import ssl

    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    return context


class FakeProcess:
    """The fake as a subprocess (like Scrapy's tests/mockserver): `.url`, `.log()`, faults."""

    def __init__(self, *args: str):
        import subprocess

        self.proc = subprocess.Popen([sys.executable, __file__, *args], stdout=subprocess.PIPE,
                                     text=True)
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith(("http://", "https://")):
            self.stop()
            raise RuntimeError("the fake TDK did not start")

    def _call(self, method: str, path: str, body: dict | None = None):
        import urllib.request

        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        with urllib.request.urlopen(req, timeout=10, context=_control_tls()) as r:
            return json.loads(r.read())

    def log(self) -> list[dict]:
        return self._call("GET", "/_fake/log")

    def clear_log(self) -> None:
        self._call("DELETE", "/_fake/log")

    def fault(self, word: str, kind: str, times: int = -1, arg: float | str | None = None) -> None:
        self._call("POST", "/_fake/faults", {"word": word, "kind": kind, "times": times,
                                             "arg": arg})

    def clear_faults(self) -> None:
        self._call("DELETE", "/_fake/faults")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        self.proc.stdout.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
