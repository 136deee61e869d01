"""Per-host politeness from the feed list: arXiv's rule, per-feed delays, the switch for tests."""

from __future__ import annotations

import pytest
from scrapy.exceptions import CannotResolveHostError
from scrapy.settings import Settings
from twisted.python.failure import Failure

from crovia_spider import __version__
from crovia_spider.config.feeds import FeedConfig
from crovia_spider.fetching.politeness import apply_politeness, describe_failure
from tests.crawl import run_crawl

FEEDS = [
    FeedConfig("arxiv_cs_ai", "https://export.arxiv.org/rss/cs.AI"),
    FeedConfig("arxiv_cs_lg", "https://rss.arxiv.org/rss/cs.LG", delay=10),
    FeedConfig("slow_lab", "https://lab.example.org/feed.xml", delay=5),
    FeedConfig("openai", "https://openai.com/news/rss.xml"),
]


def slots(**overrides) -> dict:
    settings = Settings({"DOWNLOAD_DELAY": 1.0, "CROVIA_POLITE_DELAYS": "1", **overrides})
    apply_politeness(settings, FEEDS)
    return settings.getdict("DOWNLOAD_SLOTS")


def test_arxiv_hosts_get_one_request_every_3_seconds_on_one_connection():
    assert slots()["export.arxiv.org"] == {"concurrency": 1, "delay": 3.0, "jitter": 0}


def test_a_feed_delay_raises_its_hosts_delay_never_lowers_it():
    assert slots()["rss.arxiv.org"]["delay"] == 10
    assert slots()["lab.example.org"] == {"delay": 5}
    assert "openai.com" not in slots()  # the default DOWNLOAD_DELAY applies
    tighter = slots(DOWNLOAD_SLOTS={"lab.example.org": {"delay": 30}})
    assert tighter["lab.example.org"]["delay"] == 30


def test_delays_off_for_tests():
    settings = Settings({"DOWNLOAD_DELAY": 1.0, "CROVIA_POLITE_DELAYS": "0"})
    apply_politeness(settings, FEEDS)
    assert settings.getdict("DOWNLOAD_SLOTS") == {} and settings.getfloat("DOWNLOAD_DELAY") == 0


def test_requests_identify_the_project(tmp_path, feed_server):
    feeds = [{"vendor": "openai", "url": feed_server.url("openai_news_rss_prefix.xml")}]
    assert run_crawl(tmp_path, feeds).returncode == 0
    agents = {request.headers["user-agent"] for request in feed_server.requests}
    assert agents == {f"crovia-spider/{__version__} (+https://github.com/crovia/crovia-spider)"}
    assert feed_server.requests[0].path == "/robots.txt"


@pytest.mark.parametrize(
    ("args", "agent"),
    [
        (
            ("-s", "CROVIA_CONTACT_URL=https://ops.example.org/crawler"),
            f"crovia-spider/{__version__} (+https://ops.example.org/crawler)",
        ),
        (
            ("-s", "CROVIA_USER_AGENT=ExampleBot/2 (+mailto:ops@example.org)"),
            "ExampleBot/2 (+mailto:ops@example.org)",
        ),
        (("-s", "CROVIA_USER_AGENT=ExampleBot/2", "-s", "USER_AGENT=Explicit/1"), "Explicit/1"),
    ],
)
def test_the_user_agent_follows_the_run_settings(tmp_path, feed_server, args, agent):
    feeds = [{"vendor": "openai", "url": feed_server.url("openai_news_rss_prefix.xml")}]
    assert run_crawl(tmp_path, feeds, *args).returncode == 0
    assert {request.headers["user-agent"] for request in feed_server.requests} == {agent}


def test_a_dns_failure_is_described_with_one_prefix():
    scrapy_says = CannotResolveHostError("DNS lookup failed: no results for hostname lookup: a.b.")
    assert describe_failure(Failure(scrapy_says)) == (
        "DNS lookup failed: no results for hostname lookup: a.b."
    )
    assert describe_failure(Failure(CannotResolveHostError("a.b"))) == "DNS lookup failed: a.b"
