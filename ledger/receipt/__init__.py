"""Receipts (`crovia.axiom_proof.v1`): building one and verifying one, offline.

`receipt` assembles the reference receipt's shape; `receipt_bytes` holds the exact-bytes rule;
`shape` the key-for-key shape; `path_check` the Merkle path; `verify` runs every check and names
the first that fails. Verifying needs no ledger directory, so this room may import only the
format root, `ledger.keys`, `ledger.tlog` and `ledger.stamps`; the store imports it, not the
other way round. Exports what the rest of the project uses.
"""

from __future__ import annotations

from ledger.receipt.build import SECTION_KEYS
from ledger.receipt.receipt_bytes import MAX_RECEIPT_BYTES
from ledger.receipt.shape import check_receipt_shape
from ledger.receipt.verify import receipt_verdict, verify_receipt, verify_receipt_bytes

__all__ = [
    "MAX_RECEIPT_BYTES",
    "SECTION_KEYS",
    "check_receipt_shape",
    "receipt_verdict",
    "verify_receipt",
    "verify_receipt_bytes",
]
