"""Hostile receipts about key eras and the time fields, each with the verdict both verifiers must
give (docs/format.md, "When a key is trusted").

A ledger hands over from TEST_KEY (A) to NEW_KEY (B) and then to THIRD_KEY (C); copies of it taken
before each hand-over keep signing with the retiring key, as a copy with a leaked key would. A key
of the chain is trusted only inside its era, by leaf count and by time, whether the chain comes
from the pinned trust root or from the receipt's own `key_rotations`. The time fields must be
ASCII digits: Python's digit class matches any Unicode digit, JavaScript's only 0-9.
"""

from __future__ import annotations

import copy
import hashlib
import shutil
from pathlib import Path
from typing import Any

import nacl.signing

from crovia_spider.demo_tsa import TestPki
from ledger.canonical import canonical_json
from ledger.envelope import sign_envelope
from ledger.keys.rotation import rotation_signed_bytes
from ledger.merkle import leaf_hash
from ledger.records.fetch import new_fetch_envelope
from ledger.seal import seal_signed_bytes
from ledger.store import Ledger
from tests.vectors.make_vectors import TEST_KEY, build_ledger, sample_envelope
from tests.web import corpus as c
from tests.web.corpus import Expected

THIRD_KEY = nacl.signing.SigningKey(hashlib.sha256(b"crovia page tests: the third key").digest())
ARABIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")  # Arabic-Indic digits


def resealed(
    receipt: dict[str, Any], key: nacl.signing.SigningKey, **fields: Any
) -> dict[str, Any]:
    """`receipt` whose seal has `fields` changed and is signed again by `key` (its holder can)."""
    out = copy.deepcopy(receipt)
    out["seal"].update(fields)
    out["seal"]["signature"] = key.sign(seal_signed_bytes(out["seal"])).signature.hex()
    return out


def resigned_record(record: dict[str, Any], new_key: nacl.signing.SigningKey, **fields: Any):
    """A rotation record with `fields` changed, signed again by both its keys."""
    out = dict(record, **fields)
    signed = rotation_signed_bytes(out)
    out["old_signature"] = TEST_KEY.sign(signed).signature.hex()
    out["new_signature"] = new_key.sign(signed).signature.hex()
    return out


def one_leaf_with(receipt: dict[str, Any], section: str, name: str, change) -> dict[str, Any]:
    """A one-leaf ledger's `receipt` whose envelope field `name` (in `section`) is `change`d, the
    envelope, leaf hash and seal signed again by TEST_KEY: what a signer that let such a field
    through would publish (our writer refuses it)."""
    out = copy.deepcopy(receipt)
    envelope = out["envelope"]
    holder = envelope[section] if section else envelope
    holder[name] = change(holder[name])
    full = sign_envelope(envelope, envelope["anchors"], TEST_KEY)
    leaf = leaf_hash(canonical_json(full)).hex()
    out.update(envelope=full, axiom_id=full["axiom_id"])
    out["verifier"]["url"] = f"/v/{full['axiom_id']}"
    out["ledger"]["leaf_hash"] = leaf
    return resealed(out, TEST_KEY, merkle_root=leaf, rfc6962_root=leaf)


def _fetch_receipt(directory: Path) -> dict[str, Any]:
    """A one-leaf ledger of one fetch record signed by TEST_KEY: its receipt."""
    fetched_at = "2026-06-18T04:43:37.000000Z"
    envelope = new_fetch_envelope(
        spider="vendor_press", vendor="lab", feed_url="https://lab.example.org/feed.xml",
        outcome="new_body", fetched_at=fetched_at, run_hash="0" * 64, body_sha256="b" * 64,
        fetch={"body_sha256": "b" * 64, "fetched_at": fetched_at,
               "final_url": "https://lab.example.org/feed.xml", "status": 200},
        entries={"count": 1, "identities_sha256": "c" * 64, "limit": 2000},
        content_type="application/rss+xml", issued_at="2026-06-18T04:43:37Z",
    )  # fmt: skip
    with Ledger.open(directory, signing_key=TEST_KEY) as ledger:
        (issued,) = ledger.issue([envelope])
        ledger.seal()
        return ledger.receipt(issued.axiom_id)


def arabic(text: str) -> str:
    return text.translate(ARABIC)


def _issue(directory: Path, key: nacl.signing.SigningKey, first: int) -> list[dict[str, Any]]:
    with Ledger.open(directory, signing_key=key) as ledger:
        issued = ledger.issue([sample_envelope(n) for n in range(first, first + 3)])
        ledger.seal()
        return [ledger.receipt(item.axiom_id) for item in issued]


def _rotate(directory: Path, old: nacl.signing.SigningKey, new: nacl.signing.SigningKey):
    with Ledger.open(directory, signing_key=old) as ledger:
        return ledger.rotate_key(new)


def hostile_cases(work: Path, pki: TestPki) -> list[Expected]:
    del pki  # no stamps here
    site, thief_a, thief_b = work / "site", work / "thief_a", work / "thief_b"
    before = _issue(site, TEST_KEY, 0)  # A seals leaves 0-2
    shutil.copytree(site, thief_a)
    a_to_b = _rotate(site, TEST_KEY, c.NEW_KEY)
    after = _issue(site, c.NEW_KEY, 3)  # B seals leaves 3-5
    shutil.copytree(site, thief_b)
    b_to_c = _rotate(site, c.NEW_KEY, THIRD_KEY)
    third = _issue(site, THIRD_KEY, 6)  # C seals leaves 6-8
    stolen_a = _issue(thief_a, TEST_KEY, 3)  # A, retired at 3 leaves, seals 6
    stolen_b = _issue(thief_b, c.NEW_KEY, 6)  # B, retired at 6 leaves, seals 9

    pin_a = c.trust_root(TEST_KEY)  # an old pin that knows no rotation
    pin_b = c.trust_root(c.NEW_KEY, [a_to_b])
    pin_c = c.trust_root(THIRD_KEY, [a_to_b, b_to_c])
    early, late = "2001-01-01T00:00:00Z", "2999-01-01T00:00:00Z"
    cases: list[Expected] = []

    def add(name, receipt, pin, verdict, check=None):
        cases.append(Expected(name, receipt, pin, verdict, check))

    # genuine receipts stay valid under every pin that knows their key
    for pin_name, pin in (("B", pin_b), ("C", pin_c)):
        add(f"era: A's own seal, pin {pin_name}", before[0], pin, "valid")
        add(f"era: B's own seal, pin {pin_name}", after[0], pin, "valid")
    add("era: C's own seal, pin C", third[0], pin_c, "valid")
    add("era: the old pin knows no rotation", stolen_a[0], pin_a, "valid")
    add("era: no pin", stolen_a[0], None, "unpinned", "pinned_key")

    # the old key after its hand-over: by leaf (sealed_at moved early), by time, both
    by_leaf = resealed(stolen_a[0], TEST_KEY, sealed_at=early)
    by_time = resealed(before[0], TEST_KEY, sealed_at=late)
    for pin_name, pin in (("B", pin_b), ("C", pin_c)):
        add(
            f"era: A after its hand-over by leaf, pin {pin_name}",
            by_leaf,
            pin,
            "invalid",
            "key_rotation",
        )
        add(
            f"era: A after its hand-over by time, pin {pin_name}",
            by_time,
            pin,
            "invalid",
            "key_rotation",
        )
        add(
            f"era: A after its hand-over, pin {pin_name}",
            stolen_a[0],
            pin,
            "invalid",
            "key_rotation",
        )
    # the same for a middle key whose receipt carries its own key_rotations (A -> B)
    add(
        "era: B (own key_rotations) after its hand-over",
        stolen_b[0],
        pin_c,
        "invalid",
        "key_rotation",
    )
    add(
        "era: B (own key_rotations) after its hand-over by time",
        resealed(after[0], c.NEW_KEY, sealed_at=late),
        pin_c,
        "invalid",
        "key_rotation",
    )
    add(
        "era: B (own key_rotations) after its hand-over by leaf",
        resealed(stolen_b[0], c.NEW_KEY, sealed_at=after[0]["seal"]["sealed_at"]),
        pin_c,
        "invalid",
        "key_rotation",
    )
    # a new key before its hand-over: the receipt's own chain says when its era began
    early_b = resealed(after[0], c.NEW_KEY, sealed_at=early)
    for pin_name, pin in (("none", None), ("B", pin_b), ("C", pin_c)):
        add(f"era: B before its hand-over, pin {pin_name}", early_b, pin, "invalid", "key_rotation")

    # non-ASCII digits in each time field
    add(
        "digits: sealed_at, under a chain",
        resealed(before[0], TEST_KEY, sealed_at=arabic(before[0]["seal"]["sealed_at"])),
        pin_b,
        "invalid",
        "receipt_shape",
    )
    add(
        "digits: sealed_at, no chain",
        resealed(before[0], TEST_KEY, sealed_at=arabic(before[0]["seal"]["sealed_at"])),
        pin_a,
        "invalid",
        "receipt_shape",
    )
    odd = copy.deepcopy(after[0])
    odd["key_rotations"] = [
        resigned_record(a_to_b, c.NEW_KEY, rotated_at=arabic(a_to_b["rotated_at"]))
    ]
    add("digits: rotated_at in key_rotations", odd, None, "invalid", "key_rotation")
    add(
        "digits: rotated_at in the trust root",
        before[0],
        c.trust_root(c.NEW_KEY, [odd["key_rotations"][0]]),
        "invalid",
        "key_rotation",
    )
    single = build_ledger(work / "single", 1)[0]
    fetch = _fetch_receipt(work / "fetch")
    odd_fetched = one_leaf_with(fetch, "body", "fetched_at", arabic)
    add("digits: fetched_at", odd_fetched, pin_a, "invalid", "envelope_shape")
    add("a fetch record in ASCII", fetch, pin_a, "valid")
    for section, name in (("", "issued_at"), ("subject", "observed_at")):
        add(
            f"digits: {name}",
            one_leaf_with(single, section, name, arabic),
            pin_a,
            "invalid",
            "envelope_shape",
        )
    return cases
