"""Accepted player reports become lines of the policy's lists, reviewed like code.

`record_review` writes one word into the allowlist (``valid``) or the blocklist (a
reason), with the reports and the date in the line's comment, and takes it out of the
other list, so that the next `kelime build` gives exactly the verdict accepted::

    kitapçık  # report 3 (2026-12-01): TDK lists it as a common noun
    yavşak  # reports 5, 9 (2026-12-01): an insult; TDK tags it hakaret yollu

The lists stay sorted in the alphabet's order, and each file is replaced atomically
(written beside it, then renamed), so an interrupted accept leaves the old list whole.
`load_policy` reads the comments back (`Policy.reviewed`) for the build's change list.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import PolicyError
from ..normalize import TURKISH, Alphabet, normalize, sort_key
from ..reports import DECISIONS
from . import parse_review, read_lines, read_policy_file

VERDICTS = DECISIONS  # what `kelime reports accept --as` takes


@dataclass(frozen=True)
class Edit:
    """One change to one list file: `line` added, replaced or removed."""

    path: Path
    action: str   # "added" | "replaced" | "removed"
    line: str


def review_note(reports: list[int], date: str, why: str) -> str:
    ids = ", ".join(str(i) for i in reports)
    return f"report{'s' if len(reports) > 1 else ''} {ids} ({date}): {why}"


def snapshot(policy: str | Path | None) -> dict[Path, list[str]]:
    """The lines of the policy's two lists, for `restore`."""
    return {path: read_lines(path) for path in list_paths(policy)}


def restore(saved: dict[Path, list[str]]) -> None:
    """Put the lists back as `snapshot` found them (an accept whose store did not commit)."""
    for path, lines in saved.items():
        if read_lines(path) != lines:
            _write(path, lines)


def list_paths(policy: str | Path | None) -> tuple[Path, Path]:
    """(allowlist, blocklist) of the policy TOML at `policy` (default: the shipped one)."""
    path, raw = read_policy_file(policy)
    names = raw.get("obscene", {})
    missing = [key for key in ("allowlist", "blocklist") if not names.get(key)]
    if missing:
        raise PolicyError(f"policy file {path} names no {' or '.join(missing)}: add "
                          + ", ".join(f'{key} = "{key}.txt"' for key in missing)
                          + " under [obscene] and create the file(s)")
    return path.parent / names["allowlist"], path.parent / names["blocklist"]


def _word_of(line: str, alphabet: Alphabet) -> str | None:
    fields = line.partition("#")[0].split()
    return normalize(fields[0], alphabet) if fields else None


def _write(path: Path, lines: list[str]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass  # not ours to remove (a folder in the way): the error below names the list
        raise PolicyError(f"could not write the policy list {path} ({e.strerror or e}); it is "
                          "unchanged") from None


def _reason_of(text: str) -> str:
    fields = text.partition("#")[0].split()
    return fields[1] if len(fields) > 1 else "obscene"


def _insert(lines: list[str], line: str, word: str, verdict: str,
            alphabet: Alphabet) -> list[str]:
    """`lines` with `line` in its place: among the run of word lines (lines with no blank
    or comment between them) whose reason is the verdict, in the alphabet's order; a new
    run at the end when there is none."""
    runs: list[list[int]] = []
    for i, text in enumerate(lines):
        if _word_of(text, alphabet) is None:
            continue
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    same = [run for run in runs if verdict == "valid"
            or all(_reason_of(lines[i]) == verdict for i in run)]
    if not same:
        return [*lines, *([""] if lines and lines[-1].strip() else []), line]
    run, key = same[0], sort_key(word, alphabet)
    at = next((i for i in run if sort_key(_word_of(lines[i], alphabet) or "", alphabet) > key),
              run[-1] + 1)
    return [*lines[:at], line, *lines[at:]]


def record_review(word: str, verdict: str, reports: list[int], why: str, date: str, *,
                  policy: str | Path | None = None,
                  alphabet: Alphabet = TURKISH) -> list[Edit]:
    """Make the next build give `word` (normalised) `verdict` (valid, obscene or
    proper_name): its line in the allowlist or blocklist, and none in the other list."""
    if verdict not in VERDICTS:
        raise PolicyError(f"unknown verdict {verdict!r}: use one of {', '.join(VERDICTS)}")
    why = " ".join(why.split())
    if not why:
        raise PolicyError("say why (--why \"...\"): the reason is kept beside the word")
    allow, block = list_paths(policy)
    target, other = (allow, block) if verdict == "valid" else (block, allow)
    fields = word if verdict in ("valid", "obscene") else f"{word} {verdict}"
    line = f"{fields}  # {review_note(reports, date, why)}"
    old_target, old_other = read_lines(target), read_lines(other)
    gone = [text for text in old_target if _word_of(text, alphabet) == word]
    earlier = [i for text in gone for i in (parse_review(text.partition("#")[2]) or
                                           {"reports": []})["reports"]]
    if earlier:  # accepted again (another kind): the line keeps every report it answers
        reports = sorted({*earlier, *reports})
        line = f"{fields}  # {review_note(reports, date, why)}"
    lines = _insert([t for t in old_target if _word_of(t, alphabet) != word], line, word,
                    verdict, alphabet)
    dropped = [text for text in old_other if _word_of(text, alphabet) == word]
    # The target list first: should the second write fail (or the process die between
    # them), the word is in both lists for that while, and the blocklist wins, so the
    # verdict is the old one (valid accepted) or the new one (obscene, proper_name), never
    # the sources' alone. A caller that wants both or neither keeps a `snapshot`.
    _write(target, lines)
    if dropped:
        _write(other, [t for t in old_other if _word_of(t, alphabet) != word])
    edits = [Edit(target, "replaced", text) for text in gone]
    edits += [Edit(target, "added", line)] + [Edit(other, "removed", text) for text in dropped]
    return edits
