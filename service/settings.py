"""The service's configuration: one small frozen object, read from the environment once.

Tests build it directly (``Settings(data=tmp_path)``) and pass it to ``create_app``;
only ``Settings.from_env`` looks at the environment, and it takes the mapping to read.

    >>> Settings.from_env({"KELIME_DATA": "/srv/lexicons", "KELIME_MAX_WORDS": "500"}).max_words
    500
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path

from kelime.anagram import Limits
from kelime.errors import KelimeError
from kelime.reports import MIN_STORE_BYTES, ReportLimits

#: Environment variable → Settings field, for the fields that can be set from outside.
ENV = {
    "KELIME_DATA": "data",
    "KELIME_CACHE": "cache",
    "KELIME_GAMES": "games",
    "KELIME_DEFAULT_LEXICON": "default_lexicon",
    "KELIME_MAX_WORDS": "max_words",
    "KELIME_MAX_WORD_CHARS": "max_word_chars",
    "KELIME_MAX_BODY_BYTES": "max_body_bytes",
    "KELIME_MAX_BUFFERED_BYTES": "max_buffered_bytes",
    "KELIME_MAX_GET_WORDS": "max_get_words",
    "KELIME_MAX_SUGGEST_WORDS": "max_suggest_words",
    "KELIME_MAX_QUERY_BYTES": "max_query_bytes",
    "KELIME_CACHE_MAX_AGE": "cache_max_age",
    "KELIME_MAX_RACK_TILES": "max_rack_tiles",
    "KELIME_MAX_BLANKS": "max_blanks",
    "KELIME_MAX_RESULTS": "max_results",
    "KELIME_DEFAULT_RESULTS": "default_results",
    "KELIME_MAX_PATTERN_LENGTH": "max_pattern_length",
    "KELIME_MAX_EXCLUDE_WORDS": "max_exclude_words",
    "KELIME_SPLIT_BUDGET_MS": "split_budget_ms",
    "KELIME_MAX_TWO_LETTER_TILES": "max_two_letter_tiles",
    "KELIME_MAX_QUEUED_SEARCHES": "max_queued_searches",
    "KELIME_MAX_SEARCH_WAIT_MS": "max_search_wait_ms",
    "KELIME_FORWARDED_ALLOW_IPS": "forwarded_allow_ips",
    "KELIME_ADMIN_TOKEN": "admin_token",
    "KELIME_MAX_HEADER_BYTES": "max_header_bytes",
    "KELIME_HEADER_TIMEOUT": "header_timeout",
    "KELIME_BODY_TIMEOUT": "body_timeout",
    "KELIME_KEEPALIVE_TIMEOUT": "keepalive_timeout",
    "KELIME_MAX_CONNECTIONS": "max_connections",
    "KELIME_ACCESS_LOG": "access_log",
    "KELIME_GZIP_MIN_BYTES": "gzip_min_bytes",
    "KELIME_CORS_ORIGINS": "cors_origins",
    "KELIME_REPORTS": "reports",
    "KELIME_REPORTS_PER_HOUR": "reports_per_hour",
    "KELIME_REPORTS_MAX_BYTES": "reports_max_bytes",
    "KELIME_MAX_NOTE_CHARS": "max_note_chars",
}


#: uvicorn's httptools parser refuses a request target (path + query) over 65,535 bytes with
#: a bare `400 Invalid HTTP request received.` before the app sees it; GET's own query limit
#: stays well under it so that a client growing its batch meets our JSON 413 first.
SERVER_URL_LIMIT = 65_535
MOST = {"KELIME_MAX_QUERY_BYTES": 60 * 1024,
        "KELIME_MAX_RACK_TILES": 31,        # a split packs each tile kind's count in 5 bits
        "KELIME_MAX_BLANKS": 4,             # each blank multiplies the words a search tries
        "KELIME_MAX_TWO_LETTER_TILES": 8,   # 2 ** this many ways to lay them
        "KELIME_SPLIT_BUDGET_MS": 10_000,
        "KELIME_MAX_SEARCH_WAIT_MS": 8_000}
WHY = {"KELIME_MAX_QUERY_BYTES": f"the HTTP server refuses URLs over {SERVER_URL_LIMIT} bytes",
       "KELIME_MAX_RACK_TILES": "a split counts at most 31 tiles of a kind",
       "KELIME_MAX_BLANKS": "every blank multiplies the cost of a search",
       "KELIME_MAX_TWO_LETTER_TILES": "each one doubles the cost of a search",
       "KELIME_SPLIT_BUDGET_MS": "a worker answers nothing else meanwhile",
       "KELIME_MAX_SEARCH_WAIT_MS": "nginx gives a search 10 s (kelime.conf's "
                                    "proxy_read_timeout) and the search needs its share"}
#: The least value of the whole-number variables that may be under 1 or must be more, and
#: why (for those above 1).
LEAST = {"KELIME_CACHE_MAX_AGE": 0, "KELIME_MAX_BLANKS": 0, "KELIME_MAX_TWO_LETTER_TILES": 0,
         "KELIME_REPORTS_MAX_BYTES": MIN_STORE_BYTES}
WHY_LEAST = {"KELIME_REPORTS_MAX_BYTES": "an empty report store alone takes about 40 KB"}


#: An anagram or split body's bytes besides its exclude list: the rack, pattern, names and
#: options, however spaced and escaped (Settings.search_body_bytes).
SEARCH_BODY_BASE = 16 * 1024
#: Settings.held_bytes' room for the one body being parsed (a 395 KiB exclude list of 80,000
#: two-letter words is ~5 MiB of Python objects until it is refused) and allocator slack.
PARSE_BYTES = 32 * 1024 * 1024
#: The shortest KELIME_ADMIN_TOKEN accepted (wrong tokens are also limited: routes/admin.py).
MIN_ADMIN_TOKEN = 16


class SettingsError(KelimeError, ValueError):
    """An environment variable with a value the service cannot use."""


def _check_proxy(proxy: str) -> None:
    """An entry of KELIME_FORWARDED_ALLOW_IPS must be an address, a network or `*`: uvicorn
    would silently take a misspelt one as a name no peer ever has."""
    if proxy == "*":
        return
    try:
        ipaddress.ip_network(proxy, strict=False)
    except ValueError:
        raise SettingsError(f"KELIME_FORWARDED_ALLOW_IPS (--forwarded-allow-ips): {proxy!r} "
                            "is not an IP address or network; name the proxies in front of "
                            "kelime, e.g. 127.0.0.1 (nginx on this host) or 10.0.0.0/8"
                            ) from None


@dataclass(frozen=True)
class Settings:
    data: Path = Path("data")
    cache: Path | None = None
    games: Path | None = None          # a folder of extra game profiles (*.toml)
    default_lexicon: str = "tr"
    max_words: int = 10_000
    max_word_chars: int = 64
    max_body_bytes: int = 4 * 1024 * 1024
    max_buffered_bytes: int = 64 * 1024 * 1024  # request bodies being received, per worker
    max_get_words: int = 1_000           # GET /v1/validate: bigger batches are POSTed
    max_suggest_words: int = 1_000       # POST /v1/validate with "suggest": true (~80 ms)
    max_query_bytes: int = 32 * 1024     # GET /v1/validate's query string; see SERVER_URL_LIMIT
    cache_max_age: int = 300
    max_rack_tiles: int = Limits.rack_tiles          # anagram and split questions (Limits)
    max_blanks: int = Limits.blanks
    max_results: int = Limits.results
    default_results: int = Limits.default_results
    max_pattern_length: int = Limits.pattern_length
    max_exclude_words: int = Limits.exclude_words
    split_budget_ms: int = int(Limits.time_budget * 1000)
    max_two_letter_tiles: int = Limits.two_letter_tiles
    max_queued_searches: int = 256       # anagram/split questions waiting per worker (503 beyond)
    max_search_wait_ms: int = 2_000      # the longest a question waits for its turn (503 beyond)
    forwarded_allow_ips: str = ""        # proxies whose X-Forwarded-For is believed ("": none)
    admin_token: str | None = None       # POST /v1/admin/reload exists only when it is set
    max_header_bytes: int = 64 * 1024    # request line + headers, per request (431 beyond)
    header_timeout: int = 10             # seconds to receive a request's headers
    body_timeout: int = 30               # seconds to receive a request's whole body
    keepalive_timeout: int = 5           # seconds an idle keep-alive connection stays open
    max_connections: int = 1000          # concurrent connections per worker (503 beyond)
    access_log: str = "off"              # "json": one JSON line per request on stderr
    gzip_min_bytes: int = 1400           # replies this big or bigger are gzipped when asked
    cors_origins: str = ""               # comma-separated origins browsers may call from
    reports: Path | None = None          # players' word reports (SQLite); POST /v1/reports
    reports_per_hour: int = ReportLimits.per_client_hour   # a client address's reports an hour
    reports_max_bytes: int = ReportLimits.store_bytes      # the report store's size (413 beyond)
    max_note_chars: int = ReportLimits.note_chars          # a report's note

    @property
    def report_limits(self) -> ReportLimits:
        """The report store's bounds these settings set."""
        return ReportLimits(note_chars=self.max_note_chars,
                            per_client_hour=self.reports_per_hour,
                            store_bytes=self.reports_max_bytes)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from `environ` (default os.environ); unset or empty variables keep defaults."""
        environ = os.environ if environ is None else environ
        types = {f.name: str(f.type) for f in fields(cls)}  # names: annotations are strings
        values = {}
        for var, name in ENV.items():
            raw = environ.get(var, "").strip()
            if raw:
                values[name] = _convert(var, raw, types[name])
        settings = cls(**values)
        if settings.access_log not in ("off", "json"):
            raise SettingsError(f"KELIME_ACCESS_LOG={settings.access_log!r}: use off or json")
        settings = settings.trusting(settings.forwarded_allow_ips)  # each one checked
        token = settings.admin_token
        if token is not None and len(token) < MIN_ADMIN_TOKEN:
            raise SettingsError(f"KELIME_ADMIN_TOKEN has {len(token)} characters: use "
                                f"{MIN_ADMIN_TOKEN} or more (e.g. `openssl rand -hex 32`), so "
                                f"that it cannot be guessed")
        room = settings.max_query_bytes + 4096
        if settings.max_header_bytes < room:
            raise SettingsError(f"KELIME_MAX_HEADER_BYTES={settings.max_header_bytes} leaves no "
                                f"room for a GET of KELIME_MAX_QUERY_BYTES="
                                f"{settings.max_query_bytes} bytes: make it {room} or more")
        return settings

    @property
    def trusted_proxies(self) -> list[str]:
        """The addresses (or networks, or `*`) whose X-Forwarded-For names the client: uvicorn's
        `forwarded_allow_ips`. Empty by default: no peer is believed, each client is its
        connection's address, so nobody can pick the address the reports' rate limit counts."""
        return [part.strip() for part in self.forwarded_allow_ips.split(",") if part.strip()]

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

    def trusting(self, proxies: str) -> Settings:
        """These settings believing the X-Forwarded-For of `proxies` (comma-separated)."""
        trusted = replace(self, forwarded_allow_ips=proxies)
        for proxy in trusted.trusted_proxies:
            _check_proxy(proxy)
        return trusted

    def with_data(self, data: str | Path) -> Settings:
        return replace(self, data=Path(data))

    def with_cache(self, cache: str | Path) -> Settings:
        return replace(self, cache=Path(cache))

    def as_env(self) -> dict[str, str]:
        """The environment that makes `from_env` rebuild these settings (for worker processes)."""
        env = {}
        for var, name in ENV.items():
            value = getattr(self, name)
            if value is not None:
                env[var] = str(Path(value).resolve()) if isinstance(value, Path) else str(value)
        return env


def _convert(var: str, raw: str, kind: str):
    if kind == "int":
        try:
            value = int(raw)
        except ValueError:
            raise SettingsError(f"{var}={raw!r} is not a whole number") from None
        least = LEAST.get(var, 1)
        if value < least:
            raise SettingsError(f"{var}={raw!r} must be {least} or more"
                                + (f" ({WHY_LEAST[var]})" if var in WHY_LEAST else ""))
        if value > MOST.get(var, value):
            raise SettingsError(f"{var}={raw!r} must be {MOST[var]} or less ({WHY[var]})")
        return value
    if "Path" in kind:
        return Path(raw)
    return raw
