"""POST /v1/reports: a player says a word's verdict is wrong; stored for the maintainers.

Exists only when KELIME_REPORTS names a report store (kelime.reports): without it the
path is not routed (404). The store is a SQLite file, which this server's workers write
(and the maintainers' `kelime reports`): behind a load balancer every report then goes to
one replica (the shipped nginx configuration routes /v1/reports to the first one), so
reports never scatter; or a PostgreSQL database (a postgresql:// URL, kelime.reports_pg)
every replica writes to, so that no replica is the writer.

Each report answers 202 with its id, its count and the word's current verdict (a game
client can say at once "already valid"). A duplicate of an open report raises its count.
A client address sends at most KELIME_REPORTS_PER_HOUR reports an hour (429 with
Retry-After); at KELIME_REPORTS_MAX_BYTES the store takes no more until a maintainer
closes reports (413 with Retry-After). A plain Starlette route like validate's, described
by `openapi` below.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import anyio
from starlette.requests import Request
from starlette.responses import Response

from kelime.anagram.query import plays
from kelime.reports import (
    DEFAULT_LIMITS,
    BaseReportStore,
    RateLimited,
    ReportError,
    ReportLimits,
    ReportStore,
    StoreFull,
    is_url,
    refused_ranges,
)

from ..body import read_body
from ..errors import Invalid, TooLarge, TooMany, Unavailable, client_address
from ..models import ReportAsk, parse_report
from ..parse import refuse_query
from ..responses import JSON, json_response
from .validate import NamedRoute

PATH = "/v1/reports"
#: Verdicts no game can change: a report of them is noise (a phrase, digits, emoji).
NOT_A_WORD = ("invalid_chars", "phrase")
log = logging.getLogger("kelime.reports")
BUSY_TIMEOUT = 2.0  # seconds a report waits for another process's write to the store
FULL_RETRY = 3600  # Retry-After of a full store: the maintainers' review takes a while


#: A report is a word and a note of KELIME_MAX_NOTE_CHARS (500), 7 KB at most even with
#: every character \u-escaped: a bigger body is no report. (nginx's site says 16k too:
#: raise both with KELIME_MAX_NOTE_CHARS.)
REPORT_BODY_BYTES = 16 * 1024
MAX_WAITING = 64  # reports waiting for the store per worker (503 beyond)


def body_limit(settings) -> int:
    """The bytes a report's body may take: 16 KiB, or more for notes made longer."""
    most = 12 * (settings.max_note_chars + settings.max_word_chars) + 1024
    return min(settings.max_body_bytes, max(REPORT_BODY_BYTES, most))


def open_store(target: Path | str, *, create: bool = False,
               limits: ReportLimits | None = DEFAULT_LIMITS, timeout: float = BUSY_TIMEOUT,
               shared: bool = False) -> BaseReportStore:
    """The report store `target` names: the PostgreSQL database of a postgresql:// URL
    (psycopg, the [postgres] extra, imported only then), or a SQLite file."""
    if is_url(target):
        try:
            from kelime.reports_pg import PgReportStore
        except ModuleNotFoundError as e:
            raise ReportError(f"a report store on PostgreSQL needs psycopg ({e}): pip install "
                              "'kelime[postgres]'") from None
        return PgReportStore(str(target), create=create, limits=limits, timeout=timeout)
    return ReportStore(target, create=create, limits=limits, timeout=timeout, shared=shared)


class Writes:
    """A worker's report store, kept open (opening one costs ~2 ms) and written by one
    thread at a time; at most MAX_WAITING reports wait for it. A store locked by another
    process never takes the threads the other routes (anagram searches) run on, nor lets
    waiting requests pile up. After a write fails (the store locked too long, unwritable,
    PostgreSQL unreachable) a SQLite store is opened anew on the next report (PostgreSQL's
    pool reconnects by itself), and the reports waiting, and those of the next RESTING
    seconds, are refused at once (503) instead of each waiting in turn."""

    RESTING = 2.0

    def __init__(self, settings):
        self.settings, self.store = settings, None  # (a BaseReportStore once opened)
        self.limiter, self.waiting, self.failed_at = anyio.CapacityLimiter(1), 0, None

    def _resting(self) -> bool:
        return self.failed_at is not None and time.monotonic() - self.failed_at < self.RESTING

    def _submit(self, report: dict):
        """`ReportStore.submit` on the open store (in a worker thread, one at a time),
        opened (and created) first when there is none or the file was moved aside."""
        if self.store is not None and self.store.moved():
            self.store.close()
            self.store = None
        if self.store is None:
            self.store = open_store(self.settings.reports, create=True,
                                    limits=self.settings.report_limits, shared=True,
                                    timeout=BUSY_TIMEOUT)
        try:
            return self.store.submit(**report)
        except ReportError:
            if self.store.reopen_after_error:  # (PostgreSQL's pool reconnects by itself)
                self.store.close()
                self.store = None
            raise

    async def submit(self, **report):
        if self.waiting >= MAX_WAITING:
            raise Unavailable("busy", f"{self.waiting} reports are already waiting to be "
                              "stored here; send it again in a moment",
                              headers={"Retry-After": "5"})
        self.waiting += 1
        try:
            async with self.limiter:
                if self._resting():
                    raise ReportError("the store failed a moment ago")
                try:
                    return await anyio.to_thread.run_sync(self._submit, report)
                except ReportError:
                    self.failed_at = time.monotonic()
                    raise
        finally:
            self.waiting -= 1


def writes(request: Request) -> Writes:
    state = request.app.state
    if getattr(state, "report_writes", None) is None:
        state.report_writes = Writes(state.kelime.settings)
    return state.report_writes


async def report_post(request: Request) -> Response:
    """Report a word whose verdict a player disputes; 202 with the report's id, its count
    and the word's current verdict."""
    kelime = request.app.state.kelime
    settings = kelime.settings
    refuse_query(request.scope)
    body = await read_body(request, body_limit(settings), json_type_required=True,
                           advice="a report is one word and a short note")
    ask = parse_report(body, settings)
    lex, game = kelime.played(ask.lexicon, ask.game)
    plays(game, lex.alphabet)  # a game not of the lexicon's letters: 409, as in anagram
    verdict = lex.check(ask.word, game.min_length).as_dict()
    if verdict["reason"] in NOT_A_WORD:
        raise Invalid("not_a_word", f"{verdict['normalized'][:40]!r} is not a single word of "
                      f"the {lex.name} lexicon's letters ({verdict['reason']}): report one word "
                      "as it is played", {"reason": verdict["reason"]})

    try:
        done = await writes(request).submit(
            word=verdict["normalized"], sent=ask.word, kind=ask.kind, lexicon=lex.name,
            client=client_address(request), game=game.name, note=ask.note,
            version=lex.info.get("version"))
    except RateLimited as e:
        raise TooMany("too_many_reports", str(e), {"limit": e.limit,
                                                   "retry_after": e.retry_after},
                      headers={"Retry-After": str(e.retry_after)}) from None
    except StoreFull as e:
        log.error("report not stored: %s", e)  # the maintainers' message; the player's below
        raise TooLarge("reports_full", "this server takes no more reports for now (its "
                       "report store is full until the maintainers review it); send it "
                       "again later", headers={"Retry-After": str(FULL_RETRY)}) from None
    except ReportError as e:
        log.error("report not stored: %s", e)
        raise Unavailable("reports_unavailable", "the report could not be stored right now; "
                          "try again later", headers={"Retry-After": "60"}) from None
    kelime.metrics.count_report(lex.name, ask.kind, done.duplicate)
    return json_response({"id": done.id, "status": "open", "kind": ask.kind,
                          "count": done.count, "duplicate": done.duplicate,
                          "lexicon": lex.info, "game": game.name, "verdict": verdict},
                         status=202)


routes = [NamedRoute(PATH, report_post, methods=["POST"])]


def note_pattern() -> str:
    """What `kelime.reports.note_problem` refuses, as a JSON Schema pattern: BMP code
    points as \\uXXXX (ECMA-262 and Python read them alike), others as themselves."""
    def char(cp: int) -> str:
        return f"\\u{cp:04x}" if cp <= 0xFFFF else chr(cp)

    ranges = "".join(char(a) if a == b else f"{char(a)}-{char(b)}" for a, b in refused_ranges())
    return f"^[^{ranges}]*$"


def openapi(settings, body: dict, word_pattern: str, lexicon_rules: list) -> dict:
    """The OpenAPI operation of this path, given its body's schema (`models.ReportAsk`, with
    the settings' limits); `word_pattern` is one word of the lexicons' letters,
    `lexicon_rules` narrow it to each lexicon's own."""
    body["properties"]["word"]["pattern"] = word_pattern
    body["properties"]["note"]["anyOf"][0]["pattern"] = note_pattern()
    if lexicon_rules:
        body["allOf"] = lexicon_rules
    return {PATH: {"post": {
        "tags": ["reports"], "summary": "Report a disputed word", "operationId": "report",
        "description": report_post.__doc__,
        "requestBody": {"required": True, "content": {JSON: {
            "schema": body, "example": {**json.loads(ReportAsk.example), "note": "TDK'de var"}}}},
        "responses": {
            "202": {"description": "Stored (or counted with an open report of the same word "
                                   "and kind).",
                    "content": {JSON: {"schema": {"$ref": "#/components/schemas/ReportReply"}}}},
            "413": {"description": f"Over a limit: the word ({settings.max_word_chars} "
                                   f"characters, `word_too_long`), the note "
                                   f"({settings.max_note_chars}, `note_too_long`), the body "
                                   f"({body_limit(settings):,} bytes, `body_too_large`), or "
                                   "the store is full (`reports_full`, with `Retry-After`).",
                    "headers": {"Retry-After": {"schema": {"type": "integer"}, "description":
                                                "With `reports_full`: seconds to wait."}}},
            "422": {"description": "Malformed, or not a single word of the lexicon's letters "
                                   "(`not_a_word`)."},
            "429": {"description": f"This address sent {settings.reports_per_hour} reports in "
                                   "the last hour; `Retry-After` says when to send the next.",
                    "headers": {"Retry-After": {"schema": {"type": "integer"},
                                                "description": "Seconds to wait."}},
                    "content": {JSON: {"schema": {"$ref": "#/components/schemas/Error"}}}},
            "503": {"description": "The report store cannot be written right now "
                                   "(`reports_unavailable`), or too many reports wait for it "
                                   "(`busy`); `Retry-After` says when to send it again.",
                    "headers": {"Retry-After": {"schema": {"type": "integer"},
                                                "description": "Seconds to wait."}}}}}}}
