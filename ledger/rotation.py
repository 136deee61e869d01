"""Key rotations (`crovia.key_rotation.v1`): a ledger hands over from one signing key to the next.

A rotation record names the old and the new key, the leaf count and the newest seal at the moment
of the rotation, and carries two signatures, one by each key, over
`ROTATION_DOMAIN + canonical_json(record minus {old_signature, new_signature})`. The domain line
comes first, so these bytes can never be the canonical JSON an envelope or a seal signature covers.
Leaves from `leaf_count` on are signed by the new key; seals after the one `prev_seal_sha256`
names are too (the writer seals before it rotates). Pure code: docs/ledger.md, "One key per ledger".
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import nacl.exceptions
import nacl.signing
import orjson

from ledger.canonical import canonical_json
from ledger.envelope import utc_now_seconds
from ledger.exceptions import RotationInvalid
from ledger.keys import key_id
from ledger.seal import seal_sha256

ROTATION_SCHEMA = "crovia.key_rotation.v1"
ROTATION_DOMAIN = ROTATION_SCHEMA.encode("ascii") + b"\n"
SIGNATURES = ("old_signature", "new_signature")
ROTATION_KEYS = frozenset(
    {
        "schema",
        "old_public_key_hex",
        "old_key_id",
        "new_public_key_hex",
        "new_key_id",
        "leaf_count",
        "prev_seal_sha256",
        "rotated_at",
        *SIGNATURES,
    }
)
_HEX = {64: re.compile(r"[0-9a-f]{64}"), 16: re.compile(r"[0-9a-f]{16}")}
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_SIGNATURE = re.compile(r"[0-9a-f]{128}")


def rotation_signed_bytes(record: Mapping[str, Any]) -> bytes:
    """The bytes both signatures of a rotation record cover."""
    return ROTATION_DOMAIN + canonical_json(
        {k: v for k, v in record.items() if k not in SIGNATURES}
    )


def build_rotation(
    *,
    old_key: nacl.signing.SigningKey,
    new_key: nacl.signing.SigningKey,
    leaf_count: int,
    prev_seal: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """A rotation record from `old_key` to `new_key` at `leaf_count`, after seal `prev_seal`."""
    old, new = bytes(old_key.verify_key), bytes(new_key.verify_key)
    record = {
        "leaf_count": leaf_count,
        "new_key_id": key_id(new),
        "new_public_key_hex": new.hex(),
        "old_key_id": key_id(old),
        "old_public_key_hex": old.hex(),
        "prev_seal_sha256": seal_sha256(prev_seal),
        "rotated_at": utc_now_seconds(),
        "schema": ROTATION_SCHEMA,
    }
    signed = rotation_signed_bytes(record)
    record["old_signature"] = old_key.sign(signed).signature.hex()
    record["new_signature"] = new_key.sign(signed).signature.hex()
    return record


def check_rotation(record: Any, where: str) -> None:
    """Raise RotationInvalid (naming `where`) unless `record` is a well-formed rotation record
    whose key ids match its keys and whose both signatures verify."""
    if not isinstance(record, Mapping) or set(record) != ROTATION_KEYS:
        keys = sorted(record) if isinstance(record, Mapping) else type(record).__name__
        raise RotationInvalid(f"{where}: keys", expected=sorted(ROTATION_KEYS), computed=keys)
    _expect(where, "schema", ROTATION_SCHEMA, record["schema"])
    count = record["leaf_count"]
    if type(count) is not int or count < 0:
        raise RotationInvalid(f"{where}: leaf_count is a count", computed=count)
    for name, size in (("old_public_key_hex", 64), ("new_public_key_hex", 64)):
        _match(where, name, _HEX[size], record[name])
    _match(where, "rotated_at", _TIME, record["rotated_at"])
    if record["prev_seal_sha256"] != "":
        _match(where, "prev_seal_sha256", _HEX[64], record["prev_seal_sha256"])
    for side in ("old", "new"):
        public = bytes.fromhex(record[f"{side}_public_key_hex"])
        _expect(where, f"{side}_key_id", key_id(public), record[f"{side}_key_id"])
        _check_signature(record, side, public, where)


def _check_signature(record: Mapping[str, Any], side: str, public: bytes, where: str) -> None:
    signature = record[f"{side}_signature"]
    _match(where, f"{side}_signature", _SIGNATURE, signature)
    try:
        verify_key = nacl.signing.VerifyKey(public)
        verify_key.verify(rotation_signed_bytes(record), bytes.fromhex(signature))
    except (nacl.exceptions.BadSignatureError, ValueError):
        raise RotationInvalid(
            f"{where}: {side}_signature does not verify under {side}_public_key_hex",
            expected="valid ed25519 signature",
            computed=signature,
        ) from None


def _match(where: str, name: str, pattern: re.Pattern[str], value: Any) -> None:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise RotationInvalid(f"{where}: {name}", expected=pattern.pattern, computed=value)


def _expect(where: str, name: str, expected: Any, computed: Any) -> None:
    if expected != computed:
        raise RotationInvalid(f"{where}: {name}", expected=expected, computed=computed)


def parse_rotation_lines(lines: Sequence[bytes]) -> list[dict[str, Any]]:
    """The records of rotations.jsonl's complete lines; RotationInvalid names a line not JSON."""
    records = []
    for number, line in enumerate(lines, start=1):
        try:
            records.append(orjson.loads(line))
        except orjson.JSONDecodeError:
            raise RotationInvalid(f"rotations.jsonl line {number} is not JSON") from None
    return records


@dataclass(frozen=True)
class KeyChain:
    """A ledger's keys in order: `keys[0]` the first, `keys[i + 1]` the new key of `records[i]`."""

    keys: tuple[str, ...]
    records: tuple[dict[str, Any], ...]

    def key_for_leaf(self, leaf_index: int) -> str:
        """The public key (hex) that signs leaf `leaf_index`: the key of its era."""
        counts = [record["leaf_count"] for record in self.records]
        return self.keys[bisect.bisect_right(counts, leaf_index)]

    def records_to(self, public_key_hex: str) -> list[dict[str, Any]]:
        """The records from the first key to `public_key_hex` (a receipt's `key_rotations`)."""
        return list(self.records[: self.keys.index(public_key_hex)])

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
            _expect(f"rotation {era + 1}", "leaf_count", count, self.records[era]["leaf_count"])
            era += 1
        return era


def verify_chain(first_key_hex: str, records: Sequence[Any], where: str = "rotation") -> KeyChain:
    """The KeyChain from `first_key_hex` through `records`; RotationInvalid (naming the record)
    unless each record is valid, starts where the previous ended, does not go back in leaf_count
    and hands over to a key the ledger never had."""
    keys, previous = [first_key_hex], 0
    for number, record in enumerate(records, start=1):
        check_rotation(record, f"{where} {number}")
        _expect(f"{where} {number}", "old_public_key_hex", keys[-1], record["old_public_key_hex"])
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
    _expect(
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
    return chain
