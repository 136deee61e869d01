"""Issue 42, observation 2: `crovia absent` never answers absent for an item that an AX.OBS of the
same feed shows observed after the fetch the answer relies on.

A hostile Redis writer made the cluster's sequencer sign a new item with no fetch record of the
run that observed it; `crovia absent --url <the item> --at 2030-01-01` answered absent (exit 0),
citing an older 304, while the same ledger signed that it observed the item. Here the ledger is
made as that sequencer made it: two real crawls of a feed on 127.0.0.1 (a body, then a 304), then
the item's AX.OBS, as a real crawl of the feed serving it signs it, issued into the ledger with
the ledger's own key and writer and no fetch record. The answer must be "cannot tell" (exit 4),
naming the AX.OBS; whether the observation says it came after the fetch in time or only in the
ledger's order (a backdated `observed_at`). An honest ledger where the item appears later still
answers absent before it appeared.
"""

from __future__ import annotations

import json
from pathlib import Path

from ledger.store import BodyStore
from tests.crawl import crawl_replies, crovia, envelopes, issue_into
from tests.feedserver import Reply
from tests.spider.feedtext import etagged, lab_rss

NEW = "https://lab.example.org/posts/new"
OLD = ("https://lab.example.org/posts/a", "https://lab.example.org/posts/b")
CANNOT_TELL = 4


def crawl(tmp: Path, server, reply: Reply) -> dict:
    return crawl_replies(tmp, server, [("", reply)])[-1]


def body_then_304(tmp: Path, server) -> dict:
    """Two real crawls of the feed: a body without NEW, then a 304 confirming it."""
    crawl(tmp, server, etagged(lab_rss(list(OLD))))
    confirmed = crawl(tmp, server, Reply(304))
    assert confirmed["body"]["outcome"] == "not_modified", confirmed["body"]
    return confirmed


def hostile_observation(victim: Path, scratch: Path, server, observed_at: str = "") -> dict:
    """The AX.OBS of NEW as a real crawl of the same feed signs it (into a scratch ledger), issued
    into `victim`'s ledger with its key and writer (and the body it cites kept), with no fetch
    record: as the sequencer that took a pre-seeded run did. `observed_at` backdates it."""
    crawl(scratch, server, etagged(lab_rss([NEW, *OLD])))
    [observed] = [e for e in envelopes(scratch) if e["body"]["spider_record"]["url"] == NEW]
    unsigned = {k: v for k, v in observed.items() if k not in ("signature", "axiom_id", "anchors")}
    if observed_at:
        unsigned["body"]["spider_record"]["observed_at"] = observed_at
        unsigned["subject"]["observed_at"] = observed_at[:19] + "Z"
    cited = observed["object"]["fetch"]["body_sha256"]  # kept, as the sequencer keeps it
    BodyStore(victim / "ledger").put(BodyStore(scratch / "ledger").get(cited))
    return issue_into(victim, unsigned)


def _dirs(tmp: Path) -> tuple[Path, Path]:
    for name in ("victim", "scratch"):
        (tmp / name).mkdir()
    return tmp / "victim", tmp / "scratch"


def absent(tmp: Path, *args: str):
    return crovia(tmp, "absent", "--url", NEW, "--ledger-dir", str(tmp / "ledger"), *args)


def test_an_item_observed_after_the_fetch_is_never_absent(tmp_path, feed_server):
    victim, scratch = _dirs(tmp_path)
    confirmed = body_then_304(victim, feed_server)
    observed = hostile_observation(victim, scratch, feed_server)
    assert crovia(victim, "audit").returncode == 0  # a ledger the audit calls whole
    for extra in ((), ("--vendor", "lab")):
        proc = absent(victim, "--at", "2030-01-01", *extra)
        assert proc.returncode == CANNOT_TELL, proc.stdout + proc.stderr
        assert "cannot tell" in proc.stdout
        assert observed["axiom_id"] in proc.stdout and confirmed["axiom_id"] in proc.stdout
    answer = json.loads(absent(victim, "--at", "2030-01-01", "--json").stdout)
    assert (answer["verdict"], answer["exit_code"]) == ("cannot tell", CANNOT_TELL)
    [feed] = answer["feeds"]
    assert feed["fetch"]["axiom_id"] == confirmed["axiom_id"]
    assert feed["contradicted_by"]["axiom_id"] == observed["axiom_id"]
    assert feed["contradicted_by"]["leaf_index"] == observed["leaf_index"]
    # At the fetch's own time too: the observation signed after its record, with no fetch record
    # holding the item, is unaccounted for (an honest ledger has one: the last test).
    at_fetch = absent(victim, "--at", confirmed["body"]["fetched_at"])
    assert at_fetch.returncode == CANNOT_TELL, at_fetch.stdout + at_fetch.stderr
    assert "no later fetch record of the feed holds it" in at_fetch.stdout


def test_a_backdated_observation_after_the_fetch_in_the_ledger_is_never_absent(
    tmp_path, feed_server
):
    victim, scratch = _dirs(tmp_path)
    confirmed = body_then_304(victim, feed_server)
    observed = hostile_observation(victim, scratch, feed_server, "2020-01-01T00:00:00.000000Z")
    assert crovia(victim, "audit").returncode == 0
    for at in ("2030-01-01", confirmed["body"]["fetched_at"]):
        proc = absent(victim, "--at", at)
        assert proc.returncode == CANNOT_TELL, proc.stdout + proc.stderr
        assert observed["axiom_id"] in proc.stdout


def test_an_item_that_appears_later_was_absent_before(tmp_path, feed_server):
    confirmed = body_then_304(tmp_path, feed_server)
    appeared = crawl(tmp_path, feed_server, etagged(lab_rss([NEW, *OLD])))
    # Its AX.OBS comes after the 304 in the ledger, and the fetch record that held it with it.
    proc = absent(tmp_path, "--at", confirmed["body"]["fetched_at"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert confirmed["axiom_id"] in proc.stdout
    assert absent(tmp_path, "--at", "2030-01-01").returncode == 1
    assert absent(tmp_path, "--at", appeared["body"]["fetched_at"]).returncode == 1
