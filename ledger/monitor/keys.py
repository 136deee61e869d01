"""Which keys a monitor trusts: its pinned note key, and the keys the log's signed rotations
(`rotations.json`, written by `crovia publish`) lead to from it.

Each record is checked (both signatures, links, no key twice, leaf counts never going back:
ledger/keys/keychain.py) before a key it names is trusted; the pinned key must be one of the chain.
Then every leaf is checked under the key of its era (the first key below the first record's
`leaf_count`, each record's new key from its `leaf_count` on), every seal under the key of its era
(the records with a `leaf_count` below the seal's), and the checkpoint under the key of the seal
at its size. docs/format.md, "This project: one verdict" (the monitor).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

import nacl.signing

from ledger.exceptions import NotPublished, RotationInvalid, UntrustedKey
from ledger.keys.keychain import KeyChain
from ledger.keys.trust import known_chain, parse_rotations
from ledger.monitor.log_source import LogSource
from ledger.publish.publisher import ROTATIONS
from ledger.tlog.checkpoint import Checkpoint, open_checkpoint
from ledger.tlog.exceptions import NoteSignatureInvalid
from ledger.tlog.note import Ed25519Verifier, Note

MAX_ROTATIONS = 1 << 22
WHERE = "rotations.json record"


@dataclass(frozen=True)
class LogKeys:
    """The log's keys in order and the pinned one among them."""

    chain: KeyChain
    pinned: str
    origin: str

    @property
    def records(self) -> tuple[dict[str, Any], ...]:
        return self.chain.records

    def seal_key(self, leaf_count: int) -> str:
        """The key a seal over `leaf_count` leaves (or the checkpoint at that size) is signed by."""
        counts = [record["leaf_count"] for record in self.records]
        return self.chain.keys[bisect.bisect_left(counts, leaf_count)]

    def verify_key_for_leaf(self, leaf_index: int) -> nacl.signing.VerifyKey:
        return self.chain.verify_key_for_leaf(leaf_index)

    def rotations_at(self, leaf_count: int) -> list[tuple[int, dict[str, Any]]]:
        """(record number from 1, record) of the hand-overs made right after the seal at
        `leaf_count`."""
        return [
            (number, record)
            for number, record in enumerate(self.records, start=1)
            if record["leaf_count"] == leaf_count
        ]

    def rotations_between(self, low: int, high: int) -> list[tuple[int, dict[str, Any]]]:
        """Records whose leaf_count is strictly between two consecutive seals: no seal there."""
        return [
            (number, record)
            for number, record in enumerate(self.records, start=1)
            if low < record["leaf_count"] < high
        ]

    def untrusted(self, what: str, public_hex: str) -> UntrustedKey:
        return UntrustedKey(
            f"{what} is signed by key {public_hex}, and no signed hand-over ({ROTATIONS}) leads"
            f" to it from the pinned key {self.pinned}",
            expected=list(self.chain.keys),
            computed=public_hex,
        )


def log_keys(source: LogSource, log: Ed25519Verifier) -> LogKeys:
    """The keys of the log `source` under the pinned note key `log`. Raises RotationInvalid for
    a published record that fails (naming it), UntrustedKey when the pinned key is none of the
    chain's."""
    try:
        data = source.get(ROTATIONS, MAX_ROTATIONS)
    except NotPublished:  # published before rotations were: no hand-over to follow
        data = b"[]"
    records = parse_rotations(data, ROTATIONS)
    pinned = log.public_key.hex()
    chain = known_chain(records, None, WHERE)
    if chain is None:
        return LogKeys(KeyChain((pinned,), ()), pinned, log.name)
    if pinned not in chain.keys:
        raise UntrustedKey(
            f"the pinned key {pinned} is none of the keys of the log's signed rotation chain"
            f" ({ROTATIONS})",
            expected=pinned,
            computed=list(chain.keys),
        )
    return LogKeys(chain, pinned, log.name)


def open_log_checkpoint(data: bytes, keys: LogKeys) -> tuple[Checkpoint, Note]:
    """The checkpoint, signed by the key of the seal at its size (any key of the chain is tried,
    so the one that signed is named when it is the wrong one)."""
    verifiers = {
        public: Ed25519Verifier(keys.origin, bytes.fromhex(public)) for public in keys.chain.keys
    }
    try:
        checkpoint, note = open_checkpoint(data, keys.origin, list(verifiers.values()))
    except NoteSignatureInvalid as exc:
        if "no known key" not in str(exc.args[0]):
            raise
        raise _unknown_signer(data, keys) from None
    expected = keys.seal_key(checkpoint.size)
    hashes = {(sig.name, sig.key_hash) for sig in note.signatures}
    if (keys.origin, verifiers[expected].key_hash) not in hashes:
        signer = next(
            public
            for public, verifier in verifiers.items()
            if (keys.origin, verifier.key_hash) in hashes
        )
        raise UntrustedKey(
            f"the checkpoint at size {checkpoint.size} is signed by key {signer}, not by"
            f" {expected}, the key of that size's era in the signed rotations",
            expected=expected,
            computed=signer,
        )
    return checkpoint, note


def _unknown_signer(data: bytes, keys: LogKeys) -> UntrustedKey:
    from ledger.tlog.note import parse_note

    lines = [f"{s.name}+{s.key_hash.hex()}" for s in parse_note(data).signatures]
    return UntrustedKey(
        f"the checkpoint is signed by note key {', '.join(lines) or 'none'}: neither the pinned"
        f" key {keys.pinned} nor a key a signed hand-over ({ROTATIONS}) leads to from it",
        expected=[
            f"{keys.origin}+{Ed25519Verifier(keys.origin, bytes.fromhex(k)).key_hash.hex()}"
            for k in keys.chain.keys
        ],
        computed=lines,
    )


def check_rotation_links(
    keys: LogKeys, seal: dict[str, Any], digest: str, previous_count: int
) -> None:
    """The records at this seal's leaf_count name it; none falls between it and the one before."""
    for number, record in keys.rotations_between(previous_count, seal["leaf_count"]):
        raise RotationInvalid(
            f"{WHERE} {number}: hands over at leaf_count {record['leaf_count']}, where no seal is",
            computed=record["leaf_count"],
        )
    for number, record in keys.rotations_at(seal["leaf_count"]):
        if record["prev_seal_sha256"] != digest:
            raise RotationInvalid(
                f"{WHERE} {number}: prev_seal_sha256 is not the seal at its leaf_count",
                expected=digest,
                computed=record["prev_seal_sha256"],
            )
