"""The filter policy: which words the games refuse, and why (data/policy.toml).

The policy file is TOML, reviewed like code. Its curated lists are plain text files
beside it, one word a line, `#` comments; a blocklist line may name a reason after
the word (default `obscene`): ``orospu`` or ``ayşe proper_name``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .build import BuildError
from .lexicon import REASONS

POLICY_VERSION = 1


@dataclass
class Policy:
    """Parsed policy: tag ids and names that make a sense vulgar, and the curated lists."""

    vulgar_tag_ids: frozenset[str] = frozenset({"36", "38"})
    vulgar_tag_names: frozenset[str] = frozenset({"kaba konuşmada", "hakaret yollu"})
    proper_by_flag: bool = True
    proper_by_capital: bool = True
    blocked: dict[str, str] = field(default_factory=dict)
    allowed: list[str] = field(default_factory=list)
    path: Path | None = None


def _read_list(path: Path) -> list[list[str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BuildError(f"policy list {path} does not exist") from None
    rows = (line.split("#", 1)[0].split() for line in text.splitlines())
    return [row for row in rows if row]


def load_policy(path: str | Path) -> Policy:
    """Read a policy TOML and the lists it names (paths relative to the TOML)."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BuildError(f"policy file {path} does not exist") from None
    except tomllib.TOMLDecodeError as e:
        raise BuildError(f"policy file {path} is not valid TOML: {e}") from None
    if raw.get("version") != POLICY_VERSION:
        raise BuildError(f"policy file {path} must say version = {POLICY_VERSION}")
    obscene, proper = raw.get("obscene", {}), raw.get("proper_name", {})
    blocked: dict[str, str] = {}
    if obscene.get("blocklist"):
        for row in _read_list(path.parent / obscene["blocklist"]):
            reason = row[1] if len(row) > 1 else "obscene"
            if reason not in REASONS:
                raise BuildError(f"blocklist word {row[0]!r} has unknown reason {reason!r}; "
                                 f"use one of {', '.join(REASONS)}")
            blocked[row[0]] = reason
    allowed = ([row[0] for row in _read_list(path.parent / obscene["allowlist"])]
               if obscene.get("allowlist") else [])
    return Policy(
        vulgar_tag_ids=frozenset(str(i) for i in obscene.get("tag_ids", [36, 38])),
        vulgar_tag_names=frozenset(obscene.get("tag_names", ["kaba konuşmada", "hakaret yollu"])),
        proper_by_flag=proper.get("ozel_mi", True),
        proper_by_capital=proper.get("capitalised", True),
        blocked=blocked, allowed=allowed, path=path,
    )
