"""How the metrics read runs.jsonl: incrementally, a growing last line waits, a file that shrank
(a restore) is read again, and a line that is not a run record is counted, not fatal."""

from __future__ import annotations

import json

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from crovia_spider.runs.metrics import registry_for


def record(finished: str, **feeds: int) -> bytes:
    """A run record: each feed's value is its HTTP status (0: no answer, an error)."""
    rows = [
        {"vendor": v, "status": s or None, "error": "" if s else "DNS lookup failed", "new": 1,
         "updated": 0, "not_modified": s == 304}
        for v, s in feeds.items()
    ]  # fmt: skip
    doc = {"finished_at": finished, "spider": "vendor_press", "outcome": "finished", "feeds": rows}
    return json.dumps(doc).encode() + b"\n"


def scrape(registry) -> dict:
    text = generate_latest(registry).decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_runs_are_read_as_they_come_and_again_after_a_restore(tmp_path):
    runs = tmp_path / "runs.jsonl"
    registry = registry_for(tmp_path, None)
    assert ("crovia_feed_consecutive_failures", (("vendor", "a"),)) not in scrape(registry)
    runs.write_bytes(record("2026-01-01T00:00:00Z", a=200, b=0))
    first = scrape(registry)
    assert first["crovia_feed_last_success_timestamp_seconds", (("vendor", "a"),)] == 1767225600
    assert first["crovia_feed_consecutive_failures", (("vendor", "b"),)] == 1
    with runs.open("ab") as out:
        out.write(record("2026-01-01T01:00:00Z", a=304, b=0))
        out.write(b'{"finished_at": "2026-01-01T02:00:00Z", "feeds": [')  # still being written
    second = scrape(registry)
    assert second["crovia_feed_consecutive_failures", (("vendor", "b"),)] == 2
    assert second["crovia_feed_fetches_total", (("outcome", "not_modified"), ("vendor", "a"))] == 1
    assert second["crovia_runs_unreadable_lines", ()] == 0, "a growing line is not yet a line"
    assert second["crovia_items_issued_total", (("change", "new"), ("vendor", "b"))] == 2
    runs.write_bytes(record("2026-01-02T00:00:00Z", b=200) + b"[1, 2]\n" + b"not json\n")
    restored = scrape(registry)
    assert restored["crovia_feed_consecutive_failures", (("vendor", "b"),)] == 0
    assert ("crovia_feed_fetches_total", (("outcome", "ok"), ("vendor", "a"))) not in restored
    assert restored["crovia_runs_unreadable_lines", ()] == 2
    assert (
        restored["crovia_crawl_runs_total", (("outcome", "finished"), ("spider", "vendor_press"))]
        == 1
    )


def test_a_feed_an_interrupted_crawl_never_fetched_is_no_failure(tmp_path):
    """Issue 33, obs 6: a Ctrl-C'd crawl's unfetched feeds ("interrupted") neither fail nor
    succeed: the streak of failures stands as it was, and no fetch is counted."""
    interrupted = {"vendor": "a", "status": None, "error": "interrupted", "new": 0, "updated": 0}
    doc = {"finished_at": "2026-01-01T02:00:00Z", "spider": "vendor_press",
           "outcome": "interrupted", "feeds": [interrupted]}  # fmt: skip
    runs = tmp_path / "runs.jsonl"
    runs.write_bytes(record("2026-01-01T00:00:00Z", a=0) + json.dumps(doc).encode() + b"\n")
    scraped = scrape(registry_for(tmp_path, None))
    assert scraped["crovia_feed_consecutive_failures", (("vendor", "a"),)] == 1
    assert scraped["crovia_feed_fetches_total", (("outcome", "failed"), ("vendor", "a"))] == 1
    assert ("crovia_feed_last_success_timestamp_seconds", (("vendor", "a"),)) not in scraped
