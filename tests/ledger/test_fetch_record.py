"""AX.FETCH envelopes (issue 18): built, shaped, checked like AX.OBS ones, with their own body."""

from __future__ import annotations

import copy

import nacl.signing
import pytest

from ledger.envelope import ANCHOR_CHAIN, ANCHOR_SEE_RECEIPT, sign_envelope
from ledger.exceptions import EntryInvalid, EnvelopeMalformed, InvalidRecord
from ledger.monitor.entries import check_shape
from ledger.records.fetch import describe_fetch, entries_digest, new_fetch_envelope
from ledger.records.shape import check_envelope_shape

KEY = nacl.signing.SigningKey(b"\x05" * 32)
URL = "https://lab.example.org/feed.xml"
IDS = [{"family": "lab", "guid": "", "link": "https://lab.example.org/a"}]


def record(**changes):
    fields = dict(
        spider="vendor_press", vendor="lab", feed_url=URL, outcome="new_body",
        fetched_at="2026-12-01T04:00:00.123456Z", run_hash="0" * 64,
        fetch={"body_sha256": "a" * 64, "fetched_at": "2026-12-01T04:00:00.123456Z",
               "final_url": URL, "status": 200},
        body_sha256="a" * 64,
        entries={"count": 1, "identities_sha256": entries_digest(IDS), "limit": 2000},
        content_type="application/rss+xml",
    )  # fmt: skip
    fields.update(changes)
    return new_fetch_envelope(**fields)


def signed(envelope, height=0):
    return sign_envelope(
        envelope, [{"chain": ANCHOR_CHAIN, "height": height, **ANCHOR_SEE_RECEIPT}], KEY
    )


def test_a_fetch_record_has_the_envelope_shape_and_says_what_it_vouches_for():
    envelope = signed(record())
    check_envelope_shape(envelope)
    check_shape(envelope, 0)
    assert envelope["axiom_type"] == "AX.FETCH"
    assert envelope["subject"] == {
        "observed_at": "2026-12-01T04:00:00Z",
        "source_collector": "spider:vendor_press",
        "target_id": "feed:" + URL,
    }
    assert describe_fetch(envelope) == (
        f"feed lab ({URL}) fetched at 2026-12-01T04:00:00.123456Z: HTTP 200, body {'a' * 64},"
        " 1 entries"
    )
    failed = signed(record(outcome="failed", fetch=None, body_sha256="", entries=None, error="x"))
    assert "object" in failed and "fetch" not in failed["object"]
    assert set(failed["body"]) == {
        "schema", "spider", "vendor", "feed_url", "outcome", "fetched_at", "run", "error",
        "content_type",
    }  # fmt: skip


def test_an_unknown_type_or_outcome_is_refused():
    envelope = signed(record())
    for where, value in (("axiom_type", "AX.NOPE"), ("axiom_type", None)):
        changed = copy.deepcopy(envelope)
        changed[where] = value
        with pytest.raises(EnvelopeMalformed, match="axiom_type"):
            check_envelope_shape(changed)
    changed = copy.deepcopy(envelope)
    changed["body"]["outcome"] = "maybe"
    with pytest.raises(EnvelopeMalformed, match="outcome"):
        check_envelope_shape(changed)
    del changed["body"]["feed_url"]
    with pytest.raises(EnvelopeMalformed, match="feed_url"):
        check_envelope_shape(changed)
    with pytest.raises(InvalidRecord):
        record(outcome="maybe")
    with pytest.raises(InvalidRecord):
        record(fetched_at="2026-12-01T04:00:00Z")
    with pytest.raises(InvalidRecord):
        record(body_sha256="A" * 64)


def test_the_monitor_holds_a_fetch_record_body_to_its_form():
    envelope = record()
    envelope["body"]["entries"] = {"count": "1", "identities_sha256": "b" * 64, "limit": 1}
    with pytest.raises(EntryInvalid, match=r"body\.entries\.count is not an int"):
        check_shape(signed(envelope), 0)
    envelope = record()
    envelope["body"]["schema"] = "crovia.other.v1"
    with pytest.raises(EntryInvalid, match="fetch record"):
        check_shape(signed(envelope), 0)


def test_the_entry_digest_is_of_the_identities_in_feed_order():
    other = {"family": "lab", "guid": "2", "link": ""}
    assert entries_digest([*IDS, other]) != entries_digest([other, *IDS])
    assert entries_digest([]) == "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
