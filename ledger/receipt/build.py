"""Receipts (`crovia.axiom_proof.v1`): one envelope bound to one seal by a Merkle inclusion path.

The shape is the reference receipt's, key for key. What this ledger does not do is said plainly:
no OpenTimestamps stamp is requested (`bitcoin_anchor.status` = "not_stamped").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ledger.seal import SEED_SEAL_KEYS

RECEIPT_SCHEMA = "crovia.axiom_proof.v1"
CANONICALIZATION = {
    "envelope_id": "axm_ + sha256(envelope minus {signature, axiom_id, anchors})",
    "envelope_signature": "ed25519(envelope minus {signature, axiom_id})",
    "json": "sort_keys=True, separators=(',',':'), ensure_ascii=False, allow_nan=False, utf-8",
    "leaf_hash": "sha256(0x00 || canonical_json(envelope_full))",
    "seal_signature": "ed25519(seal minus {signature, sig_algorithm})",
}
MERKLE_PROOF_PARAMS = {
    "hash_alg": "sha256",
    "leaf_prefix": "0x00",
    "node_prefix": "0x01",
    "odd_leaf_rule": "duplicate_last",
}
# Nothing stamps our seal roots yet, so the receipt says so rather than "pending".
BITCOIN_ANCHOR_NONE = {
    "bitcoin_attestations": [],
    "calendar_attestations": [],
    "ots_url": "",
    "stamped_at": "",
    "status": "not_stamped",
}
SECTION_KEYS: dict[str, frozenset[str]] = {
    "bitcoin_anchor": frozenset(BITCOIN_ANCHOR_NONE),
    "ledger": frozenset({"leaf_hash", "leaf_index", "ledger_path"}),
    "merkle_proof": frozenset({*MERKLE_PROOF_PARAMS, "path"}),
    "seal": SEED_SEAL_KEYS,  # or SEED_SEAL_KEYS | SEAL_EXTENSION_KEYS (ledger/seal.py)
    "trust_root": frozenset({"key_id", "public_key_hex", "signature_algorithm", "url"}),
    "verifier": frozenset({"spec", "url"}),
}
TRUST_ROOT_URL = "docs/ledger.md#trust-root"
VERIFIER_SPEC = "docs/ledger.md#verifying-a-receipt"


def build_receipt(
    *,
    envelope: dict[str, Any],
    leaf_index: int,
    leaf_hash: bytes,
    ledger_path: str,
    path: Sequence[tuple[bytes, str]],
    seal: dict[str, Any],
    key_rotations: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """The receipt dict (canonical when encoded with canonical_json). `key_rotations`, the records
    from the ledger's first key to the seal's (ledger/keys/rotation.py), is added only when not
    empty, so a receipt of a ledger never rotated has exactly the reference receipt's keys."""
    axiom_id = envelope["axiom_id"]
    rotations = {"key_rotations": list(key_rotations)} if key_rotations else {}
    return {
        **rotations,
        "_canonicalization": dict(CANONICALIZATION),
        "axiom_id": axiom_id,
        "bitcoin_anchor": dict(BITCOIN_ANCHOR_NONE),
        "envelope": envelope,
        "ledger": {
            "leaf_hash": leaf_hash.hex(),
            "leaf_index": leaf_index,
            "ledger_path": ledger_path,
        },
        "merkle_proof": {
            **MERKLE_PROOF_PARAMS,
            "path": [{"sibling": sibling.hex(), "side": side} for sibling, side in path],
        },
        "schema": RECEIPT_SCHEMA,
        "seal": seal,
        "trust_root": {
            "key_id": seal["key_id"],
            "public_key_hex": seal["public_key_hex"],
            "signature_algorithm": seal["sig_algorithm"],
            "url": TRUST_ROOT_URL,
        },
        "verifier": {"spec": VERIFIER_SPEC, "url": f"/v/{axiom_id}"},
    }
