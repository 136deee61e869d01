"""Entries go through the pipeline stages in batches of one body (crovia_spider/items.py): what a
batch changes must be nothing a ledger, a run record or a log reader can tell, but the time."""

from __future__ import annotations

import json

import pytest
import scrapy
from scrapy.utils.test import get_crawler

from crovia_spider.feed.identity import identity
from crovia_spider.items import FeedBatch, FeedEntryItem
from crovia_spider.settings import ITEM_PIPELINES
from crovia_spider.spiders.batching import BATCH_ENTRIES, batches
from ledger.store import identity_digest
from pipelines.dedupe import DedupePipeline
from tests.crawl import assert_counts_add_up, envelopes, feed_outcome, run_crawl, run_records
from tests.feedserver import Reply
from tests.spider.feedtext import item, rss

PLAIN = {"Content-Type": "application/rss+xml"}


def entry(guid: str, vendor: str = "lab") -> FeedEntryItem:
    return FeedEntryItem(
        vendor=vendor, spider="vendor_press", category="press", source_url="https://l/f",
        source_status=200, observed_at="2026-01-01T00:00:00.000000Z", parent_run_hash="0" * 64,
        title=guid, link=f"https://lab.example.org/{guid}", guid=guid, published="",
        description_html="d",
    )  # fmt: skip


def test_batches_keep_the_order_and_split_at_the_size_and_at_an_identity_met_again():
    items = [entry(str(n)) for n in range(7)]
    assert [len(b.entries) for b in batches(items, size=3)] == [3, 3, 1]
    assert [e for b in batches(items, size=3) for e in b.entries] == items
    # "1" again: its later sighting begins a batch, so dedupe decides it after the first left.
    again = [entry("0"), entry("1"), entry("2"), entry("1"), entry("3")]
    split = batches(again, size=10)
    assert [[e.guid for e in b.entries] for b in split] == [["0", "1", "2"], ["1", "3"]]
    assert all(b.vendor == "lab" for b in split)
    assert batches([]) == []
    assert all(e.identity for e in again)  # the spider's identity, set when it was missing


def test_a_long_feed_is_issued_whole_in_batches(tmp_path, feed_server):
    count = BATCH_ENTRIES * 2 + 88
    posts = [item(f"Post {n}", f"https://lab.example.org/{n}") for n in range(count)]
    url = feed_server.script("long.xml", Reply(200, rss(*posts), PLAIN))
    proc = run_crawl(tmp_path, [{"vendor": "lab", "url": url}], "-s", "LOG_LEVEL=DEBUG")
    assert proc.returncode == 0, proc.stderr[-3000:]
    scraped = [line for line in proc.stderr.splitlines() if "Scraped lab:" in line]
    assert [line.rsplit(": ", 1)[1] for line in scraped] == [
        f"{BATCH_ENTRIES} entries", f"{BATCH_ENTRIES} entries", "88 entries"
    ]  # fmt: skip
    titles = [env["body"]["title"] for env in envelopes(tmp_path)]
    assert titles == [f"Post {n}" for n in range(count)]  # feed order, each once
    record = run_records(tmp_path)[-1]
    assert feed_outcome(record, "lab")["new"] == count
    assert_counts_add_up(record)


def test_an_entry_that_breaks_a_stage_costs_that_entry_only(tmp_path, feed_server):
    posts = [
        item("Before", "https://l/1"),
        item("Boom", "https://l/2"),
        item("After", "https://l/3"),
    ]
    url = feed_server.script("f.xml", Reply(200, rss(*posts), PLAIN))
    stages = {**ITEM_PIPELINES, "tests.pipelines.breaking_stage.BreakingStage": 450}
    proc = run_crawl(
        tmp_path, [{"vendor": "lab", "url": url}], "-s", f"ITEM_PIPELINES={json.dumps(stages)}"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    titles = [env["body"]["title"] for env in envelopes(tmp_path)]
    assert titles == ["Before", "After"]
    errors = [line for line in proc.stderr.splitlines() if " ERROR: " in line]
    assert len(errors) == 1 and "Error processing lab: 'https://l/2'" in errors[0], errors
    assert "RuntimeError: a bug in a stage" in proc.stderr  # with its traceback
    record = run_records(tmp_path)[-1]
    lab = feed_outcome(record, "lab")
    assert (lab["new"], lab["dropped"]) == (2, 1)
    assert lab["drop_reasons"] == {"internal error: RuntimeError": 1}
    assert_counts_add_up(record)


def test_a_batch_holding_one_identity_twice_is_an_error_not_a_crawl_that_never_ends(tmp_path):
    # batches() never makes one; a spider that made its own would have dedupe wait for itself.
    settings = {"CROVIA_LEDGER_DIR": str(tmp_path), "CROVIA_SIGNING_KEY_FILE": str(tmp_path / "k")}
    stage = DedupePipeline(get_crawler(scrapy.Spider, settings))
    twice = [entry("1"), entry("2"), entry("1")]
    for e in twice:
        e.identity_key = identity_digest(e.identity or identity(e))
        e.record = {"fingerprint": "0" * 64}
    step = stage.process_item(FeedBatch("lab", twice))
    with pytest.raises(ValueError, match="one identity twice"):
        step.send(None)  # raised before the first wait
    assert stage.in_flight == {} and stage.last_sighting == {}
    empty = stage.process_item(FeedBatch("lab", []))
    with pytest.raises(StopIteration):  # nothing to decide: no lookup, no wait
        empty.send(None)
