"""arXiv, complete, for real on 127.0.0.1: a day's RSS read, the next day's RSS crawl failed, both
days harvested by OAI-PMH. `crovia arxiv coverage` shows the first day's papers seen both ways,
the one the RSS announced and OAI-PMH does not list as missed by OAI-PMH, the one OAI-PMH lists
and the RSS did not announce, and the second day's papers as harvested only by OAI-PMH; `--record`
signs each day's statement once (again only when it changes), and the record's receipt verifies
with `crovia verify` and on the page (its core under Node), pinned; the audit holds the records
to their shape."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from nacl.signing import SigningKey

from crovia_spider.feed.kinds import read_body
from crovia_spider.spiders.arxiv_coverage import Coverage
from ledger.keys import load_signing_key
from tests.crawl import crovia, leaves, run_crawl
from tests.spider.oaipmh_server import OaiServer, Paper, rss
from tests.web.corpus import trust_root
from tests.web.test_differential import Case, page_outcomes

TODAY = datetime.now(UTC).date()
DAY1, DAY2 = TODAY - timedelta(days=2), TODAY - timedelta(days=1)
AI = [Paper(f"2612.0050{n}", DAY1.isoformat(), categories="cs.AI cs.LG") for n in range(1, 5)]
LG = Paper("2612.00601", DAY1.isoformat(), categories="cs.LG")
GONE = Paper("2612.00699", DAY1.isoformat(), deleted=True)
NOT_LISTED = Paper("2612.00509", DAY1.isoformat())  # announced by the RSS, never listed
LATER = [Paper(f"2612.0070{n}", DAY2.isoformat(), categories="cs.AI") for n in range(1, 3)]
STAT = Paper("2612.00801", DAY1.isoformat(), categories="stat.ML cs.LG")  # of the set stat


def coverage(tmp_path, *args: str) -> dict:
    proc = crovia(tmp_path, "arxiv", "coverage", "--json", *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_coverage_of_a_read_day_and_of_a_day_whose_rss_crawl_failed(tmp_path):
    with OaiServer([*AI, LG, GONE, *LATER, STAT], page_size=2) as server:
        rss_feed = {"vendor": "arxiv_cs_ai", "url": server.rss_url("cs.AI")}
        oai_feed = {"vendor": "arxiv_oai", "url": server.url, "kind": "oaipmh",
                    "set": ["cs", "stat"]}  # fmt: skip
        # DAY1: the RSS announces three of the four cs.AI papers, and one OAI-PMH never lists
        announced = [(p, "new") for p in AI[:3]] + [(NOT_LISTED, "new")]
        server.rss["cs.AI"] = rss("cs.AI", DAY1, announced)
        assert run_crawl(tmp_path, [rss_feed]).returncode == 0
        # DAY2: the RSS crawl fails; the day is never served again
        server.rss_status["cs.AI"] = 503
        assert run_crawl(tmp_path, [rss_feed], "-s", "RETRY_TIMES=0").returncode == 0
        harvest = run_crawl(tmp_path, [oai_feed], "-s", f"CROVIA_OAI_FROM={DAY1.isoformat()}")
        assert harvest.returncode == 0, harvest.stderr[-3000:]

    days = {(d["category"], d["day"]): d for d in coverage(tmp_path)["days"]}
    first = days[("cs.AI", DAY1.isoformat())]
    assert first["rss"]["state"] == "read" and first["oai"]["state"] == "complete"
    assert first["announced"] == sorted(p.id for p in [*AI[:3], NOT_LISTED])
    assert first["harvested"] == sorted(p.id for p in AI)  # not cs.LG's own paper
    assert first["both"] == sorted(p.id for p in AI[:3])
    assert first["rss_only"] == [NOT_LISTED.id]  # missed by OAI-PMH
    assert first["oai_only"] == [AI[3].id]
    assert first["deleted"] == [GONE.id]
    assert "1 missed by OAI-PMH" in first["gap"]
    second = days[("cs.AI", DAY2.isoformat())]
    assert second["rss"] == {"state": "not_read", "fetches": []}  # never "none announced"
    assert second["oai"]["state"] == "complete"
    assert second["oai_only"] == second["harvested"] == sorted(p.id for p in LATER)
    assert "OAI-PMH read the day" in second["gap"]
    # the set stat's day, by the same harvest: stat.ML's paper, which no RSS read announced
    stat = coverage(tmp_path, "--category", "stat.ML")["days"]
    assert [(d["day"], d["harvested"], d["rss"]["state"]) for d in stat][:1] == [
        (DAY1.isoformat(), [STAT.id], "not_read")
    ]
    assert days[("cs.AI", DAY1.isoformat())]["oai"]["fetches"] == stat[0]["oai"]["fetches"]
    # today's list is not over: asked, never complete, so shown as partial if anything
    assert all(d["oai"]["state"] != "complete" for k, d in days.items() if k[1] == str(TODAY))

    table = crovia(tmp_path, "arxiv", "coverage", "--category", "cs.AI",
                   "--from", DAY1.isoformat(), "--to", DAY2.isoformat())  # fmt: skip
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].split()[:3] == ["day", "category", "RSS"]
    assert f"missed by OAI-PMH: {NOT_LISTED.id}" in table.stdout
    row2 = next(line for line in lines if line.startswith(DAY2.isoformat()))
    assert row2.split()[2:5] == ["not", "read", "0"]

    # signed: one record a category and day, and nothing again while nothing changes
    recorded = coverage(tmp_path, "--record", "--from", DAY1.isoformat(), "--to", DAY2.isoformat())
    assert len(recorded["recorded"]) == 2
    again = coverage(tmp_path, "--record", "--from", DAY1.isoformat(), "--to", DAY2.isoformat())
    assert again["recorded"] == []
    records = [e for e in leaves(tmp_path) if e["axiom_type"] == "AX.COVERAGE"]
    assert len(records) == 2
    body = records[0]["body"]
    assert (body["category"], body["day"]) == ("cs.AI", DAY1.isoformat())
    assert body["rss_only"]["ids"] == [NOT_LISTED.id] and body["both"]["count"] == 3
    assert body["rss"]["fetches"] and body["oai"]["fetches"]
    assert records[1]["body"]["rss"] == {"state": "not_read", "fetches": []}

    key = load_signing_key(tmp_path / "keys" / "signing.key")
    pin = key.verify_key.encode().hex()
    receipt = tmp_path / "coverage.json"
    proved = crovia(tmp_path, "prove", records[0]["axiom_id"], "--out", str(receipt))
    assert proved.returncode == 0, proved.stderr
    verified = crovia(tmp_path, "verify", str(receipt), "--pubkey", pin)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert f"arXiv cs.AI on {DAY1.isoformat()}: RSS read (announced 4)" in verified.stdout
    assert "missed by OAI-PMH 1" in verified.stdout
    other = SigningKey.generate().verify_key.encode().hex()
    assert crovia(tmp_path, "verify", str(receipt), "--pubkey", other).returncode == 1
    # and on the page: its verification core under Node, pinned to this site's key
    (page,) = page_outcomes([Case("coverage", receipt.read_bytes(), trust_root(key))])
    assert tuple(page[:2]) == ("valid", None), page
    audit = crovia(tmp_path, "audit", "--bodies")
    assert audit.returncode == 0, audit.stdout + audit.stderr
    # left out of find, as fetch records are
    found = crovia(tmp_path, "find", "--vendor", "arxiv", "--json")
    assert records[0]["axiom_id"] not in found.stdout
    # and counted as what they are by `crovia stats`: coverage records, never items of "arxiv"
    stats = crovia(tmp_path, "stats", "--json")
    assert stats.returncode == 0, stats.stderr
    counted = json.loads(stats.stdout)
    assert counted["coverage_records"] == 2 and counted["fetch_records"] == 3
    assert counted["vendors"] == {"arxiv_cs_ai": 4, "arxiv_oai": 5}
    shown = crovia(tmp_path, "stats").stdout
    assert "coverage records: 2 (one per arXiv category and day whose statement changed)" in shown


def test_a_body_kept_by_several_fetch_records_is_read_once(tmp_path):
    """Crawls of an RSS feed that serves the same bytes again (unchanged_body) keep one body
    named by each of their fetch records: coverage loads and parses it once, and names every
    record that read it."""
    with OaiServer([]) as server:
        server.rss["cs.AI"] = rss("cs.AI", DAY1, [(p, "new") for p in AI[:2]])
        rss_feed = {"vendor": "arxiv_cs_ai", "url": server.rss_url("cs.AI")}
        for _ in range(3):
            assert run_crawl(tmp_path, [rss_feed]).returncode == 0
    fetches = [e for e in leaves(tmp_path) if e["axiom_type"] == "AX.FETCH"]
    assert [e["body"]["outcome"] for e in fetches] == ["new_body", *["unchanged_body"] * 2]
    assert len({e["body"]["body_sha256"] for e in fetches}) == 1
    parsed, loaded = [], []
    found = Coverage(tmp_path / "ledger", lambda *args: parsed.append(args) or read_body(*args))
    load = found.bodies.get
    found.bodies.get = lambda digest: loaded.append(digest) or load(digest)
    (day,) = found.read().days(["cs.AI"])
    assert len(parsed) == 1 and len(loaded) == 1
    assert (day.day, day.rss_state, sorted(day.announced)) == (
        DAY1.isoformat(),
        "read",
        [p.id for p in AI[:2]],
    )
    assert day.rss_fetches == [e["axiom_id"] for e in fetches]
