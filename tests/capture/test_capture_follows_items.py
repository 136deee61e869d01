"""The capture book follows items, not crawls (issue 43, obs 1 and 5): every item of a source
with `capture` has its page captured, whoever issued it and whenever, and every run says what it
did to pages.

Before, only the items a local crawl issued new or updated entered the book, and `crovia capture
--all` covered only the book: switching `capture = true` on for a feed already crawled did
nothing for its items, and items a crawl issued with captures off (as a cluster's sequencer
does) were never captured. A crawl that captured 3 pages said "items 0 new"; `crovia capture`
said "feeds 0 ok ... items 0 new" whether it captured pages or none.

A feed (kind "feed": not captured unless `capture = true`) on 127.0.0.1 links to article pages
on the same server.
"""

from __future__ import annotations

import json
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.capture.pages import PARAGRAPHS, article
from tests.crawl import BIN, PROJECT_ROOT, crawl_env, crovia, leaves, run_crawl, run_records
from tests.feedserver import FeedServer, Reply
from tests.spider.feedtext import item, rss

pytestmark = pytest.mark.slow
FAST = ["-s", "CROVIA_POLITE_DELAYS=0", "-s", "DOWNLOAD_DELAY=0", "-s", "RETRY_BACKOFF_BASE=0"]
RSS = {"Content-Type": "application/rss+xml"}


def serve(server: FeedServer, names: list[str], capture: bool | None) -> str:
    """The feed listing `names` (each an article page), and its feeds.toml."""
    server.script("robots.txt", Reply(body=b"User-agent: *\nAllow: /\n"))
    links = [item(f"Post {name}", server.url(f"articles/{name}")) for name in names]
    server.script("feed.xml", Reply(body=rss(*links), headers=RSS))
    for name in names:
        server.script(f"articles/{name}", article(f"Post {name}", PARAGRAPHS))
    said = "" if capture is None else f"capture = {str(capture).lower()}\n"
    return f'[[feeds]]\nvendor = "lab"\nurl = "{server.url("feed.xml")}"\n{said}'


def capture(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(BIN / "crovia"), "capture", *FAST, *args],
        cwd=PROJECT_ROOT,
        env=crawl_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def captures(tmp_path: Path) -> dict[str, list[dict]]:
    """The capture records by page name, in leaf order."""
    out: dict[str, list[dict]] = {}
    for envelope in leaves(tmp_path):
        if envelope["axiom_type"] == "AX.CAPTURE":
            out.setdefault(envelope["body"]["url"].rsplit("/", 1)[1], []).append(envelope)
    return out


def outcomes(tmp_path: Path) -> dict[str, list[str]]:
    found = captures(tmp_path).items()
    return {name: [e["body"]["outcome"] for e in chain] for name, chain in found}


def run_line(stderr: str) -> str:
    return [line for line in stderr.splitlines() if "SUMMARY: run " in line][-1]


def test_a_feed_switched_to_capture_has_its_items_followed(tmp_path):
    with FeedServer() as server:
        crawled = run_crawl(tmp_path, serve(server, ["a", "b", "c"], capture=None))
        assert crawled.returncode == 0, crawled.stderr[-3000:]
        assert captures(tmp_path) == {}  # a feed's pages are not captured by default
        nothing = capture(tmp_path)  # and crovia capture says so, not "feeds 0 ok"
        said = "pages 0 captured: no source of this crawl captures pages (capture = true)"
        assert said in run_line(nothing.stderr), nothing.stderr[-2000:]
        # The operator turns captures on for the feed: its items issued before are followed.
        (tmp_path / "feeds.toml").write_text(serve(server, ["a", "b", "c"], capture=True))
        metrics = tmp_path / "metrics.prom"
        first = capture(tmp_path, "-s", f"CROVIA_METRICS_FILE={metrics}")
        assert outcomes(tmp_path) == {"a": ["first"], "b": ["first"], "c": ["first"]}
        again = capture(tmp_path)  # nothing due: said, not silent
        assert len(server.requests_for("articles/a")) == 1
    # `crovia capture` fetches no feed: its run line is about pages.
    line = run_line(first.stderr)
    assert "pages 3 captured (3 first), 3 followed: 3 due later (next at " in line, line
    assert "feeds " not in line and "items " not in line, line
    line = run_line(again.stderr)
    assert "pages 0 captured, 3 followed: 3 due later (next at " in line, line
    records = run_records(tmp_path)[2:]
    assert records[0]["captures"] == {"lab": {"first": 3}}
    plan = records[0]["pages"]["lab"]
    assert (plan["followed"], plan["due_later"], plan["still_due"]) == (3, 3, 0)
    assert plan["next_due"] > records[0]["started_at"][:19]
    assert "captures" not in records[1] and records[1]["pages"]["lab"]["followed"] == 3
    text = metrics.read_text()
    for line in (
        'crovia_pages_captured_total{outcome="first",vendor="lab"} 3.0',
        'crovia_pages_followed{vendor="lab"} 3.0',
        'crovia_pages_due_later{vendor="lab"} 3.0',
        'crovia_pages_still_due{vendor="lab"} 0.0',
    ):
        assert line in text, text
    assert 'crovia_pages_next_due_timestamp_seconds{vendor="lab"}' in text


def test_the_next_crawl_follows_items_issued_before_capture_was_on(tmp_path):
    with FeedServer() as server:
        crawled = run_crawl(tmp_path, serve(server, ["a", "b"], capture=False))
        assert crawled.returncode == 0, crawled.stderr[-3000:]
        assert captures(tmp_path) == {}
        crawled = run_crawl(tmp_path, serve(server, ["a", "b"], capture=True))
        assert crawled.returncode == 0, crawled.stderr[-3000:]
    # Nothing new in the feed, yet both pages are captured, and the run line says so.
    assert sorted(captures(tmp_path)) == ["a", "b"]
    line = run_line(crawled.stderr)
    assert "items 0 new, 0 updated, 0 dropped, 2 duplicate" in line, line
    assert "; pages 2 captured (2 first), 2 followed: 2 due later (next at " in line, line


def test_items_issued_by_a_run_that_captured_nothing_are_followed(tmp_path):
    """Items signed with captures off (`CROVIA_CAPTURE=0`, as a cluster's sequencer signs them)
    after the book was saved: the next `crovia capture` enrols them from the ledger."""
    with FeedServer() as server:
        crawled = run_crawl(tmp_path, serve(server, ["a", "b"], capture=True))
        assert crawled.returncode == 0, crawled.stderr[-3000:]
        assert sorted(captures(tmp_path)) == ["a", "b"]
        feeds = serve(server, ["a", "b", "c"], capture=True)
        crawled = run_crawl(tmp_path, feeds, "-s", "CROVIA_CAPTURE=0")
        assert crawled.returncode == 0, crawled.stderr[-3000:]
        assert "c" not in captures(tmp_path)
        done = capture(tmp_path)
    # c is captured; a and b are not due yet (an hour after their first capture).
    assert {name: len(chain) for name, chain in captures(tmp_path).items()} == {
        "a": 1,
        "b": 1,
        "c": 1,
    }
    assert "pages 1 captured (1 first), 3 followed: 3 due later" in run_line(done.stderr)


def test_a_new_schedule_applies_to_pages_already_followed(tmp_path):
    """CROVIA_RECAPTURE_AFTER read by a later run applies to the pages the book follows: with
    `1s,2h` the pages first captured under the default schedule (due in an hour) are due."""
    with FeedServer() as server:
        crawled = run_crawl(tmp_path, serve(server, ["a", "b"], capture=True))
        assert crawled.returncode == 0, crawled.stderr[-3000:]
        book = json.loads((tmp_path / "ledger" / "captures_state.json").read_text())
        hour = [page["next_due"] for page in book["pages"].values()]
        latest = max(c["body"]["captured_at"] for c in captures(tmp_path)["b"])
        moment = datetime.fromisoformat(latest.replace("Z", "+00:00"))
        # The pages are due one second after their first capture under the new schedule.
        left = 1.5 - (datetime.now(UTC) - moment).total_seconds()
        if left > 0:
            time.sleep(left)  # wall time passing is what is under test
        done = capture(tmp_path, "-s", "CROVIA_RECAPTURE_AFTER=1s,2h")
    assert outcomes(tmp_path) == {"a": ["first", "unchanged"], "b": ["first", "unchanged"]}
    assert "pages 2 captured (2 unchanged)" in run_line(done.stderr)
    book = json.loads((tmp_path / "ledger" / "captures_state.json").read_text())
    assert all(page["next_due"] not in hour for page in book["pages"].values())


def test_crovia_body_writes_a_captured_page(tmp_path):
    """`crovia body CAPTURE_ID` writes the page a capture record signs (it said "issued before
    fetch evidence"); a capture that kept no page says why it has none."""
    with FeedServer() as server:
        feeds = serve(server, ["a", "b"], capture=True)
        server.script("robots.txt", Reply(body=b"User-agent: *\nDisallow: /articles/b\n"))
        crawled = run_crawl(tmp_path, feeds)
        assert crawled.returncode == 0, crawled.stderr[-3000:]
        sent = server.sent_bodies("articles/a")
    found = captures(tmp_path)
    page = tmp_path / "a.html"
    written = crovia(tmp_path, "body", found["a"][0]["axiom_id"], "--out", str(page))
    assert written.returncode == 0, written.stderr
    assert page.read_bytes() == sent[0]
    failed = found["b"][0]
    assert failed["body"]["outcome"] == "failed" and "body_sha256" not in failed["body"]
    refused = crovia(tmp_path, "body", failed["axiom_id"])
    assert refused.returncode == 2 and refused.stdout == ""
    assert "a capture record that kept no page (failed: Forbidden by robots.txt)" in (
        refused.stderr
    ), refused.stderr
    assert "issued before fetch evidence" not in refused.stderr
