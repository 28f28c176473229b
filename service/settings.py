"""The service's configuration: one frozen, typed pydantic model, every bound beside its
field and checked wherever a Settings is made.

Tests build it directly (``Settings(data=tmp_path)``) and pass it to ``create_app``: a
Settings made in code is exactly what it is given, never the ambient environment. Only
``Settings.from_env`` reads variables (``KELIME_`` + the field's name in capitals), from
the mapping it is given (default: os.environ), so a worker, a test and a round trip
through `as_env` all read the same way.

    >>> Settings.from_env({"KELIME_DATA": "/srv/lexicons", "KELIME_MAX_WORDS": "500"}).max_words
    500
    >>> Settings(max_blanks=0).limits.blanks
    0
    >>> Settings(max_blanks=9)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    kelime.service.settings.SettingsError: KELIME_MAX_BLANKS=9 must be 4 or less (every ...

docs/settings.md's table is `markdown_table()` of these fields (tests/test_docs.py checks
it); print it with ``python -m kelime.service.settings``.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.fields import FieldInfo

from kelime.anagram import Limits
from kelime.errors import KelimeError
from kelime.lexicon.pins import KEEP_VERSIONS
from kelime.lexicon.write import KEEP_BUILDS
from kelime.reports import MIN_STORE_BYTES, ReportLimits, is_url

#: The prefix of every variable: a field `max_words` is read from KELIME_MAX_WORDS.
PREFIX = "KELIME_"
#: uvicorn's httptools parser refuses a request target (path + query) over 65,535 bytes with
#: a bare `400 Invalid HTTP request received.` before the app sees it; GET's own query limit
#: stays well under it so that a client growing its batch meets our JSON 413 first.
SERVER_URL_LIMIT = 65_535
#: An anagram or split body's bytes besides its exclude list: the rack, pattern, names and
#: options, however spaced and escaped (Settings.search_body_bytes).
SEARCH_BODY_BASE = 16 * 1024
#: Settings.held_bytes' room for the one body being parsed (a 395 KiB exclude list of 80,000
#: two-letter words is ~5 MiB of Python objects until it is refused) and allocator slack.
PARSE_BYTES = 32 * 1024 * 1024
#: The shortest KELIME_ADMIN_TOKEN accepted (wrong tokens are also limited: routes/admin.py).
MIN_ADMIN_TOKEN = 16
#: Variables of older kelimes that are no setting any more, and why (`kelime serve` says so).
RETIRED = {
    "KELIME_MAX_HEADER_BYTES": "nginx bounds headers (large_client_header_buffers in "
                               "deploy/nginx/kelime.conf)",
    "KELIME_HEADER_TIMEOUT": "nginx bounds the time to send headers (client_header_timeout)",
    "KELIME_GZIP_MIN_BYTES": "replicas send replies uncompressed (on loopback or a LAN it "
                             "costs more than it saves); nginx gzips them at the edge",
}


class SettingsError(KelimeError, ValueError):
    """A setting with a value the service cannot use; the message names the variable, the
    value, what is allowed and how to fix it."""


def number(default: int, what: str, *, least: int = 1, most: int | None = None,
           why: str | None = None) -> Any:
    """A whole-number setting from `least` (1 unless said) to `most` (none unless said);
    `why` is the reason of `most`, or of `least` when there is no `most` (shown when a
    value breaks that bound)."""
    bound = "le" if most is not None else "ge"
    return Field(default, ge=least, le=most, description=what,
                 json_schema_extra={f"why_{bound}": why} if why else None)


def env_var(name: str) -> str:
    """The environment variable of the field `name`."""
    return PREFIX + name.upper()


class Settings(BaseModel):
    """Every setting of `kelime serve`, its default, its bounds and what it is for (the
    `description` is docs/settings.md's "what" column)."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)

    data: Path = Field(Path("data"), description="the folder of lexicons (`--data`)")
    cache: Path | None = Field(None, description=(
        "the TDK crawl cache (`tdk.sqlite`), for TDK's entries in `GET /v1/words/{word}` and "
        "for `kelime crawl`, `define`, `build --cache`"))
    games: Path | None = Field(None, description=(
        "a folder of extra game profiles (`*.toml`), added to or replacing the shipped ones"))
    default_lexicon: str = Field("tr", description=(
        "the lexicon a question without `lexicon` (or a game of its own) asks"))
    max_words: int = number(10_000, "words in one `POST /v1/validate` (413 beyond)")
    max_word_chars: int = number(64, "characters of one word (413 beyond)")
    max_body_bytes: int = number(4 * 1024 * 1024, "a request body (413 beyond)")
    max_buffered_bytes: int = number(64 * 1024 * 1024, (
        "the bodies being received at once, per worker (503 `busy` beyond)"))
    max_get_words: int = number(1_000, (
        "words in one `GET /v1/validate` (POST bigger batches)"))
    max_suggest_words: int = number(1_000, (
        'words in one `POST /v1/validate` with `"suggest": true` (413 beyond; about 80 ms '
        "of a worker at the limit)"))
    max_query_bytes: int = number(
        32 * 1024, f"`GET /v1/validate`'s query string; the HTTP server refuses URLs over "
        f"{SERVER_URL_LIMIT:,} bytes", most=60 * 1024,
        why=f"the HTTP server refuses URLs over {SERVER_URL_LIMIT} bytes")
    cache_max_age: int = number(0, (
        "seconds a shared cache may keep the reply of a cacheable GET that names no version "
        "(`Cache-Control: max-age`); 0: `no-cache`, revalidated every time (an ETag: a 304 "
        "while the version is the same), so no cache answers from an old build after a "
        "rollout. A GET naming `lexicon=name@version` is immutable"), least=0)
    keep_versions: int = number(KEEP_VERSIONS, (
        "builds of each lexicon held: the current one and those before it, so that a game "
        "that pinned `name@version` keeps its verdicts through a rollout"), most=KEEP_BUILDS,
        why=f"`kelime build` keeps the last {KEEP_BUILDS} builds of a lexicon: a replica "
            "started later could not hold more, and pinned games would flap between replicas")
    max_rack_tiles: int = number(Limits.rack_tiles, "tiles in an anagram or split rack",
                                 most=31, why="a split counts at most 31 tiles of a kind")
    max_blanks: int = number(Limits.blanks, (
        "blanks in one rack (and never more than the game has)"), least=0, most=4,
        why="every blank multiplies the cost of a search")
    max_two_letter_tiles: int = number(Limits.two_letter_tiles, (
        "two-letter tiles (`[lm]`) in one rack: each doubles the cost of a search"),
        least=0, most=8, why="each one doubles the cost of a search")
    max_results: int = number(Limits.results, "the largest `limit` an anagram question may ask")
    default_results: int = number(Limits.default_results, "`limit` when the question names none")
    max_pattern_length: int = number(Limits.pattern_length,
                                     "squares in a `pattern` (a board row)")
    max_exclude_words: int = number(Limits.exclude_words, "words in `exclude`")
    split_budget_ms: int = number(int(Limits.time_budget * 1000), (
        "how long a split searches before answering its best so far"), most=10_000,
        why="a worker answers nothing else meanwhile")
    max_queued_searches: int = number(256, (
        "searches (anagram, split and moves questions) waiting per worker (503 `busy` "
        "beyond)"))
    max_search_wait_ms: int = number(2_000, (
        "the longest a question waits for its turn (503 `busy` beyond)"), most=8_000,
        why="nginx gives a search 10 s (kelime.conf's proxy_read_timeout) and the search "
            "needs its share")
    forwarded_allow_ips: str = Field("", description=(
        "the proxies whose `X-Forwarded-For` names the client (addresses or networks, "
        "comma-separated; `--forwarded-allow-ips`)"))
    admin_token: str | None = Field(None, min_length=MIN_ADMIN_TOKEN, description=(
        f"turns on `POST /v1/admin/reload`; {MIN_ADMIN_TOKEN} characters or more"))
    body_timeout: int = number(30, "seconds to receive a request's body (408 beyond)")
    worker_timeout: int = number(10, (
        "seconds a worker may miss its heartbeat (hung, stopped) before it is killed and "
        "replaced; a stopping worker gets twice as long to finish its requests"), most=600,
        why="a hung worker holds its share of the requests meanwhile")
    keepalive_timeout: int = number(5, "seconds an idle keep-alive connection stays open")
    max_connections: int = number(1000, (
        "connections and requests under way per worker (uvicorn's `limit_concurrency`: a "
        "plain-text 503 beyond)"))
    access_log: Literal["off", "json"] = Field("off", description=(
        "`json`: one JSON line a request on standard error"))
    cors_origins: str = Field("", description=(
        "comma-separated origins browsers may call from; CORS is off without it"))
    reports: Path | str | None = Field(None, description=(
        "the players' report store (`--reports`): a SQLite file, or a PostgreSQL URL "
        "(`postgresql://USER@HOST/DB`) every replica writes to; `POST /v1/reports` exists "
        "only with it"))
    reports_per_hour: int = number(ReportLimits.per_client_hour, (
        "reports a client address (an IPv6 /64) may send an hour (429 beyond)"))
    reports_max_bytes: int = number(ReportLimits.store_bytes, (
        "the report store's size (413 beyond)"), least=MIN_STORE_BYTES,
        why="an empty report store alone takes about 40 KB, and it needs room for reports")
    max_note_chars: int = number(ReportLimits.note_chars, "characters of a report's note")

    def __init__(self, **values: Any) -> None:
        """Settings of these `values` and the defaults, each checked: SettingsError (one
        line a problem, naming the variable) instead of pydantic's ValidationError."""
        try:
            super().__init__(**values)
        except ValidationError as e:
            raise SettingsError("; ".join(map(_explain, e.errors()))) from None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from `environ` (default os.environ); unset or empty variables keep defaults."""
        environ = os.environ if environ is None else environ
        given = {name: raw.strip() for name in cls.model_fields
                 if (raw := environ.get(env_var(name), "")).strip()}
        return cls(**given)

    @field_validator("forwarded_allow_ips")
    @classmethod
    def _proxies(cls, value: str) -> str:
        """Each entry must be an address, a network or `*`: uvicorn would silently take a
        misspelt one as a name no peer ever has."""
        for proxy in _parts(value):
            if proxy == "*":
                continue
            try:
                ipaddress.ip_network(proxy, strict=False)
            except ValueError:
                raise SettingsError(
                    f"{env_var('forwarded_allow_ips')} (--forwarded-allow-ips): {proxy!r} is "
                    "not an IP address or network; name the proxies in front of kelime, e.g. "
                    "127.0.0.1 (nginx on this host) or 10.0.0.0/8") from None
        return value

    @field_validator("reports", mode="before")
    @classmethod
    def _store(cls, value: Any) -> Any:
        """A PostgreSQL URL stays the string it is (a path would fold its `//`); anything
        else names a SQLite file."""
        if isinstance(value, str) and not is_url(value):
            return Path(value) if value else None
        return value

    @field_validator("cors_origins")
    @classmethod
    def _origins(cls, value: str) -> str:
        """Each entry must be an origin as a browser sends it (`scheme://host[:port]`) or
        `*`: CORS compares them as strings, so `oyun.example` or `https://oyun.example/`
        would silently match no browser, and the game's page fail with no error here."""
        for origin in _parts(value):
            if origin == "*":
                continue
            parts = urlsplit(origin)
            if not (parts.scheme and parts.netloc) or parts.path or parts.query \
                    or parts.fragment or "?" in origin or "#" in origin:
                raise SettingsError(
                    f"{env_var('cors_origins')}: {origin!r} is not an origin as a browser "
                    "sends it: write scheme://host[:port], with no path or trailing slash, "
                    "e.g. https://oyun.example")
        return value

    @property
    def report_limits(self) -> ReportLimits:
        """The report store's bounds these settings set."""
        return ReportLimits(note_chars=self.max_note_chars,
                            per_client_hour=self.reports_per_hour,
                            store_bytes=self.reports_max_bytes)

    @property
    def trusted_proxies(self) -> list[str]:
        """The addresses (or networks, or `*`) whose X-Forwarded-For names the client: uvicorn's
        `forwarded_allow_ips`. Empty by default: no peer is believed, each client is its
        connection's address, so nobody can pick the address the reports' rate limit counts."""
        return _parts(self.forwarded_allow_ips)

    @property
    def search_body_bytes(self) -> int:
        """The bytes an anagram or split body may take: everything it can legitimately carry
        (a rack, a pattern, names and options, and `max_exclude_words` words of
        `max_word_chars` characters, each one \\u-escaped as Python's json.dumps writes them),
        never more than max_body_bytes: 395 KiB by default, not validate's 4 MiB."""
        most = SEARCH_BODY_BASE + self.max_exclude_words * (6 * self.max_word_chars + 4)
        return min(self.max_body_bytes, most)

    @property
    def held_bytes(self) -> int:
        """The most a worker holds for requests over its idle size (its documented memory
        ceiling, ~160 MiB by default): the bodies still arriving (max_buffered_bytes), the
        questions waiting for a search (max_queued_searches, each parsed and checked, at
        most ~4 bytes a character of max_exclude_words words: 251 KiB), and PARSE_BYTES
        for the body being parsed and the allocator's slack."""
        question = 1024 + 4 * self.max_exclude_words * self.max_word_chars
        return self.max_buffered_bytes + self.max_queued_searches * question + PARSE_BYTES

    @property
    def limits(self) -> Limits:
        """The anagram and split limits these settings set."""
        return Limits(rack_tiles=self.max_rack_tiles, blanks=self.max_blanks,
                      results=self.max_results,
                      default_results=min(self.default_results, self.max_results),
                      pattern_length=self.max_pattern_length,
                      exclude_words=self.max_exclude_words,
                      two_letter_tiles=self.max_two_letter_tiles,
                      time_budget=self.split_budget_ms / 1000)

    def changed(self, **values: Any) -> Settings:
        """These settings with `values` changed, all checked again (pydantic's model_copy
        would check nothing)."""
        return type(self)(**{**self.model_dump(), **values})

    def trusting(self, proxies: str) -> Settings:
        """These settings believing the X-Forwarded-For of `proxies` (comma-separated)."""
        return self.changed(forwarded_allow_ips=proxies)

    def with_data(self, data: str | Path) -> Settings:
        return self.changed(data=Path(data))

    def with_cache(self, cache: str | Path) -> Settings:
        return self.changed(cache=Path(cache))

    def as_env(self) -> dict[str, str]:
        """The environment that makes `from_env` rebuild these settings (for worker processes)."""
        env = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value is not None:
                env[env_var(name)] = (str(Path(value).resolve()) if isinstance(value, Path)
                                      else str(value))
        return env


#: Environment variable → Settings field, for every field.
ENV = {env_var(name): name for name in Settings.model_fields}


def uvicorn_options(settings: Settings) -> dict:
    """uvicorn.Config's options (X-Forwarded-For is not uvicorn's to believe: `trust.py`)."""
    return {"loop": "uvloop", "http": "httptools", "ws": "none", "lifespan": "on",
            "proxy_headers": False, "server_header": False, "access_log": False,
            "timeout_keep_alive": settings.keepalive_timeout,
            "limit_concurrency": settings.max_connections,
            "timeout_graceful_shutdown": 2 * settings.worker_timeout - 1}


def misspelt(environ: Mapping[str, str]) -> dict[str, str]:
    """KELIME_* variables that are no setting but nearly spell one (KELIME_MAX_WORD →
    KELIME_MAX_WORDS): a typo is otherwise ignored in silence, its limit left at the
    default. Only near misses: kelime's other variables (KELIME_TDK_BASE_URL…) are none.

    >>> misspelt({"KELIME_ADMINTOKEN": "x", "KELIME_TDK_BASE_URL": "x", "HOME": "/"})
    {'KELIME_ADMINTOKEN': 'KELIME_ADMIN_TOKEN'}
    """
    from difflib import get_close_matches

    return {name: close[0] for name in environ if name.startswith(PREFIX) and name not in ENV
            and (close := get_close_matches(name, list(ENV), n=1, cutoff=0.9))}


def retired(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of `environ` that are settings no more, and why (RETIRED)."""
    return {name: why for name, why in RETIRED.items() if environ.get(name, "").strip()}


def _parts(listed: str) -> list[str]:
    return [part.strip() for part in listed.split(",") if part.strip()]


def _explain(error: Mapping[str, Any]) -> str:
    """One of pydantic's errors in words a person can act on, naming the variable."""
    ours = error.get("ctx", {}).get("error")  # a ValueError a validator raised (pydantic's
    if isinstance(ours, SettingsError):       # `value_error`): our message, already complete
        return str(ours)
    name = str(error["loc"][0]) if error["loc"] else ""
    if error["type"] == "extra_forbidden":
        return (f"Settings has no setting {name!r}: the settings are "
                f"{', '.join(Settings.model_fields)}")
    var, raw, ctx = env_var(name), error["input"], error.get("ctx", {})
    field = Settings.model_fields[name]
    if error["type"] in ("int_parsing", "int_type", "int_from_float"):
        return f"{var}={raw!r} is not a whole number"
    if error["type"] == "greater_than_equal":
        return f"{var}={raw!r} must be {ctx['ge']} or more" + _why(field, "ge")
    if error["type"] == "less_than_equal":
        return f"{var}={raw!r} must be {ctx['le']} or less" + _why(field, "le")
    if error["type"] == "literal_error":
        return f"{var}={raw!r}: use {ctx['expected'].replace(chr(39), '')}"
    if error["type"] == "string_too_short":
        return (f"{var} has {len(raw)} characters: use {ctx['min_length']} or more (e.g. "
                "`openssl rand -hex 32`), so that it cannot be guessed")
    return f"{var}={raw!r}: {error['msg']}"


def _why(field: FieldInfo, bound: str) -> str:
    """The reason of the field's bound `bound` (ge, le), in brackets, if it has one."""
    extra = field.json_schema_extra
    why = extra.get(f"why_{bound}") if isinstance(extra, dict) else None
    return f" ({why})" if why else ""


# --- docs/settings.md's table ----------------------------------------------------------------

def _size(value: int, name: str) -> str:
    """4194304 bytes as "4 MiB"; other numbers with thousands separators."""
    if name.endswith("_bytes"):
        for unit, size in (("MiB", 1024 * 1024), ("KiB", 1024)):
            if value >= size and value % size == 0:
                return f"{value // size} {unit}"
    return f"{value:,}"


def _default(name: str, field: FieldInfo) -> str:
    """The table's default column: the default, and the bounds other than "1 or more"."""
    value = field.default
    if value is None or value == "":
        return "none"
    if not isinstance(value, int):
        return f"`{value}`"
    least = next((m.ge for m in field.metadata if hasattr(m, "ge")), 1)
    most = next((m.le for m in field.metadata if hasattr(m, "le")), None)
    shown = _size(value, name)
    if most is not None and least != 1:
        return f"{shown} ({least} to {_size(most, name)})"
    if most is not None:
        return f"{shown} (at most {_size(most, name)})"
    if least == 0:
        return f"{shown} (0 or more)"
    if least != 1:
        return f"{shown} (at least {_size(least, name)})"
    return shown


def markdown_table() -> str:
    """docs/settings.md's table of every setting, made from the fields."""
    rows = ["| variable | default | what |", "|---|---|---|"]
    rows += [f"| `{env_var(name)}` | {_default(name, field)} | {field.description} |"
             for name, field in Settings.model_fields.items()]
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(markdown_table(), end="")
