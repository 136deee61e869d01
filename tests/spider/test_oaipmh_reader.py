"""The OAI-PMH page reader (crovia_spider/feed/oaipmh.py): each rule of its docstring, on pages
built as arXiv writes them, and the list rule of a harvest (complete_lists)."""

from __future__ import annotations

import feedparser
import pytest

from crovia_spider.config.feeds import FeedConfig
from crovia_spider.feed.arxiv import fingerprint_abstract
from crovia_spider.feed.entries import entry_item
from crovia_spider.feed.oaipmh import MAX_PAGE_RECORDS, MAX_TOKEN_CHARS, parse_oaipmh
from crovia_spider.feed.plaintext import excerpt
from crovia_spider.spiders.oaipmh_walk import (
    complete_lists,
    harvest_days,
    harvest_lists,
    list_url,
    through,
    token_url,
)
from tests.spider.oaipmh_server import ABSTRACT, Paper, page_xml, record_xml, rss

NOW = "2026-12-02T06:00:00Z"
FEED = FeedConfig(vendor="arxiv_oai_cs", url="https://export.arxiv.org/oai2", kind="oaipmh",
                  oai_set="cs", metadata_prefix="arXivRaw")  # fmt: skip


def read(records: str, token: str | None = "", **kwargs):
    return parse_oaipmh(page_xml(records, token, now=NOW, **kwargs), {}, {})


def test_a_record_is_an_entry_of_its_paper_and_newest_version():
    page = read(record_xml(Paper("2612.00001", "2026-12-01", versions=3, categories="cs.AI cs.LG")))
    (entry,) = page.entries
    assert entry["id"] == "oai:arXiv.org:2612.00001v3"  # the RSS guid's form
    assert entry["link"] == "https://arxiv.org/abs/2612.00001"
    assert entry["datestamp"] == entry["published"] == "2026-12-01"
    assert entry["categories"] == "cs.AI cs.LG"
    item = entry_item(entry, FEED, spider="t", base_url=FEED.url, status=200,
                      observed_at="2026-12-02T06:00:00.000000Z", run_hash="0" * 64)  # fmt: skip
    assert item.arxiv == {
        "id": "2612.00001",
        "version": 3,
        "announce_type": "",
        "source": "oai-pmh",
    }
    assert page.response_date == NOW and page.token == "" and page.ends_list


def test_old_style_ids_and_an_abstract_read_as_the_rss_feed_reads_it():
    """An abstract holding `<`, `&` and what looks like a tag: the record's excerpt is the one
    the RSS feed's description gives, once its announce header is off."""
    paper = Paper("hep-th/9901001", "2026-12-01", abstract="p < 0.05 & <b>bold</b> a&amp;b")
    (entry,) = read(record_xml(paper)).entries
    assert entry["link"] == "https://arxiv.org/abs/hep-th/9901001"
    (rss_entry,) = feedparser.parse(rss("cs.AI", _date("2026-12-01"), [(paper, "new")])).entries
    meta = {"id": paper.id, "version": 1}
    from_rss = fingerprint_abstract(meta, excerpt(rss_entry["summary"]))
    assert excerpt(entry["summary"]) == from_rss == "p < 0.05 & bold a&b"


def test_deleted_and_malformed_records_are_no_entries_and_are_counted():
    records = (
        record_xml(Paper("2612.00002", "2026-12-01", deleted=True))
        + "<record><header><identifier>oai:arXiv.org:nope</identifier>"
        "<datestamp>2026-12-01</datestamp></header></record>"
        + "<record><header><identifier>oai:arXiv.org:2612.00003</identifier>"
        "<datestamp>yesterday</datestamp></header></record>"
        + record_xml(Paper("2612.00004", "2026-12-01")).replace("<id>2612.00004", "<id>2612.9")
        + record_xml(Paper("2612.00005", "2026-12-01"))
    )
    page = read(records)
    assert [e["id"] for e in page.entries] == ["oai:arXiv.org:2612.00005v1"]
    assert page.deleted == [("2612.00002", "2026-12-01")] and page.excluded == 1
    assert page.malformed_entries == 3 and "3 record(s) malformed" in page.error
    assert not page.failed


@pytest.mark.parametrize(
    ("token", "expected", "problem"),
    [
        (None, None, ""),
        ("", "", ""),
        ("6960524|1001", "6960524|1001", ""),
        ("a b", "", "holding a space"),
        ("x" * (MAX_TOKEN_CHARS + 1), "", "resumption token of 1,001 characters"),
    ],
)
def test_resumption_tokens(token, expected, problem):
    page = read(record_xml(Paper("2612.00001", "2026-12-01")), token, size=9, cursor=0)
    assert page.token == expected
    assert problem in page.token_error and bool(page.token_error) == bool(problem)
    assert page.ends_list == (not token)


def test_errors_no_records_and_the_others():
    empty = read("", None, error="noRecordsMatch:nothing")
    assert not empty.failed and not empty.entries and empty.oai_error == "noRecordsMatch"
    assert empty.ends_list
    bad = read("", None, error="badResumptionToken:expired")
    assert bad.failed and bad.oai_error == "badResumptionToken" and not bad.ends_list
    assert bad.error == "OAI-PMH error badResumptionToken: expired"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (page_xml("", "", prolog='<!DOCTYPE OAI-PMH [<!ENTITY a "a">]>'), "declares DTD entities"),
        (page_xml("", "", prolog='<!DOCTYPE OAI-PMH SYSTEM "http://x/y.dtd">'), "has a DOCTYPE"),
        (b"<rss><channel/></rss>", "not an OAI-PMH response (root <rss>)"),
        (page_xml(record_xml(Paper("2612.00001", "2026-12-01")), "")[:-50], "unreadable OAI-PMH"),
        (b'<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"/>', "not a ListRecords"),
        (b"", "unreadable OAI-PMH page"),
    ],
)
def test_refused_and_unreadable_pages(body, reason):
    page = parse_oaipmh(body, {}, {})
    assert page.failed and reason in page.error and not page.entries and page.lost_entries >= 0


def test_a_page_of_more_records_than_a_page_may_hold_is_refused():
    one = "<record><header status='deleted'><identifier>oai:arXiv.org:2612.00001</identifier>"
    one += "<datestamp>2026-12-01</datestamp></header></record>"
    assert not read(one * MAX_PAGE_RECORDS).failed
    page = read(one * (MAX_PAGE_RECORDS + 1))
    assert page.failed and "more than 10,000 records in one page" in page.error


def test_the_fingerprint_abstract_of_a_record_is_its_rss_listing_s():
    long = " ".join([ABSTRACT] * 6)
    for version, announce in ((1, "new"), (2, "replace")):
        rss = f"arXiv:2612.00001v{version} Announce Type: {announce} \nAbstract: {long}"
        (entry,) = read(record_xml(Paper("2612.00001", "2026-12-01", versions=version,
                                         abstract=long))).entries  # fmt: skip
        meta = {"id": "2612.00001", "version": version, "source": "oai-pmh"}
        from_rss = fingerprint_abstract({"id": "2612.00001", "version": version}, excerpt(rss))
        assert fingerprint_abstract(meta, excerpt(entry["summary"])) == from_rss
        assert len(from_rss) < 1000


def test_days_of_a_harvest_and_when_one_is_complete():
    assert harvest_days(None, today=_date("2026-12-05")) == [
        "2026-12-03",
        "2026-12-04",
        "2026-12-05",
    ]
    kept = {"oai_complete_through": "2026-12-04"}
    assert harvest_days(kept, today=_date("2026-12-05")) == ["2026-12-04", "2026-12-05"]
    assert harvest_days(kept, "2026-12-01", _date("2026-12-02")) == ["2026-12-01", "2026-12-02"]
    ended = read(record_xml(Paper("2612.00001", "2026-12-01")), "")
    more = read(record_xml(Paper("2612.00001", "2026-12-01")), "t1")
    cs1, cs2 = ("cs", "2026-12-01"), ("cs", "2026-12-02")
    day1, day2 = list_url(FEED, cs1), list_url(FEED, cs2)
    follow = token_url(FEED, "t1")
    # day 1 over two pages; day 2 (the endpoint's today) listed to its end but not over
    listed, complete = complete_lists([(day1, more), (follow, ended), (day2, ended)])
    assert listed == [cs1, cs2] and complete == [cs1]
    # a page lost breaks the list, and a list started again mends it
    assert complete_lists([(day1, more), (follow, None)]) == ([], [])
    assert complete_lists([(day1, more), (follow, None), (day1, ended)])[1] == [cs1]


def test_lists_of_several_sets_and_the_last_day_complete_in_all():
    two = FeedConfig(vendor="arxiv_oai", url=FEED.url, kind="oaipmh", oai_set="cs stat",
                     metadata_prefix="arXivRaw")  # fmt: skip
    lists = harvest_lists(two, ["2026-12-01", "2026-12-02"])
    assert lists == [("cs", "2026-12-01"), ("stat", "2026-12-01"), ("cs", "2026-12-02"),
                     ("stat", "2026-12-02")]  # fmt: skip
    assert "set=stat&from=2026-12-01&until=2026-12-01" in list_url(two, lists[1])
    assert through(lists, lists[:3]) == "2026-12-01"  # stat's second day is missing
    assert through(lists, lists[1:]) == ""
    assert through(lists, lists) == "2026-12-02"


def _date(text: str):
    from datetime import date

    return date.fromisoformat(text)
