"""One kept body, read with two entry limits: `crovia history`, `crovia absent` and `crovia audit
--bodies` read each fetch record's body as that record says, and a 304 as the record it confirms:
the record of its feed that received the body with the entries the 304 signs (the crawl signs the
entries its validators were stored with, ledger.store.timeline `Received`).

Real crawls of one feed on 127.0.0.1 into a real ledger (CRAWLS): the feed serves four entries
read with an entry limit of 5 or 2 (two read, two past the limit, and then the validators are not
stored: the feed was not read whole), one entry once between, and a 304 at the end confirming the
four read whole. `crovia history` read a body with the reading of the first record of it (a cache
keyed by the body, not by its limit) and so failed on this honest ledger; `crovia audit --bodies`
read the 304 as the last record of the feed that received its body (one read with a limit of 2),
and so failed on it too. The two commands had each a rule of their own; they have one now.

"""

from __future__ import annotations

import json

import pytest

from tests.crawl import crovia, fetch_records, run_crawl
from tests.feedserver import Reply
from tests.spider.feedtext import etagged, lab_rss

pytestmark = pytest.mark.slow

LINKS = [f"https://lab.example.org/posts/{n}" for n in range(4)]
FOUR, ONE = etagged(lab_rss(LINKS)), etagged(lab_rss(LINKS[:1]))
CRAWLS = (  # (the reply, the entry limit of the crawl, the fetch record's outcome and count)
    (FOUR, 5, "new_body", 4),
    (ONE, 5, "new_body", 1),
    (FOUR, 2, "new_body", 2),  # not read whole: the validators stay those of ONE
    (FOUR, 5, "unchanged_body", 4),  # read whole: the validators are FOUR's, 4 entries
    (FOUR, 2, "unchanged_body", 2),  # not read whole: they stay
    (Reply(304), 2, "not_modified", 4),  # confirms FOUR as the validators' crawl read it
)


@pytest.fixture(scope="module")
def ledger(tmp_path_factory, module_feed_server):
    tmp = tmp_path_factory.mktemp("readings")
    feeds = [{"vendor": "lab", "url": module_feed_server.url("lab.xml")}]
    for reply, limit, _, _ in CRAWLS:
        module_feed_server.script("lab.xml", reply)
        done = run_crawl(tmp, feeds, "-s", f"CROVIA_MAX_ENTRIES_PER_FEED={limit}")
        assert done.returncode == 0, done.stderr[-3000:]
    records = [r["body"] for r in fetch_records(tmp)]
    assert [(r["outcome"], r["entries"]["count"]) for r in records] == [c[2:] for c in CRAWLS]
    four = records[0]["body_sha256"]
    assert [r["body_sha256"] == four for r in records] == [True, False, True, True, True, True]
    return tmp


def test_history_reads_each_record_as_it_says(ledger):
    shown = crovia(ledger, "history", "--url", LINKS[0], "--json")
    assert shown.returncode == 0, shown.stderr
    (feed,) = json.loads(shown.stdout)["feeds"]
    assert [f["held"] for f in feed["fetches"]] == [True] * 6
    assert [f["in_body"] for f in feed["fetches"]] == [4, 1, 4, 4, 4, 4]
    assert [f["over_limit"] for f in feed["fetches"]] == [0, 0, 2, 0, 2, 0]
    late = crovia(ledger, "history", "--url", LINKS[3], "--json")
    assert late.returncode == 0, late.stderr
    (feed,) = json.loads(late.stdout)["feeds"]
    # past the limit in the third and fifth fetches: they cannot tell, never "not held"
    assert [f["held"] for f in feed["fetches"]] == [True, False, None, True, None, True]


def test_absent_reads_the_304_as_the_body_it_confirms(ledger):
    # posts/3 was read by the 304's crawl of reference (4 entries): present at its time.
    told = crovia(ledger, "absent", "--url", LINKS[3], "--at", "2099-01-01T00:00:00Z")
    assert told.returncode == 1, told.stdout + told.stderr
    assert "present" in told.stdout


def test_audit_and_history_agree(ledger):
    audited = crovia(ledger, "audit", "--bodies", "--json", "--ledger-dir", str(ledger / "ledger"))
    assert audited.returncode == 0, audited.stdout + audited.stderr
    bodies = json.loads(audited.stdout)["bodies"]
    # three readings: four entries with limits 5 and 2, and one entry
    assert bodies == {"fetch_records": 6, "bodies_read": 3, "not_checked": 0}
