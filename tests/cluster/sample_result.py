"""A worker's result built in process, as `RemoteRoles.send_result` builds it from a crawl: the
fixture feed read by its reader, its items made by `entry_item`, the fetch record stating them.
The fuzz harness's seeds (tests/fuzz/fuzz_result.py) and the unit tests of the checks start here.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from crovia_spider.feed.entries import entry_item
from crovia_spider.feed.identity import identity
from crovia_spider.feed.kinds import read_body
from crovia_spider.runs.runlog import FeedOutcome
from crovia_spider.spiders.fetches import FeedFetch, parse_headers, signed_entries
from crovia_spider.spiders.verdict import NOT_SENT
from tests.fuzz.fuzz_result import BODY, DIGEST, FEED, Sequencer

FETCHED_AT = "2026-12-03T00:00:01.000000Z"
CONTENT_TYPE = "application/rss+xml"


def sample_result(sequencer: Sequencer | None = None) -> dict[str, Any]:
    """The result of a job for FEED whose fetch brought BODY: what the worker would send."""
    sequencer = sequencer or Sequencer()
    run_hash = sequencer.run.parent_run_hash
    parsed = read_body(BODY, parse_headers(CONTENT_TYPE, FEED.url))
    evidence = {"body_sha256": DIGEST, "fetched_at": FETCHED_AT, "final_url": FEED.url,
                "status": 200}  # fmt: skip
    items = []
    for entry in parsed.entries:
        item = entry_item(
            entry, FEED, spider=sequencer.name, base_url=FEED.url, status=200,
            observed_at=FETCHED_AT, run_hash=run_hash,
        )  # fmt: skip
        item.fetch, item.body = evidence, BODY
        item.identity = identity(item)
        items.append(item)
    entries = signed_entries([item.identity for item in items], parsed, 2000)
    fetch = FeedFetch(
        spider=sequencer.name, vendor=FEED.vendor, feed_url=FEED.url, outcome="new_body",
        fetched_at=FETCHED_AT, run_hash=run_hash, fetch=evidence, body_sha256=DIGEST,
        entries=entries, content_type=CONTENT_TYPE,
    )  # fmt: skip
    outcome = FeedOutcome(
        FEED.vendor, FEED.url, final_url=FEED.url, status=200, bytes=len(BODY), sha256=DIGEST,
        items_seen=len(items),
    )  # fmt: skip
    fields = [f.name for f in dataclasses.fields(items[0]) if f.name not in NOT_SENT]
    return {
        "schema": "crovia.result.v1",
        "fetch": fetch.envelope_fields(),
        "outcome": dataclasses.asdict(outcome),
        "kept": {"sha256": DIGEST, "entries": entries},
        "items": [{name: getattr(item, name) for name in fields} for item in items],
    }
