"""Content that changes between crawls, and a crawl killed half-way."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
from pathlib import Path

from tests.conftest import FEEDS
from tests.crawl import (
    BIN,
    FAST_SETTINGS,
    PROJECT_ROOT,
    crawl_env,
    crovia,
    envelopes,
    feed_outcome,
    run_crawl,
    run_records,
    write_feeds,
)
from tests.feedserver import Reply

ARXIV = (FEEDS / "arxiv_cs_ai_rss2_2026-04-27_trim3.xml").read_bytes()
ARXIV_V2 = ARXIV.replace(
    b"arXiv:2604.21935v1 Announce Type: new", b"arXiv:2604.21935v2 Announce Type: replace", 1
).replace(
    b"<arxiv:announce_type>new</arxiv:announce_type>",
    b"<arxiv:announce_type>replace</arxiv:announce_type>",
    1,
)
POSTS = (FEEDS / "openai_news_rss_reserialized_trim3.xml").read_bytes()


def _edited(posts: bytes) -> bytes:
    start = posts.index(b"<description>", posts.index(b"<item>")) + len(b"<description>")
    return posts[:start] + b"Edited after publication. " + posts[start:]


def child_pids(parent: int) -> list[int]:
    """Processes whose parent is `parent` (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended meanwhile
        if int(fields[1]) == parent:
            found.append(int(stat.parent.name))
    return found


def test_changed_items_issue_new_envelopes_linked_to_their_predecessors(tmp_path, feed_server):
    feeds = [
        {
            "vendor": "arxiv_cs_ai",
            "url": feed_server.script("arxiv.xml", Reply(200, ARXIV), Reply(200, ARXIV_V2)),
        },
        {
            "vendor": "openai",
            "url": feed_server.script("posts.xml", Reply(200, POSTS), Reply(200, _edited(POSTS))),
        },
    ]
    assert run_crawl(tmp_path, feeds).returncode == 0
    first = {env["subject"]["target_id"]: env for env in envelopes(tmp_path)}
    assert run_crawl(tmp_path, feeds).returncode == 0
    later = envelopes(tmp_path)[len(first) :]
    assert len(later) == 2
    for env in later:
        earlier = first[env["subject"]["target_id"]]
        assert env["predecessors"] == [earlier["axiom_id"]]
        assert env["decision"] == "REVISION"
        assert env["body"]["fingerprint"] != earlier["body"]["fingerprint"]
    paper = next(env for env in later if "arxiv" in env["object"])
    assert paper["object"]["arxiv"] == {
        "id": "2604.21935",
        "version": 2,
        "announce_type": "replace",
    }
    record = run_records(tmp_path)[1]
    assert feed_outcome(record, "arxiv_cs_ai")["updated"] == 1
    assert feed_outcome(record, "arxiv_cs_ai")["duplicate"] == 2
    assert feed_outcome(record, "openai")["updated"] == 1
    assert crovia(tmp_path, "audit").returncode == 0


def test_a_killed_crawl_stores_no_validators_and_loses_nothing(tmp_path, feed_server):
    slow = feed_server.script("slow.xml", Reply(200, POSTS, delay=30))
    feeds = [
        {"vendor": "arxiv_cs_ai", "url": feed_server.url("arxiv_cs_ai_rss2_2026-04-27_trim3.xml")},
        {"vendor": "slow", "url": slow},
    ]
    write_feeds(tmp_path / "feeds.toml", feeds)
    args = [str(BIN / "scrapy"), "crawl", "vendor_press", *FAST_SETTINGS]
    with subprocess.Popen(
        args,
        cwd=PROJECT_ROOT,
        env=crawl_env(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    ) as proc:
        # Once the slow feed is asked for, the crawl is mid-way: kill it there.
        assert feed_server.wait_for_request("slow.xml", timeout=60)
        children = [os.pidfd_open(pid) for pid in child_pids(proc.pid)]  # the parser worker
        proc.send_signal(signal.SIGKILL)
    for pidfd in children:  # a killed crawl leaves no process behind
        assert select.select([pidfd], [], [], 30)[0], "a crawl's child outlived it"
        os.close(pidfd)
    assert not (tmp_path / "ledger" / "feeds_state.json").exists()
    feed_server.clear()
    feed_server.script("slow.xml", Reply(200, POSTS))
    assert run_crawl(tmp_path, None).returncode == 0
    (request,) = feed_server.requests_for("arxiv_cs_ai_rss2_2026-04-27_trim3.xml")
    assert "if-none-match" not in request.headers  # refetched in full: nothing is skipped
    targets = [env["subject"]["target_id"] for env in envelopes(tmp_path)]
    assert len(targets) == len(set(targets)) == 6
    assert crovia(tmp_path, "audit").returncode == 0
    state = json.loads((tmp_path / "ledger" / "feeds_state.json").read_text())
    assert state[feeds[0]["url"]]["etag"]
