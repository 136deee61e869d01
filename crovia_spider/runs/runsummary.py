"""The closing summary of a crawl, logged from the run record just written: our last word.

It is the one place a failed feed is reported (once, with its reason), and it is printed whatever
the log level up to WARNING (the default): its lines use the SUMMARY level (between WARNING and
ERROR), so a cron job's log says what the crawl did in a few lines. Feeds that were read are listed
at INFO (`crovia crawl --verbose`). Feeds that failed the same way (the same error but for its
URLs; any "DNS lookup failed") are one line with their count and a few examples, not one line
each, and at most MAX_FAILURE_LINES such lines are written. Feeds that failed CROVIA_FAILING_AFTER
crawls in a row or more are named, in one line, in every summary until they recover. When every
feed failed on DNS, the run line says the machine looks offline, instead of leaving the reader to
guess from a wall of lookup failures.

The run line comes last: `run ID finished in 2.1s: feeds 2 ok, 0 unchanged, 1 failed; items 12
new, 0 updated, 0 dropped, 0 duplicate; sealed 12 leaves (root 3f2a...)`. Feeds the crawl was
stopped before they answered are "not fetched", never failed. A crawl of sources with captures
adds what it did to their pages: `pages 6 captured (3 first, 1 edited, 1 removed, 1 failed), 9
followed: 9 due later (next at 2026-12-01T01:00:00Z)`, and how many are still due (not captured
though due); a crawl of captures only (`crovia capture`) says only that.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from crovia_spider.runs.runlog import INTERRUPTED, FeedOutcome, RunLog

SUMMARY = logging.WARNING + 5
logging.addLevelName(SUMMARY, "SUMMARY")
logger = logging.getLogger("crovia_spider.summary")
OFFLINE = "every feed failed to resolve its host: this machine looks offline (no DNS)"
EXAMPLES = 3  # names shown in a line that stands for many feeds
# Failure lines at most: past this, the rarest kinds share one line (the log stays a dozen lines).
MAX_FAILURE_LINES = 8
# The capture outcomes in the order the summary lists them (no_main_text: a page kept without
# main text, signed "failed"; crovia_spider/runs/runlog.py).
CAPTURE_ORDER = ("first", "edited", "unchanged", "moved", "removed", "no_main_text", "failed")
PLAN_COUNTS = ("followed", "due_later", "still_due")
_URL = re.compile(r"<?\b[a-z][a-z0-9+.-]*://[^\s>]*>?", re.I)


def log_summary(
    run: RunLog,
    record: dict[str, Any],
    *,
    seal: str = "",
    streaks: Sequence[tuple[str, int, str]] = (),
) -> list[str]:
    """Log the summary of `run` (see the module docstring); return the SUMMARY lines logged.

    `seal` says what the final seal did; `streaks` are (vendor, failures in a row, since when) of
    the feeds failing long enough to be named."""
    lines: list[str] = []

    def say(text: str) -> None:
        lines.append(text)
        logger.log(SUMMARY, "%s", text)

    feeds = list(run.feeds.values())
    for feed in feeds:
        if feed.fetched:
            logger.info("%s", _feed_line(feed))
    groups = _failure_groups(feeds)
    shown = groups if len(groups) <= MAX_FAILURE_LINES else groups[: MAX_FAILURE_LINES - 1]
    for group in shown:
        say(_feed_line(group[0]) if len(group) == 1 else _group_line(group))
    if len(shown) < len(groups):
        rest = groups[len(shown) :]
        count = sum(len(group) for group in rest)
        names = _names([feed.vendor for group in rest for feed in group])
        say(f"{count} more feeds failed in {len(rest)} other ways: {names}"
            " (crovia feeds list --failing)")  # fmt: skip
    if streaks:
        say(_streak_line(streaks))
    stopped = [feed.vendor for feed in feeds if feed.interrupted]
    if stopped:
        say(f"{len(stopped)} feeds not fetched: the crawl was stopped before they answered"
            f" ({_names(stopped)}); not failures, the next crawl fetches them")  # fmt: skip
    for problem in record["problems"]:
        say(f"run {run.run_id}: {problem}")
    say(_run_line(run, record, feeds, seal))
    return lines


def failure_kind(error: str) -> str:
    """What failures that are "the same" share: "DNS lookup failed", "HTTP 503", "interrupted",
    else the text before the first ": " (an exception's name), else the whole error."""
    if error.startswith("DNS lookup failed"):
        return "DNS lookup failed"
    head, sep, _ = error.partition(": ")
    return head if sep else error


def failure_key(error: str) -> str:
    """What makes two failures "the same": the error with its URLs left out (a timeout names the
    URL it waited for), or "DNS lookup failed" whatever host did not resolve."""
    if error.startswith("DNS lookup failed"):
        return "DNS lookup failed"
    return _URL.sub("<url>", error)


def _failure_groups(feeds: list[FeedOutcome]) -> list[list[FeedOutcome]]:
    """The failed feeds by failure, the most common first (then in feed order)."""
    groups: dict[str, list[FeedOutcome]] = {}
    for feed in feeds:
        if not feed.fetched and not feed.interrupted:
            groups.setdefault(failure_key(_state(feed)), []).append(feed)
    return sorted(groups.values(), key=lambda group: -len(group))


def _state(feed: FeedOutcome) -> str:
    if feed.error:
        return feed.error
    if feed.not_modified:
        return "304 not modified"
    return f"HTTP {feed.status}" if feed.status is not None else INTERRUPTED


def _feed_line(feed: FeedOutcome) -> str:
    problem = f" [{feed.parse_error[:100]}]" if feed.parse_error and not feed.error else ""
    return (
        f"feed {feed.vendor}{'' if feed.fetched else ' failed'}: {_state(feed)[:300]};"
        f" seen {feed.items_seen}, new {feed.new}, updated {feed.updated},"
        f" duplicate {feed.duplicate}, dropped {feed.dropped}{problem}"
    )


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:EXAMPLES])
    return shown + (f" and {len(names) - EXAMPLES} more" if len(names) > EXAMPLES else "")


def _group_line(group: list[FeedOutcome]) -> str:
    first = group[0]
    return (
        f"{len(group)} feeds failed the same way ({failure_kind(_state(first))}):"
        f" {_names([feed.vendor for feed in group])}; e.g. {first.vendor}: {_state(first)[:200]}"
    )


def _streak_line(streaks: Sequence[tuple[str, int, str]]) -> str:
    parts = [f"{vendor}: failed {count} crawls in a row since {since}"
             for vendor, count, since in streaks]  # fmt: skip
    shown = "; ".join(parts[:EXAMPLES])
    more = f"; and {len(parts) - EXAMPLES} more (crovia feeds list --failing)"
    return "still failing " + shown + (more if len(parts) > EXAMPLES else "")


def _run_line(run: RunLog, record: dict[str, Any], feeds: list[FeedOutcome], seal: str) -> str:
    ok = sum(1 for f in feeds if f.fetched and not f.not_modified)
    unchanged = sum(1 for f in feeds if f.fetched and f.not_modified)
    stopped = sum(1 for f in feeds if f.interrupted)
    failed = len(feeds) - ok - unchanged - stopped
    totals = record["totals"]
    offline = feeds and all(f.error.startswith("DNS lookup failed") for f in feeds)
    fetched = f"feeds {ok} ok, {unchanged} unchanged, {failed} failed" + (
        f", {stopped} not fetched" if stopped else ""
    )
    items = (
        f"items {totals['new']} new, {totals['updated']} updated, {totals['dropped']} dropped,"
        f" {totals['duplicate']} duplicate"
    )
    pages = _pages_part(record)
    if not feeds and not pages:  # a crawl of captures only, of sources that capture nothing
        pages = "pages 0 captured: no source of this crawl captures pages (capture = true)"
    # A crawl of captures only (`crovia capture`) fetches no feed and issues no item.
    done = [pages] if pages and not feeds else [fetched, items, *([pages] if pages else [])]
    return (
        f"run {run.run_id} {record['outcome']} in {_elapsed(record):.1f}s: {'; '.join(done)};"
        f" {seal or 'not sealed'}" + (f"; {OFFLINE}" if offline else "")
    )


def _pages_part(record: dict[str, Any]) -> str:
    """What a run with captures did to pages: "pages 6 captured (3 first, 1 edited, 1 removed,
    1 failed), 9 followed: 8 due later (next at T), 1 still due"; "" for a run of sources
    without captures. Still due: pages due now that this run did not capture (it was stopped,
    or over its budget)."""
    captured, plan = record.get("captures") or {}, record.get("pages") or {}
    if not captured and not plan:
        return ""
    totals: dict[str, int] = {}
    for counts in captured.values():
        for outcome, count in counts.items():
            totals[outcome] = totals.get(outcome, 0) + count
    order = [*CAPTURE_ORDER, *sorted(set(totals) - set(CAPTURE_ORDER))]
    found = ", ".join(f"{totals[o]} {o.replace('_', ' ')}" for o in order if totals.get(o))
    text = f"pages {sum(totals.values())} captured" + (f" ({found})" if found else "")
    if plan:
        counts = {key: sum(v[key] for v in plan.values()) for key in PLAN_COUNTS}
        soonest = min((v["next_due"] for v in plan.values() if v["next_due"]), default="")
        text += f", {counts['followed']} followed: {counts['due_later']} due later" + (
            f" (next at {soonest})" if soonest else ""
        )
        if counts["still_due"]:
            text += f", {counts['still_due']} still due"
    return text


def _elapsed(record: dict[str, Any]) -> float:
    try:
        start = datetime.fromisoformat(record["started_at"].replace("Z", "+00:00"))
        end = datetime.fromisoformat(record["finished_at"].replace("Z", "+00:00"))
    except (KeyError, ValueError):
        return 0.0
    return max(0.0, (end - start).total_seconds())
