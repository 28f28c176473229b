"""Human output for the CLI (rich); `--json` bypasses all of this."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

REASON_TEXT: dict[str | None, str] = {
    "not_in_dictionary": "not in the dictionary",
    "proper_name": "proper name",
    "obscene": "obscene or insulting",
    "too_short": "too short for this game",
    "too_long": "too long for any game to lay",
    "invalid_chars": "not a {language} word (characters)",
    "phrase": "a phrase, not one word",
}


def console(err: bool = False) -> Console:
    return Console(stderr=err, highlight=False, soft_wrap=True)


def reason_text(reason: str | None, language: str | None = "Turkish") -> str:
    """What a reason code means, naming the lexicon's language where it matters."""
    text = REASON_TEXT.get(reason, reason or "")
    if "{language}" in text:
        text = (text.format(language=language) if language
                else "letters outside the lexicon's alphabet")
    return text


def print_verdicts(report: dict, language: str | None = "Turkish") -> None:
    """One line a word: ✓/✗, the word as sent, its normal form and the reason."""
    results = report["results"]
    shown = [r["normalized"] if r["normalized"] != r["word"] else "" for r in results]
    w_word = max(len(r["word"]) for r in results)
    w_norm = max(map(len, shown))
    out = console()
    for r, norm in zip(results, shown):
        mark = "[green]✓[/]" if r["valid"] else "[red]✗[/]"
        reason = reason_text(r["reason"], language)
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
    for line in manifest["source"].get("notes", ()):
        out.print(f"  [yellow]note[/]     {escape(line)}")
    applied = manifest["source"].get("policy")
    if applied and applied.get("applied"):
        tagged = (f"; TDK's vulgar-tagged list refused {applied['tagged']:,}"
                  if applied.get("tagged") else "")
        out.print(f"  policy   {escape(applied['policy'])}; blocklist refused "
                  f"{applied['blocked']:,} word(s) and {applied['inflected']:,} inflected "
                  f"form(s){tagged}; allowlist added {applied['allowed']:,}")
    elif applied:
        out.print("  [yellow]policy   none (--no-policy): no blocklist, allowlist or name "
                  "rules[/]")
    out.print(f"  words    {counts['words']:,}")
    for reason, n in counts["rejected_by_reason"].items():
        out.print(f"  refused  {n:>7,}  {reason}")
    prev = changes.get("previous_version") or "nothing"
    out.print(f"  changes against {prev}: +{changes['added']:,} −{changes['removed']:,}")
    for key, sign in (("added_sample", "+"), ("removed_sample", "−")):
        if changes[key]:
            out.print(f"    {sign} " + ", ".join(changes[key][:10])
                      + (" …" if len(changes[key]) > 10 else ""))
    _print_since_accepted(out, manifest.get("accepted"), changes.get("since_accepted") or {})
    reported = changes.get("by_reports") or []
    if reported:
        out.print(f"  changed by player reports: {len(reported)} word(s)")
    for change in reported:
        ids = ", ".join(f"#{i}" for i in change["reports"])
        which = "reports" if len(change["reports"]) > 1 else "report"
        out.print(f"    {escape(change['word'])}  {change['before']} → {change['after']}  "
                  f"({which} {ids}, {change['date']}: {escape(change['why'])})")


def _print_since_accepted(out, accepted: dict | None, since: dict) -> None:
    """The change guard's line: how this build was accepted, or its changes since the last
    accepted build (cumulative, against the bound), by cause."""
    if accepted and accepted.get("reference") is None:
        out.print(f"  accepted {accepted['by']}: later builds are compared with this one")
        return
    if not since:
        return
    causes = "; ".join(f"{way} " + ", ".join(f"{n:,} {cause}" for cause, n in
                                            since[way]["by_cause"].items())
                       for way in ("added", "removed") if since[way]["total"])
    head = f"accepted ({accepted['by']})" if accepted else "not accepted, within the bound"
    out.print(f"  {head}: +{since['added']['total']:,} −{since['removed']['total']:,} since "
              f"the accepted build {since['reference']}" + (f" ({causes})" if causes else ""))


def _tiles(tiles: list[str]) -> str:
    """Tiles as rich markup: a blank's letter dim after its ?, a two-letter tile in brackets."""
    shown = []
    for tile in tiles:
        if tile.startswith("?"):
            shown.append(f"[yellow]?{escape(tile[1:])}[/]")
        elif len(tile) > 1:
            shown.append(f"[cyan]{escape(tile)}[/]")
        else:
            shown.append(escape(tile))
    return " ".join(shown)


def _lexicon_line(lex: dict) -> str:
    return f"[dim]lexicon {lex['name']} {lex['version']} ({lex['words']:,} words)[/]"


SORT_TEXT = {"score": "by score", "length": "longest first", "alpha": "in Turkish order"}


def print_anagrams(answer: dict, rack: str, game: str, sort: str,
                   pattern: str | None = None) -> None:
    """The words grouped by length (longest first), each with its score and tiles."""
    out = console()
    if pattern:
        rack = f"{rack} on {pattern}"
    words, count = answer["words"], answer["count"]
    noun = "word" if count == 1 else "words"
    shown = (f", the first {len(words):,} {SORT_TEXT[sort]}" if answer["truncated"] else "")
    out.print(f"[bold]{escape(rack)}[/] · {escape(game)} · {count:,} {noun}{shown}")
    if not words:
        out.print("  [dim](no word of the lexicon can be made from these tiles)[/]")
    width = max((len(w["word"]) for w in words), default=0)
    points = max((len(str(w["score"])) for w in words), default=0)
    for length in sorted({len(w["word"]) for w in words}, reverse=True):
        out.print(f"[bold]{length} letters[/]")
        for w in (w for w in words if len(w["word"]) == length):
            out.print(f"  {escape(w['word']).ljust(width)}  {str(w['score']).rjust(points)}"
                      f"  {_tiles(w['tiles'])}")
    out.print(_lexicon_line(answer["lexicon"]))


def print_split(answer: dict, rack: str, game: str) -> None:
    """The layout word by word, what is left over, and whether the search was complete."""
    out = console()
    thrown = answer.get("thrown")
    head = "laid out whole" if answer["found"] else "cannot be laid out whole"
    if thrown:
        head += f", {thrown!r} thrown away"
    if (answer.get("others_penalty_multiplier") or 1) > 1:
        head += f": the others' penalty ×{answer['others_penalty_multiplier']}"
    out.print(f"[bold]{escape(rack)}[/] · {escape(game)} · "
              f"{'[green]' if answer['found'] else '[yellow]'}{escape(head)}[/]")
    width = max((len(w["word"]) for w in answer["words"]), default=0)
    for w in answer["words"]:
        out.print(f"  {escape(w['word']).ljust(width)}  {_tiles(w['tiles'])}")
    left = answer["discarded"]
    if left:
        out.print(f"  left over: {_tiles(left)}")
    search = ("the search was complete" if answer["complete"]
              else "[yellow]the time budget ran out: the best layout found so far[/]")
    out.print(f"penalty {answer['penalty']} · {search}")
    out.print(_lexicon_line(answer["lexicon"]))


def board_lines(spot, tiles: list[dict]) -> list[str]:
    """The board drawn: columns numbered, a tile's letter (a blank's in upper case, as a
    board file writes it), `.` an empty square, and the `tiles` laid in brackets."""
    from kelime.board.text import board_text

    new = {(t["row"], t["col"]): t for t in tiles}
    rows = board_text(spot).splitlines()
    lines = ["   " + "".join(f"{c:^3}" for c in range(spot.size)).rstrip()]
    for r, row in enumerate(rows):
        cells = []
        for c, ch in enumerate(row):
            tile = new.get((r, c))
            if tile is None:
                cells.append(f" {ch} ")
            else:
                letter = tile["letter"]
                cells.append(f"[{_upper(letter, spot) if tile['blank'] else letter}]")
        lines.append(f"{r:>2} " + "".join(cells).rstrip())
    return lines


def _upper(letter: str, spot) -> str:
    from kelime.board.text import alphabet_of, upper

    return upper(letter, alphabet_of(spot.game))


def _print_board(out: Console, spot, tiles: list[dict]) -> None:
    for line in board_lines(spot, tiles):
        out.print(escape(line))


def print_moves(answer: dict, spot, rack: str, game: str) -> None:
    """The moves best first (score, word, first square, direction, the tiles to lay as
    `kelime play --tiles` takes them, bingo), then the board with the best one laid."""
    from .board import tiles_text

    out = console()
    moves, count = answer["moves"], answer["count"]
    noun = "move" if count == 1 else "moves"
    shown = f", the best {len(moves):,}" if answer["truncated"] else ""
    first = " · the first play" if spot.empty else ""
    out.print(f"[bold]{escape(rack)}[/] · {escape(game)}{first} · {count:,} {noun}{shown}")
    if not answer["complete"]:
        out.print("[yellow]the search was cut short by its work budget: these are the best "
                  "of the moves found so far, and there may be better ones[/]")
    if not count:
        out.print("  [dim](no legal move: no word of the lexicon fits the board with these "
                  "tiles)[/]")
    if moves:
        width = max(4, *(len(m["word"]) for m in moves))
        points = max(5, *(len(str(m["score"])) for m in moves))
        out.print(f"  {'score'.rjust(points)}  {'word'.ljust(width)}  row col  direction  tiles")
        for m in moves:
            bingo = "  bingo" if m["bingo"] else ""
            out.print(f"  {str(m['score']).rjust(points)}  {escape(m['word']).ljust(width)}  "
                      f"{m['row']:>3} {m['col']:>3}  {m['direction']:<9}  "
                      f"{escape(tiles_text(m['tiles']))}{bingo}")
        best = moves[0]
        out.print(f"the best move, {escape(best['word'])} for {best['score']}, its tiles "
                  f"in brackets:")
        _print_board(out, spot, best["tiles"])
    out.print(_lexicon_line(answer["lexicon"]))


def print_play(answer: dict, spot, tiles: list[dict], game: str) -> None:
    """Legal or why not, each word valid or not with its score, the total, and the board
    with the tiles laid in brackets."""
    out = console()
    words = answer["words"]
    if not answer["legal"]:
        head = f"[red]not legal[/] ({answer['reason']}): {escape(answer['message'])}"
    elif all(w["valid"] for w in words):
        head = f"[green]legal[/] · score {answer['score']}" + (" · bingo" if answer["bingo"]
                                                                else "")
    else:
        head = "[yellow]legal, but a word is not valid[/] · score 0"
    out.print(f"{escape(game)} · {head}")
    width = max((len(w["word"]) for w in words), default=0)
    points = max((len(str(w["score"])) for w in words), default=0)
    for w in words:
        mark = "[green]✓[/]" if w["valid"] else "[red]✗[/]"
        reason = f"  [yellow]{escape(reason_text(w['reason']))}[/]" if w["reason"] else ""
        out.print(f"{mark}  {escape(w['word']).ljust(width)}  {str(w['score']).rjust(points)}"
                  f"{reason}")
    _print_board(out, spot, tiles)
    out.print(_lexicon_line(answer["lexicon"]))
