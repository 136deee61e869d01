"""Which key each leaf and seal of an audited ledger must be signed by (`crovia audit`).

A ledger has one key per era: `AuditKeys` holds the eras in leaf order (built from the rotation
chain of ledger/keys/keychain.py), and `for_leaf` answers the audit's one question, so a key
rotation is a new era and nothing else in the audit changes. Without a seal and without `--pubkey`
there is no key to check a signature against: that is a failure (NoAuditKey), not a pass.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any

import nacl.exceptions
import nacl.signing

from ledger import jsonl
from ledger.exceptions import NoAuditKey, SealSignatureInvalid
from ledger.keys.keychain import ledger_key_chain
from ledger.keys.keyfile import key_id
from ledger.keys.rotation import parse_rotation_lines
from ledger.store.reader import ROTATIONS_FILE

_FIRST_LEAF = attrgetter("first_leaf")


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
        last = self.eras[-1]
        if leaf_index >= last.first_leaf or len(self.eras) == 1:  # most leaves: one comparison
            return last
        found = bisect.bisect_right(self.eras, leaf_index, key=_FIRST_LEAF)
        return self.eras[max(0, found - 1)]

    @property
    def key_ids(self) -> list[str]:
        return [era.key_id for era in self.eras]


def audit_keys(
    directory: Path,
    pubkey_hex: str | None,
    seals: Sequence[tuple[int, dict[str, Any]]],
    has_leaves: bool,
    rotations_end: int | None = None,
) -> AuditKeys:
    """The keys of the ledger at `directory`: one era per key of its rotation chain
    (rotations.jsonl, ledger/keys/keychain.py), from the first rotation's old key, else the pinned
    key, else the key the first seal names.

    Raises NoAuditKey when the ledger has leaves but none of these exists (nothing could be
    checked), RotationInvalid for a bad chain, UntrustedKey when the pinned key is none of the
    chain's, SealSignatureInvalid when a seal names a key that is not an ed25519 key.
    """
    records = parse_rotation_lines(
        [line for _, line in jsonl.iter_lines(directory / ROTATIONS_FILE, end=rotations_end)]
    )
    plain_seals = [seal for _number, seal in seals]
    chain = ledger_key_chain(records, plain_seals, pubkey_hex)
    if chain is None:
        if has_leaves:
            raise NoAuditKey(
                "no seal and no --pubkey: the leaves' signatures cannot be checked against any"
                " key, so the ledger cannot be shown whole; pass the signer's key with"
                " --pubkey HEX",
                expected="a seal or --pubkey",
                computed="neither",
            )
        return AuditKeys((), pinned=False)
    firsts = [0, *(record["leaf_count"] for record in chain.records)]
    eras = [
        KeyEra(first, public, verify_key(public, "seals.jsonl line 1"))
        for first, public in zip(firsts, chain.keys, strict=True)
    ]
    seal_keys = chain.seal_keys(plain_seals)
    for (number, seal), expected in zip(seals, seal_keys, strict=True):
        if seal.get("public_key_hex") == expected:  # a wrong key is named by the seal checker
            chain.check_seal_era(seal, f"seals.jsonl line {number}")
    return AuditKeys(
        tuple(eras),
        pinned=pubkey_hex is not None,
        seal_keys=seal_keys,
        rotations=len(chain.records),
    )


def verify_key(public_hex: str, where: str) -> nacl.signing.VerifyKey:
    """The ed25519 key of 64 hex characters; SealSignatureInvalid naming `where` otherwise."""
    try:
        return nacl.signing.VerifyKey(bytes.fromhex(public_hex))
    except (ValueError, TypeError, nacl.exceptions.CryptoError):
        raise SealSignatureInvalid(
            f"{where}: public_key_hex is not an ed25519 key", computed=public_hex
        ) from None
