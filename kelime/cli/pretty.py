"""Human output for the CLI (rich); `--json` bypasses all of this."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

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
    results = report["results"]
    shown = [r["normalized"] if r["normalized"] != r["word"] else "" for r in results]
    w_word = max(len(r["word"]) for r in results)
    w_norm = max(map(len, shown))
    out = console()
    for r, norm in zip(results, shown):
        mark = "[green]✓[/]" if r["valid"] else "[red]✗[/]"
        reason = REASON_TEXT.get(r["reason"], r["reason"] or "")
        cells = [r["word"].ljust(w_word), norm.ljust(w_norm), reason]
        while cells and not cells[-1].strip():
            cells.pop()
        cells[-1] = cells[-1].rstrip()
        styled = [escape(c) if i == 0 else f"[{('dim', 'yellow')[i - 1]}]{escape(c)}[/]"
                  for i, c in enumerate(cells)]
        out.print("  ".join([mark, *styled]))
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
