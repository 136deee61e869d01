"""The capture book: which items' pages are captured, their last capture and version, when due.

Kept in `<ledger dir>/captures_state.json`, replaced atomically by the issue stage after the run's
last batch is durable (as feeds_state.json). It is a cache of the ledger: each page's chain is in
its capture records (ledger/store/pages.py), so a book that is missing, unreadable or behind the
ledger (a crawl killed after a batch, before the book was saved) is brought up to date from the
leaves after the ones it had seen, and never gives a capture a wrong predecessor or version.

A page is due again on a schedule of growing intervals after it was first seen
(CROVIA_RECAPTURE_AFTER, by default 1 hour, 1 day, 7 days and 30 days), then every last interval;
a crawl that runs late captures it once and moves to the next time still ahead.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import weakref
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from crovia_spider.runs.feed_state import save_json
from ledger.capture_record import (
    EDITED,
    FAILED,
    FIRST,
    GONE_STATUSES,
    MOVED,
    NEW_VERSION,
    REMOVED,
    UNCHANGED,
)
from ledger.store import LEDGER_FILE, PageCapture, page_chains

BOOK_FILE = "captures_state.json"
BOOK_SCHEMA = "crovia.captures_state.v1"
DEFAULT_SCHEDULE = "1h,1d,7d,30d"
_INTERVAL = re.compile(r"([0-9]{1,6})([smhd])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
logger = logging.getLogger(__name__)
_BOOKS: weakref.WeakKeyDictionary[Any, CaptureBook] = weakref.WeakKeyDictionary()


def book_of(crawler: Any) -> CaptureBook | None:
    """The capture book the crawl's issue stage loaded (None before, or without a ledger)."""
    return _BOOKS.get(crawler)


def set_book(crawler: Any, book: CaptureBook) -> None:
    _BOOKS[crawler] = book


def parse_schedule(text: str) -> tuple[timedelta, ...]:
    """ "1h,1d,7d,30d" as intervals after first seen (growing); ValueError naming the problem."""
    out = []
    for part in str(text).split(","):
        match = _INTERVAL.fullmatch(part.strip())
        if match is None:
            raise ValueError(f"{part.strip()!r} is not an interval such as 90s, 30m, 1h or 7d")
        out.append(timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2)]))
    if not out or any(b <= a for a, b in itertools.pairwise(out)) or out[0].total_seconds() <= 0:
        raise ValueError(f"{text!r}: intervals must be above 0 and growing")
    return tuple(out)


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text[:19]).replace(tzinfo=UTC)


def _text(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def next_due(first_seen: str, now: str, schedule: tuple[timedelta, ...]) -> str:
    """The first time of the schedule after `now`: first_seen + each interval, then every last
    interval after the last."""
    start, moment = _time(first_seen), _time(now)
    for interval in schedule:
        if start + interval > moment:
            return _text(start + interval)
    last = schedule[-1]
    beyond = start + last
    steps = int((moment - beyond) / last) + 1
    return _text(beyond + steps * last)


@dataclass
class Page:
    """One item's page in the book."""

    url: str
    vendor: str
    spider: str
    item: str  # the item's newest AX.OBS axiom_id (what the next capture names)
    items: list[str] = field(default_factory=list)  # every version's axiom_id met
    first_seen: str = ""  # the first capture's time (UTC seconds, Z)
    last: str = ""  # the axiom_id of the last capture record
    version: str = ""  # the last version's key: its text digest, else its body digest
    version_url: str = ""  # the final URL of the last version
    next_due: str = ""


@dataclass
class Job:
    """A capture to make: the page of `item` (of the identity `key`)."""

    key: str
    item: str
    url: str
    vendor: str
    spider: str


class CaptureBook:
    """The book of one ledger (see the module docstring)."""

    def __init__(self, schedule: tuple[timedelta, ...]) -> None:
        self.schedule = schedule
        self.pages: dict[str, Page] = {}
        self.ledger_bytes = 0  # the ledger file's size when the book was last brought up to date

    # -- state ------------------------------------------------------------------------------

    @classmethod
    def load(cls, directory: Path, schedule: tuple[timedelta, ...]) -> CaptureBook:
        """The book of the ledger at `directory`, brought up to date with its leaves."""
        book = cls(schedule)
        path = Path(directory) / BOOK_FILE
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
            if saved.get("schema") != BOOK_SCHEMA:
                raise ValueError(f"schema is not {BOOK_SCHEMA}")
            book.pages = {key: Page(**page) for key, page in saved["pages"].items()}
            book.ledger_bytes = int(saved["ledger_bytes"])
        except FileNotFoundError:
            pass
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            logger.warning("capture book %s unreadable (%s): rebuilt from the ledger", path, exc)
            book = cls(schedule)
        book.catch_up(directory)
        return book

    def catch_up(self, directory: Path) -> None:
        """Apply the capture records of the leaves the book has not seen."""
        if not (Path(directory) / LEDGER_FILE).is_file():
            return
        known = {item: key for key, page in self.pages.items() for item in page.items}
        path = Path(directory) / LEDGER_FILE
        if path.stat().st_size < self.ledger_bytes:  # another ledger, or a damaged book
            self.pages, self.ledger_bytes, known = {}, 0, {}
        chains, end = page_chains(directory, self.ledger_bytes, known)
        for key, chain in chains.items():
            for facts, capture in chain:
                page = self.pages.get(key)
                if page is None:
                    page = self.pages[key] = Page(
                        url=capture.url,
                        vendor=str(facts.get("vendor", "")),
                        spider=str(facts.get("spider", "")),
                        item=capture.item,
                    )
                self._apply(page, capture)
        self.ledger_bytes = end

    def save(self, directory: Path) -> None:
        """Replace the book file atomically (write, fsync, rename, fsync the directory); by the
        ledger's writer, after its last batch, so the ledger's size is a line's end."""
        self.ledger_bytes = (Path(directory) / LEDGER_FILE).stat().st_size
        data = {
            "schema": BOOK_SCHEMA,
            "ledger_bytes": self.ledger_bytes,
            "pages": {key: asdict(page) for key, page in sorted(self.pages.items())},
        }
        save_json(Path(directory) / BOOK_FILE, data)

    # -- what to capture --------------------------------------------------------------------

    def note_item(self, key: str, item: str, url: str, vendor: str, spider: str) -> Job:
        """An item new or updated in this crawl, of a source with captures: its page is due now."""
        page = self.pages.get(key)
        if page is None:
            page = self.pages[key] = Page(url=url, vendor=vendor, spider=spider, item=item)
        page.item, page.url = item, url
        if item not in page.items:
            page.items.append(item)
        return Job(key, item, url, vendor, spider)

    def due(self, now: str, vendors: set[str], everything: bool = False) -> list[Job]:
        """The pages of `vendors` due at `now` (every one of them with `everything`)."""
        return [
            Job(key, page.item, page.url, page.vendor, page.spider)
            for key, page in sorted(self.pages.items(), key=lambda kv: (kv[1].next_due, kv[0]))
            if page.vendor in vendors and (everything or (page.next_due and page.next_due <= now))
        ]

    def defer(self, key: str, now: str) -> None:
        """The page of `key`, due in this run but over its budget (CROVIA_CAPTURE_PAGES,
        CROVIA_BROWSER_PAGES): due at `now`, so the next run takes it."""
        page = self.pages.get(key)
        moment = now[:19] + "Z"
        if page is not None and not (page.next_due and page.next_due <= moment):
            page.next_due = moment

    # -- what a capture found ---------------------------------------------------------------

    def judge(
        self, key: str, url: str, final_url: str, status: int | None, version: str
    ) -> tuple[str, str]:
        """(outcome, previous capture's axiom_id) of a capture of the page of `key` that got
        `status` at `final_url` with the version key `version` (docs/format.md, "AX.CAPTURE")."""
        page = self.pages.get(key)
        previous = page.last if page else ""
        if status is None:
            return FAILED, previous
        if status in GONE_STATUSES:
            return REMOVED, previous
        if not 200 <= status < 300:
            return FAILED, previous
        last_version = page.version if page else ""
        if _moved(url, final_url) and (page is None or page.version_url != final_url):
            return MOVED, previous
        if not last_version:
            return FIRST, previous
        return (UNCHANGED if version == last_version else EDITED), previous

    def record(self, key: str, capture: PageCapture) -> None:
        """Note a capture record issued (its facts) for the page of `key`."""
        page = self.pages.get(key)
        if page is None:
            return
        self._apply(page, capture)

    def _apply(self, page: Page, capture: PageCapture) -> None:
        if capture.item and capture.item not in page.items:
            page.items.append(capture.item)
        page.last = capture.axiom_id
        moment = capture.captured_at[:19] + "Z"
        page.first_seen = page.first_seen or moment
        if capture.outcome in NEW_VERSION:
            page.version = capture.version_key
            page.version_url = capture.final_url
        page.next_due = next_due(page.first_seen, moment, self.schedule)


def _moved(url: str, final_url: str) -> bool:
    """Whether `final_url` is another page than `url`: another host or path (not only the
    scheme, a default port or a query)."""
    if not final_url or final_url == url:
        return False
    a, b = urlsplit(url), urlsplit(final_url)
    return (a.hostname, a.path or "/") != (b.hostname, b.path or "/")
