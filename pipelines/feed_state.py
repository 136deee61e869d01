"""After a run is durable: remember each feed's validators and last outcome for the next run.

A feed's ETag and Last-Modified are stored only if it was fetched whole (200, no fetch error, no
truncated body) and every one of its items was accounted for, or it answered 304 (the old
validators stay). Anything else keeps the previous validators, so the next crawl refetches.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crovia_spider.feedstate import IDENTITY_RULE, load_state, save_state
from crovia_spider.runlog import FeedOutcome, RunLog


def updated_state(ledger_dir: Path, run: RunLog) -> dict[str, dict[str, Any]]:
    """Merge `run` into the state file of `ledger_dir` and write it atomically; return the state."""
    state = load_state(ledger_dir)
    for feed in run.feeds.values():
        entry = dict(state.get(feed.url, {}))
        if _complete(feed) and not feed.not_modified:
            entry["etag"], entry["last_modified"] = feed.etag, feed.last_modified
            entry["identity_rule"] = IDENTITY_RULE
        entry["vendor"] = feed.vendor
        entry["last_run"] = {"run_id": run.run_id, "started_at": run.started_at, **_summary(feed)}
        state[feed.url] = entry
    save_state(ledger_dir, state)
    return state


def _complete(feed: FeedOutcome) -> bool:
    accounted = feed.new + feed.updated + feed.duplicate + feed.dropped
    truncated = feed.drop_reasons.get("truncated document", 0)
    return feed.fetched and feed.status == 200 and not truncated and accounted == feed.items_seen


def _summary(feed: FeedOutcome) -> dict[str, Any]:
    keys = (
        "status",
        "error",
        "parse_error",
        "not_modified",
        "items_seen",
        "new",
        "updated",
        "duplicate",
        "dropped",
    )
    return {key: getattr(feed, key) for key in keys}
