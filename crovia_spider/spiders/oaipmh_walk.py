"""An OAI-PMH source: arXiv's records harvested day by day, every resumption token followed.

A `[[feeds]]` entry of kind "oaipmh" names arXiv's OAI-PMH endpoint and its sets (`set = "cs"` or
`set = ["cs", "stat"]`). A harvest asks for the records of each day from its first to today and
of each set, one list a set and day (`verb=ListRecords&metadataPrefix=arXivRaw&set=S&from=D&
until=D`, the sets of a day one after another), and follows each list's
resumption tokens to its end, one page after another, each with `engine.download_async`: every
downloader middleware applies (the fetch policy, robots.txt, arXiv's politeness of one request
every 3 s on one connection, the size cap, and the retries, which honour a `503`'s
`Retry-After` up to RETRY_AFTER_MAX). The first day is the last one the source's state says was
listed whole (`oai_complete_through`, crovia_spider/runs/feed_state.py), overlapped by that day as
the protocol advises; for a source never harvested, FIRST_DAYS before today; `-s
CROVIA_OAI_FROM=YYYY-MM-DD` sets it for one crawl (to harvest a gap again).

The whole harvest is one fetch record (ledger/records/fetch.py), as a sitemap walk is: the first
page is its `object.fetch` and `body_sha256`, every further request one of its `parts` with the
body kept, and its `entries` the records of every page in order (a paper listed twice, by a list
started again, once: `once_each`). What is bounded, each a part saying so and one unread entry:

- a page the endpoint answers with an error (`badResumptionToken` after a token expired or was
  used up, or a page that is not well-formed, refused or unreadable): a `badResumptionToken`
  starts that day's list again, once; any other leaves the day unlisted;
- a resumption token already followed in this harvest (a list that loops), or one that cannot be
  followed (too long, a control character): the day's list stops there;
- CROVIA_OAI_PAGES requests a harvest (default 100): an endless chain of tokens stops there, and
  the days after it are not asked;
- CROVIA_MAX_SITEMAP_URLS records a harvest, as a sitemap walk's URLs (the walk asks for no more
  once it holds them);
- a page of more than 10,000 records, or declaring entities, is refused by the reader
  (crovia_spider/feed/oaipmh.py).

A set's day is complete (`complete_lists`) when its list was read to its end (a page with an
empty or no resumption token) with no break, and the day was over by the endpoint's clock
(`responseDate`) when that page was answered; the harvest's `through` is the last day complete in
every set with every day before it, which the feed state keeps when every record reached the
ledger. Coverage (crovia_spider/spiders/arxiv_coverage.py) reads the same lists off the fetch
record's parts and kept bodies, with the same `complete_lists`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

import scrapy

from crovia_spider.config.feeds import OAIPMH_KIND, FeedConfig
from crovia_spider.feed.oaipmh import BAD_TOKEN, OaiPage
from crovia_spider.options import env_default, read_setting
from crovia_spider.spiders.fetches import parse_headers
from crovia_spider.spiders.sitemap_walk import ERROR_CHARS, Read, Walk, download_part

__all__ = ["OAIPMH_KIND", "Harvest", "complete_lists", "harvest", "oai_request"]
List = tuple[str, str]  # (set, day): one list a harvest asks for

FIRST_DAYS = 2  # a source's first harvest: today and the two days before
MAX_DAYS = 3660  # days one harvest may ask for (CROVIA_OAI_FROM ten years back)
NOT_READ = "OAI-PMH page not read"  # a run record's drop reason: a part that gave no records
STATE_KEY = "oai_complete_through"  # the feed state's last day listed whole


@dataclass
class Harvest(Walk):
    """What a harvest read (a Walk: bodies, parts, kept bodies), the lists it asked for (set,
    day), those listed to their end (`listed`) and complete (`complete`: listed, and over), and
    the last day complete in every set with every day before it (`through`, "" when none)."""

    lists: list[List] = field(default_factory=list)
    listed: list[List] = field(default_factory=list)
    complete: list[List] = field(default_factory=list)
    through: str = ""
    deleted: set[tuple[str, str]] = field(default_factory=set)  # (id, datestamp) listed deleted

    @property
    def summary(self) -> str:
        """What the run record says of the harvest: the days not listed to their end, and the
        deleted records listed ("" when neither). A day not over yet (today) is no fault."""
        said = []
        whole = set(self.listed)
        missing = [f"{s} {day}" for s, day in self.lists if (s, day) not in whole]
        if missing:
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            shown = ", ".join(missing[:5]) + more
            said.append(f"harvest incomplete: {len(missing)} day(s) not listed whole ({shown})")
        if self.deleted:
            said.append(f"{len(self.deleted)} deleted record(s) listed")
        return "; ".join(said)


def setting(settings: Any, name: str) -> Any:
    """Setting `name` of a crawl, read by its kind (crovia_spider/options.py): `-s` beats the
    environment beats the default (the crawl checked every one before it started)."""
    value = settings.get(name)
    return read_setting(name, env_default(name) if value is None else value, "setting")


def harvest_days(
    entry: Mapping[str, Any] | None, forced: str = "", today: date | None = None
) -> list[str]:
    """The days a harvest asks for, oldest first, to `today` (UTC): from `forced`
    (CROVIA_OAI_FROM), else the last day the source's state says was listed whole (listed again:
    the overlap), else FIRST_DAYS before today; at most MAX_DAYS, the latest."""
    today = today or datetime.now(UTC).date()
    kept = (entry or {}).get(STATE_KEY)
    try:
        start = date.fromisoformat(forced or kept) if (forced or kept) else None
    except (TypeError, ValueError):  # a state file edited by hand: start as a new source
        start = None
    if start is None:
        start = today - timedelta(days=FIRST_DAYS)
    count = min(MAX_DAYS, max(1, (today - start).days + 1))
    return [(today - timedelta(days=n)).isoformat() for n in reversed(range(count))]


def list_url(feed: FeedConfig, listing: List) -> str:
    """The request of the records of the set and day `listing` (one of `feed`'s sets)."""
    oai_set, day = listing
    query = {"verb": "ListRecords", "metadataPrefix": feed.metadata_prefix, "set": oai_set,
             "from": day, "until": day}  # fmt: skip
    return f"{feed.url}?{urlencode(query)}"


def harvest_lists(feed: FeedConfig, days: list[str]) -> list[List]:
    """The lists of a harvest of `days`: each day's, set after set."""
    return [(oai_set, day) for day in days for oai_set in feed.oai_sets]


def token_url(feed: FeedConfig, token: str) -> str:
    """The request of the page a resumption token names."""
    return f"{feed.url}?verb=ListRecords&resumptionToken={quote(token, safe='')}"


def listed(url: str) -> List | None:
    """The set and day a list request asks for (None for a request of a resumption token)."""
    try:
        query = parse_qs(urlsplit(url).query)
    except ValueError:
        return None
    day, oai_set = (query.get("from") or [""])[0], (query.get("set") or [""])[0]
    same = day == (query.get("until") or [""])[0]
    return (oai_set, day) if day and oai_set and same else None


def oai_request(
    feed: FeedConfig, entry: Mapping[str, Any] | None, settings: Any, **kwargs: Any
) -> scrapy.Request:
    """The first request of a harvest of `feed` (its state `entry`): the list of its first set
    and day, carrying the lists to ask for after it."""
    lists = harvest_lists(feed, harvest_days(entry, setting(settings, "CROVIA_OAI_FROM")))
    meta = {"feed": feed, "oai_lists": lists}
    return scrapy.Request(list_url(feed, lists[0]), meta=meta, dont_filter=True, **kwargs)


async def harvest(spider: Any, first: Read, feed: FeedConfig) -> Harvest:
    """The harvest from its first page, `first` (see the module docstring)."""
    lists: list[List] = list(first.response.meta.get("oai_lists") or ())
    if not lists and (asked := listed(first.response.url)):
        lists = [asked]
    walk = Harvest(lists=lists, bodies=[first])
    pages = setting(spider.settings, "CROVIA_OAI_PAGES")
    limit = spider.entry_limit(feed)
    held, fetched, followed = len(first.parsed.entries), 1, set()
    index, page, restarted = 0, first.parsed, False
    walk.deleted.update(getattr(page, "deleted", ()))
    while True:
        url, restarted, index = _next(feed, walk, page, lists, index, restarted, followed)
        if url is None:
            break
        if walk.full():
            why = f"a fetch record holds {len(walk.parts) + 1} parts at most"
            walk.add({"url": url, "error": f"not fetched, nor any request after it: {why}"})
            break
        for cap, count, why in (
            (pages, fetched, f"past the {pages} requests a harvest may make (CROVIA_OAI_PAGES)"),
            (limit, held, f"the harvest holds the {limit:,} records a source may read a crawl"
                          " (CROVIA_MAX_SITEMAP_URLS)"),
        ):  # fmt: skip
            if count >= cap:
                walk.add({"url": url, "error": f"not fetched, nor any request after it: {why}"})
                url = None
                break
        if url is None:
            break
        fetched += 1
        page = await _fetch(spider, url, feed, walk)
        if page is not None and not page.failed:
            held += len(page.entries)
            walk.deleted.update(page.deleted)
    walk.listed, walk.complete = complete_lists(_sequence(walk))
    walk.through = through(lists, walk.complete)
    for part in walk.parts:
        if "error" in part:  # one entry the source held and the harvest did not read, as signed
            spider.run.feeds[feed.vendor].items_seen += 1
            spider.run.drop(feed.vendor, NOT_READ)
            spider.logger.debug("OAI-PMH %s of %s: %s", part["url"], feed.vendor, part["error"])
    return walk


def _next(
    feed: FeedConfig,
    walk: Harvest,
    page: OaiPage | None,
    lists: list[List],
    index: int,
    restarted: bool,
    followed: set[str],
) -> tuple[str | None, bool, int]:
    """The next request after `page` (None: the request before it gave no page) of the list
    `lists[index]`: the page its token names, the list again after a `badResumptionToken` (once),
    else the next list; (URL or None when the harvest is done, restarted, index)."""
    if page is not None and page.failed and page.oai_error == BAD_TOKEN and not restarted:
        return list_url(feed, lists[index]), True, index
    if page is not None and not page.failed:
        if page.token_error:
            walk.add(
                {"url": list_url(feed, lists[index]), "error": f"not fetched: {page.token_error}"}
            )
        elif page.token and page.token in followed:
            why = "not fetched: this resumption token was followed already (the list loops)"
            walk.add({"url": token_url(feed, page.token), "error": why})
        elif page.token:
            followed.add(page.token)
            return token_url(feed, page.token), restarted, index
    index += 1
    return (list_url(feed, lists[index]) if index < len(lists) else None), False, index


async def _fetch(spider: Any, url: str, feed: FeedConfig, walk: Harvest) -> OaiPage | None:
    """The page at `url`, its part added to `walk` (with the error when it gave no records to
    read); None when no body came."""
    response = await download_part(
        spider, url, walk, lambda u: scrapy.Request(u, meta={"feed": feed}, dont_filter=True)
    )
    if response is None:
        return None
    part = walk.parts[-1]
    headers = parse_headers(part.get("content_type", ""), response.url)
    page = await spider.parser.parse(response.body, headers, OAIPMH_KIND, {})
    if page.failed or not isinstance(page, OaiPage):
        part["error"] = (page.error or "unreadable OAI-PMH page")[:ERROR_CHARS]
        return page if isinstance(page, OaiPage) else None
    walk.bodies.append(Read(response, page, part["body_sha256"]))
    return page


def _sequence(walk: Harvest) -> list[tuple[str, OaiPage | None]]:
    """The harvest's requests in order, each with its page read (None: none read)."""
    first = walk.bodies[0]
    pages = {read.sha256: read.parsed for read in walk.bodies[1:]}
    found: list[tuple[str, OaiPage | None]] = [(first.response.url, first.parsed)]
    for part in walk.parts:
        page = None if "error" in part else pages.get(part.get("body_sha256", ""))
        found.append((part["url"], page))
    return found


def complete_lists(sequence: Iterable[tuple[str, Any]]) -> tuple[list[List], list[List]]:
    """The lists (set, day) a harvest's requests in order (each its URL and its page, or None
    when it gave no page to read) listed to their end, and of those the lists complete: a list
    request starts its list; a request that gave no page breaks it; a page ending the list (no
    resumption token, or an empty one) lists it whole, and completes it when the endpoint
    answered it after the day was over (its `responseDate`)."""
    # dicts as ordered sets: a harvest ten years back asks for up to 36,600 lists
    found: dict[List, None] = {}
    complete: dict[List, None] = {}
    current: List | None = None
    unbroken = False
    for url, page in sequence:
        started = listed(url)
        if started:
            current, unbroken = started, True
        if page is None:
            unbroken = False
            continue
        if current is None or not (unbroken and page.ends_list):
            continue
        found[current] = None
        if page.response_date[:10] > current[1]:
            complete[current] = None
    return list(found), list(complete)


def through(lists: list[List], complete: list[List]) -> str:
    """The last day of `lists` complete in every set with every day before it ("" when none)."""
    done = set(complete)
    short = {day for oai_set, day in lists if (oai_set, day) not in done}
    last = ""
    for day in dict.fromkeys(day for _, day in lists):
        if day in short:
            break
        last = day
    return last
