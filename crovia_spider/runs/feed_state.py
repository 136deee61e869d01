"""Per-feed state kept between crawls: HTTP validators for conditional GET and the last outcome.

The spider reads it (`conditional_headers`, and for fetch records the feed's last body and the
body its validators name); the issue stage merges each run into it (`updated_state`) only after
the run is durable.

Lives in `<ledger dir>/feeds_state.json`, replaced atomically (write, fsync, rename). The issue
stage writes it only after the crawl's last batch is durably in the ledger, and stores a feed's ETag
and Last-Modified only if that feed was fetched whole and every one of its items reached the ledger:
a crawl killed half-way leaves the old validators, so the next crawl refetches and nothing is
skipped.

An OAI-PMH source (kind "oaipmh") keeps the last day its harvests listed whole, with every record
issued (`oai_complete_through`): its next harvest starts there.

It also keeps each feed's health for `crovia feeds list` and the crawl summary: `last_success`
(start of the last crawl that fetched it, 200 or 304), `last_new_item` (of the last crawl that
issued one of its items), `failures` (crawls in a row that failed to fetch it; an interrupted crawl
does not count) and `failing_since` (start of the first of them).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from crovia_spider.runs.runlog import INTERRUPTED, NOT_READ_WHOLE, FeedOutcome, RunLog
from ledger.jsonl import fsync_dir

STATE_FILE = "feeds_state.json"
# Validators vouch that every item of the feed was accounted for under the identity rule of their
# crawl (pipelines/fingerprint.py). Those stored under an older rule are not sent: rule 1 (unmarked)
# dropped #fragments and merged distinct items; rule 2 merged items sharing a link and let one
# source's item stand for another's. Such a feed is fetched in full once more and what the old
# rule lost is issued.
IDENTITY_RULE = 3  # 3: identities scoped to a source family, guid and link combined
logger = logging.getLogger(__name__)


def load_state(ledger_dir: Path | str) -> dict[str, dict[str, Any]]:
    """Feed URL -> state; empty if there is none yet. An unreadable file is logged and ignored
    (it only costs a full refetch; the ledger's dedupe still stops duplicates)."""
    path = Path(ledger_dir) / STATE_FILE
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        logger.warning("ignoring unreadable feed state %s: %s", path, exc)
        return {}
    return state if isinstance(state, dict) else {}


def save_state(ledger_dir: Path | str, state: dict[str, dict[str, Any]]) -> None:
    """Replace the state file atomically. Raises OSError if it cannot be written."""
    save_json(Path(ledger_dir) / STATE_FILE, state)


def save_json(path: Path, data: Any) -> None:
    """Replace the JSON file at `path` with `data` atomically and durably (write, fsync,
    rename, fsync the directory): a state file beside the ledger (this one, the capture book)."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        json.dump(data, out, indent=1, sort_keys=True)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def conditional_headers(entry: dict[str, Any] | None) -> dict[str, str]:
    """If-None-Match / If-Modified-Since from a feed's stored state (empty if none is stored, or
    if they were stored under another identity rule)."""
    headers: dict[str, str] = {}
    if not entry or entry.get("identity_rule") != IDENTITY_RULE:
        return headers
    if entry.get("etag"):
        headers["If-None-Match"] = entry["etag"]
    if entry.get("last_modified"):
        headers["If-Modified-Since"] = entry["last_modified"]
    return headers


def updated_state(ledger_dir: Path, run: RunLog) -> dict[str, dict[str, Any]]:
    """Merge `run` into the state file of `ledger_dir` and write it atomically; return the state."""
    state = load_state(ledger_dir)
    for feed in run.feeds.values():
        entry = dict(state.get(feed.url, {}))
        body = run.bodies.get(feed.vendor)
        if body is not None and "walk" in body:  # a sitemap walk: never conditional, no body
            for name in ("etag", "last_modified", "validated_body"):  # a 304 could confirm
                entry.pop(name, None)
        elif _complete(feed) and not feed.not_modified:
            entry["etag"], entry["last_modified"] = feed.etag, feed.last_modified
            entry["identity_rule"] = IDENTITY_RULE
            # The body these validators name: a later 304's fetch record confirms it.
            if body is not None:
                entry["validated_body"] = body
            else:
                entry.pop("validated_body", None)
        if body is not None:  # the next fetch record says whether its body is this one
            entry["last_body_sha256"] = body.get("walk", body["sha256"])
        if body is not None and body.get("oai_through") and _complete(feed):
            # An OAI-PMH harvest's last day listed whole, all of it in the ledger: the next
            # harvest starts there (crovia_spider/spiders/oaipmh_walk.py); never moved back.
            kept = str(entry.get("oai_complete_through", ""))
            entry["oai_complete_through"] = max(kept, body["oai_through"])
        entry["vendor"] = feed.vendor
        entry["last_run"] = {"run_id": run.run_id, "started_at": run.started_at, **_summary(feed)}
        _health(entry, feed, run.started_at)
        state[feed.url] = entry
    save_state(ledger_dir, state)
    return state


def _health(entry: dict[str, Any], feed: FeedOutcome, started_at: str) -> None:
    if feed.fetched:
        entry["failures"] = 0
        entry.pop("failing_since", None)
        entry["last_success"] = started_at
        if feed.new or feed.updated:
            entry["last_new_item"] = started_at
    elif feed.error != INTERRUPTED:
        entry["failures"] = int(entry.get("failures", 0)) + 1
        if entry["failures"] == 1 or "failing_since" not in entry:
            entry["failing_since"] = started_at


def failing_streaks(
    state: dict[str, dict[str, Any]], run: RunLog, after: int
) -> list[tuple[str, int, str]]:
    """(vendor, failures in a row, since) of the run's feeds that failed `after` crawls in a row
    or more, longest streak first."""
    found = []
    for feed in run.feeds.values():
        entry = state.get(feed.url, {})
        count = int(entry.get("failures", 0))
        if after > 0 and count >= after:
            found.append((feed.vendor, count, str(entry.get("failing_since", "?"))))
    return sorted(found, key=lambda streak: (-streak[1], streak[0]))


def _complete(feed: FeedOutcome) -> bool:
    accounted = feed.new + feed.updated + feed.duplicate + feed.dropped
    not_whole = any(feed.drop_reasons.get(reason) for reason in NOT_READ_WHOLE)
    return feed.fetched and feed.status == 200 and not not_whole and accounted == feed.items_seen


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
