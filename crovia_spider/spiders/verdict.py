"""What the sequencer signs of a worker's result: its own reading of the bytes the worker sent.

A worker is trusted with what a server sent it (the status, the final URL, the validators, when the
answer came, the bodies) and with nothing else (docs/cluster.md, "Who decides each signed value").
So the sequencer takes those facts from a result, held to their types and to the run's window of
time, and makes of them exactly what a local crawl's fetch would have made: the fetch record, the
feed's run-record line and the items, with the spider's own reader (`read_entries`, `read_walk`,
`received`: the code a local crawl runs) on a spider of its own, under the sequencer's config
(vendor, relay, family, category, limits) and feed state. The worker's own account must then
agree with it field by field (`agree`), or the result is refused naming the first field that
differs: a fetch record never disagrees with its kept body, and no signed value is the worker's
choice.
"""

from __future__ import annotations

import dataclasses
import datetime
import ipaddress
import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from crovia_spider.capture.book import Job as Page
from crovia_spider.cluster.jobs import Job, ResultRefused, check_fields
from crovia_spider.config.feeds import DEFAULT_KIND, FeedConfig
from crovia_spider.feed.own_format import read_own_format
from crovia_spider.items import FeedEntryItem
from crovia_spider.runs.feed_state import conditional_headers
from crovia_spider.runs.runlog import FeedOutcome, RunLog
from crovia_spider.spiders.capturing import PageFetch
from crovia_spider.spiders.fetches import (
    FeedFetch,
    kept_response,
    record_response,
    response_headers,
)
from crovia_spider.spiders.sitemap_walk import ERROR_CHARS, NOT_READ, SITEMAP_KIND, Read, Walk
from ledger.records.capture import HEADER_CHARS, HEADER_NAMES, MAX_REDIRECTS, URL_CHARS
from ledger.records.fetch import FAILED, NOT_MODIFIED

# How far a worker's clock may be from the sequencer's: a fetch time before the run began or after
# now by more than this is refused (docs/cluster.md).
CLOCK_SKEW = datetime.timedelta(seconds=120)
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
# What a fetch's evidence may hold: every key fetch_evidence writes (crovia_spider/spiders/base.py).
_EVIDENCE = {"body_sha256": str, "fetched_at": str, "final_url": str, "status": int,
             "etag": str, "last_modified": str}  # fmt: skip
# A capture result's page (crovia_spider/spiders/remote.py, page_fetched): every field, its types.
_PAGE = {"key": (str,), "url": (str,), "captured_at": (str,), "final_url": (str,),
         "status": (int, type(None)), "redirects": (list,), "headers": (dict,),
         "ip_address": (str,), "tls_certificate_sha256": (str,),
         "body_sha256": (str, type(None)), "request_head_sha256": (str,),
         "response_head_sha256": (str,), "error": (str,)}  # fmt: skip
_DIGEST = re.compile(r"[0-9a-f]{64}")


# The fields of an item the spider fills (items.py, the first block): what a result carries. The
# pipelines' fields are filled again by the sequencer's pipelines; `body` travels by its digest.
PIPELINE_FIELDS = (
    "record", "identity", "identity_key", "target_id", "change", "predecessors", "ruleset",
)  # fmt: skip
NOT_SENT = (*PIPELINE_FIELDS, "body")


class Claimed(NamedTuple):
    """A result as the worker states it, every field of its type."""

    fetch: FeedFetch
    outcome: FeedOutcome
    kept: dict[str, Any] | None
    items: list[dict[str, Any]]


class Derived(NamedTuple):
    """What the sequencer makes of the result's facts, as a local crawl would."""

    fetch: FeedFetch
    outcome: FeedOutcome
    kept: dict[str, Any] | None
    items: list[FeedEntryItem]


def claimed_result(
    sequencer: Any, feed: FeedConfig, result: dict[str, Any], bodies: Mapping[str, bytes]
) -> Claimed:
    """The result's fetch record, run line, kept-body note and items, each field of its type,
    naming this run, source and spider, fetched inside the run's window, citing every body it
    carries and carrying every body it cites. Raises ResultRefused."""
    fields = check_fields(FeedFetch, result.get("fetch"), "the fetch record",
                          ("body", "part_bodies"))  # fmt: skip
    fetch = FeedFetch(**fields)
    expected = {
        "spider": sequencer.name,
        "vendor": feed.vendor,
        "feed_url": feed.url,
        "run_hash": sequencer.run.parent_run_hash,
        "kind": "" if feed.kind == DEFAULT_KIND else feed.kind,
        "relay": feed.relay,
        "select": feed.options,
    }
    for name, value in expected.items():
        if getattr(fetch, name) != value:
            raise ResultRefused(f"the fetch record's {name} is not this job's")
    _within_run(fetch.fetched_at, sequencer.run.started_at)
    if fetch.fetch is not None:
        _evidence(fetch.fetch, fetch.fetched_at, "the fetch record")
    for part in fetch.parts:
        if type(part) is not dict or type(part.get("url")) is not str:
            raise ResultRefused("a part of the fetch record is not a sitemap's fetch")
    _cited(fetch, result.get("items"), bodies)
    outcome = FeedOutcome(**check_fields(FeedOutcome, result.get("outcome"), "its run line"))
    if (outcome.vendor, outcome.url) != (feed.vendor, feed.url):
        raise ResultRefused("its run line names another source")
    kept = result.get("kept")
    if kept is not None and type(kept) is not dict:
        raise ResultRefused("its kept-body note is not an object")
    raw_items = result.get("items")
    if type(raw_items) is not list:
        raise ResultRefused("its items are not a list")
    items = [check_fields(FeedEntryItem, raw, "an item", NOT_SENT) for raw in raw_items]
    return Claimed(fetch, outcome, kept, items)


def derive(
    sequencer: Any, feed: FeedConfig, claimed: Claimed, bodies: Mapping[str, bytes]
) -> Derived:
    """The fetch record, run line, kept-body note and items a local crawl of `feed` would have
    made of the facts `claimed` states, read with the sequencer's spider, config and feed state,
    and `sequencer.body_reader` (the parser worker, under the crawl's ceilings)."""
    spider = _reader(sequencer, feed)
    fetch = claimed.fetch
    outcome = spider.run.feeds[feed.vendor]
    sent = {} if feed.kind == SITEMAP_KIND else conditional_headers(spider.state.get(feed.url))
    if fetch.outcome == FAILED:
        return _failed(spider, feed, claimed, sent)
    evidence = fetch.fetch or {}
    if "final_url" not in evidence or "status" not in evidence:
        raise ResultRefused("a fetch record with no answer's evidence")
    if fetch.outcome == NOT_MODIFIED:
        if evidence["status"] != 304 or claimed.items:
            raise ResultRefused("a 304 that is not one (another status, or items)")
        response = _response(b"", evidence, fetch.content_type, feed, sent)
        record_response(outcome, response)
        outcome.not_modified = True
        made = spider.not_modified(feed, response, fetch.fetched_at)
        return Derived(made, outcome, None, [])
    if fetch.body_sha256 not in bodies or evidence.get("body_sha256") != fetch.body_sha256:
        raise ResultRefused("a fetch record of a body it does not carry")
    body = bodies[fetch.body_sha256]
    response = _response(body, evidence, fetch.content_type, feed, sent)
    record_response(outcome, response)
    if spider.reads_own_format():
        parsed = read_own_format(spider.parse_entries(response))
    else:
        parsed = sequencer.body_reader(body, response_headers(response), feed.kind, feed.options)
    walk = None
    if feed.kind == SITEMAP_KIND and not parsed.failed:
        walk = _walk(spider, feed, Read(response, parsed, outcome.sha256), fetch, bodies,
                     sequencer.body_reader)  # fmt: skip
        items, parsed = spider.read_walk(walk, feed, fetch.fetched_at)
    else:
        items = list(spider.read_entries(parsed, feed, response, fetch.fetched_at))
    made = spider.received(feed, response, fetch.fetched_at, parsed, items, walk)
    return Derived(made, outcome, spider.run.bodies.get(feed.vendor), items)


def agree(claimed: Claimed, derived: Derived) -> None:
    """The worker's account is the sequencer's own reading, field by field; else ResultRefused
    naming the first field that differs."""
    mine, theirs = derived.fetch.envelope_fields(), claimed.fetch.envelope_fields()
    for name in mine:
        if mine[name] != theirs.get(name):
            raise ResultRefused(
                f"the fetch record's {name} is not what its body and facts give (read again"
                " by the sequencer)"
            )
    for name, value in dataclasses.asdict(derived.outcome).items():
        if getattr(claimed.outcome, name) != value:
            raise ResultRefused(f"its run line's {name} is not what its body gives")
    if derived.kept != claimed.kept:
        raise ResultRefused("its kept-body note is not what its body gives")
    if len(claimed.items) != len(derived.items):
        raise ResultRefused(
            f"its items are not the entries its body holds ({len(claimed.items)} sent,"
            f" {len(derived.items)} read again by the sequencer)"
        )
    for n, (sent, item) in enumerate(zip(claimed.items, derived.items, strict=True)):
        for name, value in sent.items():
            if getattr(item, name) != value:
                raise ResultRefused(
                    f"item {n}: its {name} is not what its body gives (read again by the sequencer)"
                )


def _reader(sequencer: Any, feed: FeedConfig) -> Any:
    """A spider of the sequencer's class, of its run, state and limits, that has read nothing."""
    spider = type(sequencer)()
    spider.run = RunLog(
        sequencer.name, [(feed.vendor, feed.url)], sequencer.run.run_id,
        sequencer.run.started_at,
    )  # fmt: skip
    spider.state = sequencer.state
    spider.max_entries, spider.max_sitemap_urls = (
        sequencer.max_entries, sequencer.max_sitemap_urls,
    )  # fmt: skip
    return spider


def _failed(spider: Any, feed: FeedConfig, claimed: Claimed, sent: dict[str, str]) -> Derived:
    """A fetch the worker reports failed (it may: as any crawler, it can say a server failed):
    its error and the answer's evidence, if one came, and nothing else."""
    fetch, line = claimed.fetch, claimed.outcome
    if claimed.items or fetch.body_sha256 or fetch.entries is not None or fetch.parts:
        raise ResultRefused("a failed fetch that states a body or entries")
    if not fetch.error:
        raise ResultRefused("a failed fetch that does not say why")
    made = spider._fetch(feed, sent, fetch.fetched_at)
    made.error = fetch.error
    if fetch.fetch is not None:
        if "body_sha256" in fetch.fetch:
            raise ResultRefused("a failed fetch that states a body")
        made.fetch = dict(fetch.fetch)
    outcome = spider.run.feeds[feed.vendor]
    for name in ("final_url", "status", "bytes", "sha256", "etag", "last_modified"):
        setattr(outcome, name, getattr(line, name))
    outcome.error = fetch.error
    return Derived(made, outcome, None, [])


def _response(
    body: bytes, evidence: Mapping[str, Any], content_type: str, feed: FeedConfig,
    sent: dict[str, str],
) -> Any:  # fmt: skip
    """The response the worker says it received, as the crawl held it."""
    headers = {"ETag": evidence.get("etag", ""), "Last-Modified": evidence.get("last_modified", "")}
    response = kept_response(body, evidence["final_url"], content_type, feed, evidence["status"],
                             {k: v for k, v in headers.items() if v})  # fmt: skip
    response.request.meta["sent"] = sent
    return response


def _walk(
    spider: Any,
    feed: FeedConfig,
    first: Read,
    fetch: FeedFetch,
    bodies: Mapping[str, bytes],
    parse: Callable[..., Any],
) -> Walk:
    """A sitemap walk as the worker states its further fetches, each body read here; a part
    whose reading fails must say so, and one that reads must not."""
    walk = Walk(bodies=[first])
    for part in fetch.parts:
        walk.parts.append(part)
        digest = part.get("body_sha256")
        if "loop" in part or digest is None:
            continue
        if type(digest) is not str or type(part.get("final_url")) is not str:
            raise ResultRefused("a sitemap part that is not a fetch")
        if digest not in bodies:
            raise ResultRefused("a sitemap part of a body it does not carry")
        data = bodies[digest]
        walk.part_bodies[digest] = data
        kept = kept_response(data, part["final_url"], part.get("content_type", ""), feed)
        parsed = parse(data, response_headers(kept), feed.kind, feed.options)
        if parsed.failed:
            if part.get("error") != parsed.error[:ERROR_CHARS]:
                raise ResultRefused("a sitemap part's error is not what its body gives")
            continue
        if "error" in part and "(CROVIA_SITEMAP_BYTES)" not in part["error"]:
            # Only the walk's byte budget stops a body that reads whole (the worker read it up
            # to what the budget left: crovia_spider/spiders/sitemap_walk.py).
            raise ResultRefused("a sitemap part said unreadable that reads")
        if "error" in part:
            continue
        walk.bodies.append(Read(kept, parsed, digest))
    for part in walk.parts:
        if "error" in part:  # counted as the crawl counts a sitemap it did not read
            spider.run.feeds[feed.vendor].items_seen += 1
            spider.run.drop(feed.vendor, NOT_READ)
    return walk


def _within_run(fetched_at: str, started_at: str) -> None:
    """A fetch time of our format, between the run's start and now (with CLOCK_SKEW)."""
    try:
        when = datetime.datetime.strptime(fetched_at, _TIME_FORMAT)
        start = datetime.datetime.strptime(started_at, _TIME_FORMAT)
    except (TypeError, ValueError):
        raise ResultRefused(f"a fetch time that is not one: {str(fetched_at)[:40]!r}") from None
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    if not start - CLOCK_SKEW <= when <= now + CLOCK_SKEW:
        raise ResultRefused(
            f"a fetch time outside the run ({fetched_at}; the run began {started_at})"
        )


def _evidence(evidence: dict[str, Any], fetched_at: str, what: str) -> None:
    for name, value in evidence.items():
        kind = _EVIDENCE.get(name)
        if kind is None or type(value) is not kind:
            raise ResultRefused(f"{what}'s evidence has a field it may not have: {name[:40]}")
    if evidence.get("fetched_at") != fetched_at:
        raise ResultRefused(f"{what}'s evidence was fetched at another time")


def _cited(fetch: FeedFetch, items: Any, bodies: Mapping[str, bytes]) -> None:
    """Every body the result carries is one its fetch record cites, and every one it cites
    (the feed's, its parts', its items') is carried."""
    cited = set()
    if fetch.fetch and "body_sha256" in fetch.fetch:
        cited.add(fetch.fetch["body_sha256"])
    cited.update(p["body_sha256"] for p in fetch.parts if "body_sha256" in p)
    for raw in items if type(items) is list else ():
        evidence = raw.get("fetch") if type(raw) is dict else None
        if type(evidence) is dict and "body_sha256" in evidence:
            cited.add(evidence["body_sha256"])
    missing = [d for d in cited if type(d) is not str or d not in bodies]
    if missing:
        raise ResultRefused(f"a body the result cites is not in it: {str(missing[0])[:64]}")
    extra = set(bodies) - cited
    if extra:
        raise ResultRefused(f"a body the result does not cite: {sorted(extra)[0][:64]}")


def capture_pages(
    sequencer: Any, job: Job, result: dict[str, Any], bodies: Mapping[str, bytes]
) -> list[PageFetch]:
    """The pages of a capture job's result, as the issue stage signs them, the main text not
    yet read (the sequencer reads it from the body: a worker never states it). The result holds
    exactly the pages its job named, each once, every field of its type and bounds, captured
    inside the run's window, a failed fetch stating no answer and an answer no error, with every
    body and head it cites (under its digest, within CROVIA_CAPTURE_MAX_BYTES) and no other.
    Raises ResultRefused naming the first thing wrong."""
    if sorted(set(result) - {"schema"}) != ["pages"]:
        raise ResultRefused("a capture result with fields other than its pages")
    pages = result["pages"]
    if type(pages) is not list:
        raise ResultRefused("a capture result whose pages are not a list")
    named = {page["key"]: page for page in job.captures}
    if len(pages) != len(named):
        raise ResultRefused(f"a capture result of {len(pages)} pages for a job of {len(named)}")
    cap = sequencer.capture_max_bytes or None
    cited: set[str] = set()
    out = []
    for n, page in enumerate(pages):
        what = f"capture result page {n}"
        if type(page) is not dict or set(page) != set(_PAGE):
            raise ResultRefused(f"{what} is not a page's fields (a field missing or its own)")
        for name, kinds in _PAGE.items():
            if type(page[name]) not in kinds:
                raise ResultRefused(f"{what}: {name} is not of its type")
        asked = named.pop(page["key"], None)
        if asked is None or asked["url"] != page["url"]:
            raise ResultRefused(f"{what} is a page its job did not name (or named once)")
        _within_run(page["captured_at"], sequencer.run.started_at)
        _page_bounds(page, what)
        held: dict[str, bytes] = {}
        for name in ("body_sha256", "request_head_sha256", "response_head_sha256"):
            digest = page[name]
            if digest is None or (digest == "" and name != "body_sha256"):
                continue
            if digest not in bodies:
                raise ResultRefused(f"{what}: its {name} names a body the result does not carry")
            held[name] = bodies[digest]
            cited.add(digest)
        body = held.get("body_sha256")
        if page["status"] is None:
            if held or page["final_url"] or page["redirects"] or page["headers"]:
                raise ResultRefused(f"{what}: a failed capture that states an answer")
            if not page["error"]:
                raise ResultRefused(f"{what}: a failed capture that does not say why")
        else:
            if not 100 <= page["status"] <= 599 or body is None:
                raise ResultRefused(f"{what}: an answer with no body, or no HTTP status")
            if page["error"]:  # what a page answered says, the sequencer reads itself
                raise ResultRefused(f"{what}: an answered page with an error the worker chose")
            if cap is not None and len(body) > cap:
                raise ResultRefused(f"{what}: a body over CROVIA_CAPTURE_MAX_BYTES ({cap:,})")
        out.append(
            PageFetch(
                job=Page(**asked),
                captured_at=page["captured_at"],
                run_hash=sequencer.run.parent_run_hash,
                spider=sequencer.name,
                final_url=page["final_url"],
                status=page["status"],
                redirects=list(page["redirects"]),
                headers=dict(page["headers"]),
                ip_address=page["ip_address"],
                tls_certificate_sha256=page["tls_certificate_sha256"],
                body=body,
                request_head=held.get("request_head_sha256", b""),
                response_head=held.get("response_head_sha256", b""),
                error=page["error"],
            )
        )
    extra = set(bodies) - cited
    if extra:
        raise ResultRefused(f"a body the result does not cite: {sorted(extra)[0][:64]}")
    return out


def _page_bounds(page: dict[str, Any], what: str) -> None:
    """A page's facts within what a capture record holds (ledger/records/capture.py)."""
    urls = [page["final_url"], *page["redirects"]]
    if len(page["redirects"]) > MAX_REDIRECTS or any(
        type(u) is not str or len(u) > URL_CHARS for u in urls
    ):
        raise ResultRefused(f"{what}: its final URL or redirects are not URLs within bounds")
    for name, value in page["headers"].items():
        if name not in HEADER_NAMES or type(value) is not str or len(value) > HEADER_CHARS:
            raise ResultRefused(f"{what}: a header it may not state: {str(name)[:40]}")
    if page["ip_address"]:
        try:
            ipaddress.ip_address(page["ip_address"])
        except ValueError:
            raise ResultRefused(f"{what}: a server address that is not one") from None
    tls = page["tls_certificate_sha256"]
    if tls and not _DIGEST.fullmatch(tls):
        raise ResultRefused(f"{what}: a certificate digest that is not a sha256")
    if len(page["error"]) > HEADER_CHARS:
        raise ResultRefused(f"{what}: an error over {HEADER_CHARS} characters")
