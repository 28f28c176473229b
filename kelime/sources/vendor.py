"""A word list kelime ships inside the package, so that every machine builds the same lexicon.

hunspell-tr is a Debian package, not a Python one: read from ``/usr/share/hunspell`` it made
the offline ``tr`` lexicon depend on the machine (with it one version, without it another).
Its stems are therefore vendored, xz-compressed, beside this module, and the build reads
only that copy. The format (version 1) is UTF-8 text, one game word a line in Turkish order,
after one header line naming what it was made from::

    # kelime word list 1 | hunspell-tr 1:7.5.0-1 | MPL-2.0 | https://github.com/tdd-ai/hunspell-tr
    abacı
    abajur
    abaküs

Maintainers refresh it from an installed ``tr_TR.dic`` (``apt-get install hunspell-tr``)::

    python -m kelime.sources.vendor /usr/share/hunspell/tr_TR.dic \
        "$(dpkg-query -W -f='${Version}' hunspell-tr)"

and commit the file with the new figures of ``tests/test_lexicon_quality.py``.

    >>> sorted(dic_stems(["3", "abacı/2,3", "Abaza/1", "kitap", "", "e-posta/4"]))
    ['abacı', 'kitap']
"""

from __future__ import annotations

import lzma
import sys
from collections.abc import Iterable
from pathlib import Path

from ..errors import SourceError
from ..normalize import turkish_sorted
from .offline import game_words

FORMAT = 1
HEADER = "# kelime word list {format} | {name} {version} | {licence} | {url}"


def dic_stems(lines: Iterable[str]) -> set[str]:
    """The lower-case stems of a hunspell .dic file's lines (its first line is a count)."""
    words = (line.split("/", 1)[0].strip() for line in lines)
    return game_words(w for w in words if w and not w[0].isupper() and not w.isdigit())


def write_list(words: Iterable[str], out: Path, name: str, version: str, licence: str,
               url: str) -> int:
    """Write `words` as a vendored list at `out`; the number of words."""
    ordered = turkish_sorted(set(words))
    header = HEADER.format(format=FORMAT, name=name, version=version, licence=licence, url=url)
    text = "\n".join([header, *ordered]) + "\n"
    out.write_bytes(lzma.compress(text.encode("utf-8"), preset=9 | lzma.PRESET_EXTREME))
    return len(ordered)


def read_list(path: Path) -> tuple[dict[str, str], frozenset[str]]:
    """(header fields: name, version, licence, url; words) of a vendored list."""
    try:
        text = lzma.decompress(path.read_bytes()).decode("utf-8")
    except OSError as e:
        raise SourceError(f"cannot read kelime's vendored list {path}: {e.strerror or e}; "
                          "reinstall kelime") from None
    except (lzma.LZMAError, UnicodeDecodeError) as e:
        raise SourceError(f"kelime's vendored list {path} is damaged ({e}); reinstall kelime"
                          ) from None
    header, *words = text.splitlines()
    fields = [f.strip() for f in header.split("|")]
    if len(fields) != 4 or fields[0] != f"# kelime word list {FORMAT}":
        raise SourceError(f"{path} is not a kelime word list of format {FORMAT} (its first "
                          f"line is {header[:80]!r}); reinstall kelime")
    name, _, version = fields[1].partition(" ")
    return ({"name": name, "version": version, "licence": fields[2], "url": fields[3]},
            frozenset(words))


def main(argv: list[str]) -> int:
    """`python -m kelime.sources.vendor DIC VERSION`: refresh the vendored hunspell-tr list."""
    if len(argv) != 2:
        print(__doc__.split("Maintainers", 1)[1].split(">>>")[0].strip(), file=sys.stderr)
        return 2
    from .offline import HUNSPELL_TR_URL, HUNSPELL_TR_VENDORED

    dic = Path(argv[0])
    try:
        lines = dic.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        print(f"Error: cannot read {dic}: {e}", file=sys.stderr)
        return 1
    count = write_list(dic_stems(lines), HUNSPELL_TR_VENDORED, "hunspell-tr", argv[1],
                       "MPL-2.0", HUNSPELL_TR_URL)
    print(f"Wrote {count:,} stems of hunspell-tr {argv[1]} to {HUNSPELL_TR_VENDORED}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
