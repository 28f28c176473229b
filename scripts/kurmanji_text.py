"""Kurmanji running text for Kurdish Kelimatik's letter values: the words of LibreOffice's
Kurmanji translation (Debian's libreoffice-l10n-kmr, MPL-2.0), counted, written as
kelime/games/kurmanji-text.tsv (one `word<TAB>count` a line, most used first, after `#`
lines naming the source). kelimatik-ku.toml's values are `kelime.games.values.by_frequency`
over these words, each counted as often as the text uses it; tests/test_games.py
recomputes them from the table.

What counts as Kurmanji text: each translated message's words (letters only, lower-cased,
LibreOffice's `~` and GTK's `_` mnemonic marks removed), in Hawar's 31 letters, less the
words its English original also has (product names, placeholders, English left as it was);
a message left in English (translation = original) counts nothing.

Re-made by a maintainer (no internet but Debian's packages)::

    apt-get download libreoffice-l10n-kmr && dpkg-deb -x libreoffice-l10n-kmr_*.deb lo
    python scripts/kurmanji_text.py "$(dpkg-deb -f libreoffice-l10n-kmr_*.deb Version)" \
        lo/usr/lib/libreoffice/program/resource/kmr@latin/LC_MESSAGES/*.mo \
        > kelime/games/kurmanji-text.tsv

    >>> sorted(message_words("~Pelê LibreOffice veke", "Open LibreOffice ~file").items())
    [('pelê', 1), ('veke', 1)]
    >>> message_words("OK", "OK")
    Counter()
"""

from __future__ import annotations

import gettext
import re
import sys
from collections import Counter
from pathlib import Path

HAWAR = frozenset("abcçdeêfghiîjklmnopqrsştuûvwxyz")
WORD = re.compile(r"[^\W\d_]+")
HEADER = ("# Kurmanji running text: the words of LibreOffice's Kurmanji translation, counted",
          "# source: Debian libreoffice-l10n-kmr {version} (kmr@latin .mo catalogues), MPL-2.0",
          "# made by scripts/kurmanji_text.py: {tokens} words, {distinct} distinct")


def message_words(translated: str, original: str) -> Counter[str]:
    """The Kurmanji words of one translated message (see the module's docstring)."""
    if not translated or translated == original:
        return Counter()
    english = {w.lower() for w in WORD.findall(original.replace("~", "").replace("_", ""))}
    words = (w.lower() for w in WORD.findall(translated.replace("~", "").replace("_", "")))
    return Counter(w for w in words if w not in english and set(w) <= HAWAR)


def catalogue_words(path: Path) -> Counter[str]:
    """The Kurmanji words of every message of a compiled gettext catalogue (.mo)."""
    with path.open("rb") as f:
        catalogue: dict[object, str] = gettext.GNUTranslations(f)._catalog  # type: ignore[attr-defined]
    counts: Counter[str] = Counter()
    for key, translated in catalogue.items():
        original = key[0] if isinstance(key, tuple) else key
        if original:  # the empty msgid is the catalogue's header
            counts.update(message_words(translated, str(original)))
    return counts


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: python scripts/kurmanji_text.py VERSION FILE.mo ...", file=sys.stderr)
        return 2
    counts: Counter[str] = Counter()
    for name in argv[1:]:
        counts.update(catalogue_words(Path(name)))
    header = "\n".join(HEADER).format(version=argv[0], tokens=sum(counts.values()),
                                      distinct=len(counts))
    rows = sorted(counts.items(), key=lambda t: (-t[1], t[0]))
    print(header, *(f"{w}\t{n}" for w, n in rows), sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
