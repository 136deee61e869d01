"""What a verifier trusts: a pinned key, a trust root, and the signed rotation chains between keys.

`parse_trust_root` reads the file `keygen --trust-root`, `pubkey --trust-root` and `crovia publish`
write (docs/format.md, "This project: trust root"). `decide_trust` answers the one question every
verifier asks at its end (check `pinned_key`): is the key that signed this seal one the user was
told to trust? The pinned key is; so is a key of a known rotation chain the pin belongs to (each
record signed by both its keys); and a key the receipt's own rotations lead to from a trusted
key, each record signed by the outgoing key. Every record is checked before a key it names is
trusted, and two different hand-overs from one key are a fork (RotationInvalid). Pure code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ledger.canonical import canonical_json
from ledger.exceptions import LedgerError, RotationInvalid
from ledger.keys.keychain import KeyChain, verify_chain
from ledger.keys.keyfile import key_id

TRUST_ROOT_REQUIRED = frozenset({"key_id", "public_key_hex", "signature_algorithm"})
TRUST_ROOT_OPTIONAL = frozenset({"note_verifier_key", "key_rotations", "tsa_roots"})
MAX_TRUST_ROOT = 1 << 22
_HEX64 = re.compile(r"[0-9a-f]{64}")
_PEM = re.compile(
    r"(-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----\r?\n?)+"
)


class TrustRootInvalid(LedgerError):
    """A file given as a trust root is not one (a usage error: exit 2, before any check)."""


@dataclass(frozen=True)
class TrustRoot:
    """A parsed trust root: the key to pin, the records leading to it, the TSA roots (PEM)."""

    public_key_hex: str
    key_id: str
    key_rotations: tuple[dict[str, Any], ...] = ()
    tsa_roots: tuple[str, ...] = ()
    note_verifier_key: str | None = None


@dataclass(frozen=True)
class Trust:
    """The answer of `decide_trust`. `previous` names the hand-over when the seal's key is an
    earlier key of the chain: {key_id, public_key_hex, handed_over_to, handed_over_to_key_id,
    rotated_at}."""

    pinned: bool
    trusted: bool
    previous: dict[str, str] | None = None


def parse_trust_root(data: bytes, where: str = "trust root") -> TrustRoot:
    """The TrustRoot in a file's bytes. Raises TrustRootInvalid, naming what is wrong; the
    rotation records are only checked for being objects here (their signatures are a check)."""
    if len(data) > MAX_TRUST_ROOT:
        raise TrustRootInvalid(f"{where}: not a trust root: larger than {MAX_TRUST_ROOT} bytes")
    try:
        root = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise TrustRootInvalid(f"{where}: not a trust root: not JSON ({exc})") from None
    if not isinstance(root, dict) or not root.keys() >= TRUST_ROOT_REQUIRED:
        raise TrustRootInvalid(
            f"{where}: not a trust root: needs {sorted(TRUST_ROOT_REQUIRED)}"
            f" (and optionally {sorted(TRUST_ROOT_OPTIONAL)})"
        )
    extra = root.keys() - TRUST_ROOT_REQUIRED - TRUST_ROOT_OPTIONAL
    if extra:
        raise TrustRootInvalid(f"{where}: not a trust root: unknown fields {sorted(extra)}")
    public = root["public_key_hex"]
    if not isinstance(public, str) or not _HEX64.fullmatch(public):
        raise TrustRootInvalid(
            f"{where}: not a trust root: public_key_hex is not 64 lowercase hex characters"
        )
    if root["key_id"] != key_id(bytes.fromhex(public)):
        raise TrustRootInvalid(
            f"{where}: not a trust root: key_id is not the key_id of public_key_hex"
        )
    if root["signature_algorithm"] != "ed25519":
        raise TrustRootInvalid(f"{where}: not a trust root: signature_algorithm is not ed25519")
    records = root.get("key_rotations", [])
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise TrustRootInvalid(
            f"{where}: not a trust root: key_rotations is not a list of rotation records"
        )
    pems = root.get("tsa_roots", [])
    if not isinstance(pems, list) or not all(
        isinstance(p, str) and _PEM.fullmatch(p) for p in pems
    ):
        raise TrustRootInvalid(
            f"{where}: not a trust root: tsa_roots is not a list of PEM certificates"
        )
    vkey = root.get("note_verifier_key")
    if vkey is not None and not isinstance(vkey, str):
        raise TrustRootInvalid(f"{where}: not a trust root: note_verifier_key is not a string")
    return TrustRoot(public, root["key_id"], tuple(records), tuple(pems), vkey)


def parse_rotations(data: bytes, where: str = "rotations.json") -> list[dict[str, Any]]:
    """The records of a published `rotations.json` (a JSON list of rotation records), or of a
    trust root file. Raises RotationInvalid for anything else: what it holds is checked."""
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise RotationInvalid(f"{where} is not JSON") from None
    if isinstance(value, dict) and "key_rotations" in value:  # a trust root
        value = value["key_rotations"]
    if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
        raise RotationInvalid(f"{where} is not a JSON list of rotation records")
    return value


def known_chain(
    records: Sequence[Mapping[str, Any]], ends_at: str | None, where: str
) -> KeyChain | None:
    """The chain of `records` (each checked), None when there are none. With `ends_at` (a trust
    root's key) the chain must hand over to it last."""
    if not records:
        return None
    if not isinstance(records[0], Mapping):
        raise RotationInvalid(f"{where} 1: not a rotation record")
    handed: dict[Any, Mapping[str, Any]] = {}
    for record in records:
        old = record.get("old_public_key_hex") if isinstance(record, Mapping) else None
        if isinstance(old, str) and old in handed:
            raise RotationInvalid(
                f"{where}: two hand-overs from key {old} (a fork: one of them is forged)",
                expected=handed[old].get("new_public_key_hex"),
                computed=record.get("new_public_key_hex"),
            )
        handed[old] = record
    chain = verify_chain(records[0].get("old_public_key_hex"), records, where)
    if ends_at is not None and chain.keys[-1] != ends_at:
        raise RotationInvalid(
            f"{where}: the last record does not hand over to the trust root's key",
            expected=ends_at,
            computed=chain.keys[-1],
        )
    return chain


def check_agreement(receipt: KeyChain, known: KeyChain | None) -> None:
    """RotationInvalid when the receipt's chain and the known one hand over from one key twice,
    differently: a fork, which only a stolen key can sign."""
    if known is None:
        return
    handed = {record["old_public_key_hex"]: record for record in known.records}
    for record in receipt.records:
        other = handed.get(record["old_public_key_hex"])
        if other is not None and canonical_json(other) != canonical_json(dict(record)):
            raise RotationInvalid(
                f"two hand-overs from key_id {record['old_key_id']}: the receipt's key_rotations"
                " and the known rotation chain disagree (a fork: one of them is forged)",
                expected=other["new_key_id"],
                computed=record["new_key_id"],
            )


def decide_trust(
    seal_key: str,
    *,
    pubkey_hex: str | None,
    key_id_pin: str | None,
    receipt_chain: KeyChain,
    known: KeyChain | None,
) -> Trust:
    """Whether `seal_key` is trusted under the pin (docs/format.md, "When a key is trusted").
    Both chains must already be checked (verify_chain, check_agreement)."""
    if pubkey_hex is None and key_id_pin is None:
        return Trust(pinned=False, trusted=False)

    def is_pin(public: str) -> bool:
        if public == pubkey_hex:
            return True
        return key_id_pin is not None and key_id(_raw(public)) == key_id_pin

    trusted = {seal_key} if is_pin(seal_key) else set()
    if known is not None and any(is_pin(k) for k in known.keys):
        trusted |= set(known.keys)
    for index, public in enumerate(receipt_chain.keys):  # forward: signed by the outgoing key
        if public in trusted or is_pin(public):
            trusted |= set(receipt_chain.keys[index:])
            break
    if seal_key not in trusted:
        return Trust(pinned=True, trusted=False)
    previous = None
    if not is_pin(seal_key):
        for chain in (known, receipt_chain):
            for record in () if chain is None else chain.records:
                if record["old_public_key_hex"] == seal_key:
                    previous = {
                        "key_id": record["old_key_id"],
                        "public_key_hex": seal_key,
                        "handed_over_to": record["new_public_key_hex"],
                        "handed_over_to_key_id": record["new_key_id"],
                        "rotated_at": record["rotated_at"],
                    }
                    break
            if previous is not None:
                break
    return Trust(pinned=True, trusted=True, previous=previous)


def _raw(public_hex: str) -> bytes:
    return bytes.fromhex(public_hex)


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def trust_root_fields(
    public: bytes,
    *,
    note_verifier_key: str,
    key_rotations: Sequence[Mapping[str, Any]] = (),
    tsa_roots: Sequence[str] = (),
) -> dict[str, Any]:
    """The trust root of `public` as written to a file or into the page (docs/format.md)."""
    return {
        "key_id": key_id(public),
        "key_rotations": [dict(record) for record in key_rotations],
        "note_verifier_key": note_verifier_key,
        "public_key_hex": public.hex(),
        "signature_algorithm": "ed25519",
        "tsa_roots": list(tsa_roots),
    }
