"""Accepting players' reports: the core of `kelime reports accept`, usable without it.

An accepted report becomes a line in the policy's lists (`kelime.policy.review`) and the
reports are closed, both or neither: the line is written inside the report store's
transaction, and the lists are put back as they were when that transaction does not
commit (a list that cannot be written, a store locked too long, Ctrl-C). What the next
build does with the line, and whether that build will read this policy at all, is checked
first. No git here: the CLI asks git whether the shipped policy is a file of a checkout
(through `shipped_check`) and, with `--commit`, commits the edits it is handed back.

    >>> import shutil, tempfile
    >>> from kelime.lexicon import Candidate, compile_words, write_lexicon, load_lexicon
    >>> from kelime.policy import default_policy_path
    >>> from kelime.reports import ReportStore
    >>> tmp = Path(tempfile.mkdtemp())
    >>> shipped = default_policy_path().parent
    >>> for name in ("policy.toml", "allowlist.txt", "blocklist.txt"):
    ...     _ = shutil.copy(shipped / name, tmp / name)
    >>> _ = write_lexicon(compile_words([Candidate("kitap")]), tmp / "data", "tr",
    ...                   {"kind": "test", "name": "t", "licence": "-"}, created="2026-01-01")
    >>> store = ReportStore(tmp / "reports.sqlite", create=True)
    >>> _ = store.submit(word="yağış", sent="Yağış", kind="missing", lexicon="tr", client="a")
    >>> done = accept(store, load_lexicon(tmp / "data", "tr"), "Yağış", "valid",
    ...               "TDK lists it", lexicon="tr", policy=tmp / "policy.toml",
    ...               today=date(2026, 12, 1))
    >>> (done.word, [r["id"] for r in done.closed], done.still_open)
    ('yağış', [1], {})
    >>> [(e.path.name, e.action, e.line) for e in done.edits]
    [('allowlist.txt', 'added', 'yağış  # report 1 (2026-12-01): TDK lists it')]
    >>> store.open_reports()
    []
    >>> store.close()
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from .errors import KelimeError
from .lexicon import Lexicon
from .normalize import Alphabet, letters_problem, normalize, turkish_sorted
from .policy import INFLECTED_FROM, default_policy_path, inflections
from .policy.review import Edit, record_review, restore, snapshot
from .reports import DECISIONS, KINDS, BaseReportStore, note_problem

#: The kinds of report an accepted verdict answers: making a word valid answers "missing";
#: refusing it answers "wrong" and "offensive". The other kinds stay open.
ANSWERS: dict[str, tuple[str, ...]] = {"valid": ("missing",),
                                       "obscene": ("offensive", "wrong"),
                                       "proper_name": ("wrong", "offensive")}
SHOWN_FORMS = 8  # inflected forms named in the note on an obscene word


class BadDecision(KelimeError):
    """A maintainer's word or reason that cannot go into a list; `param` names which (the
    CLI shows it as that argument's usage error)."""

    def __init__(self, message: str, param: str):
        super().__init__(message)
        self.param = param


class PolicyMismatch(KelimeError):
    """The line would go into lists the next build of the lexicon does not read."""


@dataclass(frozen=True)
class Accepted:
    """What an accept did: the `closed` reports (id, kind, count), the list `edits`, the
    kinds of report `still_open` on the word (kind → count), and `notes` a maintainer
    should read (the word already had the verdict; the inflected forms an obscene word
    also refuses; a policy the lexicon was not built with)."""

    word: str
    lexicon: str
    verdict: str
    closed: list[dict[str, Any]]
    edits: list[Edit]
    still_open: dict[str, int]
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The JSON `kelime reports accept --json` prints."""
        return {"word": self.word, "status": "accepted", "verdict": self.verdict,
                "reports": [c["id"] for c in self.closed], "still_open": self.still_open,
                "edits": [{"file": str(e.path), "action": e.action, "line": e.line}
                          for e in self.edits], "notes": self.notes}


def reviewed_word(word: str, alphabet: Alphabet) -> str:
    """`word` as the lexicon spells it (normalised), or BadDecision."""
    norm = normalize(word, alphabet)
    if not norm or letters_problem(norm, alphabet):
        raise BadDecision(f"{word!r} is not a word of the lexicon's letters", "WORD")
    return norm


def reviewed_why(why: str) -> str:
    """The maintainer's reason on one line, as plain text (it goes into a policy list)."""
    flat = " ".join(why.split())
    problem = note_problem(flat)
    if not flat or problem:
        raise BadDecision(f"say why in plain text ({problem})" if problem else "say why",
                          "--why")
    return flat


def still_open(groups: list[dict[str, Any]]) -> dict[str, int]:
    """The open reports' kinds and counts, from `ReportStore.open_reports` groups."""
    return {kind: n for g in groups for kind, n in g["kinds"].items()}


def policy_notes(lex: Lexicon, policy: Path | None,
                 shipped_check: Callable[[Path], str | None] | None = None) -> list[str]:
    """Refuse (PolicyMismatch) an accept whose line the next build would not read: a
    lexicon built with --no-policy or with another policy than the one the line goes
    into, a language the shipped lists are not, and, when `shipped_check` gives a reason,
    the shipped policy (the CLI's: it is no file of a git checkout, so the line would be
    no reviewed change). The notes to show when the line goes where a build reads it only
    when told (`--policy`)."""
    applied = (lex.manifest.source or {}).get("policy") or {}
    name = lex.name
    if applied.get("applied") is False:
        raise PolicyMismatch(f"{name} was built with --no-policy: an accepted report's line "
                             "would not apply. Build it with a policy first")
    label = str(applied.get("policy") or "")
    if policy is None and label and label != "kelime's default" and Path(label).suffix:
        raise PolicyMismatch(f"{name} was built with the policy {label}: pass --policy "
                             f"{label}, so that the line goes where the next build reads it")
    if policy is not None:
        shipped = label == "kelime's default" and policy.resolve() != default_policy_path()
        other = Path(label).suffix and Path(label).resolve() != policy.resolve()
        return ([f"{name} was built with {label}; the line goes into {policy}, which the "
                 f"next build reads only with --policy {policy}"] if shipped or other else [])
    language = lex.alphabet.language
    if language != "Turkish":
        raise PolicyMismatch(f"the {name} lexicon is {language or 'not Turkish'}: kelime's "
                             "shipped lists are Turkish. Pass --policy FILE (and build with "
                             "the same --policy)")
    if shipped_check is not None and (problem := shipped_check(default_policy_path())):
        raise PolicyMismatch(problem)
    return []


def _afterwards(lex: Lexicon, lexicon: str, word: str, verdict: str) -> list[str]:
    """What the maintainer should know once the line is written."""
    notes = []
    now = lex.check(word, 1)
    if (verdict == "valid") == now.valid and (now.valid or now.reason == verdict):
        notes.append(f"{word} is already {verdict if now.valid else now.reason} in {lexicon} "
                     f"{lex.info['version']}; the line keeps it so")
    if verdict == "obscene" and len(word) >= INFLECTED_FROM:
        forms = [w for w in turkish_sorted(inflections(word), lex.alphabet)
                 if w != word and w in lex.words]
        if forms:
            more = " …" if len(forms) > SHOWN_FORMS else ""
            notes.append(f"as obscene it also refuses {len(forms)} inflected or derived "
                         f"form(s) {lexicon} has now: {', '.join(forms[:SHOWN_FORMS])}{more}")
    return notes


def accept(store: BaseReportStore, lex: Lexicon, word: str, verdict: str, why: str, *,
           lexicon: str, kinds: tuple[str, ...] = (), policy: Path | None = None,
           today: date | None = None,
           shipped_check: Callable[[Path], str | None] | None = None) -> Accepted:
    """Accept the open reports of `word` in `lexicon` (the store's name of `lex`) of these
    `kinds` (default: those `verdict` answers, `ANSWERS`): write the word into `policy`'s
    allowlist (valid) or blocklist (obscene, proper_name) with the reports and the date,
    and close them, in one step. NoOpenReport when there is none; PolicyMismatch when the
    next build would not read the line (`policy_notes`); BadDecision for a word or reason
    that cannot be written. On any failure the lists are as they were and the reports open.
    """
    if verdict not in DECISIONS:
        raise BadDecision(f"unknown verdict {verdict!r}: use one of {', '.join(DECISIONS)}",
                          "--as")
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise BadDecision(f"unknown kind {unknown[0]!r}: use {', '.join(KINDS)}", "--kind")
    norm, why = reviewed_word(word, lex.alphabet), reviewed_why(why)
    notes = policy_notes(lex, policy, shipped_check)
    day = (today or date.today()).isoformat()
    edits: list[Edit] = []

    def write_the_line(closing: list[dict[str, Any]]) -> None:  # inside the transaction
        edits.extend(record_review(norm, verdict, [r["id"] for r in closing], why, day,
                                   policy=policy, alphabet=lex.alphabet))

    saved = snapshot(policy)
    try:
        closed = store.decide(norm, lexicon, "accepted", why, verdict, then=write_the_line,
                              kinds=kinds or ANSWERS[verdict])
    except BaseException:  # the store did not commit: the lists as they were
        restore(saved)
        raise
    left = still_open(store.open_reports(lexicon, norm))
    return Accepted(norm, lexicon, verdict, closed, edits, left,
                    notes + _afterwards(lex, lexicon, norm, verdict))
