"""Identity per source (issue 8): a third-party feed cannot stand in for arXiv or another vendor,
entries sharing a link stay distinct, and unchanged feeds issue nothing, ever, crawl after crawl."""

from __future__ import annotations

from tests.conftest import FEEDS
from tests.crawl import (
    assert_counts_add_up,
    crovia,
    envelopes,
    feed_outcome,
    run_crawl,
    run_records,
)
from tests.feedserver import Reply
from tests.spider.feedtext import item, rss

ARXIV = (FEEDS / "arxiv_cs_ai_rss2_2026-04-27_trim3.xml").read_bytes()
OPENAI = (FEEDS / "openai_news_rss_reserialized_trim3.xml").read_bytes()
PAPER = "https://arxiv.org/abs/2604.21935"
POST = "https://openai.com/index/next-phase-of-microsoft-partnership"
# No validators: every crawl fetches and reads the whole feed, so dedupe alone must stop repeats.
PLAIN = {"Content-Type": "application/rss+xml"}


def crawl(tmp_path, feeds, *args):
    proc = run_crawl(tmp_path, feeds, *args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    record = run_records(tmp_path)[-1]
    assert_counts_add_up(record)
    return record


def family_of(env):
    return env["object"]["identity"]["family"]


def test_a_third_party_copy_never_suppresses_or_precedes_the_genuine_item(tmp_path, feed_server):
    copy = rss(
        item("Math Takes Two (repost)", PAPER, guid="1"),
        item("Microsoft partnership (repost)", POST, guid="2"),
        item("Numbered", "", guid="1"),
    )
    mine = rss(item("Our own", "", guid="1"))
    urls = {
        "reposter": feed_server.script("copy.xml", Reply(200, copy, PLAIN)),
        "smalllab": feed_server.script("mine.xml", Reply(200, mine, PLAIN)),
        "arxiv_cs_ai": feed_server.script("arxiv.xml", Reply(200, ARXIV, PLAIN)),
        "openai": feed_server.script("openai.xml", Reply(200, OPENAI, PLAIN)),
    }
    feeds = [{"vendor": vendor, "url": url} for vendor, url in urls.items()]
    crawl(tmp_path, feeds[:2])  # the copies come first
    record = crawl(tmp_path, feeds)
    assert feed_outcome(record, "arxiv_cs_ai")["new"] == 3
    assert feed_outcome(record, "openai")["new"] == 3
    everything = envelopes(tmp_path)
    by_axiom = {env["axiom_id"]: env for env in everything}
    for env in everything:
        for earlier in env["predecessors"]:
            assert family_of(by_axiom[earlier]) == family_of(env)
    genuine = [env for env in everything if env["subject"]["target_id"] == PAPER]
    assert {family_of(env) for env in genuine} == {"arxiv", "reposter"}
    (arxiv,) = [env for env in genuine if family_of(env) == "arxiv"]
    assert arxiv["predecessors"] == [] and arxiv["decision"] != "REVISION"
    (repost,) = [env for env in genuine if family_of(env) == "reposter"]
    assert "arxiv" not in repost["object"]  # no arXiv identity claimed
    numbered = sorted(env["subject"]["target_id"] for env in everything if "guid:" in
                      env["subject"]["target_id"])  # fmt: skip
    assert numbered == ["guid:reposter:1", "guid:smalllab:1"]
    assert crovia(tmp_path, "audit").returncode == 0


def test_entries_sharing_a_link_stay_distinct_and_never_come_back(tmp_path, feed_server):
    page = "https://podcast.example.org/show"
    body = rss(*(item(f"Episode {n}", page, guid=f"ep-{n}") for n in (1, 2, 3)))
    url = feed_server.script("show.xml", Reply(200, body, PLAIN))
    record = crawl(tmp_path, [{"vendor": "show", "url": url}])
    assert feed_outcome(record, "show")["new"] == 3
    assert sorted(env["object"]["identity"]["guid"] for env in envelopes(tmp_path)) == [
        "ep-1", "ep-2", "ep-3"
    ]  # fmt: skip
    for _ in range(2):
        record = crawl(tmp_path, None)
        feed = feed_outcome(record, "show")
        assert (feed["new"], feed["updated"], feed["duplicate"]) == (0, 0, 3)
    assert len(envelopes(tmp_path)) == 3


def test_content_that_flaps_issues_each_version_once(tmp_path, feed_server):
    # A -> B -> A -> B: A and B are each issued once; A seen again after B is no revision.
    a = rss(item("Post", "https://lab.example.org/p", description="first wording"))
    b = rss(item("Post", "https://lab.example.org/p", description="second wording"))
    url = feed_server.script("flap.xml", *(Reply(200, body, PLAIN) for body in (a, b, a, b)))
    changes = []
    for feeds in ([{"vendor": "lab", "url": url}], None, None, None):
        feed = feed_outcome(crawl(tmp_path, feeds), "lab")
        changes.append((feed["new"], feed["updated"], feed["duplicate"]))
    assert changes == [(1, 0, 0), (0, 1, 0), (0, 0, 1), (0, 0, 1)]
    first, second = envelopes(tmp_path)
    assert second["predecessors"] == [first["axiom_id"]]


def test_arxiv_feeds_are_one_family(tmp_path, feed_server):
    # One paper listed in cs.AI and cs.LG: one item, issued once.
    urls = [feed_server.script(f"{name}.xml", Reply(200, ARXIV, PLAIN)) for name in ("ai", "lg")]
    feeds = [{"vendor": "arxiv_cs_ai", "url": urls[0]}, {"vendor": "arxiv_cs_lg", "url": urls[1]}]
    record = crawl(tmp_path, feeds)
    assert record["totals"]["new"] == 3 and record["totals"]["duplicate"] == 3
