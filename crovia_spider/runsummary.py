"""The closing summary of a crawl, logged from the run record just written.

It is the one place a failed feed is reported (once, with its reason), and it is printed whatever
the log level up to WARNING: its lines use the SUMMARY level (between WARNING and ERROR), so a cron
job run with `-L WARNING` still says what the crawl did. Feeds that were read are listed at INFO.
When every feed failed on DNS, the run line says the machine looks offline, instead of leaving the
reader to guess from a wall of lookup failures.
"""

from __future__ import annotations

import logging
from typing import Any

from crovia_spider.runlog import FeedOutcome, RunLog

SUMMARY = logging.WARNING + 5
logging.addLevelName(SUMMARY, "SUMMARY")
logger = logging.getLogger("crovia_spider.summary")
OFFLINE = "every feed failed to resolve its host: this machine looks offline (no DNS)"


def log_summary(run: RunLog, record: dict[str, Any]) -> None:
    """One line per feed (SUMMARY for a failed one, INFO otherwise) and one for the run."""
    for feed in run.feeds.values():
        _log_feed(feed)
    feeds = list(run.feeds.values())
    failed = sum(1 for f in feeds if not f.fetched)
    totals = record["totals"]
    offline = feeds and all(f.error.startswith("DNS lookup failed") for f in feeds)
    logger.log(
        SUMMARY,
        "run %s %s: %d feeds (%d failed), %d new, %d updated, %d duplicate, %d dropped%s",
        run.run_id, record["outcome"], len(feeds), failed, totals["new"], totals["updated"],
        totals["duplicate"], totals["dropped"], f"; {OFFLINE}" if offline else "",
    )  # fmt: skip
    for problem in record["problems"]:
        logger.log(SUMMARY, "run %s: %s", run.run_id, problem)


def _log_feed(feed: FeedOutcome) -> None:
    state = feed.error or ("304 not modified" if feed.not_modified else f"HTTP {feed.status}")
    problem = f" [{feed.parse_error[:100]}]" if feed.parse_error and not feed.error else ""
    level = logging.INFO if feed.fetched else SUMMARY
    logger.log(
        level,
        "feed %s%s: %s; seen %d, new %d, updated %d, duplicate %d, dropped %d%s",
        feed.vendor, "" if feed.fetched else " failed", state[:300], feed.items_seen, feed.new,
        feed.updated, feed.duplicate, feed.dropped, problem,
    )  # fmt: skip
