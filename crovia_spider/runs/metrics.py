"""Prometheus metrics of a ledger directory: feed health, items issued, lag of seal, stamp, publish.

Everything is read from the files an operator already has, at the moment of the scrape, so the
numbers are the ledger's and the run record's (runs.jsonl), never a second bookkeeping that could
drift: `crovia schedule --metrics-port P` serves them over HTTP (prometheus-client's server), and
with `CROVIA_METRICS_FILE` set every crawl writes them for node-exporter's textfile collector
(prometheus-client's `write_to_textfile`: a temporary file renamed over the old one).

Metric names and meanings are in docs/operations.md ("Metrics"). Per feed (label `vendor`):
the finish time of the newest crawl whose fetch of the feed succeeded (200 or 304), its failures
in a row up to the newest crawl that included it, and every fetch by outcome (`ok`,
`not_modified`, `failed`); items issued by vendor and change (`new`, `updated`); pages captured
by vendor and outcome (`no_main_text` too: a page kept without a main text), and, as the newest
run of each vendor left them, the pages followed, due later, still due and the soonest due; and
for the ledger as a whole its size, and how far sealing, stamping and publishing lag behind: the
age of the oldest leaf that the newest seal (stamped seal, published checkpoint) does not cover
yet, 0 when it covers every leaf. A stage that is not configured (stamping without
CROVIA_TSA_URLS or CROVIA_OTS_CALENDARS, publishing without CROVIA_PUBLISH_DIR) has no lag: it
would only grow, and an alert on it would fire on every install without that stage.
`crovia_stage_configured` says which.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from prometheus_client import CollectorRegistry, write_to_textfile
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from crovia_spider.runs.runlog import INTERRUPTED
from ledger.store import LEDGER_FILE, RUNS_FILE, SEALS_FILE

FETCH_OUTCOMES = ("ok", "not_modified", "failed")
NOT_FETCHED = "not_fetched"
CHANGES = ("new", "updated")
PLAN_COUNTS = ("followed", "due_later", "still_due")  # a run record's `pages`, per vendor


def parse_time(text: str) -> float:
    """Seconds since the epoch of an RFC 3339 UTC time as the ledger writes them ("...Z")."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC).timestamp()


@dataclass
class FeedHealth:
    """What the run records say about one feed."""

    last_success: float | None = None
    consecutive_failures: int = 0
    fetches: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FETCH_OUTCOMES, 0))
    issued: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CHANGES, 0))


def fetch_outcome(feed: dict[str, Any]) -> str:
    """`ok`, `not_modified` or `failed`, as `FeedOutcome.fetched` decides success; `not_fetched`
    for a feed a stopped crawl never asked for (no failure, and no success either)."""
    if feed.get("error") == INTERRUPTED:
        return NOT_FETCHED
    if feed.get("error") or feed.get("status") not in (200, 304):
        return "failed"
    return "not_modified" if feed.get("status") == 304 or feed.get("not_modified") else "ok"


class RunTotals:
    """Feed health summed over runs.jsonl, read incrementally: only lines added since last time.

    A file that shrank (replaced by a restore) is read again from the start.
    """

    def __init__(self, runs_file: Path) -> None:
        self.path = runs_file
        self._reset()

    def _reset(self) -> None:
        self._offset = 0
        self.feeds: dict[str, FeedHealth] = {}
        self.runs: dict[tuple[str, str], int] = {}
        self.captures: dict[tuple[str, str], int] = {}  # (vendor, capture outcome) -> count
        # vendor -> the capture book's plan in the newest run that captured its pages
        self.pages: dict[str, dict[str, Any]] = {}
        self.last_run_finished: float | None = None
        self.unreadable = 0  # lines that are not a run record: counted, never fatal to a scrape

    def refresh(self) -> None:
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            size = 0
        if size < self._offset:
            self._reset()
        if size == self._offset:
            return
        with self.path.open("rb") as handle:
            handle.seek(self._offset)
            data = handle.read(size - self._offset)
        complete = data[: data.rfind(b"\n") + 1]  # a torn or growing last line waits
        for line in complete.splitlines():
            if line.strip():
                try:
                    self._add(orjson.loads(line))
                except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
                    self.unreadable += 1
        self._offset += len(complete)

    def _add(self, record: dict[str, Any]) -> None:
        """Count one run record; raises (counting nothing) when it is not one."""
        finished = parse_time(record["finished_at"])
        feeds = [
            (str(feed["vendor"]), fetch_outcome(feed), [int(feed.get(c, 0)) for c in CHANGES])
            for feed in record.get("feeds", [])
        ]
        captured = [
            ((str(vendor), str(outcome)), int(count))
            for vendor, outcomes in record.get("captures", {}).items()
            for outcome, count in outcomes.items()
        ]
        pages = {
            str(vendor): {
                **{key: int(plan[key]) for key in PLAN_COUNTS},
                "next_due": parse_time(plan["next_due"]) if plan["next_due"] else None,
            }
            for vendor, plan in record.get("pages", {}).items()
        }
        self.last_run_finished = max(finished, self.last_run_finished or finished)
        key = (str(record.get("spider", "")), str(record.get("outcome", "")))
        self.runs[key] = self.runs.get(key, 0) + 1
        for vendor, outcome, counts in feeds:
            health = self.feeds.setdefault(vendor, FeedHealth())
            if outcome == NOT_FETCHED:
                continue  # no fetch: neither a failure nor a success, and nothing issued
            health.fetches[outcome] += 1
            if outcome == "failed":
                health.consecutive_failures += 1
            else:
                health.consecutive_failures = 0
                health.last_success = finished
            for change, count in zip(CHANGES, counts, strict=True):
                health.issued[change] += count
        for key, count in captured:
            self.captures[key] = self.captures.get(key, 0) + count
        self.pages.update(pages)


def stamping_configured() -> bool:
    """Whether `crovia stamp` has somewhere to ask: CROVIA_TSA_URLS or CROVIA_OTS_CALENDARS."""
    from crovia_spider.options import env_default

    return any(
        env_default(name).strip(", ") for name in ("CROVIA_TSA_URLS", "CROVIA_OTS_CALENDARS")
    )


class LedgerCollector(Collector):
    """The metrics of the ledger at `ledger_dir` (and of the published log at `publish_dir`).

    `stamping` says whether stamps are configured (default: the environment, as `crovia stamp`
    reads it); publishing is configured when `publish_dir` is given."""

    def __init__(
        self, ledger_dir: Path, publish_dir: Path | None = None, stamping: bool | None = None
    ) -> None:
        self.ledger_dir = Path(ledger_dir)
        self.publish_dir = publish_dir
        self.stamping = stamping_configured() if stamping is None else stamping
        self._runs = RunTotals(self.ledger_dir / RUNS_FILE)
        self._lock = threading.Lock()  # the HTTP server may scrape from two threads

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        with self._lock:
            self._runs.refresh()
            yield from self._feed_metrics()
            yield from self._ledger_metrics(datetime.now(UTC).timestamp())

    def _feed_metrics(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        feeds = sorted(self._runs.feeds.items())
        success = GaugeMetricFamily(
            "crovia_feed_last_success_timestamp_seconds",
            "Finish time of the newest crawl that fetched the feed (HTTP 200 or 304)",
            labels=["vendor"],
        )
        failing = GaugeMetricFamily(
            "crovia_feed_consecutive_failures",
            "Crawls in a row, up to the newest that included the feed, whose fetch of it failed",
            labels=["vendor"],
        )
        fetches = CounterMetricFamily(
            "crovia_feed_fetches",
            "Fetches of the feed by outcome: ok, not_modified (304), failed",
            labels=["vendor", "outcome"],
        )
        issued = CounterMetricFamily(
            "crovia_items_issued",
            "Envelopes issued into the ledger by vendor and change: new, updated",
            labels=["vendor", "change"],
        )
        for vendor, health in feeds:
            if health.last_success is not None:
                success.add_metric([vendor], health.last_success)
            failing.add_metric([vendor], health.consecutive_failures)
            for outcome, count in health.fetches.items():
                fetches.add_metric([vendor, outcome], count)
            for change, count in health.issued.items():
                issued.add_metric([vendor, change], count)
        captures = CounterMetricFamily(
            "crovia_pages_captured",
            "Captures of items' pages (AX.CAPTURE records) by vendor and outcome",
            labels=["vendor", "outcome"],
        )
        for (vendor, outcome), count in sorted(self._runs.captures.items()):
            captures.add_metric([vendor, outcome], count)
        yield captures
        yield from self._page_metrics()
        runs = CounterMetricFamily(
            "crovia_crawl_runs", "Crawls recorded in runs.jsonl", labels=["spider", "outcome"]
        )
        for (spider, outcome), count in sorted(self._runs.runs.items()):
            runs.add_metric([spider, outcome], count)
        yield from (success, failing, fetches, issued, runs)
        yield GaugeMetricFamily(
            "crovia_runs_unreadable_lines",
            "Lines of runs.jsonl that are not a run record (left out of every metric above)",
            value=self._runs.unreadable,
        )
        if self._runs.last_run_finished is not None:
            yield GaugeMetricFamily(
                "crovia_last_crawl_timestamp_seconds",
                "Finish time of the newest crawl in runs.jsonl",
                value=self._runs.last_run_finished,
            )

    def _page_metrics(self) -> Iterator[GaugeMetricFamily]:
        """What the capture book follows of each vendor, as the newest run of it recorded."""
        helps = {
            "followed": "Items' pages the capture book follows (every item of a capture source)",
            "due_later": "Pages followed whose next capture is ahead",
            "still_due": "Pages due that the newest run did not capture (stopped, over budget)",
        }
        families = {
            key: GaugeMetricFamily(f"crovia_pages_{key}", text, labels=["vendor"])
            for key, text in helps.items()
        }
        soonest = GaugeMetricFamily(
            "crovia_pages_next_due_timestamp_seconds",
            "When the soonest page due later is due (absent when none is)",
            labels=["vendor"],
        )
        for vendor, plan in sorted(self._runs.pages.items()):
            for key, family in families.items():
                family.add_metric([vendor], plan[key])
            if plan["next_due"] is not None:
                soonest.add_metric([vendor], plan["next_due"])
        yield from (*families.values(), soonest)

    def _ledger_metrics(self, now: float) -> Iterator[GaugeMetricFamily]:
        reader = _open_reader(self.ledger_dir)
        leaf_count = reader.leaf_count if reader else 0
        seals = _seals(self.ledger_dir / SEALS_FILE)
        covered = {
            "sealed": seals[-1]["leaf_count"] if seals else 0,
            "stamped": _stamped_leaf_count(self.ledger_dir, seals),
        }
        if self.publish_dir is not None:
            covered["published"] = _published_size(self.publish_dir)
        configured = {
            "sealed": True,  # every crawl seals at its end
            "stamped": self.stamping,
            "published": self.publish_dir is not None,
        }
        try:
            size = (self.ledger_dir / LEDGER_FILE).stat().st_size
        except FileNotFoundError:
            size = 0
        yield GaugeMetricFamily(
            "crovia_ledger_leaves", "Leaves (envelopes) in the ledger", value=leaf_count
        )
        yield GaugeMetricFamily(
            "crovia_ledger_bytes", "Size of axiom_ledger.jsonl in bytes", value=size
        )
        count = GaugeMetricFamily(
            "crovia_covered_leaves",
            "Leaves covered by the newest seal, stamped seal, published checkpoint",
            labels=["stage"],
        )
        lag = GaugeMetricFamily(
            "crovia_lag_seconds",
            "Age of the oldest leaf the stage (sealed, stamped, published) does not cover yet;"
            " 0 when it covers every leaf; absent for a stage that is not configured",
            labels=["stage"],
        )
        on = GaugeMetricFamily(
            "crovia_stage_configured",
            "1 when the stage is configured (stamped: CROVIA_TSA_URLS or CROVIA_OTS_CALENDARS;"
            " published: CROVIA_PUBLISH_DIR), else 0 and it has no lag",
            labels=["stage"],
        )
        for stage, is_on in configured.items():
            on.add_metric([stage], 1 if is_on else 0)
        try:
            for stage, n in covered.items():
                count.add_metric([stage], n)
                if not configured[stage]:
                    continue
                oldest = parse_time(reader.envelope(n)["issued_at"]) if n < leaf_count else now
                lag.add_metric([stage], max(0.0, now - oldest))
        finally:
            if reader is not None:
                reader.close()
        yield count
        yield lag
        yield on


def _lines(path: Path) -> Iterator[bytes]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    yield from data[: data.rfind(b"\n") + 1].splitlines()


def _open_reader(ledger_dir: Path) -> Any:
    """A reader of the ledger (never its lock), or None while there is no ledger yet."""
    from ledger.exceptions import LedgerNotFound
    from ledger.store import Ledger

    try:
        return Ledger.open(ledger_dir)
    except LedgerNotFound:
        return None


def _seals(seals_file: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in _lines(seals_file) if line.strip()]


def _stamped_leaf_count(ledger_dir: Path, seals: list[dict[str, Any]]) -> int:
    """Leaves covered by the newest seal that holds an RFC 3161 token or an OpenTimestamps proof."""
    from ledger.stamps.store import StampStore

    store = StampStore(ledger_dir)
    for seal in reversed(seals):
        record = store.load(seal)
        if record.get("rfc3161") or record.get("ots"):
            return int(seal["leaf_count"])
    return 0


def _published_size(publish_dir: Path) -> int:
    """Tree size of the published checkpoint (its second line), 0 when none is published."""
    try:
        lines = (publish_dir / "checkpoint").read_text(encoding="utf-8").split("\n")
        return int(lines[1])
    except (FileNotFoundError, IndexError, ValueError):
        return 0


def registry_for(ledger_dir: Path, publish_dir: Path | None) -> CollectorRegistry:
    """A registry holding only this ledger's metrics (no process or platform collectors)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(LedgerCollector(ledger_dir, publish_dir))
    return registry


def serve(
    ledger_dir: Path, publish_dir: Path | None, host: str, port: int
) -> tuple[Any, threading.Thread]:
    """Serve the metrics at http://HOST:PORT/metrics in a daemon thread; (server, thread)."""
    from prometheus_client import start_http_server

    return start_http_server(port, addr=host, registry=registry_for(ledger_dir, publish_dir))


def write_textfile(path: Path, ledger_dir: Path, publish_dir: Path | None) -> None:
    """Write the metrics for node-exporter's textfile collector, replacing the file atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_to_textfile(os.fspath(path), registry_for(ledger_dir, publish_dir))
