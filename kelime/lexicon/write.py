"""Write a compiled lexicon to disk: the only step of a build that touches it.

`write_lexicon` holds the data folder's build lock (a second build waits for the first),
writes into a temporary folder, fsyncs it, renames it to ``<out>/.builds/<name>-<version>/``
and atomically swaps the symlink ``<out>/<name>`` to it, so a reader sees the old lexicon or
the new one, never half of one. The last KEEP_BUILDS builds of each name are kept.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import marisa_trie

from ..errors import BuildError, LexiconError, OutdatedLexicon
from ..locks import exclusive
from ..normalize import TURKISH, Alphabet, sort_key
from .compile import Compiled, diff_words
from .folder import held
from .format import CHANGES_FILE, MANIFEST_FILE, WORDS_FILE, Manifest, encode, json_bytes
from .reader import Lexicon

BUILDS_DIR = ".builds"
LOCK_FILE = ".build.lock"
KEEP_BUILDS = 3
SHRINK_LIMIT = 0.9


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

    An unreadable current lexicon refuses the build unless `force`: without it the shrink
    guard cannot compare, and the change list would be "against nothing". Readable means
    what it means to the service: `Lexicon.load` accepts it (every claim checked). One that
    an older kelime wrote (OutdatedLexicon) is compared by its words alone, so that
    rebuilding is how a lexicon is upgraded, without --force."""
    if not link.exists() and not link.is_symlink():
        return None, [], None
    lexicon = None
    try:
        try:
            lexicon = Lexicon.load(link)
            manifest, words = lexicon.manifest, list(lexicon.words.keys())
        except OutdatedLexicon:
            manifest, words = None, list(marisa_trie.Trie().mmap(str(link / WORDS_FILE)).keys())
    except (LexiconError, OSError, RuntimeError, ValueError) as e:
        if force:
            return None, [], None
        raise BuildError(f"the current lexicon {link} cannot be read ({e}), so this build cannot "
                         "be compared with it. Pass --force to replace it anyway.") from None
    return manifest, words, lexicon


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


def _check_shrink(name: str, compiled: Compiled, prev_words: list[str], force: bool) -> None:
    if not prev_words or force or len(compiled.words) >= SHRINK_LIMIT * len(prev_words):
        return
    raise BuildError(
        f"refusing to replace {name!r}: the new build has {len(compiled.words):,} words, "
        f"under {SHRINK_LIMIT:.0%} of the current {len(prev_words):,} (a broken crawl?). "
        "Check the source, or pass --force to replace it anyway.")


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


def _build_folder(name: str) -> re.Pattern[str]:
    """The names `_write_locked` and `_swap_link` give `name`'s folders under BUILDS_DIR:
    ``<name>-<version>[-<n>]`` and ``<name>-replaced-<pid>`` (so that pruning ``tr`` never
    takes ``tr-kids-<version>``, as a ``tr-*`` glob would)."""
    return re.compile(rf"{re.escape(name)}-(?:[0-9a-f]{{12}}(?:-\d+)?|replaced-\d+)")


def _prune(builds: Path, name: str, keep: Path) -> None:
    ours = _build_folder(name)
    old = sorted((p for p in builds.iterdir()
                  if ours.fullmatch(p.name) and p.is_dir() and p != keep),
                 key=lambda p: p.stat().st_mtime, reverse=True)
    for path in old[KEEP_BUILDS - 1:]:
        if not held(path):  # a running server pins it: pruned by a later build instead
            shutil.rmtree(path, ignore_errors=True)


def write_lexicon(compiled: Compiled, out: str | Path, name: str, source: dict[str, Any], *,
                  created: str, alphabet: Alphabet = TURKISH, force: bool = False,
                  lock_timeout: float = 600.0,
                  waiting: Callable[[str], None] = lambda holder: None,
                  reviewed: dict[str, dict[str, Any]] | None = None) -> BuildResult:
    """Write `compiled` as lexicon `name` under `out`, atomically; refuse a large shrink.
    `reviewed` (the policy's words from player reports) adds ``by_reports`` to the
    changes: those whose verdict this build changes (`reported_changes`)."""
    out = Path(out)
    data = encode(compiled.words, compiled.rejected, alphabet)
    manifest = Manifest.make(name, data, created=created, alphabet=alphabet, source=source,
                             counts=compiled.counts())
    try:
        with build_lock(out, lock_timeout, waiting):
            return _write_locked(compiled, out, name, data, manifest, alphabet, force,
                                 reviewed or {})
    except OSError as e:
        raise BuildError(f"could not write lexicon {name!r} under {out}: {e.strerror or e} "
                         f"({e.filename or out}). The previous lexicon is untouched; "
                         "free some space or fix the permissions and build again.") from e


def _write_locked(compiled: Compiled, out: Path, name: str, data: dict[str, bytes],
                  manifest: Manifest, alphabet: Alphabet, force: bool,
                  reviewed: dict[str, dict[str, Any]]) -> BuildResult:
    prev, prev_words, prev_lexicon = current(out / name, force)
    _check_shrink(name, compiled, prev_words, force)
    if prev and (prev.sha256, prev.source, prev.alphabet) == (
            manifest.sha256, manifest.source, manifest.alphabet):  # the alphabet judges too
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
                                                  alphabet)}
        data = {**data, CHANGES_FILE: json_bytes(changes)}
        manifest = manifest.with_file(CHANGES_FILE, data[CHANGES_FILE])
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
    _prune(builds, name, final)
    return BuildResult(out / name, manifest, changes)
