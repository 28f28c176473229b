"""Write a compiled lexicon to disk: the only step of a build that touches it.

`write_lexicon` holds the data folder's build lock (a second build waits for the first),
writes into a temporary folder, fsyncs it, renames it to ``<out>/.builds/<name>-<version>/``
and atomically swaps the symlink ``<out>/<name>`` to it, so a reader sees the old lexicon or
the new one, never half of one. The last KEEP_BUILDS builds of each name are kept, and
the last accepted one (the change guard's reference, `kelime.lexicon.guard`), which the link
``<out>/.<name>.accepted`` names: a build under the guard's bound is written but
not accepted, so the reference stays, and the next build is compared with it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import marisa_trie

from ..errors import BuildError, LexiconError, OutdatedLexicon
from ..locks import exclusive
from ..normalize import TURKISH, Alphabet, sort_key
from . import guard
from .compile import Compiled, diff_words
from .folder import BUILDS_DIR, build_pattern, held
from .format import CHANGES_FILE, MANIFEST_FILE, WORDS_FILE, Manifest, encode, json_bytes
from .reader import Lexicon

LOCK_FILE = ".build.lock"
KEEP_BUILDS = 3
ACCEPTED = ".{name}.accepted"  # in the data folder: a link to the last accepted build


@dataclass
class BuildResult:
    path: Path
    manifest: Manifest
    changes: dict[str, Any]
    unchanged: bool = False
    notes: list[str] = field(default_factory=list)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_bytes(path: Path, data: bytes) -> None:
    try:
        with open(path, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:  # a failed write names no file: name it
        raise OSError(e.errno, e.strerror, str(path)) from e


def build_lock(out: Path, timeout: float,
               waiting: Callable[[str], None] = lambda holder: None,
               ) -> AbstractContextManager[None]:
    """Hold `out`'s build lock; wait up to `timeout` seconds for another build to finish,
    calling `waiting(holder)` once with the holder's description."""
    out.mkdir(parents=True, exist_ok=True)
    return exclusive(out / LOCK_FILE, timeout, waiting=waiting, busy=lambda holder: BuildError(
        f"another build is writing to {out} ({holder}); wait for it to finish and build "
        "again"))


def current(link: Path, force: bool) -> tuple[Manifest | None, list[str], Lexicon | None]:
    """The manifest, words and loaded lexicon now at `link` (None, [], None when there is
    none).

    An unreadable current lexicon refuses the build unless `force`: without it the change
    guard cannot compare, and the change list would be "against nothing". Readable means
    what it means to the service: `Lexicon.load` accepts it (every claim checked). One that
    an older kelime wrote (OutdatedLexicon) is compared by its words alone, so that
    rebuilding is how a lexicon is upgraded, without --force."""
    if not link.exists() and not link.is_symlink():
        return None, [], None
    try:
        return _read(link)
    except (LexiconError, OSError, RuntimeError, ValueError) as e:
        if force:
            return None, [], None
        raise BuildError(f"the current lexicon {link} cannot be read ({e}), so this build cannot "
                         "be compared with it. Pass --force to replace it anyway.") from None


def _read(link: Path) -> tuple[Manifest | None, list[str], Lexicon | None]:
    try:
        lexicon = Lexicon.load(link)
    except OutdatedLexicon:
        return None, list(marisa_trie.Trie().mmap(str(link / WORDS_FILE)).keys()), None
    return lexicon.manifest, list(lexicon.words.keys()), lexicon


def reported_changes(reviewed: dict[str, dict[str, Any]], compiled: Compiled,
                     prev_words: list[str],
                     prev: Lexicon | None, alphabet: Alphabet = TURKISH) -> list[dict[str, Any]]:
    """The words of `reviewed` (normalised word → its review: reports, date, why) whose
    verdict this build changes against the previous one, each ``valid`` or the reason
    before and after. No previous lexicon: nothing changed (the first build of a name lists
    no word). A previous one an older kelime wrote (`prev` None, `prev_words` its words)
    tells only valid or not: a word it refused is ``refused`` before, and listed only when
    it becomes valid."""
    if not reviewed or (prev is None and not prev_words):
        return []
    now_valid, before_valid = set(compiled.words), set(prev_words)
    changed = []
    for word, review in sorted(reviewed.items(), key=lambda item: sort_key(item[0], alphabet)):
        after = "valid" if word in now_valid else compiled.rejected.get(word, "not_in_dictionary")
        if word in before_valid:
            before = "valid"
        elif prev is not None:
            before = prev.reason_for(word)
        else:
            before = "refused"
            if after != "valid":
                continue  # refused before, refused now: no change an old lexicon can show
        if before != after:
            changed.append({"word": word, "before": before, "after": after,
                            "reports": review.get("reports", []), "date": review.get("date"),
                            "why": review.get("why")})
    return changed


def _accepted_link(out: Path, name: str) -> Path:
    return out / ACCEPTED.format(name=name)


def reference(out: Path, name: str, force: bool,
              now: tuple[Manifest | None, list[str], Lexicon | None],
              ) -> tuple[Manifest | None, list[str], Lexicon | None]:
    """The last accepted build of `name` (as `current` answers: manifest, words, lexicon).
    No accepted link (a data folder older kelimes wrote, or a first build killed between its
    two links): the current lexicon, `now`, stands for it, and `_write_locked` has linked it
    as the accepted one, so that the reference stays there (it moved with every build). A
    link whose build cannot be read refuses the build unless `force` (then there is no
    reference: this build is accepted as a first one)."""
    link = _accepted_link(out, name)
    if not link.is_symlink() or link.resolve() == (out / name).resolve():
        return now
    try:
        return _read(link)
    except (LexiconError, OSError, RuntimeError, ValueError) as e:
        if force:
            return None, [], None
        raise BuildError(f"the last accepted build of {name!r} ({link} → {os.readlink(link)}) "
                         f"cannot be read ({e}), so this build cannot be compared with it. "
                         "Pass --force to build with no reference (this build becomes the "
                         "accepted one).") from None


def _refused_by(lexicon: Lexicon | None) -> Callable[[str], str | None]:
    """The reference's reason for a word it refused, None for one it did not know."""
    if lexicon is None:
        return lambda word: None

    def refused(word: str) -> str | None:
        found = lexicon.rejected.get(word)
        return found[0].decode("ascii") if found else None
    return refused


def _swap_link(out: Path, name: str, target: Path) -> None:
    """Point `out/name` at `target` atomically (a real folder there is moved aside first)."""
    link = out / name
    if link.exists() and not link.is_symlink():
        os.rename(link, out / BUILDS_DIR / f"{name}-replaced-{os.getpid()}")
    tmp_link = out / f".{name}.link-{os.getpid()}"
    if tmp_link.is_symlink():
        tmp_link.unlink()
    os.symlink(os.path.relpath(target, out), tmp_link)
    os.replace(tmp_link, link)
    _fsync_dir(out)


def _clear_stale(out: Path, name: str) -> None:
    """Remove what killed builds of `name` left (temp folders and links); the lock is held."""
    for path in [*(out / BUILDS_DIR).glob(f".tmp-{name}-*"), *out.glob(f".{name}.link-*")]:
        if path.is_symlink() or path.is_file():
            path.unlink(missing_ok=True)
        else:
            shutil.rmtree(path, ignore_errors=True)


def _prune(builds: Path, name: str, keep: Path) -> None:
    """Keep the newest KEEP_BUILDS builds of `name` (`keep` among them) and the accepted one."""
    ours = build_pattern(name)
    accepted = _accepted_link(builds.parent, name)
    kept = {keep, accepted.resolve()} if accepted.is_symlink() else {keep}
    old = sorted((p for p in builds.iterdir()
                  if ours.fullmatch(p.name) and p.is_dir() and p not in kept),
                 key=lambda p: p.stat().st_mtime, reverse=True)
    for path in old[KEEP_BUILDS - 1:]:
        if not held(path):  # a running server pins it: pruned by a later build instead
            shutil.rmtree(path, ignore_errors=True)


def write_lexicon(compiled: Compiled, out: str | Path, name: str, source: dict[str, Any], *,
                  created: str, alphabet: Alphabet = TURKISH, force: bool = False,
                  lock_timeout: float = 600.0,
                  waiting: Callable[[str], None] = lambda holder: None,
                  reviewed: dict[str, dict[str, Any]] | None = None,
                  max_change: float | None = None, accept_changes: bool = False,
                  explain: guard.Explain | None = None) -> BuildResult:
    """Write `compiled` as lexicon `name` under `out`, atomically.
    `reviewed` (the policy's words from player reports) adds ``by_reports`` to the
    changes: those whose verdict this build changes (`reported_changes`).

    The change guard (`kelime.lexicon.guard`): with `max_change` (a share; `kelime build`
    always gives one), a build adding or removing more than that share of the last accepted
    build's words refuses unless `accept_changes`; `explain` gives the source's causes.
    The first build of a name, an accepted one, and every one written without
    `max_change` becomes the reference."""
    out = Path(out)
    data = encode(compiled.words, compiled.rejected, alphabet)
    manifest = Manifest.make(name, data, created=created, alphabet=alphabet, source=source,
                             counts=compiled.counts())
    try:
        with build_lock(out, lock_timeout, waiting):
            return _write_locked(compiled, out, name, data, manifest, alphabet, force,
                                 reviewed or {}, _Guard(max_change, accept_changes, explain))
    except OSError as e:
        raise BuildError(f"could not write lexicon {name!r} under {out}: {e.strerror or e} "
                         f"({e.filename or out}). The previous lexicon is untouched; "
                         "free some space or fix the permissions and build again.") from e


@dataclass(frozen=True)
class _Guard:
    max_change: float | None
    accept: bool
    explain: guard.Explain | None


def _judge(name: str, compiled: Compiled, ref: tuple[Manifest | None, list[str], Lexicon | None],
           rules: _Guard, alphabet: Alphabet) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """(the manifest's ``accepted``, or None: not accepted; the changes since the reference
    for changes.json); refuses past the bound (`guard.check`)."""
    manifest, words, lexicon = ref
    if manifest is None and not words:
        return {"by": "first build", "reference": None}, {}
    version = manifest.version if manifest else "(written by an older kelime)"
    changes = guard.compare(words, _refused_by(lexicon), compiled, rules.explain, alphabet)
    since = {"reference": version, **guard.counts(changes), "bound": rules.max_change}
    if rules.max_change is None:
        return {"by": "written without the change guard", "reference": version,
                **guard.counts(changes)}, since
    if not rules.accept:
        guard.check(name, changes, len(words), version, rules.max_change)
        return None, since
    return {"by": "--accept-changes", "reference": version, **guard.counts(changes)}, since


def _write_locked(compiled: Compiled, out: Path, name: str, data: dict[str, bytes],
                  manifest: Manifest, alphabet: Alphabet, force: bool,
                  reviewed: dict[str, dict[str, Any]], rules: _Guard) -> BuildResult:
    now = current(out / name, force)
    prev, prev_words, prev_lexicon = now
    if (prev is not None or prev_words) and (out / name).is_symlink() and not _accepted_link(
            out, name).is_symlink():  # an older kelime's folder, or a first build cut short
        _swap_link(out, ACCEPTED.format(name=name), (out / name).resolve())  # the reference
    ref = reference(out, name, force, now)
    accepted, since = _judge(name, compiled, ref, rules, alphabet)
    is_reference = ref[0] is not None and prev is not None and ref[0].sha256 == prev.sha256
    if prev and (prev.sha256, prev.source, prev.alphabet) == (
            manifest.sha256, manifest.source, manifest.alphabet) and (
            accepted is None or is_reference or rules.max_change is None):  # alphabet too
        return BuildResult(out / name, prev, {**diff_words([], []), "by_reports": []},
                           unchanged=True)
    builds = out / BUILDS_DIR
    builds.mkdir(parents=True, exist_ok=True)
    _clear_stale(out, name)
    tmp = builds / f".tmp-{name}-{os.getpid()}"
    try:
        tmp.mkdir()
        changes = {"previous_version": prev and prev.version, "version": manifest.version,
                   **diff_words(prev_words, compiled.words, alphabet),
                   "by_reports": reported_changes(reviewed, compiled, prev_words, prev_lexicon,
                                                  alphabet),
                   "since_accepted": since}
        data = {**data, CHANGES_FILE: json_bytes(changes)}
        manifest = replace(manifest, accepted=accepted).with_file(CHANGES_FILE, data[CHANGES_FILE])
        for file, blob in {**data, MANIFEST_FILE: manifest.to_bytes()}.items():
            _write_bytes(tmp / file, blob)
        _fsync_dir(tmp)
        final = builds / f"{name}-{manifest.version}"
        n = 1
        while final.exists():  # same words, new metadata: never touch a folder in use
            n += 1
            final = builds / f"{name}-{manifest.version}-{n}"
        os.rename(tmp, final)
        _fsync_dir(builds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _swap_link(out, name, final)
    if accepted is not None:
        _swap_link(out, ACCEPTED.format(name=name), final)
    _prune(builds, name, final)
    return BuildResult(out / name, manifest, changes)
