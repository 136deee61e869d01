"""Bench: where each microsecond per item goes, stage by stage, measured in this process.

The same items as bench/crawl_bench.py (its `write_feeds`: 20 RSS bodies, 10,000 entries), read
and carried by the project's own code, one stage at a time over every item, timed with
perf_counter: parse (`parse_body`, and the pickle round trip of the body to the parser worker and
of its ParsedFeed back), the spider's `entry_item` and `identity`, the real pipeline stages built
from a Scrapy crawler whose spider carries a RunLog (dedupe and issue on an open ledger), the fetch
record of each body, and `Ledger.issue` in batches of CROVIA_ISSUE_BATCH with `Ledger.seal` every
CROVIA_SEAL_EVERY leaves and at the end. The rest of `Ledger.issue` (index rows, append, fsync) is
its time less that of `sign_range` on one thread: `Ledger.issue` signs a large batch on two
threads when that is faster (ledger/keys/signer.py), so the rest can come out low.

The stages are given the spider's batches of entries (crovia_spider/items.py), as in a crawl:
dedupe's lookups go to the ledger's writer thread a batch at a time, the batches go through it
CONCURRENT_ITEMS (Scrapy's default, 100) at a time, and its row includes the wait for the answers.
The issue stage is timed building envelopes only (what it made is taken from it rather than handed
to the writer): the writer's work is `Ledger.issue`'s row.
Each row is the median of the repetitions, in microseconds per item; a row "of which" is part of
the row above it and counts in no total. No network: the bodies are read from memory.
Usage: python bench/stage_bench.py [--items N] [--repeat N] [--quick]. Offline; about 25 seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import mimetypes
import os
import pickle
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import feedparser  # noqa: E402
import scrapy  # noqa: E402
from scrapy.http import Response  # noqa: E402
from scrapy.utils.reactor import install_reactor  # noqa: E402
from scrapy.utils.test import get_crawler  # noqa: E402

from bench.crawl_bench import write_feeds  # noqa: E402
from crovia_spider import settings as project_settings  # noqa: E402
from crovia_spider.config.feeds import FeedConfig  # noqa: E402
from crovia_spider.feed import urls  # noqa: E402
from crovia_spider.feed.body import ParsedFeed, parse_body  # noqa: E402
from crovia_spider.feed.entries import entry_item  # noqa: E402
from crovia_spider.feed.identity import identity  # noqa: E402
from crovia_spider.feed.plaintext import clean_text, plain_text  # noqa: E402
from crovia_spider.feed.urls import web_url  # noqa: E402
from crovia_spider.items import FeedBatch, FeedEntryItem  # noqa: E402
from crovia_spider.runs.runlog import RunLog, utc_now_micro  # noqa: E402
from crovia_spider.spiders.base import fetch_evidence, kept_response, response_headers  # noqa: E402
from crovia_spider.spiders.batching import batches  # noqa: E402
from crovia_spider.spiders.fetches import FeedFetch, signed_entries  # noqa: E402
from ledger.canonical import check_signable  # noqa: E402
from ledger.keys import generate_signing_key, sign_range  # noqa: E402
from ledger.records.fetch import NEW_BODY, new_fetch_envelope  # noqa: E402
from ledger.store import Ledger  # noqa: E402
from pipelines.classify import ClassifyPipeline  # noqa: E402
from pipelines.dedupe import DedupePipeline  # noqa: E402
from pipelines.fingerprint import FingerprintPipeline  # noqa: E402
from pipelines.issue import IssuePipeline  # noqa: E402
from pipelines.normalize import NormalizePipeline  # noqa: E402

SPIDER = "vendor_press"
FEEDS = 20
ISSUE_BATCH = 500  # CROVIA_ISSUE_BATCH's default
SEAL_EVERY = 1000  # CROVIA_SEAL_EVERY's default (a multiple of ISSUE_BATCH)
CONCURRENT_ITEMS = 100  # Scrapy's default: the items of one response in the stages at a time
ENTRY_LIMIT = 2000  # CROVIA_MAX_ENTRIES_PER_FEED's default, signed in each fetch record
WORKER, REACTOR, WRITER = "parser worker", "reactor thread", "ledger writer"
# The table's rows.
PARSE = "parse: parse_body (feedparser)"
IPC = "parse: pickle, body there, ParsedFeed back"
ENTRY_ITEM = "spider: entry_item"
WEB_URL = "  of which web_url (link)"
PLAIN_TEXT = "  of which plain_text (title) + clean_text (guid)"
IDENTITY = "spider: identity"
FETCH_RECORD = "fetch record (per body, shared by its items)"
NORMALIZE = "stage 1 normalize"
FINGERPRINT = "stage 2 fingerprint"
DEDUPE = "stage 3 dedupe (lookups on the writer)"
CLASSIFY = "stage 4 classify"
ISSUE = "stage 5 issue: new_envelope + hold"
LEDGER_ISSUE = "Ledger.issue, batches of 500"
SIGN_RANGE = "  of which sign_range (one thread)"
CHECK_SIGNABLE = "  of which check_signable"
LEDGER_REST = "  of which the rest: index rows, append, fsync"
SEAL = "Ledger.seal, every 1,000 leaves and at the end"
# (row, runs on, part of the row above), in the order an item meets them.
ROWS = (
    (PARSE, WORKER, False),
    (IPC, "both (IPC)", False),
    (ENTRY_ITEM, REACTOR, False),
    (WEB_URL, REACTOR, True),
    (PLAIN_TEXT, REACTOR, True),
    (IDENTITY, REACTOR, False),
    (FETCH_RECORD, REACTOR, False),
    (NORMALIZE, REACTOR, False),
    (FINGERPRINT, REACTOR, False),
    (DEDUPE, REACTOR, False),
    (CLASSIFY, REACTOR, False),
    (ISSUE, REACTOR, False),
    (LEDGER_ISSUE, WRITER, False),
    (SIGN_RANGE, WRITER, True),
    (CHECK_SIGNABLE, WRITER, True),
    (LEDGER_REST, WRITER, True),
    (SEAL, WRITER, False),
)


class Feed(NamedTuple):
    config: FeedConfig
    response: Response


class Clock:
    """Seconds spent per row, summed over the `with clock(row):` blocks of one repetition."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, row: str) -> Iterator[None]:
        gc.collect()  # the previous row's garbage is not this row's cost
        started = time.perf_counter()
        yield
        self.seconds[row] = self.seconds.get(row, 0.0) + time.perf_counter() - started


def make_feeds(directory: Path, items: int) -> list[Feed]:
    """crawl_bench's bodies as the spider receives them (kept_response: a 200 with the
    Content-Type a static server sends for .xml)."""
    feeds = []
    for index, name in enumerate(write_feeds(directory, items, FEEDS)):
        config = FeedConfig(vendor=f"bench_{index}", url=f"http://127.0.0.1:8000/{name}")
        content_type = mimetypes.guess_type(name)[0] or ""
        body = (directory / name).read_bytes()
        feeds.append(Feed(config, kept_response(body, config.url, content_type, config)))
    return feeds


def crawler_for(run: RunLog, ledger_dir: Path, key_file: Path, batch: int) -> Any:
    """A crawler with the project's settings, whose spider carries `run` (what Stage reads)."""
    settings = {name: getattr(project_settings, name) for name in dir(project_settings)}
    settings = {name: value for name, value in settings.items() if name.isupper()}
    settings.update(
        CROVIA_LEDGER_DIR=str(ledger_dir),
        CROVIA_SIGNING_KEY_FILE=str(key_file),
        CROVIA_ISSUE_BATCH=batch,
        CROVIA_SEAL_EVERY=0,
    )
    crawler = get_crawler(scrapy.Spider, settings)
    crawler.spider = scrapy.Spider(name=SPIDER)
    crawler.spider.run = run
    return crawler


async def dedupe_all(stage: Any, groups: list[FeedBatch]) -> None:
    for start in range(0, len(groups), CONCURRENT_ITEMS):
        chunk = groups[start : start + CONCURRENT_ITEMS]
        await asyncio.gather(*(stage.process_item(batch) for batch in chunk))
        for batch in chunk:
            stage.item_left(batch)  # the item_scraped signal, once the batch has left the stages


def read(clock: Clock, feeds: list[Feed], run: RunLog) -> list[list[FeedEntryItem]]:
    """Parse each body and make its items, as the parser worker and the spider do."""
    with clock(PARSE):
        parsed = [parse_body(feed.response.body, response_headers(feed.response)) for feed in feeds]
    with clock(IPC):
        for feed, result in zip(feeds, parsed, strict=True):
            pickle.loads(pickle.dumps(feed.response.body))
            pickle.loads(pickle.dumps(result))
    observed_at = utc_now_micro()
    cold_urls()  # every link of a crawl is new to web_url's caches
    per_feed = []
    for feed, result in zip(feeds, parsed, strict=True):  # as read_entries: a body at a time
        with clock(ENTRY_ITEM):
            items = [
                entry_item(entry, feed.config, spider=SPIDER, base_url=feed.response.url,
                           status=200, observed_at=observed_at, run_hash=run.parent_run_hash)
                for entry in result.entries
            ]  # fmt: skip
        with clock(IDENTITY):  # the link is in web_url's cache, as in a crawl
            for item in items:
                item.identity = identity(item)
        per_feed.append(items)
    cold_urls()
    with clock(WEB_URL):
        for feed, result in zip(feeds, parsed, strict=True):
            for entry in result.entries:
                web_url(entry.get("link", ""), feed.response.url)
    with clock(PLAIN_TEXT):
        for result in parsed:
            for entry in result.entries:
                plain_text(entry.get("title", ""))
                clean_text(entry.get("id", ""))
    for feed, items in zip(feeds, per_feed, strict=True):
        evidence = fetch_evidence(feed.response, sha256(feed.response.body), observed_at)
        for item in items:
            item.fetch, item.body = evidence, feed.response.body
    with clock(FETCH_RECORD):
        for feed, result, items in zip(feeds, parsed, per_feed, strict=True):
            fetch_record(feed, result, items, run, observed_at)
    return per_feed


def fetch_record(
    feed: Feed, parsed: ParsedFeed, items: list[FeedEntryItem], run: RunLog, fetched_at: str
) -> dict[str, Any]:
    """The AX.FETCH envelope of one body, as the spider and the issue stage make it."""
    digest = sha256(feed.response.body)  # the spider's record_response
    fetch = FeedFetch(
        spider=SPIDER,
        vendor=feed.config.vendor,
        feed_url=feed.config.url,
        outcome=NEW_BODY,
        fetched_at=fetched_at,
        run_hash=run.parent_run_hash,
        fetch=fetch_evidence(feed.response, digest, fetched_at),
        body_sha256=digest,
        entries=signed_entries([item.identity for item in items], parsed, ENTRY_LIMIT),
        content_type=feed.response.headers.get(b"Content-Type", b"").decode("latin-1"),
        body=feed.response.body,
    )
    return new_fetch_envelope(**fetch.envelope_fields())


def through_stages(
    clock: Clock, per_feed: list[list[FeedEntryItem]], run: RunLog, work: Path, key_file: Path
) -> list[dict[str, Any]]:
    """Every item through the five stages in the spider's batches (crovia_spider/items.py), one
    stage at a time; the unsigned envelopes made."""
    items = [item for feed_items in per_feed for item in feed_items]
    groups = [batch for feed_items in per_feed for batch in batches(feed_items)]
    crawler = crawler_for(run, work / "stages-ledger", key_file, len(items) + 1)
    classes = (NormalizePipeline, FingerprintPipeline, DedupePipeline, ClassifyPipeline)
    normalize, fingerprint, dedupe, classify = (cls.from_crawler(crawler) for cls in classes)
    issue = IssuePipeline.from_crawler(crawler)  # opens the ledger session, as in a crawl
    loop = asyncio.get_event_loop()
    try:
        for row, stage in ((NORMALIZE, normalize), (FINGERPRINT, fingerprint)):
            with clock(row):
                for batch in groups:
                    stage.process_item(batch)
        with clock(DEDUPE):
            loop.run_until_complete(dedupe_all(dedupe, groups))
        with clock(CLASSIFY):
            for batch in groups:
                classify.process_item(batch)
        envelopes = []
        for batch in groups:
            with clock(ISSUE):
                issue.process_item(batch)
            # What a full batch does, but for handing it to the writer: timed below instead.
            envelopes += [envelope for _, _, envelope in issue.batch]
            issue.batch = []
            issue.session.release_held()
    finally:
        issue.session.close()
    if len(envelopes) != len(items) or any(item.change != "new" for item in items):
        sys.exit(f"bench: {len(envelopes)} envelopes of {len(items)} items, expected all new")
    return envelopes


def into_ledger(clock: Clock, envelopes: list[dict[str, Any]], work: Path) -> None:
    """`Ledger.issue` in batches, its signing alone, and a seal."""
    key = generate_signing_key(work / "ledger.key")
    batches = [envelopes[i : i + ISSUE_BATCH] for i in range(0, len(envelopes), ISSUE_BATCH)]
    with Ledger.open(work / "ledger", signing_key=key) as ledger:
        for number, batch in enumerate(batches, 1):
            with clock(LEDGER_ISSUE):
                ledger.issue(batch)
            # The seals CROVIA_SEAL_EVERY makes issue() cut, cut here to be timed apart.
            if number * ISSUE_BATCH % SEAL_EVERY == 0 or number == len(batches):
                with clock(SEAL):
                    ledger.seal(run_id="stage_bench")
    with clock(SIGN_RANGE):
        for start, batch in zip(range(0, len(envelopes), ISSUE_BATCH), batches, strict=True):
            sign_range(batch, start, key)
    with clock(CHECK_SIGNABLE):
        for envelope in envelopes:
            check_signable(envelope)


def repetition(feeds: list[Feed], work: Path) -> tuple[dict[str, float], int]:
    """One pass of every row over every item: seconds per row, and the item count."""
    clock = Clock()
    run = RunLog(SPIDER, [(feed.config.vendor, feed.config.url) for feed in feeds])
    per_feed = read(clock, feeds, run)
    key_file = work / "stages.key"
    generate_signing_key(key_file)
    envelopes = through_stages(clock, per_feed, run, work, key_file)
    into_ledger(clock, envelopes, work)
    seconds = clock.seconds
    # Ledger.issue may sign on two threads and so beat one thread's sign_range: never below 0.
    seconds[LEDGER_REST] = max(0.0, seconds[LEDGER_ISSUE] - seconds[SIGN_RANGE])
    return seconds, sum(len(feed_items) for feed_items in per_feed)


def cold_urls() -> None:
    """Empty web_url's caches (crovia_spider/feed/urls.py), so a row pays for every link once."""
    urls._web_url.cache_clear()
    urls._SETTLED.clear()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def table(runs: list[dict[str, float]], items: int) -> list[str]:
    """The rows: median µs per item, and the share of the total of the rows that are no part."""
    micros = {row: statistics.median(r[row] for r in runs) * 1e6 / items for row, _, _ in ROWS}
    total = sum(micros[row] for row, _, part in ROWS if not part)
    lines = [f"{'stage':<52} {'runs on':<15} {'µs/item':>9} {'share':>7}"]
    for row, where, part in ROWS:
        share = f"({micros[row] / total:.0%})" if part else f"{micros[row] / total:.0%}"
        lines.append(f"{row:<52} {where:<15} {micros[row]:>9.1f} {share:>7}")
    lines.append(f"{'total':<52} {'':<15} {total:>9.1f} {'100%':>7}")
    return lines


def machine() -> str:
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    return (
        f"load average {load} (1, 5, 15 min) on {os.cpu_count()} CPUs; Python "
        f"{platform.python_version()}, feedparser {feedparser.__version__}, "
        f"Scrapy {scrapy.__version__}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="repetitions (median; default 3)")
    parser.add_argument("--quick", action="store_true", help="1,000 items, 1 repetition")
    args = parser.parse_args()
    items, repeat = (1_000, 1) if args.quick else (args.items, max(1, args.repeat))
    # Dedupe's lookups gather per turn of the asyncio loop only under Scrapy's asyncio reactor.
    install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
    print(f"before: {machine()}", flush=True)
    runs = []
    with tempfile.TemporaryDirectory(prefix="crovia-stage-bench-") as tmp:
        (Path(tmp) / "www").mkdir()
        feeds = make_feeds(Path(tmp) / "www", items)
        for n in range(repeat):
            work = Path(tmp) / f"run{n}"
            work.mkdir()
            seconds, count = repetition(feeds, work)
            runs.append(seconds)
            print(f"repetition {n + 1}: {count:,} items", flush=True)
    print(f"{count:,} items in {len(feeds)} feeds, median of {repeat} repetition(s):")
    print("\n".join(table(runs, count)))
    print(f"after: {machine()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
