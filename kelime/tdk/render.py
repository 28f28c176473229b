"""TDK entries as text, for `kelime define` (pure)."""

from __future__ import annotations

from typing import Any


def _clean(text: str | None) -> str:
    return " ".join((text or "").split())


def format_entry(entry: dict[str, Any]) -> list[str]:
    head = entry.get("madde", "?")
    notes = [n for n in (_clean(entry.get("lisan")), "özel ad" if entry.get("ozel_mi") == "1"
                         else "") if n]
    lines = [head + (f"  ({', '.join(notes)})" if notes else "")]
    for i, s in enumerate(entry.get("anlamlarListe") or [], 1):
        tags = ", ".join(_clean(t.get("kisa_adi") or t.get("tam_adi"))
                         for t in s.get("ozelliklerListe") or [])
        lines.append(f"  {i}. " + (f"{tags}  " if tags else "") + _clean(s.get("anlam")))
        for x in s.get("orneklerListe") or []:
            authors = ", ".join(_clean(a.get("tam_adi")) for a in x.get("yazar") or [])
            by = f" ({authors})" if authors else ""
            lines.append(f"       «{_clean(x.get('ornek'))}»{by}")
    return lines


def format_entries(entries: list[dict[str, Any]]) -> str:
    """All entries, blank line between them (homonyms and case variants stay separate)."""
    return "\n\n".join("\n".join(format_entry(e)) for e in entries)
