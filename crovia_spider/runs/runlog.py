"""What one crawl did, feed by feed: the run record written to runs.jsonl when the run ends.

The spider records each fetch (status, bytes, digest, validators, parse error); the pipelines count
each item's fate (new, updated, duplicate, dropped with its reason). For every feed the counts add
up: items_seen = new + updated (issued) + duplicate (unchanged) + dropped, and dropped is the sum of
drop_reasons; `cut` counts fields cut or left out at their length cap (the entry went on).
`parent_run_hash`, the value every spider_record of the run carries, is sha256 over canonical JSON
of {run_id, spider, started_at}.
"""

from __future__ import annotations

import copy
import hashlib
import secrets
import threading
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from ledger.canonical import canonical_json

RUN_SCHEMA = "crovia.run.v1"
# Drop reasons that mean the feed was not read whole: its validators are not stored, so the next
# crawl fetches it in full again (crovia_spider/runs/feed_state.py).
TRUNCATED = "truncated document"
UNREADABLE_FEED = "unreadable feed"
OVER_CAP = "over the per-feed entry cap (CROVIA_MAX_ENTRIES_PER_FEED)"
OVER_URL_CAP = "over the per-source URL cap (CROVIA_MAX_SITEMAP_URLS)"  # kind "sitemap"
INVALID_REFERENCE = "invalid character reference"
MALFORMED_ENTRY = "malformed entry (a wrong type)"  # crovia_spider/feed/jsonfeed.py
BEYOND_PROTOCOL = "past the sitemap protocol's 50,000 URLs a file"  # crovia_spider/feed/sitemap.py
# The error of a feed that had not answered when the crawl was stopped (Ctrl-C, SIGTERM).
INTERRUPTED = "interrupted"
# What a run record's `captures` counts a capture whose page had no main text under: signed as
# outcome "failed" (ledger/store/pages.py PageCapture.no_main_text), kept, no version.
NO_MAIN_TEXT_COUNT = "no_main_text"
NOT_READ_WHOLE = (TRUNCATED, UNREADABLE_FEED, OVER_CAP, OVER_URL_CAP)
# Crawl stats the issue stage sets and `scrapy crawl` reads for its exit status
# (crovia_spider/commands/crawl.py).
LEDGER_FAILED = "crovia/ledger_failed"
RUN_RECORDED = "crovia/run_recorded"
_TOTALS = ("items_seen", "new", "updated", "duplicate", "dropped")


def utc_now_micro() -> str:
    """Now in UTC with microseconds and Z, as spider_record.observed_at wants it."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parent_run_hash(run_id: str, spider: str, started_at: str) -> str:
    """sha256 hex of canonical_json({"run_id", "spider", "started_at"}): names one crawl run."""
    doc = {"run_id": run_id, "spider": spider, "started_at": started_at}
    return hashlib.sha256(canonical_json(doc)).hexdigest()


@dataclass
class FeedOutcome:
    """One feed's line in the run record."""

    vendor: str
    url: str
    final_url: str = ""
    status: int | None = None  # HTTP status of the last response, None if none came
    bytes: int = 0
    sha256: str = ""
    etag: str = ""
    last_modified: str = ""
    not_modified: bool = False
    items_seen: int = 0
    new: int = 0
    updated: int = 0
    duplicate: int = 0
    dropped: int = 0
    drop_reasons: dict[str, int] = field(default_factory=dict)
    cut: dict[str, int] = field(default_factory=dict)  # field -> entries whose field hit its cap
    parse_error: str = ""
    error: str = ""  # why the fetch failed (HTTP error, DNS, timeout, robots.txt, size limit)

    @property
    def fetched(self) -> bool:
        """True when the feed answered 200 or 304 and was not refused or cut short."""
        return not self.error and self.status in (200, 304)

    @property
    def interrupted(self) -> bool:
        """True when the crawl was stopped before the feed was asked for: not fetched, and no
        failure either (the summary, the feed state and the metrics say so)."""
        return self.error == INTERRUPTED


class RunLog:
    """The run being crawled. The ledger writer's thread bumps counters too, hence the lock."""

    def __init__(
        self,
        spider: str,
        feeds: list[tuple[str, str]],
        run_id: str = "",
        started_at: str = "",
    ) -> None:
        """A new run; or, with `run_id` and `started_at`, the run they name carried on (a crawl
        cluster's worker and a restarted sequencer: crovia_spider/spiders/remote.py)."""
        self.started_at = started_at or utc_now_micro()
        stamp = self.started_at[:19].replace("-", "").replace(":", "")
        self.run_id = run_id or f"{spider}_{stamp}Z_{secrets.token_hex(4)}"
        self.spider = spider
        self.parent_run_hash = parent_run_hash(self.run_id, spider, self.started_at)
        self.feeds = {vendor: FeedOutcome(vendor, url) for vendor, url in feeds}
        self.problems: list[str] = []  # run-level trouble (ledger errors), shown in the record
        # vendor -> {"sha256", "entries"} of the body each feed answered with and could be read
        # (its fetch record states them): the feed state keeps them beside the validators, so a
        # later 304 names the body it confirms (crovia_spider/runs/feed_state.py). Not in the
        # record.
        self.bodies: dict[str, dict[str, Any]] = {}
        # When the crawl took the ledger lock: writes of crawls that raced for it are serialised
        # from here, while started_at is stamped before the wait.
        self.lock_acquired_at = ""
        # vendor -> capture outcome -> count: the pages captured in this run (AX.CAPTURE), in
        # the record only when there were any, so a run without captures keeps its shape.
        self.captures: dict[str, dict[str, int]] = {}
        # vendor -> the line of a source of kind watch (crovia_spider/spiders/watching.py):
        # its items counted as a feed's are, no fetch claimed; in the record when any.
        self.watched: dict[str, FeedOutcome] = {}
        # vendor -> what the capture book follows of it when the run ends (CaptureBook.plan):
        # pages followed, due later, still due, the next time one is due; for a run of sources
        # with captures only.
        self.pages: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def count(self, vendor: str, outcome: str, n: int = 1) -> None:
        """Add `n` to a feed's `new`, `updated` or `duplicate` counter."""
        with self._lock:
            feed = self._outcome(vendor)
            setattr(feed, outcome, getattr(feed, outcome) + n)

    def drop(self, vendor: str, reason: str, n: int = 1) -> None:
        """Count `n` dropped items of a feed, under `reason`."""
        with self._lock:
            feed = self._outcome(vendor)
            feed.dropped += n
            feed.drop_reasons[reason] = feed.drop_reasons.get(reason, 0) + n

    def _outcome(self, vendor: str) -> FeedOutcome:
        found = self.feeds.get(vendor)
        return found if found is not None else self.watched[vendor]

    def captured(self, vendor: str, outcome: str) -> None:
        """Count one page capture of a vendor's item, by its outcome."""
        with self._lock:
            found = self.captures.setdefault(vendor, {})
            found[outcome] = found.get(outcome, 0) + 1

    def cut(self, vendor: str, fields: list[str]) -> None:
        """Count the fields of one entry of a feed that were cut or left out at their cap."""
        with self._lock:
            feed = self._outcome(vendor)
            for name in fields:
                feed.cut[name] = feed.cut.get(name, 0) + 1

    @staticmethod
    def outcome_of(reason: str) -> str:
        """The run's outcome for Scrapy's close reason: a stopped crawl ("shutdown": Ctrl-C,
        SIGTERM) is "interrupted"; any other reason ("finished", ...) is itself."""
        return INTERRUPTED if reason == "shutdown" else reason

    def close_unanswered(self, reason: str) -> None:
        """Give every feed that never answered (no status, no error) its reason: "interrupted"
        when the crawl was stopped (Scrapy's close reason "shutdown"), else the close reason."""
        with self._lock:
            for feed in self.feeds.values():
                if feed.status is None and not feed.error:
                    feed.error = INTERRUPTED if reason == "shutdown" else f"no answer ({reason})"

    def record(self, finished_at: str, outcome: str) -> dict[str, Any]:
        """The run record, as appended to runs.jsonl (no floats: it is canonical JSON too)."""
        with self._lock:
            feeds = [asdict(f) for f in self.feeds.values()]
            watched = [asdict(f) for f in self.watched.values()]
        totals = {key: sum(feed[key] for feed in feeds) for key in _TOTALS}
        return {
            "schema": RUN_SCHEMA,
            "run_id": self.run_id,
            "parent_run_hash": self.parent_run_hash,
            "spider": self.spider,
            "started_at": self.started_at,
            "lock_acquired_at": self.lock_acquired_at,
            "finished_at": finished_at,
            "outcome": outcome,
            "problems": list(self.problems),
            "totals": totals,
            "feeds": feeds,
            # Each only when there is any, so a run without them keeps its shape.
            **({"watched": watched} if watched else {}),
            **({"captures": copy.deepcopy(self.captures)} if self.captures else {}),
            **({"pages": copy.deepcopy(self.pages)} if self.pages else {}),
        }
