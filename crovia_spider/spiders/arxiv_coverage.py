"""arXiv's coverage, per category and announcement day, from the signed fetch records and their kept
bodies: what the RSS feed announced, what OAI-PMH listed, what both and what one only saw
(`crovia arxiv coverage`; the signed form is ledger/records/coverage.py).

Nothing here is taken from what a crawl said of itself: every set is read again from the kept
bodies the fetch records sign (each body's sha256 checked against the record), in the crawl's
parser worker under its ceilings (crovia_spider/feed/parsepool.py, as `crovia history` reads).

- RSS: every AX.FETCH of an arXiv feed of one category (`/rss/<category>`, the family arXiv) that
  got a body. Each entry of the body is a paper (`arxiv_meta`), announced on the day of its
  `pubDate` (in the feed's own time zone: arXiv dates its announcements so). A day of a category
  is `read` when a body of it was read whole (the record's `unread` and `over_limit` 0),
  `partial` when only bodies that were not, `not_read` when none announced it: the RSS holds only
  the current announcement, so a day whose crawl failed is never read again.
- OAI-PMH: every AX.FETCH of kind "oaipmh" that got a body, its pages (the first body and each
  part's) read in order: a record of a day's list is harvested for each category it lists
  (`categories`), a deleted one is `deleted` (of the set). A day is `complete` when one harvest
  of a set that holds the category listed it whole after it was over (`complete_lists`, as the
  harvest decides it), `partial` when one asked for it and none listed it whole, `not_harvested`
  when none asked. A set holds a category of its archive (`cs` holds `cs.AI`).

A day is shown when a read of it found something or said how far it went; a day that no read
announced, listed or asked for (a weekend before any harvest) is not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson

from crovia_spider.config.feeds import ARXIV_FAMILY, OAIPMH_KIND, FeedConfig
from crovia_spider.feed.arxiv import arxiv_meta
from crovia_spider.spiders.fetches import parse_headers
from crovia_spider.spiders.oaipmh_walk import complete_lists
from crovia_spider.spiders.oaipmh_walk import listed as asked
from ledger import jsonl
from ledger.records.coverage import COVERAGE_TYPE, OAI_STATES, RSS_STATES, coverage_target
from ledger.records.fetch import FETCH_TYPE, NEW_BODY, UNCHANGED_BODY
from ledger.store import LEDGER_FILE, BodyStore

READ, PARTIAL_RSS, NOT_READ = RSS_STATES
COMPLETE, PARTIAL_OAI, NOT_HARVESTED = OAI_STATES
_BODIES = (NEW_BODY, UNCHANGED_BODY)
Parse = Callable[..., Any]  # (body, headers, kind, options) -> ParsedFeed: the worker's
RSS_DAYS = 7  # an RSS body announces a day at most this long before (or after) its fetch
# A fetch or coverage record's line holds these bytes (canonical JSON, as the audit holds every
# line to; ledger/audit/bodies.py passes over lines the same way): the others are not parsed.
_FETCH_LINE = b'"axiom_type":"AX.FETCH"'
_COVERAGE_LINE = b'"axiom_type":"AX.COVERAGE"'


@dataclass
class Seen:
    """What the reads of one kind saw of one category (RSS) or set (OAI-PMH) and day."""

    ids: set[str] = field(default_factory=set)
    fetches: list[str] = field(default_factory=list)  # the axiom ids of the records read
    whole: bool = False  # RSS: a body read whole; OAI-PMH: the day listed whole and over
    listed: bool = False  # OAI-PMH: the day listed to its end (over or not)
    deleted: set[str] = field(default_factory=set)  # OAI-PMH: records listed deleted

    def by(self, axiom_id: str) -> None:
        if axiom_id not in self.fetches:
            self.fetches.append(axiom_id)


@dataclass
class DayCoverage:
    """One category and day: each read's state and fetches, the ids each saw."""

    category: str
    day: str
    rss_state: str
    oai_state: str
    rss_fetches: list[str]
    oai_fetches: list[str]
    announced: set[str]
    harvested: set[str]
    deleted: set[str]
    oai_vendors: list[str]
    listed: bool = False  # OAI-PMH listed the day to its end, before it was over
    recorded: str = ""  # the axiom id of the newest AX.COVERAGE of this category and day
    recorded_body: dict[str, Any] | None = None

    @property
    def both(self) -> set[str]:
        return self.announced & self.harvested

    @property
    def rss_only(self) -> set[str]:
        return self.announced - self.harvested

    @property
    def oai_only(self) -> set[str]:
        return self.harvested - self.announced

    def gap(self) -> str:
        """Which crawl can fill what is missing ("" when nothing is)."""
        if self.day >= datetime.now(UTC).date().isoformat():
            return "the day is not over: the next harvest lists it again"
        said = []
        if self.oai_state == PARTIAL_OAI and self.listed:
            said.append("OAI-PMH listed the day before it was over: the next harvest lists it")
        elif self.oai_state != COMPLETE:
            vendors = ",".join(self.oai_vendors) or "<an oaipmh source of the category's set>"
            said.append(
                f"OAI-PMH not listed whole: scrapy crawl vendor_press -a vendor={vendors}"
                f" -s CROVIA_OAI_FROM={self.day}"
            )
        if self.rss_state != READ and self.oai_state == COMPLETE:
            said.append("RSS not read: OAI-PMH read the day (an RSS day is never served again)")
        elif self.rss_state != READ:
            said.append("RSS not read: no crawl can read that day's RSS again")
        if self.rss_only and self.oai_state == COMPLETE:
            said.append(
                f"{len(self.rss_only)} missed by OAI-PMH: listed again only when its record"
                " changes (a later day's harvest)"
            )
        return "; ".join(said)

    def as_dict(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "day": self.day,
            "rss": {"state": self.rss_state, "fetches": self.rss_fetches},
            "oai": {"state": self.oai_state, "fetches": self.oai_fetches},
            "announced": sorted(self.announced),
            "harvested": sorted(self.harvested),
            "both": sorted(self.both),
            "rss_only": sorted(self.rss_only),
            "oai_only": sorted(self.oai_only),
            "deleted": sorted(self.deleted),
            "gap": self.gap(),
            "recorded": self.recorded,
        }


def rss_category(feed_url: str) -> str:
    """The category an arXiv RSS feed's URL reads (`.../rss/cs.AI`), "" for none or several."""
    try:
        path = urlsplit(feed_url).path
    except ValueError:
        return ""
    parts = path.rstrip("/").split("/")
    if len(parts) < 2 or parts[-2] != "rss" or "+" in parts[-1]:
        return ""
    return parts[-1]


def set_holds(oai_set: str, category: str) -> bool:
    """True when the OAI-PMH set `oai_set` holds `category` (`cs` holds `cs.AI`)."""
    archive = category.split(".", 1)[0]
    return archive in (oai_set, oai_set.rsplit(":", 1)[-1])


class Coverage:
    """Every RSS and OAI-PMH read of arXiv in a ledger, read again (see the module docstring)."""

    def __init__(self, ledger_dir: str | Path, parse: Parse) -> None:
        self.ledger_dir = Path(ledger_dir)
        self.parse = parse
        self.bodies = BodyStore(ledger_dir)
        self.rss: dict[tuple[str, str], Seen] = {}  # (category, day)
        self.oai: dict[tuple[str, str], Seen] = {}  # (set, day), ids with their categories
        self.oai_records: dict[tuple[str, str], list[tuple[str, str]]] = {}  # (set, day) -> ...
        self.oai_vendors: dict[str, list[str]] = {}  # set -> vendors of its harvests
        self.categories: set[str] = set()
        self.recorded: dict[str, tuple[str, dict[str, Any]]] = {}  # target -> newest record
        self.problems: list[str] = []  # bodies that could not be read, each said
        self.window: tuple[str, str, str, str] = ("", "", "", "")  # read(): the days wanted
        self._read: dict[tuple[Any, ...], tuple[bool, list[tuple[str, str]]] | None] = {}

    def read(self, since: str = "", until: str = "") -> Coverage:
        """Read every fetch and coverage record of the ledger (one pass, without the lock); with
        `since` / `until` (dates), only the bodies that can hold those days: the RSS fetched
        within RSS_DAYS of them, the OAI-PMH pages of their lists."""
        self.window = (_shifted(since, -RSS_DAYS), _shifted(until, RSS_DAYS), since, until)
        path = self.ledger_dir / LEDGER_FILE
        for _, line in jsonl.iter_lines(path):
            if _FETCH_LINE not in line and _COVERAGE_LINE not in line:
                continue  # an item (most lines), or a capture: passed over unparsed
            try:
                envelope = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue  # a torn last line: the audit names it
            kind = envelope.get("axiom_type") if isinstance(envelope, dict) else None
            if kind == COVERAGE_TYPE:
                target = (envelope.get("subject") or {}).get("target_id", "")
                self.recorded[target] = (envelope.get("axiom_id", ""), envelope.get("body") or {})
            elif kind == FETCH_TYPE and isinstance(envelope.get("body"), dict):
                self._fetch(envelope)
        return self

    def _fetch(self, envelope: dict[str, Any]) -> None:
        body = envelope["body"]
        vendor, url = body.get("vendor"), body.get("feed_url")
        if type(vendor) is not str or type(url) is not str:
            return
        try:
            family = FeedConfig(vendor=vendor, url=url).family
        except ValueError:
            return
        if family != ARXIV_FAMILY:
            return
        if body.get("kind") == OAIPMH_KIND:
            self._harvest(envelope)
        elif "kind" not in body and (category := rss_category(url)):
            self.categories.add(category)
            fetched = str(body.get("fetched_at", ""))[:10]
            early, late = self.window[0], self.window[1]
            if (early and fetched < early) or (late and fetched > late):
                return  # an RSS body announces the days just before its fetch
            if body.get("outcome") in _BODIES and body.get("body_sha256"):
                self._rss(envelope, category)

    def _load(self, digest: str) -> bytes | None:
        """The kept body `digest`, its sha256 checked by the store; None, said, when it cannot be
        had (missing, unreadable, other bytes)."""
        try:
            return self.bodies.get(digest)
        except Exception as exc:  # BodyMismatch mostly: the audit says more
            self.problems.append(f"kept body {digest} cannot be read: {exc}")
            return None

    def _rss(self, envelope: dict[str, Any], category: str) -> None:
        body = envelope["body"]
        final_url = ((envelope.get("object") or {}).get("fetch") or {}).get("final_url", "")
        headers = parse_headers(body.get("content_type", ""), final_url or body["feed_url"])
        read = self._announcements(body["body_sha256"], headers)
        if read is None:
            return
        failed, papers = read
        entries = body.get("entries") or {}
        whole = not failed and not entries.get("unread") and not entries.get("over_limit")
        for day, paper in papers:
            seen = self.rss.setdefault((category, day), Seen())
            seen.ids.add(paper)
            seen.whole = seen.whole or whole
            seen.by(envelope.get("axiom_id", ""))

    def _announcements(
        self, digest: str, headers: dict[str, str]
    ) -> tuple[bool, list[tuple[str, str]]] | None:
        """The kept RSS body `digest` read as `headers` say: whether it failed, and its papers
        (announcement day, arXiv id); None when it cannot be had. Read once a run however many
        fetch records keep it (a feed served unchanged keeps one body, crawl after crawl)."""
        key = (digest, tuple(sorted(headers.items())))
        if key not in self._read:
            data = self._load(digest)
            found = None
            if data is not None:
                parsed = self.parse(data, headers, "feed", {})
                papers = []
                for entry in parsed.entries:
                    meta = arxiv_meta(entry, entry.get("link") or "")
                    day = _announced(entry.get("published") or "")
                    if meta is not None and day:
                        papers.append((day, meta["id"]))
                found = (parsed.failed, papers)
            self._read[key] = found
        return self._read[key]

    def _harvest(self, envelope: dict[str, Any]) -> None:
        body = envelope["body"]
        fetch = (envelope.get("object") or {}).get("fetch") or {}
        first_url = fetch.get("final_url", "")
        axiom_id = envelope.get("axiom_id", "")
        sequence: list[tuple[str, Any]] = []
        if body.get("outcome") in _BODIES and body.get("body_sha256"):
            current = asked(first_url)
            first = None
            if self._wanted(current):
                first = self._page(body["body_sha256"], first_url, body)
            sequence.append((first_url, first))
            for part in body.get("parts") or ():
                if not isinstance(part, dict) or "loop" in part:
                    continue
                current = asked(part.get("url", "")) or current
                page = None
                if "error" not in part and part.get("body_sha256") and self._wanted(current):
                    page = self._page(part["body_sha256"], part.get("final_url", ""), part)
                sequence.append((part.get("url", ""), page))
        elif first_url:  # a harvest that got no body asked for its first day all the same
            sequence.append((first_url, None))
        listed, complete = map(set, complete_lists(sequence))
        current: tuple[str, str] | None = None
        for url, page in sequence:
            current = asked(url) or current
            if current is None:
                continue
            oai_set, day = current
            vendors = self.oai_vendors.setdefault(oai_set, [])
            if body["vendor"] not in vendors:
                vendors.append(body["vendor"])
            seen = self.oai.setdefault(current, Seen())
            seen.by(axiom_id)
            seen.whole = seen.whole or current in complete
            seen.listed = seen.listed or current in listed
            if page is None:
                continue
            records = self.oai_records.setdefault(current, [])
            for entry in page.entries:
                meta = arxiv_meta(entry, entry.get("link") or "")
                if meta is not None and entry.get("datestamp") == day:
                    records.append((meta["id"], entry.get("categories") or ""))
            seen.deleted.update(i for i, stamp in page.deleted if stamp == day)

    def _wanted(self, listing: tuple[str, str] | None) -> bool:
        """True when the pages of `listing` (set, day) may hold a day asked for."""
        since, until = self.window[2], self.window[3]
        day = listing[1] if listing else ""
        return not ((since and day < since) or (until and day > until))

    def _page(self, digest: str, final_url: str, where: Mapping[str, Any]) -> Any:
        data = self._load(digest)
        if data is None:
            return None
        headers = parse_headers(where.get("content_type", ""), final_url)
        page = self.parse(data, headers, OAIPMH_KIND, {})
        return None if page.failed else page

    def days(
        self, categories: list[str] | None = None, since: str = "", until: str = ""
    ) -> Iterator[DayCoverage]:
        """Each category's days, oldest first, within [since, until] (dates, either may be "")."""
        wanted = sorted(categories or self.categories)
        for category in wanted:
            sets = [s for s in self.oai_vendors if set_holds(s, category)]
            days = {day for (c, day) in self.rss if c == category}
            days |= {day for (s, day) in self.oai if s in sets}
            for day in sorted(days):
                if (since and day < since) or (until and day > until):
                    continue
                found = self._day(category, day, sets)
                silent = found.rss_state == NOT_READ and not found.harvested and not found.deleted
                if silent and found.oai_state != PARTIAL_OAI:
                    continue  # nothing announced, nothing listed, nothing missing
                yield found

    def _day(self, category: str, day: str, sets: list[str]) -> DayCoverage:
        rss = self.rss.get((category, day))
        oai = [self.oai[(s, day)] for s in sets if (s, day) in self.oai]
        harvested = {
            paper
            for s in sets
            for paper, listed in self.oai_records.get((s, day), ())
            if category in listed.split()
        }
        rss_state = NOT_READ if rss is None else READ if rss.whole else PARTIAL_RSS
        oai_state = (
            NOT_HARVESTED if not oai else COMPLETE if any(s.whole for s in oai) else PARTIAL_OAI
        )
        recorded = self.recorded.get(coverage_target(category, day))
        return DayCoverage(
            category=category,
            day=day,
            rss_state=rss_state,
            oai_state=oai_state,
            rss_fetches=list(rss.fetches) if rss else [],
            oai_fetches=[f for s in oai for f in s.fetches],
            announced=set(rss.ids) if rss else set(),
            harvested=harvested if oai else set(),
            deleted={d for s in oai for d in s.deleted},
            oai_vendors=[v for s in sets for v in self.oai_vendors[s]],
            listed=any(s.listed for s in oai),
            recorded=recorded[0] if recorded else "",
            recorded_body=recorded[1] if recorded else None,
        )


def _shifted(day: str, days: int) -> str:
    """`day` moved by `days` ("" stays "")."""
    return (date.fromisoformat(day) + timedelta(days=days)).isoformat() if day else ""


def _announced(published: str) -> str:
    """The day of an RSS entry's pubDate in its own time zone ("" when it is no date)."""
    try:
        return parsedate_to_datetime(published).date().isoformat()
    except (TypeError, ValueError, IndexError, OverflowError):
        return ""
