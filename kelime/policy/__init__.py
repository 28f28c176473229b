"""The filter policy: which words the games refuse, and why. Reviewed like code.

The default policy ships with kelime as package data (``policy.toml`` beside this module,
with its curated lists ``blocklist.txt`` and ``allowlist.txt``); ``kelime build --policy
FILE`` reads another one. A list is plain text, one word a line, ``#`` comments; a
blocklist line may name a reason after the word (default ``obscene``): ``orospu`` or
``ayşe proper_name``. A policy that cannot be read fails the build: a build never goes
ahead without the policy it was asked to apply.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

from ..errors import PolicyError
from ..lexicon.format import REASONS

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


def default_policy_path() -> Path:
    """The policy shipped with kelime (package data)."""
    return Path(str(files(__name__) / "policy.toml"))


def _read_list(path: Path) -> list[list[str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PolicyError(f"policy list {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as e:
        raise PolicyError(f"policy list {path} cannot be read ({e})") from None
    rows = (line.split("#", 1)[0].split() for line in text.splitlines())
    return [row for row in rows if row]


def _blocked(path: Path) -> dict[str, str]:
    blocked = {}
    for row in _read_list(path):
        reason = row[1] if len(row) > 1 else "obscene"
        if reason not in REASONS:
            raise PolicyError(f"blocklist word {row[0]!r} in {path} has unknown reason "
                              f"{reason!r}; use one of {', '.join(REASONS)}")
        blocked[row[0]] = reason
    return blocked


def load_policy(path: str | Path | None = None) -> Policy:
    """Read a policy TOML (default: the shipped one) and the lists it names (paths relative
    to the TOML); PolicyError when any of it cannot be read."""
    path = Path(path) if path is not None else default_policy_path()
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PolicyError(f"policy file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as e:
        raise PolicyError(f"policy file {path} cannot be read ({e})") from None
    except tomllib.TOMLDecodeError as e:
        raise PolicyError(f"policy file {path} is not valid TOML: {e}") from None
    if raw.get("version") != POLICY_VERSION:
        raise PolicyError(f"policy file {path} must say version = {POLICY_VERSION}")
    obscene, proper = raw.get("obscene", {}), raw.get("proper_name", {})
    blocked = _blocked(path.parent / obscene["blocklist"]) if obscene.get("blocklist") else {}
    allowed = ([row[0] for row in _read_list(path.parent / obscene["allowlist"])]
               if obscene.get("allowlist") else [])
    return Policy(
        vulgar_tag_ids=frozenset(str(i) for i in obscene.get("tag_ids", [36, 38])),
        vulgar_tag_names=frozenset(obscene.get("tag_names", ["kaba konuşmada", "hakaret yollu"])),
        proper_by_flag=proper.get("ozel_mi", True),
        proper_by_capital=proper.get("capitalised", True),
        blocked=blocked, allowed=allowed, path=path,
    )
