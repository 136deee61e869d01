"""Differential-corpus cases of relayed feeds (docs/spider.md, "Relays"): a fetch record and an
item that name the relay serving their feed (valid, pinned), and ones whose `relay` is not a
non-empty string (invalid: `envelope_shape`, in `crovia verify` and the page alike)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ledger.envelope import new_envelope
from ledger.records.fetch import new_fetch_envelope
from ledger.store import Ledger
from tests.vectors.make_vectors import TEST_KEY, sample_record
from tests.web import corpus as c
from tests.web.corpus_eras import one_leaf_with

RELAY = "Olshansk/rss-feeds (GitHub)"


def relayed_fetch(relay: str = RELAY) -> dict[str, Any]:
    """The unsigned fetch record of a 200 from a feed that `relay` serves."""
    fetched_at = "2026-06-01T00:00:00.000000Z"
    return new_fetch_envelope(
        spider="vendor_press", vendor="lab", feed_url="https://relay.example.org/lab.xml",
        outcome="new_body", fetched_at=fetched_at, run_hash="0" * 64, body_sha256="b" * 64,
        fetch={"body_sha256": "b" * 64, "fetched_at": fetched_at,
               "final_url": "https://relay.example.org/lab.xml", "status": 200},
        entries={"count": 1, "identities_sha256": "c" * 64, "limit": 3, "in_body": 1,
                 "over_limit": 0, "unread": 0},
        content_type="application/rss+xml", relay=relay, issued_at=fetched_at[:19] + "Z",
    )  # fmt: skip


def relayed_item(relay: str = RELAY) -> dict[str, Any]:
    """The unsigned envelope of an item of a feed that `relay` serves."""
    return new_envelope(
        sample_record(1), body_extra={"relay": relay}, issued_at="2026-06-18T04:43:37Z"
    )


def _receipt(work: Path, name: str, envelope: dict[str, Any]) -> dict[str, Any]:
    with Ledger.open(work / name, signing_key=TEST_KEY) as ledger:
        (issued,) = ledger.issue([envelope])
        ledger.seal(run_id=f"corpus_{name}")
        return ledger.receipt(issued.axiom_id)


def hostile_cases(work: Path, pki: Any) -> list[c.Expected]:
    """The cases, each from a one-leaf ledger signed by TEST_KEY in `work` (`pki` is not needed).
    A relay that is not a string is signed again by hand (corpus_eras.one_leaf_with), as a signer
    that let it through would publish it."""
    del pki  # no stamps here
    fetch = _receipt(work, "relay_fetch", relayed_fetch())
    item = _receipt(work, "relay_item", relayed_item())
    pin = c.trust_root(TEST_KEY)
    wrong = (
        ("fetch record, relay a number", fetch, lambda _: 42),
        ("fetch record, relay a list", fetch, lambda relay: [relay]),
        ("item, relay empty", item, lambda _: ""),
        ("item, relay null", item, lambda _: None),
    )
    return [
        c.Expected("relayed fetch record", fetch, pin, "valid", None),
        c.Expected("relayed item", item, pin, "valid", None),
        *(
            c.Expected(name, one_leaf_with(good, "body", "relay", change), pin, "invalid",
                       "envelope_shape")
            for name, good, change in wrong
        ),
    ]  # fmt: skip
