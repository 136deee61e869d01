"""Which key each leaf of an audited ledger must be signed by (`crovia audit`).

A ledger has one key per era: `AuditKeys` holds the eras in leaf order, and `for_leaf` answers the
audit's one question, so a key rotation is a new era (ledger/rotation.py builds the list from
rotations.jsonl) and nothing else in the audit changes. Without a seal and without `--pubkey`
there is no key to check a signature against: that is a failure (NoAuditKey), not a pass.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nacl.exceptions
import nacl.signing

from ledger.exceptions import NoAuditKey, SealSignatureInvalid
from ledger.keys import key_id


@dataclass(frozen=True)
class KeyEra:
    """Leaves from `first_leaf` on (until the next era) are signed by this key."""

    first_leaf: int
    public_key_hex: str
    key: nacl.signing.VerifyKey

    @property
    def key_id(self) -> str:
        return key_id(bytes(self.key))


@dataclass(frozen=True)
class AuditKeys:
    """The eras of a ledger's keys, in leaf order; `pinned` when the user named a key of them.

    `seal_keys`, when given, is the public key each seal (in file order) must carry; else a
    seal carries the key of its last leaf's era. `rotations` counts the records followed.
    """

    eras: Sequence[KeyEra]
    pinned: bool
    seal_keys: Sequence[str] | None = None
    rotations: int = 0

    def for_leaf(self, leaf_index: int) -> KeyEra:
        """The era whose key must have signed leaf `leaf_index`."""
        if len(self.eras) == 1:
            return self.eras[0]
        firsts = [era.first_leaf for era in self.eras]
        return self.eras[max(0, bisect.bisect_right(firsts, leaf_index) - 1)]

    @property
    def key_ids(self) -> list[str]:
        return [era.key_id for era in self.eras]


def audit_keys(
    directory: Path,
    pubkey_hex: str | None,
    seals: Sequence[tuple[int, dict[str, Any]]],
    has_leaves: bool,
) -> AuditKeys:
    """The keys of the ledger at `directory`. One era: the pinned key if given, else the key the
    first seal names (key rotations, read from `directory`, add eras: ledger/rotation.py).

    Raises NoAuditKey when the ledger has leaves but there is neither (nothing could be checked),
    SealSignatureInvalid when the first seal's key is not an ed25519 key.
    """
    if pubkey_hex is None and not seals:
        if has_leaves:
            raise NoAuditKey(
                "no seal and no --pubkey: the leaves' signatures cannot be checked against any"
                " key, so the ledger cannot be shown whole; pass the signer's key with"
                " --pubkey HEX",
                expected="a seal or --pubkey",
                computed="neither",
            )
        return AuditKeys((), pinned=False)
    chosen = pubkey_hex if pubkey_hex is not None else seals[0][1]["public_key_hex"]
    era = KeyEra(0, chosen, verify_key(chosen, "seals.jsonl line 1"))
    return AuditKeys((era,), pinned=pubkey_hex is not None)


def verify_key(public_hex: str, where: str) -> nacl.signing.VerifyKey:
    """The ed25519 key of 64 hex characters; SealSignatureInvalid naming `where` otherwise."""
    try:
        return nacl.signing.VerifyKey(bytes.fromhex(public_hex))
    except (ValueError, TypeError, nacl.exceptions.CryptoError):
        raise SealSignatureInvalid(
            f"{where}: public_key_hex is not an ed25519 key", computed=public_hex
        ) from None
