"""The change guard: a build against the last build the maintainer accepted.

Pure (no disk): `compare` lists the words a build adds and removes against the reference
(the last accepted build), each by cause; `check` refuses past `MAX_CHANGE` either way.
The reference moves only when a build is accepted: the first build of a name, or one
passed ``--accept-changes``; a build under the bound is written but measured, like every
later one, against the same reference, so changes add up (1% less a word per refresh is
caught once the total passes 1%).

Causes: ``refused now as <reason>`` / ``allowed now, was <reason>`` (the word is in both
builds' input and one of them refuses it: a policy or rule edit, or the source's entries for
it changed, e.g. TDK flagging a word as a proper name), else what the source says
(`Explain`: for a TDK cache, ``retired``, ``not_found``, ``disallowed``,
``failed_or_pending``, ``new_reply``), else ``source`` (the source lists it, or no longer
does). Worked example: reference ``{ev, okul, kitap}``, build ``{ev, okul, masa}`` with
``kitap`` now not found on TDK → ``added {source: [masa]}``, ``removed {not_found:
[kitap]}``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..errors import BuildError
from ..normalize import TURKISH, Alphabet, turkish_sorted
from .compile import Compiled

#: The share of the reference's words a build may add, or remove, before it must be accepted.
MAX_CHANGE = 0.01
#: Words of each cause a refusal prints.
SHOWN = 5
#: The source's causes for words it added or removed: (added, removed) → word → cause.
Explain = Callable[[list[str], list[str]], dict[str, str]]


def compare(reference: Iterable[str], refused_before: Callable[[str], str | None],
            compiled: Compiled, explain: Explain | None = None,
            alphabet: Alphabet = TURKISH) -> dict[str, dict[str, list[str]]]:
    """{"added": cause → words, "removed": cause → words} of `compiled` against the
    reference's valid words; `refused_before(word)` is the reference's reason for a word it
    refused (None when it did not know the word)."""
    before, now = set(reference), set(compiled.words)
    added = turkish_sorted(now - before, alphabet)
    removed = turkish_sorted(before - now, alphabet)
    told = explain(added, removed) if explain and (added or removed) else {}
    out: dict[str, dict[str, list[str]]] = {"added": {}, "removed": {}}
    for word in added:
        was = refused_before(word)
        cause = f"allowed now, was {was}" if was else told.get(word, "source")
        out["added"].setdefault(cause, []).append(word)
    for word in removed:
        why = compiled.rejected.get(word)
        cause = f"refused now as {why}" if why else told.get(word, "source")
        out["removed"].setdefault(cause, []).append(word)
    return out


def counts(changes: dict[str, dict[str, list[str]]]) -> dict[str, Any]:
    """The figures of `compare`'s answer: totals and per cause, for the manifest."""
    return {way: {"total": sum(map(len, by.values())),
                  "by_cause": {c: len(ws) for c, ws in sorted(by.items())}}
            for way, by in changes.items()}


def check(name: str, changes: dict[str, dict[str, list[str]]], reference: int, version: str,
          bound: float = MAX_CHANGE) -> None:
    """Refuse (BuildError) when the words added or removed since the accepted build
    `version` (of `reference` words) are over `bound` of it."""
    over = {way: sum(map(len, by.values())) for way, by in changes.items()}
    limit = bound * max(reference, 1)
    if all(n <= limit for n in over.values()):
        return
    lines = [f"refusing to replace {name!r}: since the last accepted build {version} "
             f"({reference:,} words) this build adds {over['added']:,} and removes "
             f"{over['removed']:,} words, over the {bound:.0%} either way a build may change "
             "unaccepted (a broken crawl, a site answering not found, robots.txt, a policy "
             "edit, or entries the source now flags otherwise?)."]
    for way, by in changes.items():
        for cause, words in sorted(by.items(), key=lambda item: -len(item[1])):
            shown = ", ".join(words[:SHOWN]) + (", …" if len(words) > SHOWN else "")
            lines.append(f"  {way} {len(words):,} ({cause}): {shown}")
    lines.append("Check the source; if these changes are right, build again with "
                 "--accept-changes (the manifest records them, and later builds are "
                 "measured against this one).")
    raise BuildError("\n".join(lines))
