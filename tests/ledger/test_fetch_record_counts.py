"""A fetch record's entry counts (issue 30): `entries` is the read part alone (records before
issue 30) or with `in_body`, `over_limit` and `unread`; the shape checks refuse anything else, so
a monitor (validate_fetch_body) and both receipt verifiers (check_envelope_shape) hold a record to
counts that are ints and add up."""

from __future__ import annotations

import pytest

from ledger.exceptions import EnvelopeMalformed, InvalidRecord
from ledger.records.fetch import new_fetch_envelope, validate_fetch_body
from ledger.records.shape import check_envelope_shape

READ = {"count": 3, "identities_sha256": "a" * 64, "limit": 3}
WHOLE = {**READ, "in_body": 5, "over_limit": 2, "unread": 0}


def record(entries: dict) -> dict:
    envelope = new_fetch_envelope(
        spider="s", vendor="v", feed_url="https://x.test/f", outcome="new_body",
        fetched_at="2026-06-01T00:00:00.000000Z", run_hash="r", body_sha256="b" * 64,
        entries=READ,
    )  # fmt: skip
    envelope["body"]["entries"] = entries  # any JSON, as a record from elsewhere may hold
    envelope["anchors"] = [{"chain": "crovia.ledger", "height": 0, "merkle_proof": "see_receipt",
                            "root_at_anchor": "see_receipt"}]  # fmt: skip
    envelope["axiom_id"] = envelope["signature"] = "x"
    return envelope


@pytest.mark.parametrize("entries", [READ, WHOLE, {**READ, "in_body": 3, "over_limit": 0,
                                                    "unread": 0}])  # fmt: skip
def test_both_shapes_pass(entries):
    validate_fetch_body(record(entries)["body"])
    check_envelope_shape(record(entries), anchor=False)


WRONG = {
    "in_body a string": {**WHOLE, "in_body": "5"},
    "over_limit a float": {**WHOLE, "over_limit": 2.0},
    "unread a bool": {**WHOLE, "unread": False},
    "unread null": {**WHOLE, "unread": None},
    "in_body a list": {**WHOLE, "in_body": [5]},
    "a count missing": {k: v for k, v in WHOLE.items() if k != "unread"},
    "a key more": {**WHOLE, "dropped": 0},
    "negative": {**READ, "in_body": 2, "over_limit": -1, "unread": 0},
    "not adding up": {**WHOLE, "in_body": 6},
    "count a string": {**WHOLE, "count": "3"},
}


@pytest.mark.parametrize("name", sorted(WRONG))
def test_wrong_counts_are_refused_by_every_shape_check(name):
    envelope = record(WRONG[name])
    with pytest.raises(InvalidRecord):
        validate_fetch_body(envelope["body"])
    with pytest.raises(EnvelopeMalformed) as raised:
        check_envelope_shape(envelope, anchor=False)
    assert "envelope.body.entries" in str(raised.value)
