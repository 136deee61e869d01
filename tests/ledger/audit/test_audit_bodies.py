"""Issue 42, observation 3: `crovia audit --bodies` holds every fetch record to its kept body.

A hostile worker made the signed fetch record (AX.FETCH) disagree with the body the sequencer kept:
every later `crovia history` of the item failed, and `crovia audit` passed, since it checks that a
kept body is its digest's bytes but does not read it again. Here such records are made for real:
crawls of a feed on 127.0.0.1 into a real ledger, then a record signed with the ledger's key and
writer that cites a body the feed served while stating the entries of another (as a 200, as a
304 confirming the body, and citing a kept body that is no feed at all). `crovia audit` passes
them (its promise is the digests); `crovia audit --bodies` reads each body again with the crawl's
own reader and fails (exit 1), naming the fetch record and what differs. The honest ledger passes
`--bodies`, every fetch record that states entries checked.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledger.store import BodyStore
from tests.crawl import crawl_replies, crovia, issue_into
from tests.feedserver import Reply
from tests.spider.feedtext import etagged, lab_rss

NEW = "https://lab.example.org/posts/new"
OLD = ("https://lab.example.org/posts/a", "https://lab.example.org/posts/b")


# The crawls of the honest ledger, and what each fetch record says.
CRAWLS = (
    ("old", etagged(lab_rss(list(OLD)))),
    ("confirmed", Reply(304)),
    ("failed", Reply(404, b"gone for now")),
    ("new", etagged(lab_rss([NEW, *OLD]))),
    ("same", etagged(lab_rss([NEW, *OLD]))),
)


@pytest.fixture(scope="module")
def crawled(tmp_path_factory, module_feed_server):
    """A ledger of real crawls, one per CRAWLS entry; its fetch records by crawl."""
    tmp = tmp_path_factory.mktemp("crawled")
    records = crawl_replies(tmp, module_feed_server, CRAWLS)
    outcomes = [r["body"]["outcome"] for r in records]
    assert outcomes == ["new_body", "not_modified", "failed", "new_body", "unchanged_body"]
    return tmp, dict(zip((name for name, _ in CRAWLS), records, strict=True))


def audit(tmp: Path, *args: str):
    return crovia(tmp, "audit", "--ledger-dir", str(tmp / "ledger"), *args)


def test_an_honest_ledger_passes_with_its_bodies_read_again(crawled):
    tmp, _ = crawled
    proc = audit(tmp, "--bodies")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 fetch records held to their kept bodies" in proc.stdout, proc.stdout
    report = json.loads(audit(tmp, "--bodies", "--json").stdout)
    # the two 200 bodies, the 304 and the unchanged body; the failed fetch states no entries
    assert report["bodies"] == {"fetch_records": 4, "bodies_read": 2, "not_checked": 0}
    assert "bodies" not in json.loads(audit(tmp, "--json").stdout)


def _forge(tmp: Path, record: dict, **changes) -> dict:
    """`record` signed again into the ledger with `changes` to its body (and the same digest in
    object.fetch when `body_sha256` changes), with the ledger's key and writer."""
    unsigned = {k: v for k, v in record.items() if k not in ("signature", "axiom_id", "anchors")}
    unsigned = json.loads(json.dumps(unsigned))
    unsigned["body"].update(changes)
    if "body_sha256" in changes and "body_sha256" in unsigned["object"].get("fetch", {}):
        unsigned["object"]["fetch"]["body_sha256"] = changes["body_sha256"]
    return issue_into(tmp, unsigned)


def _copy(crawled, tmp_path: Path) -> Path:
    import shutil

    source, _ = crawled
    shutil.copytree(source / "ledger", tmp_path / "ledger")
    shutil.copytree(source / "keys", tmp_path / "keys")
    return tmp_path


@pytest.mark.parametrize("forged_from", ["old", "confirmed"])
def test_a_record_stating_another_bodys_entries_fails_the_bodies_audit(
    crawled, tmp_path, forged_from
):
    tmp = _copy(crawled, tmp_path)
    records = crawled[1]
    # The old body's record (a 200, or the 304 confirming it), stating the new body's entries.
    forged = _forge(tmp, records[forged_from], entries=records["new"]["body"]["entries"])
    assert audit(tmp).returncode == 0  # every kept body is its digest's bytes
    history = crovia(tmp, "history", "--url", NEW, "--ledger-dir", str(tmp / "ledger"))
    assert history.returncode == 1 and "fetch_entries" in history.stderr, history.stderr
    proc = audit(tmp, "--bodies")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert forged["axiom_id"] in proc.stderr and f"leaf {forged['leaf_index']}" in proc.stderr
    assert "check fetch_entries failed" in proc.stderr
    failure = json.loads(audit(tmp, "--bodies", "--json").stdout)
    assert (failure["ok"], failure["exit_code"], failure["check"]) == (False, 1, "fetch_entries")
    signed, read = records["new"]["body"]["entries"], records["old"]["body"]["entries"]
    assert failure["expected"]["identities_sha256"] == signed["identities_sha256"]
    assert failure["computed"]["identities_sha256"] == read["identities_sha256"]
    assert (failure["expected"]["count"], failure["computed"]["count"]) == (3, 2)


def test_a_record_citing_a_body_that_is_no_feed_fails_the_bodies_audit(crawled, tmp_path):
    tmp = _copy(crawled, tmp_path)
    junk = BodyStore(tmp / "ledger").put(b"<html><body>no feed here</body></html>")
    forged = _forge(tmp, crawled[1]["new"], body_sha256=junk)
    assert audit(tmp).returncode == 0
    proc = audit(tmp, "--bodies")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert forged["axiom_id"] in proc.stderr and "could not be read again" in proc.stderr
