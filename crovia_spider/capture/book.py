"""The capture book: which items' pages are captured, their last capture and version, when due.

Kept in `<ledger dir>/captures_state.json`, replaced atomically by the issue stage after the run's
last batch is durable (as feeds_state.json). It is a cache of the ledger: each page's chain is in
its capture records (ledger/store/pages.py), so a book that is missing, unreadable or behind the
ledger (a crawl killed after a batch, before the book was saved) is brought up to date from the
leaves after the ones it had seen, and never gives a capture a wrong predecessor or version.

The book follows items, not crawls: every item of a vendor whose source captures is followed,
whoever issued it and whenever. A crawl notes the items it issues; the ones it did not (issued by
a cluster's sequencer, by a crawl run with captures off, or before the source had `capture =
true`) are enrolled from the ledger: those of a vendor the book starts following from all its
leaves (`follow`, when a crawl first asks what is due), and those of the vendors it follows from
the leaves appended since it was saved (`catch_up`). A page never captured is due at once.

A page is due again on a schedule of growing intervals after it was first seen
(CROVIA_RECAPTURE_AFTER, by default 1 hour, 1 day, 7 days and 30 days), then every last interval;
a crawl that runs late captures it once and moves to the next time still ahead. The schedule is
the one of the crawl reading the book: loaded by a crawl with another CROVIA_RECAPTURE_AFTER than
the one it was saved with, the book works each page's next time out again from its first and last
captures, so a new schedule applies to every page already followed.
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
from ledger.records.capture import (
    EDITED,
    FAILED,
    FIRST,
    GONE_STATUSES,
    MOVED,
    NEW_VERSION,
    REMOVED,
    UNCHANGED,
)
from ledger.store import LEDGER_FILE, PageCapture, page_chains, vendor_items

BOOK_FILE = "captures_state.json"
BOOK_SCHEMA = "crovia.captures_state.v2"
# A book of the first schema knows neither the vendors it follows nor when each page was last
# captured: it is rebuilt from the ledger.
OLD_SCHEMAS = ("crovia.captures_state.v1",)
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


def _seconds(schedule: tuple[timedelta, ...]) -> list[int]:
    return [int(interval.total_seconds()) for interval in schedule]


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
    last_at: str = ""  # the last capture's time (UTC seconds, Z)
    present: bool = False  # a capture saw the page there (a 2xx): only then can it be removed
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
        self.vendors: set[str] = set()  # whose items are enrolled (the module docstring)
        self.directory: Path | None = None  # the ledger's, once loaded

    # -- state ------------------------------------------------------------------------------

    @classmethod
    def load(cls, directory: Path, schedule: tuple[timedelta, ...]) -> CaptureBook:
        """The book of the ledger at `directory`, brought up to date with its leaves."""
        book = cls(schedule)
        path = Path(directory) / BOOK_FILE
        rescheduled = True
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
            if saved.get("schema") in OLD_SCHEMAS:
                logger.info("capture book %s of an older schema: rebuilt from the ledger", path)
            else:
                if saved.get("schema") != BOOK_SCHEMA:
                    raise ValueError(f"schema is not {BOOK_SCHEMA}")
                book.pages = {key: Page(**page) for key, page in saved["pages"].items()}
                book.ledger_bytes = int(saved["ledger_bytes"])
                book.vendors = {str(vendor) for vendor in saved["vendors"]}
                rescheduled = saved["schedule"] != _seconds(schedule)
        except FileNotFoundError:
            pass
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            logger.warning("capture book %s unreadable (%s): rebuilt from the ledger", path, exc)
            book = cls(schedule)
        book.directory = Path(directory)
        book.catch_up(directory)
        if rescheduled:  # another CROVIA_RECAPTURE_AFTER: it applies to every page followed
            for page in book.pages.values():
                if page.last_at:
                    page.next_due = next_due(page.first_seen, page.last_at, schedule)
        return book

    def catch_up(self, directory: Path) -> None:
        """Apply the capture records of the leaves the book has not seen."""
        if not (Path(directory) / LEDGER_FILE).is_file():
            return
        known = {item: key for key, page in self.pages.items() for item in page.items}
        path = Path(directory) / LEDGER_FILE
        if path.stat().st_size < self.ledger_bytes:  # another ledger, or a damaged book
            self.pages, self.ledger_bytes, known, self.vendors = {}, 0, {}, set()
        start = self.ledger_bytes
        chains, end = page_chains(directory, start, known)
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
        if self.vendors:  # items issued since, by whoever issued them
            self._enrol(vendor_items(directory, self.vendors, start))
        self.ledger_bytes = end

    def save(self, directory: Path) -> None:
        """Replace the book file atomically (write, fsync, rename, fsync the directory); by the
        ledger's writer, after its last batch, so the ledger's size is a line's end."""
        self.ledger_bytes = (Path(directory) / LEDGER_FILE).stat().st_size
        data = {
            "schema": BOOK_SCHEMA,
            "ledger_bytes": self.ledger_bytes,
            "vendors": sorted(self.vendors),
            "schedule": _seconds(self.schedule),  # the one each page's next_due was worked out by
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

    def follow(self, vendors: set[str] | frozenset[str]) -> int:
        """Follow the items of `vendors` the book does not follow yet: enrol every item of
        theirs the ledger holds, whoever issued it. Returns how many pages were enrolled."""
        new = set(vendors) - self.vendors
        if not new or self.directory is None:
            return 0
        before = len(self.pages)
        if (self.directory / LEDGER_FILE).is_file():
            self._enrol(vendor_items(self.directory, new, 0))
        self.vendors |= new
        if len(self.pages) > before:
            logger.info(
                "capture book: now following %s, %d pages enrolled from the ledger",
                ", ".join(sorted(new)),
                len(self.pages) - before,
            )
        return len(self.pages) - before

    def _enrol(self, items: list[Any]) -> None:
        """Note items issued elsewhere (ledger/store/pages.py IssuedItem, in leaf order): a page
        not in the book is due at once; a known one names the newest version met."""
        for issued in items:
            self.note_item(issued.key, issued.axiom_id, issued.url, issued.vendor, issued.spider)

    def due(self, now: str, vendors: set[str], everything: bool = False) -> list[Job]:
        """The pages of `vendors` due at `now`, never captured ones too (every one of them with
        `everything`), after following the items of those of `vendors` not followed yet."""
        self.follow(vendors)
        return [
            Job(key, page.item, page.url, page.vendor, page.spider)
            for key, page in sorted(self.pages.items(), key=lambda kv: (kv[1].next_due, kv[0]))
            if page.vendor in vendors and (everything or self._is_due(page, now))
        ]

    @staticmethod
    def _is_due(page: Page, now: str) -> bool:
        return not page.last or bool(page.next_due and page.next_due <= now)

    def plan(self, now: str, vendors: set[str] | frozenset[str]) -> dict[str, dict[str, Any]]:
        """What the book holds of each of `vendors` at `now`, for the run record: pages
        `followed`, `due_later` (their next capture ahead), `still_due` (due now: not captured
        in this run), and `next_due`, the soonest time ahead ("" when none). A page is counted
        by its plain captures' chain (a browser chain, `KEY#browser`, is the same page)."""
        moment = now[:19] + "Z"
        out = {
            vendor: {"followed": 0, "due_later": 0, "still_due": 0, "next_due": ""}
            for vendor in sorted(vendors)
        }
        for key, page in self.pages.items():
            counts = out.get(page.vendor)
            if counts is None or "#" in key:  # a page's browser chain is the same page
                continue
            counts["followed"] += 1
            if self._is_due(page, moment):
                counts["still_due"] += 1
                continue
            counts["due_later"] += 1
            if not counts["next_due"] or page.next_due < counts["next_due"]:
                counts["next_due"] = page.next_due
        return out

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
        if status in GONE_STATUSES:  # a page never seen there was not removed: it failed
            return (REMOVED if page is not None and page.present else FAILED), previous
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
        page.last_at = moment
        page.present = page.present or capture.present
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
