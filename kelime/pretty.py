"""Human output for the CLI (rich); `--json` bypasses all of this."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.table import Table

REASON_TEXT = {
    "not_in_dictionary": "not in the dictionary",
    "proper_name": "proper name",
    "obscene": "obscene or insulting",
    "too_short": "too short for this game",
    "invalid_chars": "not a Turkish word (characters)",
    "phrase": "a phrase, not one word",
}


def console(err: bool = False) -> Console:
    return Console(stderr=err, highlight=False, soft_wrap=True)


def print_verdicts(report: dict) -> None:
    """One line a word: ✓/✗, the word as sent, its normal form and the reason."""
    table = Table.grid(padding=(0, 2))
    for r in report["results"]:
        mark = "[green]✓[/]" if r["valid"] else "[red]✗[/]"
        shown = r["normalized"] if r["normalized"] != r["word"] else ""
        reason = REASON_TEXT.get(r["reason"], r["reason"] or "")
        table.add_row(mark, r["word"], f"[dim]{shown}[/]", f"[yellow]{reason}[/]")
    out = console()
    out.print(table)
    lex = report["lexicon"]
    out.print(f"[dim]lexicon {lex['name']} {lex['version']} ({lex['words']:,} words)[/]")


def print_build(manifest: dict, changes: dict, unchanged: bool, path) -> None:
    """The build summary: counts by reason and what changed against the previous build."""
    out = console()
    counts = manifest["counts"]
    if unchanged:
        out.print(f"[green]Unchanged[/]: {manifest['name']} {manifest['version']} "
                  f"already holds these {counts['words']:,} words ({path})")
        return
    out.print(f"[green]Built[/] {manifest['name']} {manifest['version']} → {path}")
    out.print(f"  source   {manifest['source']['name']} ({manifest['source']['licence']})")
    out.print(f"  words    {counts['words']:,}")
    for reason, n in counts["rejected_by_reason"].items():
        out.print(f"  refused  {n:>7,}  {reason}")
    prev = changes.get("previous_version") or "nothing"
    out.print(f"  changes against {prev}: +{changes['added']:,} −{changes['removed']:,}")
    for key, sign in (("added_sample", "+"), ("removed_sample", "−")):
        if changes[key]:
            out.print(f"    {sign} " + ", ".join(changes[key][:10])
                      + (" …" if len(changes[key]) > 10 else ""))
