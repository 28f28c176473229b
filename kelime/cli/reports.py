"""`kelime reports`: the maintainers' side of players' word reports (kelime.reports).

List the open reports with each word's current verdict, ask TDK about them (one polite,
cached look-up each, as `kelime define` does), and close them: an accepted report becomes
a line in the policy's lists (kelime.policy.review), which the next `kelime build` applies
and lists among its changes.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import KelimeError
from ..normalize import TURKISH
from ..reports import DECISIONS, KINDS, BaseReportStore, ReportError, ReportStore, is_url, shown
from .common import (
    StoreAddress,
    data_dir,
    data_option,
    environment,
    json_flag,
    needs_extra,
    print_json,
    say,
)

if TYPE_CHECKING:
    from rich.text import Text

    from ..lexicon import Lexicon
    from ..policy.review import Edit
    from ..reports_accept import Accepted

reports_option = click.option(
    "--reports", "store_path", type=StoreAddress(), envvar="KELIME_REPORTS",
    help="The report store the server writes: a SQLite file, or a postgresql:// URL "
         "[env KELIME_REPORTS].")
json_option = json_flag("Print JSON (an error as the API's error object).")


def _named(store_path: Path | str | None) -> Path | str:
    if store_path is None:
        raise click.UsageError("name the report store: --reports FILE, or set KELIME_REPORTS "
                               "as the server has it")
    return store_path


def _store(store_path: Path | str | None) -> BaseReportStore:
    """The store (a SQLite file, or PostgreSQL's), without the server's size limit: closing
    reports is how a full store makes room."""
    target = _named(store_path)
    if is_url(target):
        with needs_extra("postgres", "kelime reports --reports postgresql://…"):
            from ..reports_pg import PgReportStore
        return PgReportStore(str(target), limits=None)
    return ReportStore(target, limits=None)


NOTE_SHOWN = 200  # characters of a note the listing shows (--json has it whole)


def _forget(store: BaseReportStore) -> None:
    """Erase the client keys over an hour old, if the store can be written at once (a copy
    that cannot be, or a store busy with a write, keeps them until the next write)."""
    try:
        store.forget_keys(wait=0.1)
    except ReportError:
        pass


class Lexicons:
    """The data folder's lexicons, loaded when first asked for (None when not built)."""

    def __init__(self, data: Path):
        self.data = data
        self.loaded: dict[str, Lexicon | None] = {}

    def get(self, name: str):
        from ..errors import LexiconError
        from ..lexicon import Lexicon

        if name not in self.loaded:
            try:
                self.loaded[name] = Lexicon.load(self.data / name)
            except (LexiconError, OSError):
                self.loaded[name] = None
        return self.loaded[name]

    def need(self, name: str):
        """The lexicon `name`, or an error naming the folder looked in."""
        lex = self.get(name)
        if lex is None:
            raise KelimeError(f"no lexicon {name!r} under {self.data} (the words of its "
                              "reports are judged by it): pass --data, the folder the server "
                              "serves")
        return lex

    def verdict(self, name: str, word: str, games: list[str]) -> dict | None:
        """The lexicon's verdict on `word` in the game it was most reported from."""
        from .common import game_profile

        lex = self.get(name)
        if lex is None:
            return None
        game = game_profile(games[0] if games else None)
        return {**lex.check(word, game.min_length).as_dict(), "game": game.name,
                "version": lex.info["version"]}


def _verdict_text(verdict: dict | None) -> str:
    if verdict is None:
        return "unknown (no such lexicon under --data)"
    return "valid" if verdict["valid"] else f"refused: {verdict['reason']}"


def _kinds_text(kinds: dict) -> str:
    return ", ".join(f"{kind} {n}" for kind, n in kinds.items())


def _plain(text: str) -> Text:
    """Text as rich shows it, never read as markup (a player's note is plain text)."""
    from rich.text import Text

    return Text(text)


def _one_line(text: str, most: int = NOTE_SHOWN) -> str:
    """A player's text on one line: its line breaks shown as ⏎ (so that a note cannot
    print what looks like another report), cut to `most` characters."""
    flat = " ⏎ ".join(part.strip() for part in text.replace("\r\n", "\n").replace("\r", "\n")
                      .split("\n"))
    return flat if len(flat) <= most else flat[:most] + f"… ({len(text):,} characters)"


@click.group(invoke_without_command=True)
@reports_option
@data_option
@click.option("--lexicon", default=None, help="Only this lexicon's reports.")
@json_option
@click.pass_context
def reports(ctx, store_path, data, lexicon, as_json) -> None:
    """Players' word reports: list the open ones with each word's verdict now.

    Players send them with POST /v1/reports (the page's "report this word") to a server
    started with KELIME_REPORTS=FILE, or KELIME_REPORTS=postgresql://… (every replica
    writing to one PostgreSQL database). Each word shows the lexicon versions its
    players were answered from.

    \b
    Examples:
      kelime reports --reports reports.sqlite
      kelime reports --reports postgresql://kelime@db.example/kelime
      kelime reports check --reports reports.sqlite        # what TDK says, side by side
      kelime reports accept yağış --as valid --why "TDK: isim" --reports reports.sqlite
      kelime reports reject ev --why "a common noun" --reports reports.sqlite
      kelime reports prune --older-than 180 --reports reports.sqlite
    """
    if ctx.invoked_subcommand:
        return
    with _store(store_path) as store:
        groups, counts = store.open_reports(lexicon), store.counts()
        _forget(store)
    lexicons = Lexicons(data_dir(data))
    for group in groups:
        group["verdict"] = lexicons.verdict(group["lexicon"], group["word"], group["games"])
    if as_json:
        print_json({"store": shown(store_path), "counts": counts, "open": groups})
        return
    _print_open(groups, counts, store_path)


def _print_open(groups: list[dict], counts: dict, store_path: Path | str) -> None:
    from .pretty import console

    out = console()
    reports_n = sum(g["count"] for g in groups)
    out.print(_plain(f"{len(groups)} word(s) with open reports ({reports_n} report(s)) in "
                     f"{shown(store_path)} ({counts['bytes'] / 1024:,.0f} KiB in use); "
                     f"{counts['accepted']} accepted, {counts['rejected']} rejected so far"))
    for g in groups:
        line = _plain(f"{g['word']}")
        line.stylize("bold")
        line.append(f"  {g['lexicon']}  {g['count']} report(s) from {g['players']} player(s): "
                    f"{_kinds_text(g['kinds'])}; now {_verdict_text(g['verdict'])}"
                    + (f" in {g['verdict']['game']}" if g["verdict"] else "")
                    + (f"; answered from version {', '.join(g['versions'])}"
                       if g["versions"] else ""))
        out.print(line)
        for note in g["notes"]:
            out.print(_plain(f"    {note['at'][:16].replace('T', ' ')} {note['kind']}: "
                             f"{_one_line(note['note'])}"))
        for old in g["history"]:
            out.print(_plain(f"    earlier: {old['kind']} {old['status']}"
                             + (f" as {old['decision']}" if old["decision"] else "")
                             + f" on {(old['closed_at'] or '')[:10]}: "
                               f"{_one_line(old['why'] or '')}"))
    if groups:
        out.print("Next: `kelime reports check` asks TDK; `kelime reports accept WORD --as "
                  "valid|obscene|proper_name --why …` or `reject WORD --why …` closes them.")


# --- check ------------------------------------------------------------------------------

def _pacer(delay: float):
    """httpx event hooks that keep `delay` seconds between the end of one request and the
    start of the next (retries included): the crawl's politeness for a run of look-ups."""
    ended = [0.0]

    def before(request) -> None:
        wait = ended[0] + delay - time.monotonic()
        if ended[0] and wait > 0:
            time.sleep(wait)

    def after(response) -> None:
        ended[0] = time.monotonic()

    return {"request": [before], "response": [after]}


@reports.command()
@reports_option
@data_option
@click.option("--lexicon", default=None, help="Only this lexicon's reports.")
@click.option("--cache", type=click.Path(path_type=Path), envvar="KELIME_CACHE",
              default="tdk.sqlite", show_default=True,
              help="TDK cache: look-ups are read from it and stored in it [env KELIME_CACHE].")
@click.option("--base-url", envvar="KELIME_TDK_BASE_URL", default=None,
              help="TDK site [env KELIME_TDK_BASE_URL; default https://sozluk.gov.tr].")
@click.option("--delay", type=click.FloatRange(0), default=None,
              help="Seconds between requests to TDK [the crawl's, 1].")
@click.option("--refresh", is_flag=True, help="Ask TDK even for words the cache has.")
@click.option("--limit", type=click.IntRange(1), default=None,
              help="Only the N most reported words.")
@json_option
def check(store_path, data, lexicon, cache, base_url, delay, refresh, limit, as_json) -> None:
    """Ask TDK once about each reported word and show, side by side, what TDK says
    (headwords, proper-name flag, register tags) and what the lexicon says. Exit status 1
    when TDK could not be asked about some word (the others are shown).

    \b
    Example:
      kelime reports check --reports reports.sqlite --cache tdk.sqlite
    """
    with needs_extra("crawl", "kelime reports check"):
        from ..crawler.fetch import lookup, make_client
    from ..crawler.settings import DEFAULT_BASE_URL, DEFAULT_DELAY
    from ..errors import CacheError
    from ..tdk.entries import tdk_view

    store_path, data, lexicon, as_json = _from_group(store_path=store_path, data=data,
                                                     lexicon=lexicon, as_json=as_json)
    with _store(store_path) as store:
        groups = store.open_reports(lexicon)[:limit]
        _forget(store)
    lexicons = Lexicons(data_dir(data))
    base_url = base_url or DEFAULT_BASE_URL
    delay = DEFAULT_DELAY if delay is None else delay
    with make_client() as client:
        client.event_hooks = _pacer(delay)
        for n, group in enumerate(groups, 1):
            if sys.stderr.isatty() and len(groups) > 1:
                say(f"[{n}/{len(groups)}] {group['word']} …")
            lex = lexicons.get(group["lexicon"])
            group["verdict"] = lexicons.verdict(group["lexicon"], group["word"], group["games"])
            try:
                found = lookup(cache, group["word"], base_url=base_url, client=client,
                               refresh=refresh, delay=delay)
            except CacheError:
                raise  # the cache is no word's problem: every look-up would fail the same
            except KelimeError as e:  # one word TDK could not answer: say so, go on
                group["tdk"] = {"source": "error", "error": str(e), "headwords": [],
                                "verdict": None}
                continue
            group["tdk"] = {"source": found["source"], **tdk_view(
                found["entries"], group["word"], lex.alphabet if lex is not None else TURKISH)}
    failed = sum(g["tdk"]["source"] == "error" for g in groups)
    if as_json:
        print_json({"store": shown(store_path), "open": groups})
    else:
        _print_check(groups)
        if failed:
            say(f"TDK could not be asked about {failed} of {len(groups)} word(s); run the "
                "same command again later (answers already had are cached)")
    sys.exit(1 if failed else 0)


def _headwords_text(tdk: dict) -> str:
    if tdk["source"] == "error":
        return tdk["error"]
    if not tdk["headwords"]:
        return "no entry"
    parts = []
    for h in tdk["headwords"]:
        notes = (["özel ad"] if h["ozel_mi"] else []) + h["tags"]
        parts.append(f"{h['madde']}" + (f" ({', '.join(notes)})" if notes else ""))
    return "; ".join(parts)


def _print_check(groups: list[dict]) -> None:
    from .pretty import console

    out = console()
    if not groups:
        out.print("No open reports.")
        return
    for g in groups:
        tdk = g["tdk"]
        says = tdk["verdict"] or "could not ask"
        agree = g["verdict"] is None or tdk["verdict"] is None or (
            (tdk["verdict"] == "valid") == g["verdict"]["valid"])
        line = _plain(g["word"])
        line.stylize("bold")
        line.append(f"  {g['count']} report(s): {_kinds_text(g['kinds'])}\n")
        line.append(f"    lexicon  {_verdict_text(g['verdict'])}\n")
        line.append(f"    TDK      {says}", style=None if agree else "bold yellow")
        line.append("" if agree else "  (differs)")
        line.append(f"  ({tdk['source']})\n" if tdk["source"] != "error" else "\n")
        line.append(f"             {_headwords_text(tdk)}")
        out.print(line)


# --- accept and reject ---------------------------------------------------------------------

def _reviewed(word: str, why: str, lex: Lexicon) -> tuple[str, str]:
    """The word and reason as the lists take them; the core's refusal as a usage error."""
    from ..reports_accept import BadDecision, reviewed_why, reviewed_word

    try:
        return reviewed_word(word, lex.alphabet), reviewed_why(why)
    except BadDecision as e:
        raise click.BadParameter(str(e), param_hint=e.param) from None


kind_option = click.option("--kind", "kinds", type=click.Choice(KINDS), multiple=True,
                           help="Only reports of this kind (repeat for several).")


def _from_group(**given: Any) -> list[Any]:
    """Each option left out here taken from `kelime reports`' own (`kelime reports
    --reports FILE accept …` means what `kelime reports accept … --reports FILE` does)."""
    parent = click.get_current_context().parent
    shared = parent.params if parent is not None else {}
    return [value if value not in (None, False) else shared.get(name, value)
            for name, value in given.items()]


def _git(*args: str, cwd: Path) -> subprocess.CompletedProcess[str] | None:
    """`git ARGS` in `cwd`; None when there is no git to ask."""
    if shutil.which("git") is None:
        return None
    return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True,
                          check=False)


def _shipped_in_git(shipped: Path) -> str | None:
    """Why the shipped policy cannot take an accepted line: it is no file of a git
    checkout (an installed kelime), so the line would be no reviewed change."""
    tracked = _git("ls-files", "--error-unmatch", shipped.name, cwd=shipped.parent)
    if tracked is not None and tracked.returncode == 0:
        return None
    return (f"the shipped policy {shipped} is not a file of a git checkout (an installed "
            "kelime?): an accepted report must become a reviewed change. Pass --policy FILE "
            "(your checkout's kelime/policy/policy.toml) and build with the same --policy")


def _work_tree(policy: Path | None) -> Path:
    """The git work tree holding the policy's lists (`--commit`), checked before anything
    is written: an accept that cannot be committed is refused whole."""
    from ..policy.review import list_paths

    lists = list_paths(policy)
    folder = lists[0].parent
    top = _git("rev-parse", "--show-toplevel", cwd=folder)
    if top is None:
        raise KelimeError("--commit needs git, and there is none on the PATH: leave out "
                          "--commit and commit the lists yourself")
    if top.returncode != 0:
        raise KelimeError(f"--commit: the lists in {folder} are in no git work tree "
                          f"({top.stderr.strip()}); leave out --commit")
    tree = Path(top.stdout.strip())
    if problem := _uncommittable(tree, lists):
        raise KelimeError(f"--commit: {problem}; or leave out --commit and commit the lists "
                          "yourself")
    return tree


def _uncommittable(tree: Path, lists: tuple[Path, ...]) -> str | None:
    """What would make git refuse the accept's commit once the reports are closed: no
    identity to commit as, a merge under way (no partial commit then), a list git ignores."""
    for who in ("GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"):
        known = _git("var", who, cwd=tree)
        if known is not None and known.returncode != 0:
            return (f"git does not know who commits in {tree}: set it with `git -C {tree} "
                    f"config user.name 'Your Name'` and `git -C {tree} config user.email "
                    "you@example.org`")
    merging = _git("rev-parse", "-q", "--verify", "MERGE_HEAD", cwd=tree)
    if merging is not None and merging.returncode == 0:
        return f"{tree} is in the middle of a merge: finish it (or `git merge --abort`) first"
    ignored = _git("check-ignore", "--", *map(str, lists), cwd=tree)
    if ignored is not None and ignored.returncode == 0:
        return (f"git ignores {', '.join(ignored.stdout.split())} (a .gitignore in {tree}): "
                "track the lists first (`git add -f`)")
    changed = _git("status", "--porcelain", "--", *map(str, lists), cwd=tree)
    if changed is not None and changed.stdout.strip():  # they would go into the commit too
        shown = "; ".join(line.strip() for line in changed.stdout.splitlines())
        return (f"the lists have changes not committed ({shown}): commit or stash them "
                "first, so that the accept's commit holds its line only")
    return None


def _commit(done: Accepted, why: str, tree: Path) -> str:
    """Commit the lists the accept edited, those files only; the commit's short hash."""
    files = sorted({str(e.path.resolve()) for e in done.edits})
    ids = ", ".join(f"#{c['id']}" for c in done.closed)
    message = (f"reports: {done.word} accepted as {done.verdict} in {done.lexicon} ({ids})"
               f"\n\n{why}\n")
    added = _git("add", "--", *files, cwd=tree)
    committed = (_git("commit", "--quiet", "-m", message, "--", *files, cwd=tree)
                 if added is not None and added.returncode == 0 else added)
    if committed is None or committed.returncode != 0:
        reason = (committed.stderr or committed.stdout).strip() if committed else "no git"
        raise KelimeError(f"the reports are closed and the lists written, but git could not "
                          f"commit them ({reason}): commit {', '.join(files)} yourself")
    head = _git("rev-parse", "--short", "HEAD", cwd=tree)
    return head.stdout.strip() if head is not None else "?"


@reports.command()
@click.argument("word")
@click.option("--as", "verdict", type=click.Choice(DECISIONS), required=True,
              help="The verdict the next build gives the word.")
@click.option("--why", required=True, help="The reason, kept beside the word in the list.")
@kind_option
@click.option("--lexicon", default=None, help="The reports' lexicon [the server's default].")
@click.option("--policy", type=click.Path(path_type=Path, dir_okay=False),
              help="The policy whose lists get the line [the one shipped with kelime].")
@click.option("--commit", "commit", is_flag=True,
              help="Commit the edited lists with git (those files only), the reason as the "
                   "message [off: review them with git diff, commit yourself].")
@reports_option
@data_option
@json_option
def accept(word: str, verdict: str, why: str, kinds: tuple[str, ...], lexicon: str | None,
           policy: Path | None, commit: bool, store_path: Path | str | None, data: Path | None,
           as_json: bool) -> None:
    """Accept WORD's open reports: write it into the policy's allowlist (--as valid) or
    blocklist (--as obscene, --as proper_name) with the reports and the date, and close
    them. --as valid answers the "missing" reports, the others "wrong" and "offensive"
    (--kind chooses); reports of other kinds stay open. Review the line with `git diff`
    (or let --commit commit it); the next `kelime build` applies it.

    \b
    Example:
      kelime reports accept yağış --as valid --why "TDK: isim" --reports reports.sqlite
    """
    from ..reports_accept import accept as accept_reports

    store_path, data, lexicon, as_json = _from_group(store_path=store_path, data=data,
                                                     lexicon=lexicon, as_json=as_json)
    _named(store_path)
    lexicon = lexicon or environment().default_lexicon
    lex = Lexicons(data_dir(data)).need(lexicon)
    norm, why = _reviewed(word, why, lex)
    tree = _work_tree(policy) if commit else None
    with _store(store_path) as store:
        done = accept_reports(store, lex, norm, verdict, why, lexicon=lexicon, kinds=kinds,
                              policy=policy, shipped_check=_shipped_in_git)
    for note in done.notes:
        say(f"Note: {note}")
    committed = _commit(done, why, tree) if tree is not None else None
    if as_json:
        print_json({**done.as_dict(), **({"commit": committed} if committed else {})})
        return
    _print_closed(norm, "accepted", done.closed, done.edits, verdict, done.still_open)
    if committed:
        click.echo(f"Committed the lists as {committed}; `kelime build` applies them.")
    elif done.edits:
        click.echo("Review the change (git diff), then `kelime build` applies it and lists "
                   f"{norm} among the changes.")


@reports.command()
@click.argument("word")
@click.option("--why", required=True, help="The reason, stored with the closed reports.")
@kind_option
@click.option("--lexicon", default=None, help="The reports' lexicon [the server's default].")
@reports_option
@data_option
@json_option
def reject(word: str, why: str, kinds: tuple[str, ...], lexicon: str | None,
           store_path: Path | str | None, data: Path | None, as_json: bool) -> None:
    """Reject WORD's open reports (of every kind, or --kind): the verdict stays; the
    reports are closed with the reason.

    \b
    Example:
      kelime reports reject ev --why "a common noun" --reports reports.sqlite
    """
    from ..reports_accept import still_open

    store_path, data, lexicon, as_json = _from_group(store_path=store_path, data=data,
                                                     lexicon=lexicon, as_json=as_json)
    _named(store_path)
    lexicon = lexicon or environment().default_lexicon
    norm, why = _reviewed(word, why, Lexicons(data_dir(data)).need(lexicon))
    with _store(store_path) as store:
        closed = store.decide(norm, lexicon, "rejected", why, kinds=tuple(kinds) or KINDS)
        left = still_open(store.open_reports(lexicon, norm))
    if as_json:
        print_json({"word": norm, "status": "rejected", "verdict": None,
                    "reports": [c["id"] for c in closed], "still_open": left, "edits": []})
        return
    _print_closed(norm, "rejected", closed, [], None, left)


@reports.command()
@click.option("--older-than", "days", type=click.IntRange(0), default=90, show_default=True,
              help="Delete the reports closed more than this many days ago.")
@reports_option
@json_option
def prune(days, store_path, as_json) -> None:
    """Delete old closed reports and give their space back: a store kept for years fills
    with decisions (each keeps its counts and reason). Open reports are kept;
    accepted ones live on in the policy lists' comments.

    \b
    Example:
      kelime reports prune --older-than 180 --reports reports.sqlite
    """
    from datetime import datetime, timedelta

    store_path, as_json = _from_group(store_path=store_path, as_json=as_json)
    before = (datetime.now(UTC) - timedelta(days=days)).isoformat(timespec="seconds")
    with _store(store_path) as store:
        used = store.counts()["bytes"]
        gone = store.prune(before)
        left = store.counts()
    if as_json:
        print_json({"deleted": gone, "closed_before": before, "bytes_before": used,
                    "counts": left})
        return
    click.echo(f"Deleted {gone} report(s) closed before {before[:10]}; the store uses "
               f"{left['bytes'] / 1024:,.0f} KiB (was {used / 1024:,.0f}); {left['open']} open, "
               f"{left['accepted']} accepted, {left['rejected']} rejected kept")


def _shown(path: Path) -> str:
    """`path` relative to the current folder when it is inside it (a checkout's lists)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _print_closed(word: str, status: str, closed: list[dict[str, Any]], edits: list[Edit],
                  verdict: str | None, still: dict[str, int]) -> None:
    ids = ", ".join(f"#{c['id']}" for c in closed)
    total = sum(c["count"] for c in closed)
    click.echo(f"{status.capitalize()} {len(closed)} report(s) of {word} ({ids}; {total} "
               "submission(s))" + (f" as {verdict}" if verdict else ""))
    for edit in edits:
        click.echo(f"  {edit.action} in {_shown(edit.path)}: {edit.line}")
    if still:
        click.echo(f"Still open: {_kinds_text(still)} (another kind: close it with --kind)")
