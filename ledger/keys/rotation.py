"""Key rotations (`crovia.key_rotation.v1`): a ledger hands over from one signing key to the next.

A rotation record names the old and the new key, the leaf count and the newest seal at the moment
of the rotation, and carries two signatures, one by each key, over
`ROTATION_DOMAIN + canonical_json(record minus {old_signature, new_signature})`. The domain line
comes first, so these bytes can never be the canonical JSON an envelope or a seal signature covers.
Leaves from `leaf_count` on are signed by the new key; seals after the one `prev_seal_sha256`
names are too (the writer seals before it rotates). How audit and verify follow a chain of them:
ledger/keys/keychain.py. Pure code: docs/ledger.md, "One key per ledger".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import nacl.exceptions
import nacl.signing
import orjson

from ledger.canonical import canonical_json
from ledger.envelope import utc_now_seconds
from ledger.exceptions import RotationInvalid
from ledger.keys.keyfile import key_id
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
_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z", re.ASCII)
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
    expect(where, "schema", ROTATION_SCHEMA, record["schema"])
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
        expect(where, f"{side}_key_id", key_id(public), record[f"{side}_key_id"])
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


def expect(where: str, name: str, expected: Any, computed: Any) -> None:
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
