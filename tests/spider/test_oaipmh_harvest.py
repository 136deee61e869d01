"""arXiv's OAI-PMH interface harvested for real on 127.0.0.1 (tests/spider/oaipmh_server.py): a
day of three pages with resumption tokens, a deleted record, a `503 Retry-After: 2` on the second
page, a `badResumptionToken` on a token replayed (the third page's first answer was lost), and
version updates. One harvest issues exactly the papers listed, once each; the next starts at the
last day listed whole and issues only what changed; a paper read by RSS and by OAI-PMH is one item
with one version; `crovia history` reads the harvest's kept pages again; the audit is clean."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from tests.crawl import crovia, envelopes, fetch_records, run_crawl, run_records
from tests.spider.oaipmh_server import ABSTRACT, OaiServer, Paper, rss

TODAY = datetime.now(UTC).date()
DAY1, DAY2 = (TODAY - timedelta(days=2)).isoformat(), (TODAY - timedelta(days=1)).isoformat()
# An abstract past the 1,000 characters a summary excerpt keeps: the fingerprint's cut matters.
LONG = " ".join([ABSTRACT] * 6)


def oai_feed(server: OaiServer) -> dict[str, str]:
    return {"vendor": "arxiv_oai_cs", "url": server.url, "kind": "oaipmh", "set": "cs"}


def rss_feed(server: OaiServer, category: str = "cs.AI") -> dict[str, str]:
    vendor = "arxiv_" + category.lower().replace(".", "_")
    return {"vendor": vendor, "url": server.rss_url(category)}


def papers() -> list[Paper]:
    """Day 1: six records in three pages of two, one of them deleted; day 2: one record."""
    day1 = [Paper(f"2612.0010{n}", DAY1, categories="cs.AI cs.LG") for n in range(1, 6)]
    day1.insert(3, Paper("2612.00199", DAY1, deleted=True))
    return [*day1, Paper("2612.00201", DAY2, versions=2, categories="cs.CL")]


def issued(tmp_path) -> list[tuple[str, int]]:
    return [
        (e["object"]["arxiv"]["id"], e["object"]["arxiv"]["version"]) for e in envelopes(tmp_path)
    ]


def test_one_harvest_issues_its_records_once_and_the_next_only_the_changes(tmp_path):
    records = papers()
    with OaiServer(records, page_size=2) as server:
        server.faults.retry_after = {2: 1}  # the second page: 503 Retry-After: 2, once
        server.faults.fail_after_use = {3: 1}  # the third: its token used up, the answer lost
        first = run_crawl(tmp_path, [oai_feed(server)])
        assert first.returncode == 0, first.stderr[-3000:]
        asked = server.oai_requests()
        times = [at for path, at in server.requests if "resumptionToken=L1-2" in path]

    # exactly the listed papers, once each (the day listed again after the bad token adds none)
    expected = [(p.id, p.versions) for p in records if not p.deleted]
    assert issued(tmp_path) == expected
    assert all(e["object"]["arxiv"]["source"] == "oai-pmh" for e in envelopes(tmp_path))
    assert all(e["object"]["identity"]["family"] == "arxiv" for e in envelopes(tmp_path))
    # the 503's Retry-After was honoured before the page was asked again
    assert len(times) == 2 and times[1] - times[0] >= 1.5
    # the third page's token, replayed by the retry, was refused: the day's list started again
    day1_list = f"from={DAY1}&until={DAY1}"
    assert sum(day1_list in path for path in asked) == 2
    assert any("resumptionToken=L1-3" in path for path in asked)
    (record,) = fetch_records(tmp_path)
    body = record["body"]
    assert body["kind"] == "oaipmh" and body["outcome"] == "new_body"
    assert body["entries"]["count"] == len(expected)
    errors = [part for part in body["parts"] if "error" in part]
    assert [part["error"] for part in errors] == ["OAI-PMH error badResumptionToken: L1-3"], (
        errors
    )  # one page that gave no records, and said why: one unread entry
    assert body["entries"]["unread"] == 1
    run = run_records(tmp_path)[-1]["feeds"][0]
    assert "1 deleted record(s) listed" in run["parse_error"]
    assert "not listed whole" not in run["parse_error"]
    state = json.loads((tmp_path / "ledger" / "feeds_state.json").read_text())
    assert state[server.url]["oai_complete_through"] == DAY2


def test_the_next_harvest_starts_at_the_last_day_listed_whole(tmp_path):
    records = papers()
    server = OaiServer(records, page_size=2)
    with server:
        assert run_crawl(tmp_path, [oai_feed(server)]).returncode == 0
        first_asked = server.oai_requests()
        before = {e["object"]["arxiv"]["id"]: e["axiom_id"] for e in envelopes(tmp_path)}
        # the next day: one paper replaced (v2, a new datestamp), one new; the others unchanged
        records[1] = Paper(records[1].id, TODAY.isoformat(), versions=2, categories="cs.AI")
        records.append(Paper("2612.00301", TODAY.isoformat()))
        server.requests.clear()
        second = run_crawl(tmp_path, [oai_feed(server)])
        assert second.returncode == 0, second.stderr[-3000:]
        asked = server.oai_requests()
    assert f"from={DAY1}&until={DAY1}" in first_asked[0]
    # overlapped by one day: the last day listed whole, then today
    assert f"from={DAY2}&until={DAY2}" in asked[0]
    assert not any(f"from={DAY1}" in path for path in asked)
    new = envelopes(tmp_path)[len(before) :]
    assert [(e["object"]["arxiv"]["id"], e["object"]["arxiv"]["version"]) for e in new] == [
        (records[1].id, 2),
        ("2612.00301", 1),
    ]
    assert new[0]["predecessors"] == [before[records[1].id]]  # a new version of the same item
    run = run_records(tmp_path)[-1]["feeds"][0]
    assert run["new"] == 1 and run["updated"] == 1 and run["duplicate"] == 1  # DAY2's paper


def test_a_paper_read_by_rss_and_by_oai_pmh_is_one_item(tmp_path):
    """RSS first, then OAI-PMH (and the other way round in a second ledger): one envelope per
    paper and version, whichever road came first; a later version from OAI-PMH is an update of
    the RSS item. The abstracts are long: the fingerprint's cut is where the RSS excerpt's is."""
    cs = [Paper("2612.00401", DAY1, abstract=LONG), Paper("2612.00402", DAY1, abstract=LONG,
          versions=2), Paper("2612.00403", DAY1)]  # fmt: skip
    announced = [(cs[0], "new"), (cs[1], "replace"), (cs[2], "new")]
    for order in (("rss", "oai"), ("oai", "rss")):
        ledger = tmp_path / "-".join(order)
        ledger.mkdir()
        with OaiServer(cs, page_size=2) as server:
            server.rss["cs.AI"] = rss("cs.AI", TODAY - timedelta(days=2), announced)
            feeds = {"rss": rss_feed(server), "oai": oai_feed(server)}
            for road in order:
                proc = run_crawl(ledger, [feeds[road]])
                assert proc.returncode == 0, proc.stderr[-3000:]
        items = envelopes(ledger)
        assert [(e["object"]["arxiv"]["id"], e["object"]["arxiv"]["version"]) for e in items] == [
            ("2612.00401", 1), ("2612.00402", 2), ("2612.00403", 1)
        ], order  # fmt: skip
        last = run_records(ledger)[-1]["feeds"][0]
        assert last["duplicate"] == 3 and last["new"] == 0, (order, last)
    # a version OAI-PMH lists later: the same item, a new version chained to the RSS one
    ledger = tmp_path / "later"
    ledger.mkdir()
    with OaiServer([Paper("2612.00401", DAY1, abstract=LONG, versions=2)]) as server:
        server.rss["cs.AI"] = rss("cs.AI", TODAY - timedelta(days=2), announced[:1])
        assert run_crawl(ledger, [rss_feed(server)]).returncode == 0
        assert run_crawl(ledger, [oai_feed(server)]).returncode == 0
    first, update = envelopes(ledger)
    assert first["object"]["identity"] == update["object"]["identity"]
    assert update["object"]["arxiv"]["version"] == 2
    assert update["predecessors"] == [first["axiom_id"]]


def test_history_reads_a_harvest_again_from_its_kept_pages(tmp_path):
    with OaiServer(papers(), page_size=2) as server:
        assert run_crawl(tmp_path, [oai_feed(server)]).returncode == 0
    url = "https://arxiv.org/abs/2612.00105"  # on the third page of the first day
    history = crovia(tmp_path, "history", "--url", url, "--vendor", "arxiv_oai_cs")
    assert history.returncode == 0, history.stdout + history.stderr
    assert "held it" in history.stdout, history.stdout
    audit = crovia(tmp_path, "audit", "--bodies")
    assert audit.returncode == 0, audit.stdout + audit.stderr
