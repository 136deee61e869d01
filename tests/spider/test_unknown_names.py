"""A misspelt name is refused, listing what is allowed: spider arguments, spiders, config tables.

Before, `-a vendr=x` crawled every feed, `scrapy crawl vendor_pres` ended in a KeyError traceback
and `[[feed]]` said only "no [[feeds]] entries".
"""

from __future__ import annotations

import pytest

from crovia_spider.config.feeds import load_feeds
from crovia_spider.exceptions import ConfigError
from crovia_spider.schedule.config import load_schedule
from pipelines.classify import load_ruleset
from tests.crawl import run_crawl


@pytest.fixture
def feeds(feed_server):
    return [{"vendor": "openai", "url": feed_server.url("openai_news_rss_prefix.xml")}]


def test_unknown_spider_argument_is_refused(tmp_path, feed_server, feeds):
    proc = run_crawl(tmp_path, feeds, "-a", "vendr=openai")
    assert proc.returncode != 0
    assert (
        "unknown spider argument -a vendr=...; allowed: -a vendor=IDS, -a skip=IDS" in proc.stderr
    )
    assert feed_server.requests == []
    assert not (tmp_path / "ledger").exists()


def test_unknown_spider_is_refused_listing_the_spiders(tmp_path, feed_server, feeds):
    proc = run_crawl(tmp_path, feeds, spider="vendor_pres")
    assert proc.returncode == 2
    assert "unknown spider 'vendor_pres'; spiders of this project: vendor_press" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert feed_server.requests == []


def test_config_spiders_are_listed_too(tmp_path, feed_server, feeds):
    feeds = [*feeds, {"vendor": "lab", "url": feed_server.url("a.xml"), "spider": "lab_notes",
                      "new_spider": True}]  # fmt: skip
    proc = run_crawl(tmp_path, feeds, spider="lab_note")
    assert proc.returncode == 2
    assert "spiders of this project: lab_notes, vendor_press" in proc.stderr


@pytest.mark.parametrize(
    ("load", "text", "message"),
    [
        (
            load_feeds,
            '[[feed]]\nvendor = "a"\nurl = "https://example.org/a.xml"\n',
            "unknown top-level key(s) 'feed'; allowed: [[feeds]]",
        ),
        (
            load_ruleset,
            'version = "1"\n[[rule]]\nvendor = ["a"]\ndecision_hint = "NEUTRAL"\n',
            "unknown top-level key(s) 'rule'; allowed: version, default_decision_hint, [[rules]]",
        ),
        (
            load_schedule,
            '[[job]]\nname = "a"\nseal = true\nevery = "1h"\n',
            "unknown top-level key(s) 'job'; allowed: [[jobs]]",
        ),
    ],
)
def test_unknown_top_level_table_is_refused(tmp_path, load, text, message):
    path = tmp_path / "x.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load(path)
    assert str(caught.value) == f"{path}: {message}"


def test_crawl_with_a_misspelt_feeds_table_fetches_nothing(tmp_path, feed_server):
    proc = run_crawl(tmp_path, f'[[feed]]\nvendor = "a"\nurl = "{feed_server.url("a.xml")}"\n')
    assert proc.returncode != 0
    assert "unknown top-level key(s) 'feed'; allowed: [[feeds]]" in proc.stderr
    assert feed_server.requests == []
