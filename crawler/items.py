"""What the spider yields: plain dataclasses, saved by crawler.pipelines."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class WordsFound:
    """Words (queries) enumerated from a sitemap or autocomplete list."""

    words: list[str]
    source: str


@dataclass
class Reply:
    """One classified `/gts?ara=` reply (or a failure to get one)."""

    query: str
    url: str
    outcome: str  # ok | not_found | failed
    status: int | None = None
    body: str | None = None
    error: str | None = None
    attempts: int = 1
    entries: list[dict] = field(default_factory=list)
    sha256: str | None = None  # of the bytes as received (the body is their UTF-8 reading)
    final: bool = False        # a failure asking again soon would only repeat
    fetched_at: str | None = None  # UTC ISO, set when the pipeline receives it

    def row(self) -> dict:
        """The `replies` row for kelime.tdk.store.save_reply."""
        return {"query": self.query, "url": self.url, "status": self.status,
                "outcome": self.outcome, "body": self.body, "error": self.error,
                "attempts": self.attempts, "sha256": self.sha256, "final": self.final,
                "fetched_at": self.fetched_at}
