"""Receipts of our own ledgers pass the independent oracle, as the bytes `crovia prove` writes.

The oracle (oracle.py) was written from docs/format.md without reading ledger/, so agreement here
is the acceptance check "verify with an independent implementation". Older receipts must stay
valid after later seals, so every leaf is proven against two seal generations.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nacl.signing
import pytest

from ledger.canonical import canonical_json
from ledger.store import Ledger
from tests.independent.oracle import OracleReject, check_receipt, load_receipt
from tests.vectors.make_vectors import sample_envelope


@pytest.fixture(scope="module")
def key() -> nacl.signing.SigningKey:
    return nacl.signing.SigningKey.generate()


@pytest.mark.parametrize("size", [1, 2, 3, 7, 8, 9, 33])
def test_every_receipt_of_a_ledger_passes_the_oracle(tmp_path, key, size):
    pubkey = key.verify_key.encode().hex()
    with Ledger.open(tmp_path, signing_key=key) as ledger:
        issued = ledger.issue([sample_envelope(n) for n in range(size)])
        ledger.seal(run_id="first")
        first = [ledger.receipt(leaf.axiom_id) for leaf in issued]
        ledger.issue([sample_envelope(n) for n in range(size, size + 5)])
        ledger.seal(run_id="second")
        second = [ledger.receipt(leaf.axiom_id) for leaf in issued]
    for receipt in first + second:
        check_receipt(load_receipt(canonical_json(receipt)), pubkey_hex=pubkey)
    assert {r["seal"]["leaf_count"] for r in second} == {size + 5}


def test_oracle_refuses_our_receipt_under_another_pinned_key(tmp_path, key):
    with Ledger.open(tmp_path, signing_key=key) as ledger:
        (leaf,) = ledger.issue([sample_envelope(0)])
        ledger.seal()
        receipt = ledger.receipt(leaf.axiom_id)
    stranger = nacl.signing.SigningKey.generate().verify_key.encode().hex()
    with pytest.raises(OracleReject) as excinfo:
        check_receipt(receipt, pubkey_hex=stranger)
    assert excinfo.value.check == "pinned_key"


def test_crovia_prove_writes_the_canonical_bytes_the_oracle_reads(tmp_path, key):
    with Ledger.open(tmp_path, signing_key=key) as ledger:
        issued = ledger.issue([sample_envelope(n) for n in range(4)])
        ledger.seal()
    proc = subprocess.run(
        [
            str(Path(sys.executable).parent / "crovia"),
            "prove",
            issued[2].axiom_id,
            "--ledger-dir",
            str(tmp_path),
        ],
        capture_output=True,
        check=True,
    )
    receipt = load_receipt(proc.stdout)
    check_receipt(receipt, pubkey_hex=key.verify_key.encode().hex())
    assert receipt["ledger"]["leaf_index"] == 2
