"""The filter policy: which words the games refuse, and why. Reviewed like code.

The default policy ships with kelime as package data (``policy.toml`` beside this module,
with its curated lists ``blocklist.txt`` and ``allowlist.txt``); ``kelime build --policy
FILE`` reads another one. A list is plain text, one word a line, ``#`` comments; a
blocklist line may name a reason after the word (default ``obscene``): ``orospu`` or
``ayşe proper_name``. A policy that cannot be read fails the build: a build never goes
ahead without the policy it was asked to apply.

The files are data with a schema, checked line by line and key by key; every error names
the file, the line and the fix. The TOML: ``version = 1``; ``[proper_name]`` ``ozel_mi``
and ``capitalised`` (booleans); ``[obscene]`` ``tag_ids`` (a list of numbers),
``tag_names`` (a list of strings), ``blocklist`` and ``allowlist`` (paths, not empty: leave
the key out for no list); no other key. A list: UTF-8 without a byte order mark (it hid
line 1's word), one game word a line in the build's alphabet (``dulda tutmak`` in the
allowlist allowed ``dulda``), a blocklist word optionally followed by one reason.

Every source goes through the same policy (`apply_policy`): a word list, the offline lists
and the TDK cache alike. A blocklisted word of 3+ letters also refuses its inflected forms
(`götün`, `götler`, `götleri` …): TDK lists none of them as a headword but the derived words
that are themselves obscene (`orospuluk`), and the allowlist keeps any that must stay.

    >>> {"göt", "götün", "götler", "götleri"} <= inflections("göt")
    True
    >>> "kitabı" in inflections("kitap")
    True
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from ..errors import PolicyError
from ..lexicon.compile import Compiled
from ..lexicon.format import REASONS
from ..normalize import KURMANJI, TURKISH, Alphabet, letters_problem, normalize, turkish_sorted

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
    #: TDK's verdict from its tags (`tagged` in the TOML): the words every sense of which it
    #: tags vulgar or insulting, refused from sources that carry no tags.
    tagged: list[str] = field(default_factory=list)
    path: Path | None = None
    label: str = ""          # how a build summary names it when it has no file
    #: Words whose line came from a player report (`kelime reports accept`): the word as
    #: written → {"list", "verdict", "reports", "date", "why"}, for the build's change list.
    reviewed: dict[str, dict[str, Any]] = field(default_factory=dict)


def no_rules_policy() -> Policy:
    """What ``--no-policy`` reads TDK's entries with: no register tag refuses, no name flag
    or capital does (and `apply_policy` is given None: no lists either)."""
    return Policy(vulgar_tag_ids=frozenset(), vulgar_tag_names=frozenset(),
                  proper_by_flag=False, proper_by_capital=False)


def lists_free_policy(language: str | None) -> Policy:
    """The default for a lexicon in another language than Turkish: kelime's lists are
    Turkish (a Kurmanji word may spell a Turkish insult), so only the name rules apply."""
    return Policy(vulgar_tag_ids=frozenset(), vulgar_tag_names=frozenset(),
                  label=f"kelime's default for {language or 'this alphabet'}: name rules, "
                        f"no blocklist or allowlist yet")


def language_policy(language: str | None) -> Policy:
    """The shipped policy for a lexicon in another language than Turkish: Kurmanji has its
    own (``kurmanji.toml``, a reviewed blocklist), any other alphabet `lists_free_policy`."""
    if language != "Kurmanji":
        return lists_free_policy(language)
    policy = load_policy(Path(str(files(__name__) / "kurmanji.toml")), KURMANJI)
    policy.label = "kelime's default for Kurmanji"
    return policy


def default_policy_path() -> Path:
    """The policy shipped with kelime (package data)."""
    return Path(str(files(__name__) / "policy.toml"))


#: The comment `kelime reports accept` writes after a word it adds to a list:
#: ``kitapçık  # report 3, 7 (2026-12-01): TDK lists it as a common noun``.
REVIEW_NOTE = re.compile(r"reports? (?P<ids>\d+(?:, ?\d+)*) \((?P<date>\d{4}-\d{2}-\d{2})\): "
                         r"(?P<why>.*)")


def read_lines(path: Path) -> list[str]:
    """A list file's lines; PolicyError naming the file when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PolicyError(f"policy list {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as e:
        raise PolicyError(f"policy list {path} cannot be read ({e}): save it as UTF-8") from None
    if text.startswith(BOM):
        raise PolicyError(f"{path}:1: the file begins with a byte order mark (U+FEFF), which "
                          "hides line 1's word: save it as UTF-8 without a BOM")
    return text.splitlines()


BOM = "\ufeff"


def _rows(path: Path, most: int, alphabet: Alphabet) -> list[tuple[int, list[str], str]]:
    """(line number, fields, comment) of each line of a list that names a word, each with
    1..`most` fields and a word of `alphabet`'s letters; PolicyError naming the line else."""
    rows = []
    for number, line in enumerate(read_lines(path), 1):
        body, _, comment = line.partition("#")
        fields = body.split()
        if not fields:
            continue
        if len(fields) > most:
            shape = "word" if most == 1 else "word and, optionally, one reason"
            raise PolicyError(f"{path}:{number}: {body.strip()!r} is more than one "
                              f"{shape}: a list names one game word a line (a phrase is "
                              "never a game word); keep the word alone or remove the line")
        problem = letters_problem(normalize(fields[0], alphabet), alphabet)
        if problem is not None:
            raise PolicyError(f"{path}:{number}: {fields[0]!r} is not a game word of the "
                              f"{alphabet.language or 'build'}'s alphabet ({problem}): fix "
                              "the spelling or remove the line")
        rows.append((number, fields, comment.strip()))
    return rows


def parse_review(comment: str) -> dict[str, Any] | None:
    """The reports, date and reason of a list line's REVIEW_NOTE comment, or None."""
    found = REVIEW_NOTE.fullmatch(comment.strip())
    if not found:
        return None
    return {"date": found["date"], "why": found["why"],
            "reports": [int(i) for i in found["ids"].replace(" ", "").split(",")]}


def _blocked(path: Path, reviewed: dict[str, Any], alphabet: Alphabet) -> dict[str, str]:
    blocked = {}
    for number, row, comment in _rows(path, 2, alphabet):
        reason = row[1] if len(row) > 1 else "obscene"
        if reason not in REASONS:
            raise PolicyError(f"{path}:{number}: blocklist word {row[0]!r} has unknown reason "
                              f"{reason!r}; use one of {', '.join(REASONS)}")
        blocked[row[0]] = reason
        review = parse_review(comment)
        if review is not None:
            reviewed[row[0]] = {"list": "blocklist", "verdict": reason, **review}
    return blocked


def _allowed(path: Path, reviewed: dict[str, Any], alphabet: Alphabet) -> list[str]:
    allowed = []
    for _, row, comment in _rows(path, 1, alphabet):
        allowed.append(row[0])
        review = parse_review(comment)
        if review is not None:
            reviewed[row[0]] = {"list": "allowlist", "verdict": "valid", **review}
    return allowed


def read_policy_file(path: str | Path | None = None) -> tuple[Path, dict[str, Any]]:
    """(path, contents) of a policy TOML (default: the shipped one); PolicyError when it
    cannot be read or is of another version."""
    path = Path(path) if path is not None else default_policy_path()
    try:
        text = path.read_text(encoding="utf-8")
        if text.startswith(BOM):
            raise PolicyError(f"{path}:1: the file begins with a byte order mark (U+FEFF): "
                              "save it as UTF-8 without a BOM")
        raw = tomllib.loads(text)
    except FileNotFoundError:
        raise PolicyError(f"policy file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as e:
        raise PolicyError(f"policy file {path} cannot be read ({e})") from None
    except tomllib.TOMLDecodeError as e:
        raise PolicyError(f"policy file {path} is not valid TOML: {e}") from None
    if raw.get("version") != POLICY_VERSION:
        raise PolicyError(f"policy file {path} must say version = {POLICY_VERSION}")
    check_schema(path, raw, text)
    return path, raw


#: Every key a policy TOML may have: table → key → (check, what it must be).
def _bool(v: object) -> bool:
    return isinstance(v, bool)


def _path(v: object) -> bool:
    return isinstance(v, str) and bool(v.strip())


def _ids(v: object) -> bool:
    return isinstance(v, list) and all(
        (isinstance(i, int) and not isinstance(i, bool) and i >= 0)
        or (isinstance(i, str) and i.isascii() and i.isdigit()) for i in v)


def _names(v: object) -> bool:
    return isinstance(v, list) and all(isinstance(n, str) and n.strip() for n in v)


SCHEMA = {
    "proper_name": {"ozel_mi": (_bool, "true or false (a TOML boolean, unquoted)"),
                    "capitalised": (_bool, "true or false (a TOML boolean, unquoted)")},
    "obscene": {"tag_ids": (_ids, "a list of TDK tag numbers, e.g. [36, 38]"),
                "tag_names": (_names, 'a list of tag names, e.g. ["kaba konuşmada"]'),
                "blocklist": (_path, 'the path of a list file, e.g. "blocklist.txt" (leave '
                                     "the key out for no blocklist)"),
                "allowlist": (_path, 'the path of a list file, e.g. "allowlist.txt" (leave '
                                     "the key out for no allowlist)"),
                "tagged": (_path, 'the path of a list file, e.g. "tdk-vulgar.txt" (leave '
                                  "the key out for no list)")},
}


def check_schema(path: Path, raw: dict[str, Any], text: str) -> None:
    """Every table and key of a policy TOML known and of its type (`SCHEMA`); PolicyError
    naming the file, the line and the fix: ``ozel_mi = "no"`` read as true, ``blocklist =
    ""`` dropped the blocklist."""
    for table, keys in raw.items():
        if table == "version":
            continue
        if table not in SCHEMA or not isinstance(keys, dict):
            raise PolicyError(f"{path}:{_line(text, None, table)}: unknown key {table!r}: a "
                              f"policy has version, {', '.join(f'[{t}]' for t in SCHEMA)}")
        for key, value in keys.items():
            if key not in SCHEMA[table]:
                raise PolicyError(f"{path}:{_line(text, table, key)}: unknown key "
                                  f"{table}.{key}: [{table}] takes "
                                  f"{', '.join(SCHEMA[table])}")
            valid, must = SCHEMA[table][key]
            if not valid(value):
                raise PolicyError(f"{path}:{_line(text, table, key)}: {table}.{key} = "
                                  f"{_toml(value)} must be {must}")


def _line(text: str, table: str | None, key: str) -> int:
    """The line where `key` is set in [table] (None: at the top, or the table itself)."""
    current = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("["):
            current = stripped.strip("[] ").split(".")[0]
            if table is None and current == key:
                return number
        elif current == table and re.match(rf'"?{re.escape(key)}"?\s*=', stripped):
            return number
    return 1


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def load_policy(path: str | Path | None = None, alphabet: Alphabet = TURKISH) -> Policy:
    """Read a policy TOML (default: the shipped one) and the lists it names (paths relative
    to the TOML, words of `alphabet`); PolicyError when any of it cannot be read or breaks
    the schema (see the module doc)."""
    path, raw = read_policy_file(path)
    obscene, proper = raw.get("obscene", {}), raw.get("proper_name", {})
    reviewed: dict[str, dict[str, Any]] = {}
    blocked = (_blocked(path.parent / obscene["blocklist"], reviewed, alphabet)
               if "blocklist" in obscene else {})
    allowed = (_allowed(path.parent / obscene["allowlist"], reviewed, alphabet)
               if "allowlist" in obscene else [])
    tagged = (_allowed(path.parent / obscene["tagged"], {}, alphabet)
              if "tagged" in obscene else [])
    return Policy(
        vulgar_tag_ids=frozenset(str(i) for i in obscene.get("tag_ids", [36, 38])),
        vulgar_tag_names=frozenset(obscene.get("tag_names", ["kaba konuşmada", "hakaret yollu"])),
        proper_by_flag=proper.get("ozel_mi", True),
        proper_by_capital=proper.get("capitalised", True),
        blocked=blocked, allowed=allowed, tagged=tagged, path=path, reviewed=reviewed,
    )


#: Endings that inflect a noun (case, possessive, plural, copula, with) or derive one of the
#: same sense (-lık, -cı), every vowel-harmony variant: enough to match what a word list or
#: a player writes, cheap to test (a set of forms per blocked word).
ENDINGS = ("ı", "i", "u", "ü", "a", "e", "ya", "ye", "yı", "yi", "yu", "yü", "da", "de", "ta",
           "te", "dan", "den", "tan", "ten", "ın", "in", "un", "ün", "nın", "nin", "nun", "nün",
           "la", "le", "yla", "yle", "ca", "ce", "ım", "im", "um", "üm", "ımız", "imiz", "umuz",
           "ümüz", "ınız", "iniz", "unuz", "ünüz", "sı", "si", "su", "sü", "lar", "ler", "ları",
           "leri", "lara", "lere", "larda", "lerde", "lardan", "lerden", "ların", "lerin",
           "larla", "lerle", "larım", "lerim", "sın", "sin", "sun", "sün", "dır", "dir", "dur",
           "dür", "tır", "tir", "tur", "tür", "cı", "ci", "cu", "cü", "çı", "çi", "çu", "çü",
           "lık", "lik", "luk", "lük")
SECOND = ("ı", "i", "a", "e", "da", "de", "dan", "den", "ın", "in", "la", "le")
_SOFTENED = {"p": "b", "ç": "c", "t": "d", "k": "ğ"}
INFLECTED_FROM = 3  # letters: `am` would refuse ama, amaç …


@lru_cache(maxsize=4096)
def inflections(word: str) -> frozenset[str]:
    """`word` and its inflected forms (one or two endings; a final p ç t k softened before a
    vowel, as in kitap → kitabı)."""
    stems = {word}
    if word[-1:] in _SOFTENED:
        stems.add(word[:-1] + _SOFTENED[word[-1]])
    forms = {word}
    for stem in stems:
        for ending in ENDINGS:
            if stem != word and ending[0] not in "aeıioöuü":
                continue  # the softened stem only before a vowel
            forms.add(stem + ending)
            if ending in ("lar", "ler", "ım", "im", "ın", "in"):
                forms.update(stem + ending + second for second in SECOND)
    return frozenset(forms)


def apply_policy(compiled: Compiled, policy: Policy | None,
                 alphabet: Alphabet = TURKISH, tags_read: bool = False
                 ) -> tuple[Compiled, dict[str, Any]]:
    """The curated lists over what the sources gave: the blocklist refuses its words and their
    inflected forms, the allowlist accepts (over everything but the blocklist's own words).
    Unless the source's TDK tags were read (`tags_read`: a crawl cache), the `tagged` list
    refuses TDK's vulgar words as the tags would: the offline lists and word lists carry no
    tags, and kept dasnik, teres, luti, veledizina valid. Returns the result and what the
    policy changed, for the build summary and manifest; `policy` None (``--no-policy``)
    changes nothing and says so."""
    if policy is None:
        return compiled, {"applied": False}
    words, rejected = set(compiled.words), dict(compiled.rejected)
    allowed = {normalize(raw, alphabet) for raw in policy.allowed}
    tagged = 0
    for word in [] if tags_read else (normalize(raw, alphabet) for raw in policy.tagged):
        if word in words and word not in allowed:
            words.discard(word)
            rejected[word] = "obscene"
            tagged += 1
    blocked: dict[str, str] = {}
    inflected: dict[str, str] = {}
    for raw, reason in policy.blocked.items():
        word = normalize(raw, alphabet)
        blocked[word] = reason
        if reason == "obscene" and len(word) >= INFLECTED_FROM:
            for form in inflections(word):
                inflected.setdefault(form, reason)
    allowed = {w for w in allowed if letters_problem(w, alphabet) is None}
    refused = {**{w: r for w, r in inflected.items() if w in words or w in rejected}, **blocked}
    counts = {"blocked": 0, "inflected": 0, "allowed": 0}
    for word in allowed - set(blocked):
        counts["allowed"] += word not in words
        words.add(word)
        rejected.pop(word, None)
    for word, reason in refused.items():
        if word in allowed and word not in blocked:
            continue
        if word in words or word in rejected and rejected[word] != reason:
            counts["blocked" if word in blocked else "inflected"] += 1  # the policy decided
        words.discard(word)
        rejected[word] = reason
    shipped = policy.path == default_policy_path()
    name = policy.label or ("kelime's default" if shipped or policy.path is None
                            else str(policy.path))
    report = {"applied": True, "policy": name,
              "version": POLICY_VERSION, **counts, **({"tagged": tagged} if tagged else {})}
    return Compiled(turkish_sorted(words, alphabet), dict(sorted(rejected.items()))), report
