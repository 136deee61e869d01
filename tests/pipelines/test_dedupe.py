"""Dedupe within one run, in real crawls: distinct items all issue, and a second version of an item
seen in the same run chains to the first one's envelope."""

from __future__ import annotations

import json

import pytest

from tests.conftest import FEEDS
from tests.crawl import crovia, envelopes, feed_outcome, run_crawl, run_records
from tests.feedserver import Reply

CHANGELOG = "anthropic_claude_code_changelog_mintlify_prefix.xml"
ARXIV = (FEEDS / "arxiv_cs_ai_rss2_2026-04-27_trim3.xml").read_bytes()
PAPER = "https://arxiv.org/abs/2604.21935"


def two_versions_of_one_paper() -> bytes:
    """The arXiv capture with v2 of its first paper listed right after v1, as a replacement."""
    start = ARXIV.index(b"<item>")
    end = ARXIV.index(b"</item>", start) + len(b"</item>")
    v2 = (
        ARXIV[start:end]
        .replace(b"2604.21935v1 Announce Type: new", b"2604.21935v2 Announce Type: replace")
        .replace(b"oai:arXiv.org:2604.21935v1", b"oai:arXiv.org:2604.21935v2")
        .replace(b">new</arxiv:announce_type>", b">replace</arxiv:announce_type>")
    )
    return ARXIV[:end] + b"\n    " + v2 + ARXIV[end:]


def test_entries_told_apart_by_their_anchor_are_distinct_items(tmp_path, feed_server):
    # Every version of the Claude Code changelog links to one page, each with its own #anchor.
    proc = run_crawl(tmp_path, [{"vendor": "claude_code", "url": feed_server.url(CHANGELOG)}])
    assert proc.returncode == 0, proc.stderr[-3000:]
    targets = sorted(env["subject"]["target_id"] for env in envelopes(tmp_path))
    page = "https://code.claude.com/docs/en/changelog"
    assert targets == [f"{page}#2-1-{n}" for n in range(235, 239)]
    feed = feed_outcome(run_records(tmp_path)[0], "claude_code")
    assert (feed["items_seen"], feed["new"], feed["duplicate"], feed["dropped"]) == (4, 4, 0, 0)


# Batches of 1: v1 is in the ledger when v2 is decided; of 500: it still waits in the issue batch.
@pytest.mark.parametrize("batch", [1, 500])
def test_two_versions_of_a_paper_in_one_run_issue_linked_envelopes(tmp_path, feed_server, batch):
    url = feed_server.script("arxiv.xml", Reply(200, two_versions_of_one_paper()))
    feeds = [{"vendor": "arxiv_cs_ai", "url": url}]
    proc = run_crawl(tmp_path, feeds, "-s", f"CROVIA_ISSUE_BATCH={batch}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    paper = [env for env in envelopes(tmp_path) if env["subject"]["target_id"] == PAPER]
    assert [env["object"]["arxiv"]["version"] for env in paper] == [1, 2]
    first, second = paper
    assert first["predecessors"] == []
    assert second["predecessors"] == [first["axiom_id"]]
    assert second["decision"] == "REVISION"
    feed = feed_outcome(run_records(tmp_path)[0], "arxiv_cs_ai")
    assert (feed["items_seen"], feed["new"], feed["updated"], feed["duplicate"]) == (4, 3, 1, 0)
    audit = crovia(tmp_path, "audit")
    assert audit.returncode == 0, audit.stdout + audit.stderr


def test_the_same_version_twice_in_one_run_issues_once(tmp_path, feed_server):
    start = ARXIV.index(b"<item>")
    end = ARXIV.index(b"</item>", start) + len(b"</item>")
    twice = ARXIV[:end] + ARXIV[start:end] + ARXIV[end:]
    url = feed_server.script("arxiv.xml", Reply(200, twice))
    assert run_crawl(tmp_path, [{"vendor": "arxiv_cs_ai", "url": url}]).returncode == 0
    targets = [env["subject"]["target_id"] for env in envelopes(tmp_path)]
    assert targets.count(PAPER) == 1
    feed = feed_outcome(run_records(tmp_path)[0], "arxiv_cs_ai")
    assert (feed["items_seen"], feed["new"], feed["duplicate"]) == (4, 3, 1)


def test_validators_stored_under_the_old_identity_rule_are_not_sent(tmp_path, feed_server):
    # A ledger whose earlier crawl merged the changelog's entries (fragments dropped) stored the
    # feed's validators: they must not stop this crawl from seeing the entries it lost.
    url = feed_server.url(CHANGELOG)
    (tmp_path / "ledger").mkdir()
    stale = {url: {"vendor": "claude_code", "etag": "x", "last_modified": "y"}}
    (tmp_path / "ledger" / "feeds_state.json").write_text(json.dumps(stale))
    assert run_crawl(tmp_path, [{"vendor": "claude_code", "url": url}]).returncode == 0
    (request,) = feed_server.requests_for(CHANGELOG)
    assert "if-none-match" not in request.headers
    assert "if-modified-since" not in request.headers
    assert len(envelopes(tmp_path)) == 4
    feed_server.clear()
    assert run_crawl(tmp_path, None).returncode == 0  # validators of this rule are sent again
    (request,) = feed_server.requests_for(CHANGELOG)
    assert "if-none-match" in request.headers
