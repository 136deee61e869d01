"""Kind "oaipmh" in the feed list: its options checked before any request, and the default list
harvesting the archives of every category its arXiv RSS feeds read, marked unchecked."""

from __future__ import annotations

import pytest

from crovia_spider.config.feeds import feed_from_table, load_feeds
from crovia_spider.spiders.arxiv_coverage import rss_category, set_holds
from tests.crawl import PROJECT_ROOT

OAI = {"vendor": "arxiv_oai", "url": "https://export.arxiv.org/oai2", "kind": "oaipmh", "set": "cs"}


def test_an_oaipmh_entry_reads_its_sets_and_prefix():
    feed = feed_from_table(OAI)
    assert (feed.oai_sets, feed.metadata_prefix, feed.family) == (("cs",), "arXivRaw", "arxiv")
    assert not feed.captures and feed.options == {}
    two = feed_from_table({**OAI, "set": ["cs", "physics:astro-ph"]})
    assert two.oai_sets == ("cs", "physics:astro-ph")


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"set": None}, "needs 'set'"),
        ({"set": []}, "1 to 10 sets"),
        ({"set": ["cs", "cs"]}, "each once"),
        ({"set": "cs stat"}, "is not an OAI-PMH setSpec"),
        ({"set": [f"s{n}" for n in range(11)]}, "1 to 10 sets"),
        ({"metadata_prefix": "oai_dc"}, "reads arXivRaw"),
        ({"url": "https://export.arxiv.org/oai2?verb=Identify"}, "without a query"),
        ({"vendor": "lab", "url": "https://oai.lab.example/oai"}, "arXiv's OAI-PMH interface"),
        ({"kind": "feed"}, 'option of kind "oaipmh"'),
    ],
)
def test_a_bad_oaipmh_entry_is_refused_saying_why(change, reason):
    table = {k: v for k, v in {**OAI, **change}.items() if v is not None}
    with pytest.raises((TypeError, ValueError), match=reason):
        feed_from_table(table)


def test_the_default_list_harvests_the_archives_of_its_rss_categories():
    feeds = load_feeds(PROJECT_ROOT / "config" / "feeds.toml")
    harvests = [f for f in feeds if f.kind == "oaipmh"]
    assert [f.vendor for f in harvests] == ["arxiv_oai"] and harvests[0].enabled
    sets = harvests[0].oai_sets
    categories = {rss_category(f.url) for f in feeds if f.family == "arxiv"} - {""}
    assert categories >= {"cs.AI", "cs.LG", "cs.CL", "cs.CV", "stat.ML"}
    assert all(any(set_holds(s, c) for s in sets) for c in categories), (sets, categories)
    spider_md = (PROJECT_ROOT / "docs" / "spider.md").read_text(encoding="utf-8")
    unchecked = spider_md.split("### Unchecked entries", 1)[1].split("\n### ", 1)[0]
    assert "`arxiv_oai`" in unchecked
