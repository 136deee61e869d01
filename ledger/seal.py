"""Signed seals (`crovia.seal.v1`): a Merkle root over the whole ledger at a leaf count.

The signature covers canonical_json(seal minus {signature, sig_algorithm}), hex without prefix.
New seals carry the reference seal's fields plus SEAL_EXTENSION_KEYS (docs/format.md, "This
project"); a verifier accepts exactly one of `SEAL_KEY_SETS`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import nacl.signing

from ledger.canonical import canonical_json
from ledger.envelope import utc_now_seconds
from ledger.key_ids import key_id, public_key_hex

SEAL_SCHEMA = "crovia.seal.v1"
SEAL_KIND = "substrate_batch"
SEAL_FAMILY_VERSION = "crovia-seal-family/1"
SIG_ALGORITHM = "ed25519"
SIGNER_VERSION = "crovia-ledger/0.1.0"
# The reference seal's keys (the seed receipt's seal), and the keys every new seal adds to them.
SEED_SEAL_KEYS = frozenset(
    {
        "first_collector_run_id",
        "first_receipt_hash",
        "jsonl_path",
        "key_id",
        "last_collector_run_id",
        "last_receipt_hash",
        "leaf_count",
        "merkle_root",
        "public_key_hex",
        "run_id",
        "schema",
        "seal_family_version",
        "seal_kind",
        "sealed_at",
        "sig_algorithm",
        "signature",
        "signer_version",
    }
)
SEAL_EXTENSION_KEYS = frozenset({"prev_seal_sha256", "rfc6962_root"})
# The values docs/format.md names for the reference seal ("Seal (`seal`, schema `crovia.seal.v1`,
# kind `substrate_batch`)"), which every verifier holds (check `receipt_shape`): a seal of another
# schema, kind or family is a format whose root and leaf count this one does not define.
# `sig_algorithm` is held by the seal signature check; the other string fields are informative.
SEAL_FIXED_VALUES = {
    "schema": SEAL_SCHEMA,
    "seal_kind": SEAL_KIND,
    "seal_family_version": SEAL_FAMILY_VERSION,
}
SEAL_KEY_SETS = (SEED_SEAL_KEYS, SEED_SEAL_KEYS | SEAL_EXTENSION_KEYS)


def seal_signed_bytes(seal: dict[str, Any]) -> bytes:
    """The bytes a seal signature covers."""
    return canonical_json(
        {k: v for k, v in seal.items() if k not in ("signature", "sig_algorithm")}
    )


def seal_sha256(seal: Mapping[str, Any] | None) -> str:
    """Hex sha256 of a seal's signed bytes: the next seal's `prev_seal_sha256` ("" for None)."""
    return "" if seal is None else hashlib.sha256(seal_signed_bytes(dict(seal))).hexdigest()


def build_seal(
    *,
    key: nacl.signing.SigningKey,
    leaf_count: int,
    merkle_root: bytes,
    jsonl_path: str,
    run_id: str,
    first: tuple[str, str],
    last: tuple[str, str],
    prev_seal: Mapping[str, Any] | None,
    rfc6962_root: bytes,
) -> dict[str, Any]:
    """A signed seal; `first`, `last` = (receipt_hash, collector run id) at the batch's ends;
    `prev_seal` the newest seal before it (None for the first), chained by its sha256;
    `rfc6962_root` the RFC 6962 root of the same leaves (binding the two trees together)."""
    seal = {
        "first_collector_run_id": first[1],
        "first_receipt_hash": first[0],
        "jsonl_path": jsonl_path,
        "key_id": key_id(bytes(key.verify_key)),
        "last_collector_run_id": last[1],
        "last_receipt_hash": last[0],
        "leaf_count": leaf_count,
        "merkle_root": merkle_root.hex(),
        "prev_seal_sha256": seal_sha256(prev_seal),
        "public_key_hex": public_key_hex(key),
        "rfc6962_root": rfc6962_root.hex(),
        "run_id": run_id,
        "schema": SEAL_SCHEMA,
        "seal_family_version": SEAL_FAMILY_VERSION,
        "seal_kind": SEAL_KIND,
        "sealed_at": utc_now_seconds(),
        "signer_version": SIGNER_VERSION,
    }
    seal["signature"] = key.sign(seal_signed_bytes(seal)).signature.hex()
    seal["sig_algorithm"] = SIG_ALGORITHM
    return seal
