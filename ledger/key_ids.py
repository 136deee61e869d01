"""Key ids, a part of the format: how a seal and a receipt name the Ed25519 key that signed them.

Pure functions of a public key, here at the format root because a seal names its key
(ledger/seal.py) and the key files of ledger/keys/ sit a room above the format.
"""

from __future__ import annotations

import hashlib

import nacl.signing


def key_id(verify_key_bytes: bytes) -> str:
    """First 16 hex characters of sha256 of the raw 32-byte ed25519 public key (docs/format.md)."""
    return hashlib.sha256(bytes(verify_key_bytes)).hexdigest()[:16]


def public_key_hex(signing_key: nacl.signing.SigningKey) -> str:
    """Hex of the raw 32-byte public key of `signing_key`."""
    return bytes(signing_key.verify_key).hex()
