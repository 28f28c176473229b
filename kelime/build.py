"""Compile candidate words into a lexicon folder: parse → normalise → build → write.

Only `write_lexicon` touches the disk. It writes into a temporary folder, fsyncs it,
renames it to ``<out>/.builds/<name>-<version>/`` and then atomically swaps the symlink
``<out>/<name>`` to it, so a reader sees the old lexicon or the new one, never half of one.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import marisa_trie

from .lexicon import (CHANGES_FILE, DATA_FILES, FORMAT, FORMAT_VERSION, MANIFEST_FILE,
                      REASONS, REJECTED_FILE, WORDS_FILE, LexiconError, read_manifest,
                      sha256_file)
from .normalize import NORMALIZATION_VERSION, TURKISH, Alphabet, letters_problem, normalize, turkish_sorted

BUILDS_DIR = ".builds"
KEEP_BUILDS = 3
SHRINK_LIMIT = 0.9
SAMPLE_SIZE = 20


class BuildError(Exception):
    """A build that did not happen; the message says why and what to do."""


@dataclass(frozen=True)
class Candidate:
    """One word offered by a source, with the reason to refuse it (None: acceptable)."""

    word: str
    reason: str | None = None


@dataclass
class Compiled:
    """The pure result of a build: valid words and rejected words with their reasons."""

    words: list[str]
    rejected: dict[str, str]

    def counts(self) -> dict:
        by_reason: dict[str, int] = {}
        for reason in self.rejected.values():
            by_reason[reason] = by_reason.get(reason, 0) + 1
        return {"words": len(self.words), "rejected": len(self.rejected),
                "rejected_by_reason": dict(sorted(by_reason.items()))}


@dataclass
class BuildResult:
    path: Path
    manifest: dict
    changes: dict
    unchanged: bool = False
    notes: list[str] = field(default_factory=list)


def compile_words(candidates: Iterable[Candidate], alphabet: Alphabet = TURKISH,
                  min_length: int = 2) -> Compiled:
    """Normalise and merge candidates: a word is valid when any source accepts it."""
    rank = {r: i for i, r in enumerate(REASONS)}
    valid: set[str] = set()
    rejected: dict[str, str] = {}
    for cand in candidates:
        norm = normalize(cand.word, alphabet)
        if not norm:
            continue
        reason = letters_problem(norm, alphabet) or cand.reason
        if reason is None and len(norm) < min_length:
            reason = "too_short"
        if reason is None:
            valid.add(norm)
        elif norm not in rejected or rank.get(reason, 99) < rank.get(rejected[norm], 99):
            rejected[norm] = reason
    for word in valid:
        rejected.pop(word, None)
    return Compiled(turkish_sorted(valid, alphabet), dict(sorted(rejected.items())))


def apply_overrides(compiled: Compiled, blocked: dict[str, str], allowed: Iterable[str],
                    alphabet: Alphabet = TURKISH) -> Compiled:
    """Curated lists win over sources: `blocked` {word: reason} refuses, `allowed` accepts."""
    words = set(compiled.words)
    rejected = dict(compiled.rejected)
    for raw in allowed:
        word = normalize(raw, alphabet)
        if letters_problem(word, alphabet) is None:
            words.add(word)
            rejected.pop(word, None)
    for raw, reason in blocked.items():
        word = normalize(raw, alphabet)
        words.discard(word)
        rejected[word] = reason
    return Compiled(turkish_sorted(words, alphabet), dict(sorted(rejected.items())))


def diff_words(old: Iterable[str], new: Iterable[str], alphabet: Alphabet = TURKISH) -> dict:
    """Added and removed counts with a sample of each, in alphabetical order."""
    old, new = set(old), set(new)
    added, removed = turkish_sorted(new - old, alphabet), turkish_sorted(old - new, alphabet)
    return {"added": len(added), "removed": len(removed),
            "added_sample": added[:SAMPLE_SIZE], "removed_sample": removed[:SAMPLE_SIZE]}


def _created(source: dict) -> str:
    """The manifest's `created`: SOURCE_DATE_EPOCH when set, else the source's own date
    (a word list's mtime, a crawl's newest fetch), else now. Tying it to the source, as
    reproducible builds do, makes the same input give byte-identical files."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        when = dt.datetime.fromtimestamp(int(epoch), dt.timezone.utc)
    elif source.get("date"):
        when = dt.datetime.fromisoformat(source["date"].replace("Z", "+00:00"))
        when = when.astimezone(dt.timezone.utc) if when.tzinfo else when
    else:
        when = dt.datetime.now(dt.timezone.utc)
    return when.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


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


def _json_bytes(obj) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode("utf-8")


def _write_data_files(folder: Path, compiled: Compiled) -> dict[str, str]:
    # Python writes the bytes: marisa's own save() turns a full disk into a bare RuntimeError.
    _write_bytes(folder / WORDS_FILE, marisa_trie.Trie(compiled.words).tobytes())
    items = [(w, r.encode("ascii")) for w, r in compiled.rejected.items()]
    _write_bytes(folder / REJECTED_FILE, marisa_trie.BytesTrie(items).tobytes())
    return {name: sha256_file(folder / name) for name in DATA_FILES}


def _previous(link: Path) -> tuple[dict | None, list[str]]:
    """The manifest and words of the lexicon currently at `link`, if there is a usable one."""
    if not link.exists():
        return None, []
    try:
        manifest = read_manifest(link)
        words = list(marisa_trie.Trie().mmap(str(link / WORDS_FILE)).keys())
    except (LexiconError, Exception):
        return None, []
    return manifest, words


def _swap_link(out: Path, name: str, target: Path) -> None:
    """Point `out/name` at `target` atomically (a real folder there is moved aside first)."""
    link = out / name
    if link.exists() and not link.is_symlink():
        aside = out / BUILDS_DIR / f"{name}-replaced-{os.getpid()}"
        os.rename(link, aside)
    tmp_link = out / f".{name}.link-{os.getpid()}"
    if tmp_link.is_symlink():
        tmp_link.unlink()
    os.symlink(os.path.relpath(target, out), tmp_link)
    os.replace(tmp_link, link)
    _fsync_dir(out)


def _clear_stale(out: Path, name: str) -> None:
    """Remove what builds of `name` killed mid-way left: temp folders and links of dead pids."""
    for path in [*(out / BUILDS_DIR).glob(f".tmp-{name}-*"), *out.glob(f".{name}.link-*")]:
        pid = path.name.rsplit("-", 1)[-1]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            if path.is_symlink() or path.is_file():
                path.unlink(missing_ok=True)
            else:
                shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _prune(builds: Path, name: str, keep: Path) -> None:
    old = sorted((p for p in builds.glob(f"{name}-*") if p.is_dir() and p != keep),
                 key=lambda p: p.stat().st_mtime, reverse=True)
    for path in old[KEEP_BUILDS - 1:]:
        shutil.rmtree(path, ignore_errors=True)


def write_lexicon(compiled: Compiled, out: str | Path, name: str, source: dict,
                  alphabet: Alphabet = TURKISH, force: bool = False) -> BuildResult:
    """Write `compiled` as lexicon `name` under `out`, atomically; refuse a large shrink."""
    out = Path(out)
    builds = out / BUILDS_DIR
    prev_manifest, prev_words = _previous(out / name)
    if prev_manifest and not force:
        prev_count = prev_manifest["counts"]["words"]
        if len(compiled.words) < SHRINK_LIMIT * prev_count:
            raise BuildError(
                f"refusing to replace {name!r}: the new build has {len(compiled.words):,} words, "
                f"under {SHRINK_LIMIT:.0%} of the current {prev_count:,} (a broken crawl?). "
                "Check the source, or pass --force to replace it anyway."
            )
    tmp = None
    try:
        builds.mkdir(parents=True, exist_ok=True)
        _clear_stale(out, name)
        tmp = builds / f".tmp-{name}-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        files = _write_data_files(tmp, compiled)
        digest = hashlib.sha256("".join(files[n] for n in DATA_FILES).encode()).hexdigest()
        version = digest[:12]
        if prev_manifest and prev_manifest.get("sha256") == digest \
                and prev_manifest.get("source") == source:
            shutil.rmtree(tmp, ignore_errors=True)
            return BuildResult(out / name, prev_manifest, diff_words([], []), unchanged=True)
        changes = {"previous_version": prev_manifest and prev_manifest["version"],
                   "version": version, **diff_words(prev_words, compiled.words, alphabet)}
        _write_bytes(tmp / CHANGES_FILE, _json_bytes(changes))
        files[CHANGES_FILE] = sha256_file(tmp / CHANGES_FILE)  # checked on load, not versioned
        manifest = {
            "format": FORMAT, "format_version": FORMAT_VERSION, "name": name,
            "version": version, "created": _created(source),
            "normalization_version": NORMALIZATION_VERSION, "alphabet": alphabet.letters,
            "source": source, "counts": compiled.counts(),
            "files": files, "sha256": digest,
        }
        _write_bytes(tmp / MANIFEST_FILE, _json_bytes(manifest))
        _fsync_dir(tmp)
        final = builds / f"{name}-{version}"
        n = 1
        while final.exists():  # same words, new metadata: never touch a folder in use
            n += 1
            final = builds / f"{name}-{version}-{n}"
        os.rename(tmp, final)
        tmp = None
        _fsync_dir(builds)
        _swap_link(out, name, final)
        _prune(builds, name, final)
        return BuildResult(out / name, manifest, changes)
    except OSError as e:
        raise BuildError(f"could not write lexicon {name!r} under {out}: {e.strerror or e} "
                         f"({e.filename or out}). The previous lexicon is untouched; "
                         "free some space or fix the permissions and build again.") from e
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
