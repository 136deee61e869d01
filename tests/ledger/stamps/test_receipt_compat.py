"""Stamps leave the reference format intact: the seed still verifies byte for byte, a stamped
receipt has the reference shape plus the documented extensions only, and its signed parts are
byte for byte those of the unstamped receipt, which the independent oracle accepts.
"""

from __future__ import annotations

import json
from pathlib import Path

from crovia_spider.demo_tsa import OpenSslTsa
from ledger.canonical import canonical_json
from ledger.receipt import SECTION_KEYS, verify_receipt
from tests.independent.oracle import check_receipt, load_receipt
from tests.ledger.stamps.calendar_server import LoopbackCalendar
from tests.ledger.stamps.conftest import crovia, first_axiom

SEED = Path(__file__).resolve().parents[2] / "vectors" / "seed_axiom_proof.json"
SIGNED_PARTS = ("_canonicalization", "axiom_id", "envelope", "ledger", "merkle_proof", "schema")
SIGNED_PARTS += ("seal", "trust_root", "verifier")


def test_the_seed_still_verifies_byte_for_byte_and_claims_no_stamp():
    raw = SEED.read_bytes()
    receipt = load_receipt(raw)
    assert canonical_json(receipt) == raw
    verdict = verify_receipt(receipt, pubkey_hex=receipt["seal"]["public_key_hex"])
    assert verdict.stamps.tokens == () and verdict.stamps.proof is None
    assert "rfc3161" not in verdict.checks and "opentimestamps" not in verdict.checks
    check_receipt(receipt)


def test_a_stamped_receipt_keeps_the_reference_shape_and_signed_bytes(work, pki):
    unstamped = load_receipt(crovia(work, "prove", first_axiom(work)).stdout.encode())
    assert set(unstamped["bitcoin_anchor"]) == SECTION_KEYS["bitcoin_anchor"]
    assert "rfc3161_timestamps" not in unstamped
    with OpenSslTsa(pki) as tsa, LoopbackCalendar() as cal:
        crovia(work, "stamp", CROVIA_TSA_URLS=tsa.url, CROVIA_OTS_CALENDARS=cal.url)
    stamped = json.loads(crovia(work, "prove", first_axiom(work)).stdout)
    assert set(stamped) - set(unstamped) == {"rfc3161_timestamps"}
    assert set(stamped["bitcoin_anchor"]) - SECTION_KEYS["bitcoin_anchor"] == {"ots_proof_base64"}
    for part in SIGNED_PARTS:
        assert canonical_json(stamped[part]) == canonical_json(unstamped[part]), part
    check_receipt(unstamped, pubkey_hex=unstamped["seal"]["public_key_hex"])
    verdict = verify_receipt(stamped, pubkey_hex=stamped["seal"]["public_key_hex"])
    assert verdict.checks[-3:] == ("rfc3161", "opentimestamps", "pinned_key")  # pin last
