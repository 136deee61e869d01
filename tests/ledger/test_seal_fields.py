"""What new seals and receipts carry: no local path, and the chain to the previous seal."""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

import pytest

from ledger.canonical import canonical_json
from ledger.exceptions import ReceiptMalformed, SealInvalid, VerificationError
from ledger.receipt import verify_receipt
from ledger.seal import SEAL_EXTENSION_KEYS, seal_signed_bytes
from ledger.store import Ledger
from tests.vectors.make_vectors import SEED_RECEIPT, sample_envelope


@pytest.fixture
def three_seals(ledger_dir: Path, key) -> tuple[list[dict], list[dict]]:
    """A ledger sealed three times; its seals and a receipt under each."""
    seals, receipts = [], []
    with Ledger.open(ledger_dir, signing_key=key) as ledger:
        for start in (0, 4, 9):
            issued = ledger.issue([sample_envelope(n) for n in range(start, start + 4 + start % 2)])
            seals.append(ledger.seal())
            receipts.append(ledger.receipt(issued[0].axiom_id))
    return seals, receipts


def test_no_seal_or_receipt_names_the_ledger_directory(three_seals, ledger_dir: Path) -> None:
    seals, receipts = three_seals
    stored = (ledger_dir / "seals.jsonl").read_bytes()
    for text in [stored, *map(canonical_json, seals), *map(canonical_json, receipts)]:
        assert str(ledger_dir).encode() not in text
        assert str(ledger_dir.parent).encode() not in text
    assert {seal["jsonl_path"] for seal in seals} == {"axiom_ledger.jsonl"}
    assert {r["ledger"]["ledger_path"] for r in receipts} == {"axiom_ledger.jsonl"}


def test_each_seal_chains_to_the_signed_bytes_of_the_one_before(three_seals) -> None:
    seals, _receipts = three_seals
    assert seals[0]["prev_seal_sha256"] == ""
    for before, after in itertools.pairwise(seals):
        expected = hashlib.sha256(seal_signed_bytes(before)).hexdigest()
        assert after["prev_seal_sha256"] == expected
    assert {"prev_seal_sha256"} <= SEAL_EXTENSION_KEYS


def test_receipts_with_the_extended_seal_verify(three_seals, key) -> None:
    _seals, receipts = three_seals
    for receipt in receipts:
        assert verify_receipt(receipt, pubkey_hex=bytes(key.verify_key).hex()).key_pinned


def test_the_seed_seal_key_set_still_verifies() -> None:
    assert verify_receipt(json.loads(SEED_RECEIPT.read_bytes())).leaf_index == 233395


def test_the_seal_key_set_is_the_seeds_or_the_seeds_plus_the_whole_extension() -> None:
    """The shape check passes exactly those two sets (the seed's signature then fails, as the
    seed never signed the extra keys); one key more or fewer is a shape error."""
    extended = json.loads(SEED_RECEIPT.read_bytes())
    extended["seal"].update(dict.fromkeys(SEAL_EXTENSION_KEYS, ""))
    with pytest.raises(VerificationError) as caught:
        verify_receipt(extended)
    assert caught.value.check == "seal_signature"
    strays = [{"other"}, {*SEAL_EXTENSION_KEYS, "other"}]
    strays += [{name} for name in SEAL_EXTENSION_KEYS if {name} != SEAL_EXTENSION_KEYS]
    for added in strays:
        receipt = json.loads(SEED_RECEIPT.read_bytes())
        receipt["seal"].update(dict.fromkeys(added, ""))
        with pytest.raises(ReceiptMalformed, match="seal keys"):
            verify_receipt(receipt)


@pytest.mark.parametrize("change", ["drop", "edit", "edit_root"])
def test_the_chain_field_is_signed(three_seals, change: str) -> None:
    _seals, receipts = three_seals
    if change == "drop":  # leaves the reference's key set: the shape passes, the signature not
        for name in SEAL_EXTENSION_KEYS:
            del receipts[1]["seal"][name]
    elif change == "edit":
        receipts[1]["seal"]["prev_seal_sha256"] = "0" * 64
    else:
        receipts[1]["seal"]["rfc6962_root"] = "0" * 64
    with pytest.raises(VerificationError) as caught:
        verify_receipt(receipts[1])
    assert caught.value.check == "seal_signature"


def test_audit_reads_extended_seals_and_refuses_a_stray_key(three_seals, ledger_dir) -> None:
    from ledger.audit import audit

    assert audit(ledger_dir).seals == 3
    lines = (ledger_dir / "seals.jsonl").read_bytes().splitlines()
    seal = json.loads(lines[0])
    seal["stray"] = 1
    lines[0] = canonical_json(seal)
    (ledger_dir / "seals.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(SealInvalid, match="line 1"):
        audit(ledger_dir)
