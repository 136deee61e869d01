"""Hostile OAI-PMH endpoints, all in one crawl with a good arXiv RSS feed beside them: an endless
chain of resumption tokens, an entity bomb, a page of 50,000 records, a token that loops. Each is
bounded (the requests a harvest makes, the page refused, the list stopped) and said in its fetch
record and run record; the good source's items are all issued, and the audit is clean."""

from __future__ import annotations

from contextlib import ExitStack
from datetime import UTC, datetime, timedelta

from tests.crawl import crovia, envelopes, fetch_records, run_crawl, run_records
from tests.spider.oaipmh_server import OaiServer, Paper, rss

TODAY = datetime.now(UTC).date()
DAY = (TODAY - timedelta(days=1)).isoformat()
PAGES = 6  # CROVIA_OAI_PAGES for the crawl: the endless chain stops there


def day_of(count: int, prefix: str) -> list[Paper]:
    return [Paper(f"{prefix}.{n:05d}", DAY) for n in range(1, count + 1)]


def test_each_hostile_endpoint_is_bounded_and_said_and_the_good_source_loses_nothing(tmp_path):
    with ExitStack() as stack:
        servers = {
            name: stack.enter_context(OaiServer(day_of(8, prefix), page_size=2))
            for name, prefix in (("endless", "2601"), ("bomb", "2602"), ("huge", "2603"),
                                 ("loop", "2604"))
        }  # fmt: skip
        servers["endless"].faults.endless = True
        servers["bomb"].faults.entity_bomb = 2
        servers["huge"].faults.huge = 1
        servers["loop"].faults.loop = True
        good = [Paper(f"2612.{n:05d}", DAY) for n in range(1, 4)]
        rss_server = stack.enter_context(OaiServer([]))
        rss_server.rss["cs.AI"] = rss("cs.AI", TODAY, [(p, "new") for p in good])
        feeds = [{"vendor": "arxiv_cs_ai", "url": rss_server.rss_url("cs.AI")}]
        feeds += [
            {
                "vendor": f"arxiv_oai_{name}",
                "url": server.url,
                "kind": "oaipmh",
                "set": "cs",
                "title": name,
            }
            for name, server in servers.items()
        ]
        proc = run_crawl(tmp_path, feeds, "-s", f"CROVIA_OAI_PAGES={PAGES}", "-s",
                         f"CROVIA_OAI_FROM={DAY}")  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        asked = {name: server.oai_requests() for name, server in servers.items()}

    items = envelopes(tmp_path)
    by_vendor = {}
    for item in items:
        by_vendor.setdefault(item["body"]["vendor"], []).append(item["object"]["arxiv"]["id"])
    assert by_vendor["arxiv_cs_ai"] == [p.id for p in good]  # nothing lost from the good source
    records = {r["body"]["vendor"]: r["body"] for r in fetch_records(tmp_path)}
    runs = {f["vendor"]: f for f in run_records(tmp_path)[-1]["feeds"]}

    # endless: at most CROVIA_OAI_PAGES requests, the next one named and not fetched
    endless = records["arxiv_oai_endless"]
    assert len(asked["endless"]) == PAGES
    last = endless["parts"][-1]
    assert "past the 6 requests a harvest may make (CROVIA_OAI_PAGES)" in last["error"]
    assert endless["entries"]["unread"] >= 1  # never read whole: absent answers cannot tell
    assert by_vendor["arxiv_oai_endless"] == [p.id for p in day_of(8, "2601")]
    assert "not listed whole" in runs["arxiv_oai_endless"]["parse_error"]

    # entity bomb on the second page: refused whole, never expanded; the first page's records stay
    bomb = records["arxiv_oai_bomb"]
    refused = [part for part in bomb["parts"] if "error" in part]
    assert refused and "declares DTD entities" in refused[0]["error"]
    assert "body_sha256" in refused[0]  # the refused page is kept, as received
    assert by_vendor["arxiv_oai_bomb"] == [p.id for p in day_of(2, "2602")]

    # a page of 50,000 records (the first): refused, nothing read, the fetch record says why
    huge = records["arxiv_oai_huge"]
    assert huge["outcome"] == "unreadable_body"
    assert "more than 10,000 records in one page" in huge["error"]
    assert "arxiv_oai_huge" not in by_vendor
    assert runs["arxiv_oai_huge"]["error"]

    # a token that loops: followed once, then the list stops with a part saying so
    loop = records["arxiv_oai_loop"]
    assert any("followed already (the list loops)" in p.get("error", "") for p in loop["parts"])
    assert sum("resumptionToken=L1-2" in path for path in asked["loop"]) == 1  # never again
    assert by_vendor["arxiv_oai_loop"] == [p.id for p in day_of(6, "2604")]

    audit = crovia(tmp_path, "audit", "--bodies")
    assert audit.returncode == 0, audit.stdout + audit.stderr
