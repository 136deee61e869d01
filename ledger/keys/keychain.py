"""Following a ledger's keys through its rotations: which key signs which leaf and seal.

`KeyChain` is the ledger's keys in order. `verify_chain` builds one from a first key and rotation
records (ledger/keys/rotation.py), checking each; `ledger_key_chain` is what `crovia audit` follows,
`receipt_key_chain` what `crovia verify` follows (a receipt's `key_rotations`). Pure code:
docs/ledger.md, "One key per ledger".
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import nacl.signing

from ledger.exceptions import RotationInvalid, UntrustedKey
from ledger.keys.keyfile import key_id
from ledger.keys.rotation import check_rotation, expect
from ledger.seal import seal_sha256

# The one time format of `sealed_at` and `rotated_at`: ASCII digits, whole seconds, UTC. Two such
# strings compare as their times do.
_SEALED_AT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z", re.ASCII)


@dataclass(frozen=True)
class KeyChain:
    """A ledger's keys in order: `keys[0]` the first, `keys[i + 1]` the new key of `records[i]`."""

    keys: tuple[str, ...]
    records: tuple[dict[str, Any], ...]
    _verify_keys: dict[str, nacl.signing.VerifyKey] = field(default_factory=dict, compare=False)

    def key_for_leaf(self, leaf_index: int) -> str:
        """The public key (hex) that signs leaf `leaf_index`: the key of its era."""
        if not self.records:
            return self.keys[0]
        counts = [record["leaf_count"] for record in self.records]
        return self.keys[bisect.bisect_right(counts, leaf_index)]

    def verify_key_for_leaf(self, leaf_index: int) -> nacl.signing.VerifyKey:
        """`key_for_leaf` as a VerifyKey (made once per key: audit asks for every leaf)."""
        public = self.key_for_leaf(leaf_index)
        if public not in self._verify_keys:
            self._verify_keys[public] = nacl.signing.VerifyKey(bytes.fromhex(public))
        return self._verify_keys[public]

    def key_ids(self) -> list[str]:
        """The key_id of each key, in order."""
        return [key_id(bytes.fromhex(public)) for public in self.keys]

    def records_to(self, public_key_hex: str) -> list[dict[str, Any]]:
        """The records from the first key to `public_key_hex` (a receipt's `key_rotations`)."""
        return list(self.records[: self.keys.index(public_key_hex)])

    def check_seal_era(self, seal: Mapping[str, Any], where: str) -> None:
        """RotationInvalid unless `seal` lies inside the era of the key that signed it: from the
        hand-over to that key (its record's `leaf_count` and `rotated_at`) to the hand-over from
        it, both inclusive (docs/format.md, "When a key is trusted"). A key outside the chain has
        no era here: whether it is trusted at all is the pin's question."""
        public = seal["public_key_hex"]
        if public not in self.keys:
            return
        era = self.keys.index(public)
        count, sealed_at = seal["leaf_count"], seal["sealed_at"]
        for record, after in (
            (self.records[era - 1] if era else None, True),
            (self.records[era] if era < len(self.records) else None, False),
        ):
            if record is None:
                continue
            if not isinstance(sealed_at, str) or not _SEALED_AT.fullmatch(sealed_at):
                raise RotationInvalid(
                    f"{where}: seal.sealed_at is not a UTC time to hold against the hand-over"
                    f" of key_id {key_id(bytes.fromhex(public))}",
                    expected="YYYY-MM-DDTHH:MM:SSZ",
                    computed=sealed_at,
                )
            if after:
                inside = count >= record["leaf_count"] and sealed_at >= record["rotated_at"]
                side, bound = "before the hand-over to", ">="
            else:
                inside = count <= record["leaf_count"] and sealed_at <= record["rotated_at"]
                side, bound = "after the hand-over from", "<="
            if not inside:
                raise RotationInvalid(
                    f"{where}: sealed {side} its key (key_id {key_id(bytes.fromhex(public))}):"
                    " a key is trusted only inside its era",
                    expected=f"leaf_count {bound} {record['leaf_count']} and sealed_at {bound}"
                    f" {record['rotated_at']}",
                    computed=f"leaf_count {count}, sealed_at {sealed_at}",
                )

    def seal_keys(self, seals: Sequence[Mapping[str, Any]]) -> list[str]:
        """The key each of `seals` (oldest first) must be signed by. Raises RotationInvalid when a
        rotation does not follow the seal it names, or names none of them."""
        era, expected = self._after(0, None), []
        for seal in seals:
            expected.append(self.keys[era])
            era = self._after(era, seal)
        if era < len(self.records):
            raise RotationInvalid(
                f"rotation {era + 1} names a seal that is not in seals.jsonl in order",
                computed=self.records[era]["prev_seal_sha256"],
            )
        return expected

    def _after(self, era: int, seal: Mapping[str, Any] | None) -> int:
        """The era once the rotations made right after `seal` (None: before any) are passed."""
        digest, count = seal_sha256(seal), 0 if seal is None else seal["leaf_count"]
        while era < len(self.records) and self.records[era]["prev_seal_sha256"] == digest:
            expect(f"rotation {era + 1}", "leaf_count", count, self.records[era]["leaf_count"])
            era += 1
        return era


def verify_chain(first_key_hex: str, records: Sequence[Any], where: str = "rotation") -> KeyChain:
    """The KeyChain from `first_key_hex` through `records`; RotationInvalid (naming the record)
    unless each record is valid, starts where the previous ended, does not go back in leaf_count
    and hands over to a key the ledger never had."""
    keys, previous = [first_key_hex], 0
    for number, record in enumerate(records, start=1):
        check_rotation(record, f"{where} {number}")
        expect(f"{where} {number}", "old_public_key_hex", keys[-1], record["old_public_key_hex"])
        if record["new_public_key_hex"] in keys:
            raise RotationInvalid(
                f"{where} {number}: hands over to a key the ledger had before",
                computed=record["new_public_key_hex"],
            )
        if record["leaf_count"] < previous:
            raise RotationInvalid(
                f"{where} {number}: leaf_count goes back",
                expected=f">= {previous}",
                computed=record["leaf_count"],
            )
        keys.append(record["new_public_key_hex"])
        previous = record["leaf_count"]
    return KeyChain(tuple(keys), tuple(records))


def receipt_key_chain(receipt: Mapping[str, Any]) -> KeyChain:
    """The keys a receipt of the v1 shape vouches for: its seal's key alone, or its
    `key_rotations` from the ledger's first key to the seal's key (RotationInvalid otherwise)."""
    seal = receipt["seal"]
    if "key_rotations" not in receipt:
        return KeyChain((seal["public_key_hex"],), ())
    records = receipt["key_rotations"]
    if not isinstance(records, list) or not records or not isinstance(records[0], Mapping):
        raise RotationInvalid("key_rotations is a non-empty list of rotation records")
    chain = verify_chain(records[0].get("old_public_key_hex"), records, "key_rotations")
    expect(
        "key_rotations",
        "last new key = seal.public_key_hex",
        seal["public_key_hex"],
        chain.keys[-1],
    )
    if records[-1]["leaf_count"] > seal["leaf_count"]:
        raise RotationInvalid(
            "key_rotations: a rotation after the seal",
            expected=f"leaf_count <= {seal['leaf_count']}",
            computed=records[-1]["leaf_count"],
        )
    chain.check_seal_era(seal, "key_rotations")
    return chain


def ledger_key_chain(
    records: Sequence[Any], seals: Sequence[Mapping[str, Any]], pinned_hex: str | None
) -> KeyChain | None:
    """The keys a whole-ledger check follows: from the first rotation's old key through `records`
    (rotations.jsonl); with no rotation, the pinned key, else the first seal's; None when there is
    none of these. Raises RotationInvalid for a bad chain, UntrustedKey when `pinned_hex` is none
    of the ledger's keys."""
    if records:
        first = records[0].get("old_public_key_hex") if isinstance(records[0], Mapping) else None
    else:
        first = pinned_hex or (seals[0]["public_key_hex"] if seals else None)
    if first is None:
        return None
    chain = verify_chain(first, records, "rotations.jsonl line")
    if pinned_hex is not None and pinned_hex not in chain.keys:
        raise UntrustedKey(
            "the pinned key is none of the keys this ledger was signed by",
            expected=pinned_hex,
            computed=list(chain.keys),
        )
    return chain
